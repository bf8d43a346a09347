"""``compbench`` — replay recorded coding-agent transcripts through context-compaction strategies.

Importing this package stays cheap (no pandas, datasets or litellm) so the CLI starts fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

from compbench.data.transcript import Message, Transcript
from compbench.errors import CompbenchError, TranscriptError

__all__ = ["CompbenchError", "Message", "Transcript", "TranscriptError", "__version__"]

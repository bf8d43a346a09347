"""``compbench.errors`` — The errors compbench raises for user mistakes; the CLI turns each into one line and exit code
2."""

from __future__ import annotations

from pathlib import Path


class CompbenchError(Exception):
    """A user-facing error: bad input, bad option, missing file. Never a bug in compbench."""


class TranscriptError(CompbenchError):
    """A transcript file that cannot be read: which file, which line, what was expected there."""

    def __init__(self, path: str | Path, line: int | None, expected: str) -> None:
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.internal = False  # set when an importer bug, not the file, caused it
        self.broken_line = False  # set for one broken line of a JSONL file: --on-error skip-lines skips it
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {expected}")


class UsageError(CompbenchError):
    """A bad option, parameter or configuration value."""

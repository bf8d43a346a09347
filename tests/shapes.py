"""Shapes real logs come in, built small (a first field larger than the sniffing window, a mini-swe-agent
document): shared by the detection and the import tests."""

from __future__ import annotations

from typing import Any

from compbench.data.formats.detect import HEAD_BYTES

BIG = "x" * (HEAD_BYTES + 10_000)  # larger than the sniffing window


def mini_doc(submission: str = "diff --git a/x b/x") -> dict[str, Any]:
    """A mini-swe-agent trajectory whose identifying keys (``info.mini_version``, ``trajectory_format``)
    come after a first field that can be made larger than the sniffing window."""
    return {"info": {"submission": submission, "exit_status": "Submitted", "mini_version": "1.1.0"},
            "messages": [{"role": "system", "content": "You are a helpful assistant."},
                         {"role": "user", "content": "Fix the failing test."},
                         {"role": "assistant", "content": "THOUGHT: look.\n```bash\nls\n```"},
                         {"role": "user", "content": "<returncode>0</returncode>\n<output>a.py</output>"}],
            "trajectory_format": "mini-swe-agent-1", "instance_id": "demo__demo-1"}

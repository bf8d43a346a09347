"""What a Claude Code log shows of the window it compacted against: ``/autocompact``'s report of the window and its
source (2.1.217's wording), and a compaction's precomputed summary. Hand-made records of the shapes the logs hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.data.formats.claude_code import autocompact_window
from compbench.data.formats.claude_code import read as read_cc


@pytest.mark.parametrize(("line", "expected"), [
    ("Auto-compact window: auto", {"source": "auto"}),
    ("Auto-compact window: auto (500k tokens)", {"source": "server", "tokens": 500_000}),
    ("Auto-compact window: auto (1m tokens) · capped to 200k by model", {"source": "server", "tokens": 1_000_000}),
    ("Auto-compact window: 200k tokens (from CLAUDE_CODE_AUTO_COMPACT_WINDOW)", {"source": "env", "tokens": 200_000}),
    ("Auto-compact window: 350,000 tokens (from settings)", {"source": "settings", "tokens": 350_000}),
    ("Auto-compact window: 1.5m tokens (from settings)", {"source": "settings", "tokens": 1_500_000}),
    ("Auto-compact summarizes the conversation", None),
])
def test_the_report_names_the_source_and_the_tokens(line: str, expected: dict[str, Any] | None) -> None:
    got = autocompact_window(f"<local-command-stdout>{line}\nAuto-compact summarizes …</local-command-stdout>")
    assert (None if got is None else {k: v for k, v in got.items() if k != "text"}) == expected


def rec(kind: str, uuid: str, parent: str | None, at: str, **kw: Any) -> dict[str, Any]:
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "s", "version": "2.1.300", "cwd": "/r",
            "type": kind, "uuid": uuid, "timestamp": at, **kw}


def test_a_log_keeps_the_report_and_the_precomputed_flag(tmp_path: Path) -> None:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 250_000, "cache_creation_input_tokens": 0,
             "output_tokens": 5}
    records = [
        rec("user", "u1", None, "2026-09-01T10:00:00Z", message={"role": "user", "content": "go"}),
        rec("assistant", "a1", "u1", "2026-09-01T10:00:05Z", message={
            "id": "m1", "model": "claude-opus-4-7", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
            "usage": usage}),
        rec("user", "c1", "a1", "2026-09-01T10:01:00Z", message={"role": "user", "content": (
            "<command-name>/autocompact</command-name>\n<local-command-stdout>Auto-compact window: auto (500k tokens)"
            "</local-command-stdout>")}),
        rec("system", "b1", None, "2026-09-01T10:55:05Z", subtype="compact_boundary", logicalParentUuid="c1",
            compactMetadata={"trigger": "auto", "preTokens": 250_015, "precomputed": True}),
        rec("user", "s1", "b1", "2026-09-01T10:55:06Z", isCompactSummary=True,
            message={"role": "user", "content": "Summary"}),
        rec("user", "u2", "s1", "2026-09-01T11:20:00Z", message={"role": "user", "content": "back"}),
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (t,) = read_cc(p)
    assert t.meta["autocompact_window"] == {"source": "server", "tokens": 500_000, "text": "auto (500k tokens)",
                                            "line": 3}
    (c,) = t.compactions
    assert c.meta["compact_metadata"]["precomputed"] is True

"""``recorded``: the context after a replayed compaction is what the tool sent, on hand-made logs of each shape:
Codex's replacement history (its developer instructions put back, its encrypted summary sized as Codex sizes
it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from compbench.data.importing import iter_transcripts
from compbench.data.transcript import Transcript
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from compbench.strategies.recorded import codex_estimate

DEVELOPER = "<permissions instructions>\nsandbox_mode is workspace-write. " + "rule " * 400  # 2,000+ characters


def replay(tmp: Path, path: Path) -> tuple[Transcript, Any]:
    """The transcript read from ``path`` and its recorded row's compaction (one)."""
    (t,) = [t for t in iter_transcripts(path) if t.compactions]
    out = tmp / f"run-{path.stem}"
    write_run(out, RunSpec(strategies=("none", "recorded"), limits=ModelLimits(1_000_000, 8_000),
                           tokenizer="chars4", token_correction="none"), "hand-made", [t])
    c = pd.read_parquet(out / "compactions.parquet")
    (ev,) = c[c["strategy"] == "recorded"].itertuples()
    return t, ev


def codex_rollout(tmp: Path, name: str, developer: bool, blob: int) -> Path:
    """A Codex 0.77 rollout whose turn compacts: the replacement history keeps the first prompt, puts the developer
    instructions back (``developer``) and holds the encrypted summary (a ``compaction`` item of ``blob``
    characters; none with 0)."""
    def r(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-12-29T21:00:00Z", "type": kind, "payload": payload}

    def msg(role: str, text: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    def count(n: int, total: int) -> dict[str, Any]:
        last = {"input_tokens": n, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": n + 10}
        tot = {**last, "input_tokens": total, "total_tokens": total + 10}
        return r("event_msg", {"type": "token_count", "info": {"last_token_usage": last, "total_token_usage": tot}})

    history = [msg("user", "fix the bug")] + ([msg("developer", DEVELOPER)] if developer else [])
    if blob:
        history.append({"type": "compaction", "encrypted_content": "gAAAAA" + "x" * (blob - 6)})
    records = [r("session_meta", {"id": name, "cwd": "/w", "cli_version": "0.77.0"}), r("turn_context", {"model": "m"}),
               r("response_item", msg("developer", DEVELOPER)), r("response_item", msg("user", "fix the bug")),
               r("response_item", msg("assistant", "looked " + "word " * 400)), count(2_000, 2_000),
               r("response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}),
               r("response_item", {"type": "function_call_output", "call_id": "c1", "output": "out " * 300}),
               count(2_500, 4_500),
               r("compacted", {"message": "", "replacement_history": history}),
               r("response_item", msg("assistant", "continuing")), count(900, 5_400)]
    p = tmp / f"rollout-2025-12-29T21-00-00-{name}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    return p


def test_codex_estimates_an_encrypted_item_as_its_source_does() -> None:
    assert codex_estimate(2_000) == 213  # (2,000 x 3/4 - 650) / 4, rounded up
    assert codex_estimate(800) == 0 and codex_estimate(None) == 0 and codex_estimate(True) == 0


def test_codex_replacement_history_puts_back_its_developer_instructions_and_its_encrypted_summary(
        tmp_path: Path) -> None:
    bare_t, bare = replay(tmp_path, codex_rollout(tmp_path, "bare", developer=False, blob=0))
    t, ev = replay(tmp_path, codex_rollout(tmp_path, "full", developer=True, blob=2_000))
    (rc,) = t.compactions
    assert rc.meta["encrypted"] and rc.meta["encrypted_chars"] == 2_000
    assert rc.meta["replacement"] == [["developer", DEVELOPER]]  # the kept prompt is a kept message, not added
    assert "replacement" not in bare_t.compactions[0].meta
    added = ev.tokens_after - bare.tokens_after
    expected = (len(DEVELOPER) + 3) // 4 + 4 + 213 + 4  # the developer message, the stand-in (4 per message)
    assert abs(added - expected) <= 0.03 * expected

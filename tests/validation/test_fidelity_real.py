"""Fidelity on today's tools (../shared/real-compactions: Claude Code 2.1.x, Codex 0.14x): every auto
compaction matched to the step by its version's preset, the window each row used, and what the logs
leave out. The trigger decisions rest on recorded usage and the tools' own estimates, not on our
tokenizer, so the cheap chars4 counter changes none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

import compbench.run.missing_usage as missing_usage
from compbench.data.formats import read_all
from compbench.data.recorded import segment
from compbench.data.transcript import Reasoning
from compbench.validation.fidelity import Row, fidelity

MATCHED = {  # (transcript, n, preset): (real step, our step)
    ("f585e6e9", 1, "2.1.21"): (115, 115), ("f585e6e9", 2, "2.1.21"): (46, 46),
    ("fcdd6c6f", 1, "2.1.21"): (62, 62), ("8ecab05f", 1, "2.1.21"): (101, 101),
    ("1e0816ef", 1, "2.1.21"): (53, 53), ("198393f2", 1, "2.0"): (7, 7),
    ("9d7a9d52", 1, "2.1.21"): (69, 69), ("9d7a9d52", 2, "2.1.21"): (61, 61),
    # the 23 sessions added with 2.0.76-2.1.49 (2.1.0-2.1.20 record the 2.0 rule: 167k less 12k)
    ("4b3ddf27", 1, "2.1.21"): (77, 77), ("4a364c97", 1, "2.0"): (115, 115), ("a0927dd5", 1, "2.1.21"): (109, 108),
    ("c35cf82b", 1, "2.0"): (85, 85), ("c35cf82b", 2, "2.0"): (108, 108), ("b82405ba", 1, "2.0"): (139, 139),
    ("aa4038a5", 1, "2.1.21"): (99, 99), ("6dccd523", 1, "2.1.21"): (149, 149), ("379ab089", 1, "2.0"): (167, 167),
    ("a318ad73", 1, "2.0"): (121, 121), ("53ea1606", 1, "2.1.21"): (37, 37), ("847ff7d2", 1, "2.0"): (48, 48),
    ("ca8cc13b", 1, "2.1.21"): (74, 74), ("b42aaf1f", 1, "2.0"): (96, 96), ("fdd24234", 1, "2.0"): (100, 100),
    ("0442a060", 1, "2.0"): (124, 124), ("0442a060", 2, "2.0"): (85, 85), ("0276a600", 1, "2.0"): (92, 92),
    ("0276a600", 2, "2.0"): (90, 90), ("21a2e002", 1, "2.0"): (61, 61), ("1a289c77", 1, "2.1.21"): (37, 37),
    ("f022dad1", 1, "2.1.21"): (143, 143), ("03a1382e", 1, "2.1.21"): (159, 159), ("24a274a3", 1, "2.1.21"): (19, 19),
    ("062a8bdd", 1, "2.1.21"): (112, 112),
    ("019f17a5", 1, "current"): (32, 32), ("019f17a5", 2, "current"): (158, 158),
    ("019ed99c", 1, "current"): (96, 96), ("019ed99c", 2, "current"): (73, 73), ("019ed99c", 3, "current"): (86, 86),
}


@pytest.fixture(scope="module")
def rows(real_compactions_dir: Path) -> list[Row]:
    return fidelity(read_all([real_compactions_dir]), tokenizer="chars4")


def test_every_auto_compaction_is_matched_by_its_versions_preset(rows: list[Row]) -> None:
    own = {(r.transcript[:8], r.n, r.preset): (r.real_step, r.our_step) for r in rows
           if r.trigger == "auto" and "the version this preset models" in r.cause}
    assert own == MATCHED


def test_codex_keeps_what_the_replacement_history_kept(rows: list[Row]) -> None:
    """Today's rebuild keeps the recorded user messages Codex's replacement history kept; where the Jaccard
    is below 1 the difference is the developer message, kept by both but listed by the importer only when
    it is a user message, and a hook's developer message."""
    kept = {(r.transcript[:8], r.n): r.kept_jaccard for r in rows if r.tool == "codex" and r.preset == "current"}
    assert kept == {("019f17a5", 1): 0.8, ("019f17a5", 2): 13 / 14, ("019ed99c", 1): 0.75, ("019ed99c", 2): 1.0,
                    ("019ed99c", 3): 1.0}


def test_the_2_0_rule_compacts_early_on_2_1_and_2_1s_never_fires_on_2_0(rows: list[Row]) -> None:
    """Reserving 32k (155,000) fires 4-24 calls early on 14 of the 18 compactions of sessions whose version
    records 2.1.21's rule; 2.1.21's rule (167,000) is reached 1-21 calls late on 12 of the 15 compactions of
    2.0.76-2.1.20 sessions, and never on 3 (the replay shows the recorded usage only until the tool's own
    compaction: after it the log's prompts are of the tool's compacted context)."""
    own = {(t, n): p for t, n, p in MATCHED}
    early = {(r.transcript[:8], r.n): r.d_steps for r in rows if r.preset == "2.0" and r.trigger == "auto"
             and own.get((r.transcript[:8], r.n)) == "2.1.21"}
    assert early == {("f585e6e9", 1): -19, ("f585e6e9", 2): -4, ("fcdd6c6f", 1): 0, ("8ecab05f", 1): 0,
                     ("1e0816ef", 1): -4, ("9d7a9d52", 1): -5, ("9d7a9d52", 2): -8, ("4b3ddf27", 1): -7,
                     ("a0927dd5", 1): -10, ("aa4038a5", 1): -12, ("6dccd523", 1): -12, ("53ea1606", 1): 0,
                     ("ca8cc13b", 1): -5, ("1a289c77", 1): -11, ("f022dad1", 1): -24, ("03a1382e", 1): -19,
                     ("24a274a3", 1): -7, ("062a8bdd", 1): -12}
    late = {(r.transcript[:8], r.n): r.d_steps for r in rows if r.preset == "2.1.21" and r.trigger == "auto"
            and own.get((r.transcript[:8], r.n)) == "2.0"}
    assert late == {("4a364c97", 1): 21, ("c35cf82b", 1): 1, ("c35cf82b", 2): 8, ("b82405ba", 1): 8,
                    ("379ab089", 1): None, ("a318ad73", 1): 3, ("847ff7d2", 1): 11, ("198393f2", 1): 2,
                    ("b42aaf1f", 1): 2, ("fdd24234", 1): 5, ("0442a060", 1): 8, ("0442a060", 2): None,
                    ("0276a600", 1): 6, ("0276a600", 2): None, ("21a2e002", 1): 21}
    (old,) = [r for r in rows if r.transcript[:8] == "198393f2" and r.preset == "2.1.138"]
    assert old.d_steps == 2
    # 2.1.196-2.1.216 ("current") compacts claude-opus-4-5 only at the API's limit (its window's source is auto)
    (today,) = [r for r in rows if r.transcript[:8] == "198393f2" and r.preset == "current"]
    assert today.d_steps is None and "strategy never compacted" in today.cause


def test_rows_use_the_tools_window_not_litellms(rows: list[Row]) -> None:
    """litellm lists Opus 4.6 at 1M and GPT-5.5 at 1.05M; Claude Code ran 200k, Codex 272k."""
    opus46 = {r.window_source for r in rows if r.transcript[:8] == "f585e6e9"}
    assert opus46 == {"recorded model claude-opus-4-6, Claude Code default 200k, not litellm's 1M"}
    assert {r.window for r in rows if r.tool == "claude-code" and r.transcript[:8] != "6c0a282a"} == {200_000}
    # 2.1.217 on claude-opus-5: Claude Code's catalogue runs it at its native 1M (a recorded call of 401k says so too)
    assert {(r.window, r.window_source) for r in rows if r.transcript[:8] == "6c0a282a"} == {
        (1_000_000, "recorded model claude-opus-5: Claude Code's catalogue runs it at its native 1M window "
                    "(2.1.117 on)")}
    assert {(r.window, r.window_source) for r in rows if r.tool == "codex"} == {
        (272_000, "recorded model_context_window 258,400 = 95% of 272,000")}


def test_the_logs_gaps_are_filled_from_the_tools_own_count_and_said(rows: list[Row]) -> None:
    (r,) = [r for r in rows if r.transcript[:8] == "9d7a9d52" and r.n == 1 and r.preset == "2.1.21"]
    assert ("log's count before it (164,864 in + 1 out) 2,201 short of preTokens 167,066 (the log lacks the "
            "interrupted tool call's result): added to the last call's output") in r.cause
    (r,) = [r for r in rows if r.transcript[:8] == "198393f2" and r.preset == "2.0"]
    assert "255 short of preTokens 155,250 (output_tokens logged at the first event)" in r.cause
    assert all("no encrypted reasoning" in r.cause for r in rows if r.tool == "codex")


def test_codex_matches_rest_on_the_reasoning_stand_in(real_compactions_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an estimate of the earlier turns' encrypted reasoning (not recorded in 0.14x rollouts) the
    limit is reached in time on two compactions of five (1, 3 and 7 calls late on the others); the stand-in
    blobs (950 characters an item + 6.37 a reasoning token) match all five; an envelope of 1,100 (inside the
    0.77 blobs' span) is 3 calls early on the third compaction of 019ed99c."""
    ts = list(read_all([real_compactions_dir / "codex"]))
    monkeypatch.setattr(missing_usage, "BLOB_CHARS", 0)
    monkeypatch.setattr(missing_usage, "BLOB_CHARS_PER_TOKEN", 0.0)
    none = [r.d_steps for r in fidelity(ts, tokenizer="chars4") if r.preset == "current"]
    assert none == [0, 1, 0, 3, 7]
    monkeypatch.undo()
    assert [r.d_steps for r in fidelity(ts, tokenizer="chars4") if r.preset == "current"] == [0, 0, 0, 0, 0]
    monkeypatch.setattr(missing_usage, "BLOB_CHARS", 1_100)
    more = [r.d_steps for r in fidelity(ts, tokenizer="chars4") if r.preset == "current"]
    assert more == [0, 0, 0, 0, -3]


def test_the_stand_in_is_calibrated_on_the_0_77_rollouts(transcripts_dir: Path) -> None:
    """The stand-in blob's per-token length is the 0.77 rollouts' real blobs', pooled over the calls that
    reasoned; its envelope lies inside the span of their zero-token blobs (set from the 0.14x compactions);
    Codex's estimate of a stand-in is what it makes of a real blob of that length."""
    from statistics import median

    from compbench.strategies.codex import reasoning_item_tokens

    empty: list[int] = []
    reasoned: list[tuple[int, int]] = []
    for t in read_all([transcripts_dir / "codex"]):
        for m in t.messages:
            blobs = [len(p.text) for p in m.parts if isinstance(p, Reasoning) and p.encrypted]
            if m.role == "assistant" and len(blobs) == 1 and m.usage is not None:
                (empty.append(blobs[0]) if m.usage.reasoning == 0 else reasoned.append((m.usage.reasoning, blobs[0])))
    assert (len(empty), min(empty), median(empty), max(empty)) == (81, 868, 996, 1_208)
    per_token = (sum(b for _, b in reasoned) - len(reasoned) * median(empty)) / sum(n for n, _ in reasoned)
    assert (len(reasoned), round(per_token, 2)) == (140, missing_usage.BLOB_CHARS_PER_TOKEN)
    assert min(empty) <= missing_usage.BLOB_CHARS <= max(empty)
    # an envelope alone counts 16 tokens (950 * 3 / 4 - 650 bytes); 100 reasoning tokens add 119
    assert [reasoning_item_tokens("A" * missing_usage.blob_chars(n)) for n in (0, 100)] == [16, 135]


def test_segment_index_skips_the_tools_own_records(real_compactions_dir: Path) -> None:
    """A second compaction's position in its segment: Claude Code's summary record of the first is dropped
    from the tail, so it is not counted either (it was: the comparison then ran one message late)."""
    (t,) = read_all([real_compactions_dir / "claude-code" /
                     "entireio__cli__entire-adff0201aecb-0__9d7a9d52-7eb4-427d-847d-ee5451884f3d.jsonl"])
    seg, _ = segment(t, 1)
    rc = seg.compactions[0]
    before = seg.messages[rc.index - 1]
    assert before.role == "assistant" and before.usage is not None and before.usage.input == 166_190
    assert t.messages[t.compactions[1].index - 1].id == before.id  # the last message before the tool's summary

"""claude-code (seed 002 + real sessions of CLI 2.0.60–2.1.49): the 95% trigger, the window - reserve - buffer
trigger of 2.0 and 2.1 pinned on real compactions, 2.1's estimate of the messages after the last call, the
override settings, the whole-history request, the continuation messages, replay, failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_glob

from compbench.data.transcript import Media, Message, Text, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.claude_code import (
    COMPACT_PROMPT,
    RESUME_217,
    SECTIONS,
    STRUCTURED_PROMPT,
    SUMMARY_PREFIX,
    SUMMARY_PREFIX_21,
    SUMMARY_SUFFIX,
    SUMMARY_SUFFIX_21,
    TRANSCRIPT_LINE,
    ClaudeCode,
    ClaudeCodeParams,
    rough_tokens,
    version_preset,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

REAL = "M-Claude__c7d2069e-c561-4759-8adf-b0745be78c29.jsonl"


def fires(c: ClaudeCode, total: int, limits: ModelLimits, counter: TokenCounter) -> bool:
    v = view_of([user("u1"), assistant("a1")], counter, limits)
    assert c.after_step(v, Usage(input=total - 10, output=10)) == ()  # decided after, applied before
    return bool(c.before_step(v))


@pytest.mark.parametrize(("total", "expected"), [(189_999, False), (190_000, True), (190_001, True)])
def test_seed_trigger_at_95_percent(chars4: TokenCounter, total: int, expected: bool) -> None:
    assert fires(ClaudeCode(ClaudeCodeParams()), total, ModelLimits(200_000, 64_000), chars4) is expected


@pytest.mark.parametrize(("total", "expected"), [
    (154_999, False), (155_000, True), (155_001, True),
    (152_770, False), (155_548, True),  # the real 2.0.76 session: the step before did not compact, this one did
])
def test_2_0_trigger_window_minus_reserve_minus_buffer(chars4: TokenCounter, total: int, expected: bool) -> None:
    # 200,000 - min(64,000, 32,000) - 13,000 = 155,000 (77.5%)
    c = resolve("claude-code:preset=2.0").create()
    assert isinstance(c, ClaudeCode)
    assert fires(c, total, ModelLimits(200_000, 64_000), chars4) is expected


@pytest.mark.parametrize(("total", "expected"), [(166_999, False), (167_000, True), (167_001, True)])
def test_current_trigger_reserves_20k(chars4: TokenCounter, total: int, expected: bool) -> None:
    # 2.1.21+: 200,000 - min(64,000, 20,000) - 13,000 = 167,000 (83.5%)
    c = resolve("claude-code:preset=current").create()
    assert isinstance(c, ClaudeCode)
    assert fires(c, total, ModelLimits(200_000, 64_000), chars4) is expected


@pytest.mark.parametrize(("chars", "expected"), [(3_997, False), (3_998, True), (4_002, True)])
def test_current_counts_the_messages_after_the_last_call(chars4: TokenCounter, chars: int, expected: bool) -> None:
    """2.1: usage 166,000 + Math.round(chars / 4) of the tool result after the call >= 167,000:
    3,997 / 4 = 999.25 -> 999, 3,998 / 4 = 999.5 -> 1,000. 2.0 compares the usage alone."""
    msgs = [user("u1"), assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", "x" * chars)]
    v = view_of(msgs, chars4, ModelLimits(200_000, 64_000))
    cur, old = resolve("claude-code:preset=current").create(), resolve("claude-code:preset=2.0").create()
    assert cur.after_step(v, Usage(input=165_990, output=10)) == ()
    assert bool(cur.before_step(v)) is expected
    old.after_step(v, Usage(input=154_990, output=9))
    assert old.before_step(v) == ()  # 154,999 + a ~1,000-token tool result: 2.0 does not count it


def test_rough_estimate_is_claude_codes() -> None:
    """Math.round(UTF-16 length / 4) per block (half rounds up), tool name + input, 2,000 per image."""
    assert [rough_tokens(user("u", "x" * n)) for n in (1, 2, 6, 10)] == [0, 1, 2, 3]
    assert rough_tokens(user("u", "😀" * 3)) == 2  # 6 UTF-16 units
    call = assistant("a", "hi!!", calls=[("c1", "Bash", {"command": "ls"})])  # 4 + len('Bash{"command": "ls"}') = 21
    assert rough_tokens(call) == 1 + 5
    assert rough_tokens(Message("m", "user", (Text("abcd"), Media("image")))) == 2_001


def test_thresholds_follow_the_reserve_and_the_models_output_limit(chars4: TokenCounter) -> None:
    v = view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))
    assert resolve("claude-code:preset=2.0").create().threshold(v) == 155_000  # type: ignore[attr-defined]
    assert resolve("claude-code:preset=current").create().threshold(v) == 167_000 == 0.835 * 200_000  # type: ignore[attr-defined]
    small_output = view_of([user("u1")], chars4, ModelLimits(200_000, 8_192))  # min(max_output, reserve)
    assert resolve("claude-code:preset=current").create().threshold(small_output) == 178_808  # type: ignore[attr-defined]


@pytest.mark.parametrize(("spec", "threshold"), [
    ("autocompact_pct_override=50", 90_000),  # min(floor(180,000 * 0.5), 167,000)
    ("autocompact_pct_override=92.7", 166_860),  # floor(166,860.0)
    ("autocompact_pct_override=95", 167_000),  # 171,000: the override can only lower the threshold
    ("autocompact_pct_override=101", 167_000),  # out of (0, 100]: ignored
    ("auto_compact_window=100000", 67_000),  # min(200,000, 100,000) - 20,000 - 13,000
    ("auto_compact_window=300000", 167_000),  # never above the model's window
    ("auto_compact_window=99999", 67_000),  # raised to 100,000 (2.1.89's schema, 2.1.221's env var)
    ("auto_compact_window=50000", 67_000),
    ("auto_compact_window=100001", 67_001),
    ("auto_compact_window=5000000", 167_000),  # capped at 1M, then at the model's window
])
def test_override_settings(chars4: TokenCounter, spec: str, threshold: int) -> None:
    """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE and CLAUDE_CODE_AUTO_COMPACT_WINDOW as the bundle applies them."""
    c = resolve(f"claude-code:preset=current,{spec}").create()
    assert isinstance(c, ClaudeCode)
    v = view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))
    assert c.threshold(v) == threshold
    assert fires(c, threshold - 1, ModelLimits(200_000, 64_000), chars4) is False
    assert fires(c, threshold, ModelLimits(200_000, 64_000), chars4) is True


@pytest.mark.parametrize(("version", "before"), [("2.1.139", 568_000), ("2.1.219", 466_000), ("2.1.100", 200_001),
                                               ("2.1.190", 979_000)])
def test_a_window_read_off_the_log_compacts_where_the_log_did(chars4: TokenCounter, version: str,
                                                              before: int) -> None:
    """A 1M session's first automatic compaction below the effective window gives its window (tokens before +
    20,000 + 13,000): the threshold is those tokens exactly, at and just beside them, where a user's window would be
    capped (one past it, from 2.1.191, was the API's refusal: test_claude_code_window)."""
    from compbench.data.transcript import RecordedCompaction, Transcript

    rc = RecordedCompaction(3, "claude-code", trigger="auto", tokens_before=before)
    t = Transcript("t", "claude-code", (), meta={"tool_version": version}, compactions=(rc,))
    configured, _ = resolve("claude-code").for_log(t)
    c = configured.create()
    limits = ModelLimits(1_000_000, 64_000)
    assert isinstance(c, ClaudeCode) and c.threshold(view_of([user("u1")], chars4, limits)) == before
    assert fires(c, before - 1, limits, chars4) is False and fires(c, before, limits, chars4) is True


def test_the_window_floor_is_of_the_versions_that_have_it(chars4: TokenCounter) -> None:
    """2.1.21's bundle took any window (2.1.88's source has no floor): 50,000 - 20,000 - 13,000."""
    c = resolve("claude-code:preset=2.1.21,auto_compact_window=50000").create()
    assert isinstance(c, ClaudeCode) and c.threshold(view_of([user("u1")], chars4, ModelLimits(200_000, 64_000))) \
        == 17_000


@pytest.mark.parametrize(("version", "preset"), [("2.0.76", "2.0"), ("2.1.20", "2.0"), ("2.1.21", "2.1.21"),
                                                 ("2.1.49", "2.1.21"), ("3", None), ("dev", None)])
def test_version_presets(version: str, preset: str | None) -> None:
    """The sessions of ../shared (test_claude_code_versions has every boundary); None: the newest preset."""
    assert version_preset(version) == preset


def test_real_session_pre_tokens_are_input_plus_output(transcripts_dir: Path) -> None:
    """preTokens = the last call's input (with cache reads/writes) + output; the summary's wording."""
    records = [json.loads(line) for line in (transcripts_dir / "claude-code" / REAL).open()]
    (k,) = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    assert records[k]["compactMetadata"] == {"trigger": "auto", "preTokens": 155_548}
    u = next(r["message"]["usage"] for r in reversed(records[:k]) if isinstance(r.get("message"), dict)
             and r["message"].get("usage"))
    total = u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] + u["output_tokens"]
    assert total == 155_548
    text = records[k + 1]["message"]["content"]
    assert records[k + 1]["isCompactSummary"] and text.startswith(SUMMARY_PREFIX) and text.endswith(SUMMARY_SUFFIX)


def real_summaries(*folders: Path) -> list[tuple[str, str, str]]:
    """(version, trigger, text) of every isCompactSummary record in the real Claude Code sessions."""
    out = []
    for folder in folders:
        for f in shared_glob(folder / "claude-code", "*.jsonl"):
            records = [json.loads(line) for line in f.open() if line.strip()]
            trigger = ""
            for r in records:
                if r.get("subtype") == "compact_boundary":
                    trigger = r["compactMetadata"]["trigger"]
                if r.get("isCompactSummary"):
                    content = r["message"]["content"]
                    text = content if isinstance(content, str) else "".join(x.get("text", "") for x in content)
                    out.append((r["version"], trigger, text))
    return out


def test_2_1_continuation_message_is_the_real_one(real_compactions_dir: Path) -> None:
    """Every 2.1.x summary record (38): the new prefix (from 2.1.7; 2.0's through 2.1.5), the transcript line (the
    user's path, POSIX or Windows), and the instruction to continue: through 2.1.49 after an auto compaction
    only ("left off" from 2.1.38, "left it off" before); in 2.1.217 after a manual one too, in a longer wording
    (RESUME_217)."""
    seen = 0
    for version, trigger, text in real_summaries(real_compactions_dir):
        if not version.startswith("2.1"):
            continue
        seen += 1
        assert text.startswith(SUMMARY_PREFIX_21 if tuple(int(x) for x in version.split(".")) >= (2, 1, 7)
                               else SUMMARY_PREFIX)
        path_at = text.rindex(TRANSCRIPT_LINE.split("transcript at: ")[0]) + len(TRANSCRIPT_LINE.split(": ~")[0]) + 2
        tail = text[path_at:].split("\n", 1)
        assert tail[0].endswith(".jsonl")
        if tuple(int(x) for x in version.split(".")) >= (2, 1, 217):
            assert trigger == "manual" and tail[1] == RESUME_217
        elif trigger == "auto":
            continuing = SUMMARY_SUFFIX_21.rsplit("\n", 1)[-1]
            if tuple(int(x) for x in version.split(".")) < (2, 1, 38):
                continuing = continuing.replace("left off", "left it off")
            assert tail[1] == continuing
        else:
            assert len(tail) == 1
    assert seen == 38


def test_real_summaries_carry_an_analysis_and_nine_sections(transcripts_dir: Path,
                                                             real_compactions_dir: Path) -> None:
    """What is known of the real prompt: its output. All 42 summaries (2.0.60-2.1.217) have the nine sections the
    structured prompt names (2.1.217 sets their names in bold); 37 start with the analysis block."""
    found = real_summaries(transcripts_dir, real_compactions_dir)
    assert len(found) == 42
    for _, _, text in found:
        for i, name in enumerate(SECTIONS, 1):
            assert f"{i}. {name}".lower() in text.replace("**", "").lower()
    assert sum("\nAnalysis:\n" in text[:300] for _, _, text in found) == 37
    assert all(f"{i}. {name}" in STRUCTURED_PROMPT for i, name in enumerate(SECTIONS, 1))
    assert "<analysis>" in STRUCTURED_PROMPT and STRUCTURED_PROMPT != COMPACT_PROMPT


def test_compaction_summarizes_everything_but_the_system_head(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u1", "fix the bug"), assistant("a1", calls=[("c1", "bash", {"cmd": "ls"})]),
            tool("t1", "c1", "a.py"), system("late", "a reminder"), user("u2", "go on")]
    c = ClaudeCode(ClaudeCodeParams()).compact(view_of(msgs, chars4, ModelLimits(200_000, 64_000)), "auto")
    assert c.new_view == (Keep("sys"), Insert("user", SUMMARY_PREFIX, SUMMARY_SUFFIX, with_summary=True,
                                              origin="summary"))
    assert c.on_failure == "unchanged" and c.meta == {"threshold": 190_000.0}
    req = c.request
    assert req is not None and req.system == "" and req.max_output_tokens == 20_000
    assert req.prompt[:-1] == tuple(msgs)
    assert req.prompt[-1] == Message("claude-code-compact", "user", (Text(COMPACT_PROMPT),))
    assert [m.id for m in req.source] == ["u1", "a1", "t1", "late", "u2"]
    assert Insert("user", SUMMARY_PREFIX, SUMMARY_SUFFIX, with_summary=True).text("S") == (
        "This session is being continued from a previous conversation that ran out of context. The conversation "
        "is summarized below:\nS.\nPlease continue the conversation from where we left it off without asking the "
        "user any further questions. Continue with the last task that you were asked to work on.")


def test_custom_instructions_are_appended_as_compact_does(chars4: TokenCounter) -> None:
    cc = resolve("claude-code:preset=seed,custom_instructions=summarize only the TODOs,"
                 "max_summary_tokens=5000").create()
    assert isinstance(cc, ClaudeCode)
    c = cc.compact(view_of([user("u1")], chars4), "auto")
    assert c.request is not None and c.request.max_output_tokens == 5_000
    assert c.request.prompt[-1].text == COMPACT_PROMPT + "\n\nAdditional Instructions:\nsummarize only the TODOs"
    blank = ClaudeCode(ClaudeCodeParams(custom_instructions="   ")).compact(view_of([user("u1")], chars4), "auto")
    assert blank.request is not None and blank.request.prompt[-1].text == COMPACT_PROMPT


def small() -> list[Message]:
    return [system("sys", "S" * 40), user("u1", "x" * 400), assistant("a1", "A" * 40, calls=[("c1", "bash", {})]),
            tool("t1", "c1", "o" * 400), assistant("a2", "B" * 40), user("u2", "z" * 40), assistant("a3", "C" * 40)]


@pytest.mark.parametrize(("buffer", "compacts"), [(267, False), (268, True), (269, True)])
def test_replay_boundary_and_final_view(chars4: TokenCounter, buffer: int, compacts: bool) -> None:
    # chars4, no overhead: step 0 = 110 in + 12 out = 122; step 1 = 222 + 10 = 232; step 2 = 242 + 10 = 252
    # threshold = 1,000 - min(500, 500) - buffer: 233 (above 232) / 232 (equal) / 231 (below)
    cc = resolve(f"claude-code:preset=seed,output_reserve=500,autocompact_buffer={buffer}").create()
    tr = run(transcript(*small()), cc, chars4, window=1_000, max_output=500, summarizer=MockSummarizer("DONE"))
    assert [s.input + s.output for s in tr.steps[:2]] == [122, 232]
    if not compacts:
        assert tr.compactions == () and tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")
        return
    (ev,) = tr.compactions
    assert (ev.step, ev.phase, ev.ok, ev.tokens_before) == (2, "before", True, 242)
    assert ev.kept_ids == ("sys",) and ev.replaced_ids == ("u1", "a1", "t1", "a2", "u2")
    assert tr.final_view == ("sys", "compbench:1:1:summary", "a3")
    assert tr.steps[2].input == 10 + -(-len(SUMMARY_PREFIX + "DONE" + SUMMARY_SUFFIX) // 4)


def test_replay_failure_leaves_the_view_unchanged(chars4: TokenCounter) -> None:
    strategy = resolve("claude-code:preset=seed,output_reserve=500,autocompact_buffer=268").create()
    tr = run(transcript(*small()), strategy, chars4,
             window=1_000, max_output=500, summarizer=MockSummarizer(error="overloaded"))
    (ev,) = tr.compactions
    assert not ev.ok and ev.error == "overloaded"
    assert tr.final_view == ("sys", "u1", "a1", "t1", "a2", "u2", "a3")


def test_resolve_parses_params() -> None:
    p = resolve("claude-code:preset=current,threshold_ratio=0.9,custom_instructions=keep TODOs").params
    assert isinstance(p, ClaudeCodeParams)
    assert (p.threshold_ratio, p.output_reserve, p.autocompact_buffer, p.count_trailing, p.custom_instructions,
            p.max_summary_tokens) == (0.9, 20_000, 13_000, True, "keep TODOs", 20_000)
    old = resolve("claude-code:preset=2.0").params
    assert isinstance(old, ClaudeCodeParams) and (old.output_reserve, old.count_trailing) == (32_000, False)
    assert resolve("claude-code:preset=seed").params == ClaudeCodeParams()
    cur = resolve("claude-code:preset=current").create()
    assert isinstance(cur, ClaudeCode) and isinstance(cur.compact(view_of([user("u")], TokenCounter("chars4", 0)),
                                                                   "auto"), Compact)


@pytest.mark.parametrize(("spec", "total", "expected"), [
    ("preset=current", 466_999, False), ("preset=current", 467_000, True), ("preset=current", 467_001, True),
    # the user's CLAUDE_CODE_AUTO_COMPACT_WINDOW comes first: 600,000 - 20,000 - 13,000
    ("preset=current,auto_compact_window=600000", 566_999, False),
    ("preset=current,auto_compact_window=600000", 567_000, True),
    # large_window as a parameter: 0 is the whole 1M window
    ("preset=current,large_window=0", 966_999, False), ("preset=current,large_window=0", 967_000, True),
    ("preset=current,large_window=400000", 366_999, False), ("preset=current,large_window=400000", 367_000, True),
    ("preset=2.0", 954_999, False), ("preset=2.0", 955_000, True),
])
def test_a_1m_window_compacts_against_claude_codes_own_auto_compact_window(chars4: TokenCounter, spec: str,
                                                                            total: int, expected: bool) -> None:
    """On a 1M window today's Claude Code compacts at 500,000 - 20,000 - 13,000 = 467,000 (2.1.196 on, as
    reported); a 200k window is not affected (test_current_trigger_reserves_20k); the other versions'
    windows are in test_claude_code_versions."""
    c = resolve(f"claude-code:preset=seed,{spec}").create()
    assert isinstance(c, ClaudeCode)
    assert fires(c, total, ModelLimits(1_000_000, 64_000), chars4) is expected


# -- the files Claude Code re-attaches after a compaction -------------------------------------------------

def _reads(sizes: dict[str, int]) -> list[Message]:
    """One Read per file, in order, each returning ``n`` numbered lines of ~10 rough tokens."""
    from helpers import assistant, tool

    out: list[Message] = []
    for k, (path, n) in enumerate(sizes.items()):
        body = "\n".join(f"{i:>6}→    value_{i} = compute_something({i})" for i in range(1, n + 1))
        out += [assistant(f"a{k}", "", [(f"c{k}", "Read", {"file_path": path})]), tool(f"t{k}", f"c{k}", body, "Read")]
    return out


def test_restored_files_are_the_five_most_recent_and_small_enough() -> None:
    from compbench.strategies.claude_code import restored_files

    files = {f"/p/src/f{k}.py": 20 for k in range(7)} | {"/p/CLAUDE.md": 5}
    got = restored_files(_reads(files))
    assert [p for p, _ in got] == ["/p/src/f6.py", "/p/src/f5.py", "/p/src/f4.py", "/p/src/f3.py", "/p/src/f2.py"]
    assert all("Result of calling the Read tool" in text for _, text in got)  # memory files are never restored


@pytest.mark.parametrize(("lines", "content"), [(430, True), (450, False)])
def test_a_file_over_the_per_file_limit_is_named_not_restored(lines: int, content: bool) -> None:
    """~11.4 rough tokens a line: 430 lines stay under 5,000 tokens, 450 go over (a reference only)."""
    from compbench.strategies.claude_code import restored_files

    ((_, text),) = restored_files(_reads({"/p/big.py": lines}))
    assert ("Result of calling the Read tool" in text) is content
    assert ("too large to include" in text) is not content


def test_a_slice_of_a_long_file_is_judged_by_the_whole_files_size() -> None:
    """A Read with offset/limit shows lines 900-920: the file has at least 920 lines, too large to restore."""
    from compbench.strategies.claude_code import restored_files
    from helpers import assistant, tool

    body = "\n".join(f"{i:>6}→    value_{i} = compute_something({i})" for i in range(900, 921))
    msgs = [assistant("a", "", [("c", "Read", {"file_path": "/p/long.py", "offset": 900, "limit": 20})]),
            tool("t", "c", body, "Read")]
    ((_, text),) = restored_files(msgs)
    assert "too large to include" in text


def test_the_restore_budget_stops_adding_files() -> None:
    from compbench.strategies.claude_code import restored_files

    files = {f"/p/f{k}.py": 400 for k in range(5)}  # ~4,600 rough tokens each, with the attachment's wrapping
    assert len(restored_files(_reads(files), budget=50_000)) == 5
    assert len(restored_files(_reads(files), budget=9_382)) == 2  # two of 4,691 fit exactly
    assert len(restored_files(_reads(files), budget=9_381)) == 1


def test_current_compaction_reattaches_files_and_the_seed_does_not(o200k: TokenCounter) -> None:
    from helpers import view_of

    msgs = [Message("s", "system", (Text("sys"),)), *_reads({"/p/a.py": 10, "/p/b.py": 10})]
    view = view_of(msgs, o200k)
    current = resolve("claude-code:preset=current").create()
    seed = resolve("claude-code:preset=seed").create()
    inserted = [s for s in current.compact(view, "auto").new_view if isinstance(s, Insert) and not s.with_summary]
    assert [s.meta["restored"] for s in inserted] == ["file:p/b.py", "file:p/a.py"]
    assert not [s for s in seed.compact(view, "auto").new_view if isinstance(s, Insert) and not s.with_summary]
    assert current.read_before_edit and not seed.read_before_edit


def test_2_1_217_keeps_the_last_round_verbatim(chars4: TokenCounter) -> None:
    """2.1.217's preserved segment: a /compact at the end of a turn keeps the final reply; mid-turn (an auto
    compaction before the next call) the last response and its tool results. The rest is summarized; the
    presets before it keep nothing."""
    done = [user("u1", "rebuild the homepage"), assistant("a1", calls=[("c1", "Read", {"file_path": "/p/i.js"})]),
            tool("t1", "c1", "1\tx"), assistant("a2", "Done: the homepage leads with the install command.")]
    new = resolve("claude-code:preset=2.1.217").create()
    c = new.manual(view_of(done, chars4, ModelLimits(1_000_000, 128_000)))
    assert [s.id for s in c.new_view if isinstance(s, Keep)] == ["a2"]
    assert [m.id for m in c.request.source] == ["u1", "a1", "t1"]
    ((summary,),) = [[s for s in c.new_view if isinstance(s, Insert) and s.with_summary]]
    assert summary.after.endswith(RESUME_217)  # after a manual compaction too
    mid = [*done, user("u2", "and the footer"), assistant("a3", calls=[("c3", "Read", {"file_path": "/p/f.js"})]),
           tool("t3", "c3", "1\ty")]
    c = new.compact(view_of(mid, chars4, ModelLimits(1_000_000, 128_000)), "auto")
    assert [s.id for s in c.new_view if isinstance(s, Keep)] == ["a3", "t3"]
    restored = [s.meta["restored"] for s in c.new_view if isinstance(s, Insert) and "restored" in s.meta]
    assert restored == ["file:p/i.js"]  # /p/f.js is in the kept round: not attached again
    for preset in ("current", "2.1.21", "2.0"):
        old = resolve(f"claude-code:preset={preset}").create()
        assert not [s for s in old.compact(view_of(mid, chars4), "auto").new_view if isinstance(s, Keep)]

"""Derived facts, incremental presence, needed-fact recall and retention on hand-built sessions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import pytest

from compbench.data.facts import normalize, path_anchors
from compbench.measure.facts.derive import extract
from compbench.measure.facts.presence import FactIndex, Matcher, PresenceTracker
from compbench.measure.retention import evaluate, shapes
from compbench.measure.tokens import TokenCounter
from compbench.memo import Memo
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Entry, ModelLimits
from compbench.strategies import resolve
from compbench.summarizers.mock import MockSummarizer
from helpers import CutBefore, assistant, run, tool, transcript, user

T = transcript(
    user("u1", "Fix the login bug. Never touch the migrations folder."),
    assistant("a0", "Searching.", [("c0", "bash", {"command": "grep -rl 'def login' src"})]),
    tool("t0", "c0", "/home/me/proj/src/auth/login.py"),
    assistant("a1", "Reading.", [("c1", "read", {"file_path": "/home/me/proj/src/auth/login.py"})]),
    tool("t1", "c1", "def login(): raise KeyError('user')"),
    assistant("a2", "Running tests.", [("c2", "bash", {"command": "pytest tests/test_auth.py"})]),
    tool("t2", "c2", "FAILED tests/test_auth.py::test_login - KeyError: 'user'"),
    assistant("a3", "Fixing.", [("c3", "edit", {"file_path": "/home/me/proj/src/auth/login.py", "old": "a"})]),
    tool("t3", "c3", "ok"),
    user("u2", "Thanks. Next add logging."),
    assistant("a4", "I changed src/auth/login.py earlier; now I rerun tests/test_auth.py::test_login."),
)


def by_text(facts: Sequence[object]) -> dict[str, object]:
    return {f.text: f for f in facts}  # type: ignore[attr-defined]


def test_extractors_find_each_kind() -> None:
    facts = by_text(extract(T))
    login = facts["/home/me/proj/src/auth/login.py"]
    assert login.kind == "artifact" and login.meta == {"modified": True}  # type: ignore[attr-defined]
    assert login.anchors == ("/home/me/proj/src/auth/login.py", "auth/login.py")  # type: ignore[attr-defined]
    assert facts["pytest tests/test_auth.py"].kind == "recall"  # type: ignore[attr-defined]
    assert facts["tests/test_auth.py::test_login"].kind == "recall"  # type: ignore[attr-defined]
    assert "KeyError: 'user')" in facts or "KeyError: 'user'" in facts
    decision = facts["Never touch the migrations folder."]
    # the clause without its closing punctuation: a restatement that goes on still matches
    assert decision.kind == "decision" and decision.anchors == ("never touch the migrations folder",)  # type: ignore[attr-defined]


def test_path_anchor_fuzzy_threshold_and_normalization() -> None:
    assert path_anchors("C:\\Users\\Me\\app.py") == ("c:/users/me/app.py", "me/app.py")
    assert path_anchors("src/app.py") == ("src/app.py",)
    assert normalize("  A\\B   c ") == "a/b c"


def test_matcher_finds_overlapping_and_prefix_anchors() -> None:
    facts = extract(T)
    m = Matcher(facts)
    ids = {f.text: f.id for f in facts}
    found = m.facts_in("rerun PYTEST tests/test_auth.py now; see tests/test_auth.py::test_login")
    assert ids["pytest tests/test_auth.py"] in found and ids["tests/test_auth.py::test_login"] in found


def test_needs_are_references_not_reintroduced() -> None:
    index = FactIndex.build(T, extract(T))
    ids = {f.text: f.id for f in index.facts}
    # a4 mentions the test id, established by t2, not re-introduced by u2; the login path too, but a3,
    # the step before, used it: still at hand, no need
    assert set(index.needs[10]) == {ids["tests/test_auth.py::test_login"]}
    # a3 edits login.py, but t2 did not mention it; the path came from t0's output -> a need at a3 too
    assert ids["/home/me/proj/src/auth/login.py"] in index.needs[7]
    # a1 reads the path t0 has just printed: re-introduced since the previous step, no need
    assert 3 not in index.needs
    # the command is the agent's own: never a need, however often it is typed again
    assert by_text(index.facts)["pytest tests/test_auth.py"].provenance == "agent"  # type: ignore[attr-defined]


def measure(strategy: object, summary: str, counter: TokenCounter) -> dict[str, object]:
    index = FactIndex.build(T, extract(T))
    tracker = PresenceTracker(index)
    trace = replay(T, strategy, MockSummarizer(summary), ReplayConfig(ModelLimits(100_000, 1000)),  # type: ignore[arg-type]
                   counter, None, tracker)
    row, events, _ = evaluate(T, trace, index, tracker, counter.index(T).part_tokens)
    return {"row": row, "events": events, "index": index}


def test_keeping_everything_scores_one(chars4: TokenCounter) -> None:
    tracker_run = measure(resolve("none").create(), "", chars4)
    row = tracker_run["row"]
    # a strategy that never acts scores no need: its recall is undefined, not a perfect 100%
    assert math.isnan(row["needed_recall"]) and row["needs"] == 0 and row["needs_all"] > 0  # type: ignore[index]
    assert row["first_action_step"] == -1  # type: ignore[index]
    assert math.isnan(row["retention_at_compaction"])  # type: ignore[index]


def test_dropping_a_fact_loses_exactly_that_fact(chars4: TokenCounter) -> None:
    # the summary keeps the login path (by its tail) and the test id, but not the decision or the command
    out = measure(CutBefore(4, keep=("u2",)), "fixed auth/login.py; failing tests/test_auth.py::test_login", chars4)
    row, (ev,), index = out["row"], out["events"], out["index"]  # type: ignore[misc]
    ids = {f.text: f.id for f in index.facts}  # type: ignore[attr-defined]
    assert ids["Never touch the migrations folder."] in ev.lost
    assert ids["pytest tests/test_auth.py"] in ev.lost
    assert ids["/home/me/proj/src/auth/login.py"] not in ev.lost
    assert ids["tests/test_auth.py::test_login"] not in ev.lost
    assert ev.guard_dropped_constraint
    assert row["needed_recall"] == 1.0  # type: ignore[index]
    # a summary that drops the test id: the need at a4 for it is missed
    out2 = measure(CutBefore(4, keep=("u2",)), "fixed auth/login.py", chars4)
    assert out2["row"]["needs"] == 1 and out2["row"]["needs_present"] == 0  # type: ignore[index]


def test_fabricated_shapes_are_flagged(chars4: TokenCounter) -> None:
    out = measure(CutBefore(4), "edited src/auth/login.py and src/auth/session_store.py", chars4)
    (ev,) = out["events"]  # type: ignore[misc]
    assert ev.fabricated == ("src/auth/session_store.py",) and ev.candidates == 2
    assert shapes("call load_user_profile in utils/db.py") == ["utils/db.py", "load_user_profile"]


def test_a_path_from_a_kept_message_is_seen_not_fabricated(chars4: TokenCounter) -> None:
    """The summarizer saw the whole view, the messages the compaction keeps included (Codex keeps the
    user's messages verbatim): a path only they name is not fabricated; one nobody named is."""
    t = transcript(user("u1", "Follow docs/plan.md for this."),
                   assistant("a0", "Listing.", [("c0", "bash", {"command": "ls"})]), tool("t0", "c0", "README"),
                   assistant("a1", "Done."))
    index = FactIndex.build(t, extract(t))
    tracker = PresenceTracker(index)
    trace = replay(t, CutBefore(1, keep=("u1",)), MockSummarizer("followed docs/plan.md, wrote src/ghost.py"),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(100_000, 1000)), chars4, None, tracker)
    _, (ev,), _ = evaluate(t, trace, index, tracker, chars4.index(t).part_tokens)
    assert ev.fabricated == ("src/ghost.py",) and ev.candidates == 2


def test_calibrated_writes_a_fact_as_the_span_spells_it() -> None:
    """A file named relatively where the span shows it and absolutely in a later message is one fact with
    the later spelling: the summary writes the anchor the span holds, not a path from the future; a
    spelling anywhere in the span (a word of it) is kept as it is."""
    from compbench.data.facts import Fact
    from compbench.data.transcript import Text
    from compbench.summarizers.calibrated import _as_spelled, _Words

    plan = Text("the plan: edit proj/src/app.rs first")
    span = [user("u1", "the plan: edit proj/src/app.rs first")]
    f = Fact("f1", "artifact", "/home/me/proj/src/app.rs", ("/home/me/proj/src/app.rs", "src/app.rs"))
    assert _as_spelled(f, plan, _Words(span, None)).text == "src/app.rs"
    assert _as_spelled(f, Text("wrote /home/me/proj/src/app.rs"), _Words(span, None)) is f
    later = [*span, assistant("a1", "Writing.", [("c1", "write", {"file_path": "/home/me/proj/src/app.rs"})])]
    assert _as_spelled(f, plan, _Words(later, None)) is f  # the span spells it further on
    assert _as_spelled(f, plan, _Words(span, "- `/home/me/proj/src/app.rs`")) is f  # its earlier summary does
    d = Fact("d1", "decision", "Never touch the migrations folder.", ("never touch the migrations folder",))
    said = Text("never touch the migrations folder, ok?")
    assert _as_spelled(d, said, _Words(span, None)).text == "never touch the migrations folder"


def test_run_helpers_still_work_without_observer(chars4: TokenCounter) -> None:
    assert len(run(T, resolve("none").create(), chars4).steps) == 5


class BruteForce(PresenceTracker):
    """The step ratios recomputed from scratch at every step: what the incremental counters must equal."""

    def step(self, step: int, message_index: int) -> None:
        super().step(step, message_index)
        if not self.acted:
            return
        est = [f for f in self.index.facts if f.received and 0 <= f.first_index < message_index]
        if not est:
            return

        def on(d: dict[str, int], f: str) -> bool:
            return d.get(f, 0) > 0

        n = len(est)
        present = sum(1 for f in est if on(self.counts, f.id) or on(self.carried, f.id))
        verbatim = sum(1 for f in est if on(self.counts, f.id))
        upper = sum(1 for f in est if on(self.counts, f.id) or on(self.carried, f.id) or on(self.copied, f.id))
        assert self.step_ratios[-1] == (present / n, verbatim / n, upper / n)
        assert self._n_any == len(self.present())


def test_incremental_retention_counters_equal_a_recount() -> None:
    from compbench.data.synth import generate
    from compbench.measure.facts.sources import facts_for
    from compbench.sdk.context import ReplayContext
    from compbench.summarizers.calibrated import CalibratedSummarizer
    from compbench.summarizers.extractive import copy_text

    counter = TokenCounter("chars4", 0)
    for t in generate(3, seed=12, turns=40, log_lines=40, code_lines=40):
        index = FactIndex.build(t, facts_for(t))
        for spec in ("observation-masking:keep_last_turns=2", "opencode", "claude-code",
                     "pi:reserve_tokens=2000,keep_recent_tokens=2000", "truncate"):
            context = ReplayContext()
            context.begin(t, index)
            summ = CalibratedSummarizer(context=context)
            tracker = BruteForce(index, copy_text)
            replay(t, resolve(spec).create(), summ, ReplayConfig(ModelLimits(8_000, 1_000)), counter, None, tracker,
                   context=context)
            assert tracker.acted and tracker.step_ratios



@pytest.mark.parametrize("command", ["curl -s localhost:3000/api/health", "curl http://localhost:3000/api/health",
                                     "curl 127.0.0.1:8080/v1/items/list", "wget api.example.com/v1/users/x"])
def test_a_web_address_is_not_a_file_path(command: str) -> None:
    from compbench.data.calls import command_paths

    assert command_paths(command) == []


@pytest.mark.parametrize(("command", "path"), [("cat src/api/views.py", "src/api/views.py"),
                                               ("ls app/api/health/route.ts", "app/api/health/route.ts"),
                                               ("grep -n foo src/a/b.ts:12", "src/a/b.ts")])
def test_a_file_path_beside_a_colon_or_a_route_like_folder_stays_a_path(command: str, path: str) -> None:
    from compbench.data.calls import command_paths

    assert [p for p, _ in command_paths(command)] == [path]


def test_what_the_summarizer_saw_is_found_part_by_part_as_in_the_whole_text(chars4: TokenCounter) -> None:
    """EventOutcome.saw answers as a test against the normalized whole view would: a path in one part, one
    split across two parts (not seen: parts are joined by a newline), and a text with a space."""
    from compbench.measure.facts.presence import EventOutcome
    from compbench.sdk.session import Entry

    msgs = [user("u0", "Look at SRC\\Auth\\Login.py please"), assistant("a1", "src/auth/ then"),
            tool("t1", "c1", "login.py found")]
    entries = [Entry(m, chars4.message(m), chars4.parts(m), index=i) for i, m in enumerate(msgs)]
    oc = EventOutcome(1, frozenset(), before_entries=entries, inserted_text={})
    wanted = {"src/auth/login.py", "then login.py", "src/auth/ then", "ghost.py", "auth/ then\nlogin"}
    whole = normalize(oc.seen_text)
    assert oc.saw(wanted) == {w for w in wanted if w in whole} == {"src/auth/login.py", "src/auth/ then",
                                                                  "then login.py"}


def test_a_calls_match_text_is_decoded_once_and_the_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked again (each compaction asks for the span's texts), a call's text comes from the memo, equal calls
    share it, and past its bound the memo starts over."""
    from compbench.data.transcript import ToolCall
    from compbench.measure.facts import matching

    monkeypatch.setattr(matching, "_CALL_TEXTS", Memo(matching.CALL_TEXTS_CHARS, 2, size=lambda _, t: len(t)))
    decoded: list[str] = []
    real = matching.call_text
    monkeypatch.setattr(matching, "call_text", lambda c: decoded.append(c.id) or real(c))
    a = ToolCall("c1", "Bash", '{"command": "ls \\"x\\""}')
    assert matching.part_match_text(a) == 'Bash ls "x"'
    assert matching.part_match_text(ToolCall("c1", "Bash", '{"command": "ls \\"x\\""}')) == 'Bash ls "x"'
    assert decoded == ["c1"]
    matching.part_match_text(ToolCall("c2", "Bash", "{}"))
    matching.part_match_text(ToolCall("c3", "Bash", "{}"))  # the third: the memo starts over
    assert len(matching._CALL_TEXTS) == 1
    assert matching.part_match_text(a) == 'Bash ls "x"' and decoded == ["c1", "c2", "c3", "c1"]


def _copied(made: list[Compact], a: Compact) -> str:
    from compbench.summarizers.extractive import copy_text

    made.append(a)
    return copy_text(a)


def test_the_copy_of_a_summary_is_made_only_for_a_summary_that_joins_the_view() -> None:
    """The optimistic end (what an extractive copy of the span carries) is made when a summary joins the view:
    a compaction refused (aider as its code reads since 0.72, preset snapshot-race, drops every summary) never
    makes it, one applied carries it as before (the same presence as a tracker making every copy at once)."""
    from compbench.data.synth import generate
    from compbench.measure.facts.sources import facts_for
    from compbench.sdk.context import ReplayContext
    from compbench.summarizers.calibrated import CalibratedSummarizer
    from compbench.summarizers.extractive import copy_text

    class Eager(PresenceTracker):
        def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None:
            super().action(seq, done, entries, act)
            if not done and self._copy_of is not None:  # the copy made at once, as before
                self._pending_copy |= self.index.matcher.facts_in(copy_text(self._copy_of))
                self._copy_of = None

    counter = TokenCounter("chars4", 0)
    t = next(iter(generate(1, seed=5, turns=40, log_lines=40, code_lines=40)))
    index = FactIndex.build(t, facts_for(t))
    for spec in ("aider:preset=snapshot-race,max_chat_history_tokens=3000", "opencode"):
        made: list[Compact] = []
        trackers = []
        for tracker in (PresenceTracker(index, partial(_copied, made)), Eager(index, copy_text)):
            context = ReplayContext()
            context.begin(t, index)
            trace = replay(t, resolve(spec).create(), CalibratedSummarizer(context=context),
                           ReplayConfig(ModelLimits(8_000, 1_000)), counter, None, tracker, context=context)
            trackers.append(tracker)
        assert trace.compactions
        applied = [c for c in trace.compactions if c.applied]
        assert bool(applied) == (spec == "opencode")  # snapshot-race drops every summary
        assert len(made) == len(applied)
        lazy, eager = trackers
        assert (lazy.inserted_copy, lazy.copied, lazy.step_ratios) == (eager.inserted_copy, eager.copied,
                                                                       eager.step_ratios)


def test_a_texts_normalization_is_remembered_within_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """What each compaction's fabrication check reads again (the view's recorded parts) is normalized once; past
    the bound the memo starts over, and the answer is normalize's either way."""
    from compbench.measure.facts import matching

    monkeypatch.setattr(matching, "_NORMALIZED", Memo(30))
    a, b = "Edit SRC\\App.py  now", "Then   RUN the Tests"
    assert matching.normalized(a) == normalize(a) == "edit src/app.py now"
    assert matching.normalized(a) is matching._NORMALIZED[a]
    assert matching.normalized(b) == normalize(b)  # 21 + 20 characters > 30: the memo started over
    assert list(matching._NORMALIZED) == [b]

"""The definitions retention rests on, pinned on hand-built sessions: which facts are needs, when a need
is met, and that a strategy which drops what the agent needs loses exactly those needs."""

from __future__ import annotations

import pytest

from compbench.data.boilerplate import boilerplate_keys, scan
from compbench.data.transcript import Transcript
from compbench.measure.facts.derive import extract
from compbench.measure.facts.presence import FactIndex, NeedHit, PresenceTracker
from compbench.measure.retention import evaluate
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import ModelLimits
from compbench.sdk.trace import Trace
from compbench.strategies import resolve, runnable
from compbench.summarizers.mock import MockSummarizer
from helpers import CutBefore, assistant, system, tool, transcript, user

PATH = "/repo/src/engine/scheduler_core.py"


def hits(t: Transcript, strategy: object, summary: str = "", counter: TokenCounter | None = None,
         window: int = 1_000_000) -> tuple[list[NeedHit], FactIndex, Trace, dict[str, object]]:
    counter = counter or TokenCounter("chars4", 0)
    index = FactIndex.build(t, extract(t))
    tracker = PresenceTracker(index)
    trace = replay(t, strategy, MockSummarizer(summary or None), ReplayConfig(ModelLimits(window, 1_000)),  # type: ignore[arg-type]
                   counter, None, tracker)
    row, _, _ = evaluate(t, trace, index, tracker, counter.index(t).part_tokens)
    return tracker.need_hits, index, trace, row


def fact(index: FactIndex, text: str) -> str:
    return next(f.id for f in index.facts if f.text == text)


# u0 asks; a1 searches; t1's output reveals PATH (tool provenance); a2 does something else; a3 uses PATH
SEARCH = transcript(
    user("u0", "The scheduler drops jobs. Find and fix it."),
    assistant("a1", "Searching.", [("c1", "bash", {"command": "grep -rl 'def schedule' /repo/src"})]),
    tool("t1", "c1", PATH),
    assistant("a2", "Checking the tests first.", [("c2", "bash", {"command": "ls /repo/tests"})]),
    tool("t2", "c2", "test_queue.py"),
    assistant("a3", "Opening it.", [("c3", "read", {"file_path": PATH})]),
    tool("t3", "c3", "def schedule(job): ..."),
)


def test_a_tool_revealed_path_used_later_is_a_need() -> None:
    found, index, _, _ = hits(SEARCH, resolve("none").create())
    f = next(f for f in index.facts if f.kind == "artifact")
    assert f.provenance == "tool" and f.first_index == 2 and f.received
    assert [(h.step, h.fact) for h in found] == [(2, f.id)]


def test_a_need_met_only_by_the_needing_message_itself_is_not_met() -> None:
    # the view before a3 holds the summary only; a3 names the path itself, but a3 is not in its own prompt
    found, _index, _, row = hits(SEARCH, CutBefore(2), summary="worked on the scheduler")
    (h,) = found
    assert h.scored and not h.present and not h.verbatim and not h.carried
    assert row["needs"] == 1 and row["needs_present"] == 0 and row["needed_recall"] == 0.0
    # the same cut with a summary that names the path: met, and met by the summary, not verbatim
    found, _, _, row = hits(SEARCH, CutBefore(2), summary=f"the bug is in {PATH}")
    assert found[0].present and found[0].carried and not found[0].verbatim
    assert row["needs_carried"] == 1 and row["needed_recall_lo"] == 0.0 and row["needed_recall"] == 1.0


def test_an_agent_invented_command_is_not_a_need() -> None:
    t = transcript(
        user("u0", "Make the build green."),
        assistant("a1", "Running the full check.", [("c1", "bash", {"command": "make check-all VERBOSE=1"})]),
        tool("t1", "c1", "2 failures"),
        assistant("a2", "Looking at failures.", [("c2", "read", {"file_path": "/repo/Makefile.inc"})]),
        tool("t2", "c2", "check-all: lint test"),
        assistant("a3", "Again.", [("c3", "bash", {"command": "make check-all VERBOSE=1"})]),
    )
    found, index, _, _ = hits(t, CutBefore(1))
    cmd = next(f for f in index.facts if f.text == "make check-all VERBOSE=1")
    assert cmd.provenance == "agent" and not cmd.received
    assert cmd.id not in {h.fact for h in found}


def test_a_user_constraint_restated_before_a_cut_and_kept_is_met() -> None:
    rule = "Never edit anything under third_party/vendored_libs/."
    t = transcript(
        user("u0", f"Upgrade the parser. {rule}"),
        assistant("a1", "Noted: never edit anything under third_party/vendored_libs/ while upgrading."),
        user("u1", "Go ahead."),
        assistant("a2", "Reading.", [("c2", "read", {"file_path": "/repo/src/parser/grammar_v2.py"})]),
        tool("t2", "c2", "grammar = ..."),
        assistant("a3", "Done; as required I did never edit anything under third_party/vendored_libs/ at all."),
    )
    d = fact(FactIndex.build(t, extract(t)), rule)
    # the cut drops the user's message but keeps the agent's restatement (made after the rule, before the need)
    found, index, _, _ = hits(t, CutBefore(2, keep=("a1", "u1")))
    assert next(f for f in index.facts if f.id == d).provenance == "user"
    (h,) = [h for h in found if h.fact == d]
    assert h.scored and h.present and h.verbatim
    # without the restatement kept, the same need is lost
    found, _, _, _ = hits(t, CutBefore(2, keep=("u1",)))
    assert not next(h for h in found if h.fact == d).present


def test_boilerplate_instructions_are_no_needs() -> None:
    template = "Do not modify any tests under the tests/ directory."

    def task(i: int) -> Transcript:
        return transcript(
            system("sys", "You work in /workspace/project_root. Read /workspace/AGENTS_RULES.md first."),
            user("u0", f"Issue #{i}: the widget renders twice.\n{template}\nMust keep widget_{i}_api stable."),
            assistant("a1", "Reading the rules.", [("c1", "read", {"file_path": "/workspace/AGENTS_RULES.md"})]),
            tool("t1", "c1", "rules"),
            assistant("a2", "Checking.", [("c2", "bash", {"command": "ls"})]),
            tool("t2", "c2", "src"),
            assistant("a3", f"I must keep widget_{i}_api stable and do not modify any tests under the tests/ "
                            "directory; rules are in /workspace/AGENTS_RULES.md."),
            id=f"t{i}")

    data = [task(i) for i in range(4)]
    templates = scan(data)
    assert any("do not modify any tests" in line for line in templates.lines["compbench"])
    t = data[0]
    facts = extract(t)
    index = FactIndex.build(t, facts, boilerplate_keys(t, facts, templates))
    by_text = {f.text: f for f in index.facts}
    assert by_text["Do not modify any tests under the tests/ directory."].boilerplate
    rules = next(f for f in index.facts if f.kind == "artifact" and "agents_rules" in f.anchors[0])
    assert rules.provenance == "system" and rules.boilerplate  # the system prompt is boilerplate
    unique = by_text["Must keep widget_0_api stable."]
    assert unique.received and not unique.boilerplate
    needed = {f for ids in index.needs.values() for f in ids}
    assert needed == {unique.id}
    # with fewer transcripts than a template needs, a repeated line is not guessed to be one
    assert scan(data[:2]).lines == {}


def test_a_pruned_tool_output_needed_later_is_lost() -> None:
    masking = resolve("observation-masking:keep_last_turns=1").create()
    found, _index, trace, row = hits(SEARCH, masking)
    (h,) = found
    assert trace.prunes and h.scored and not h.present  # t1 was masked before a3 needed what it said
    assert row["retention_at_prune"] < 1.0
    # keeping two turns, t1 is still visible at a3: met
    found, _, _, _ = hits(SEARCH, resolve("observation-masking:keep_last_turns=2").create())
    assert found[0].present


# One user prompt, then many tool calls: the SWE-style session. An early user constraint and an early
# tool-revealed path are used again only at the very end.
RULE = "Never change the public signature of run_pipeline."
EARLY_PATH = "/srv/app/pipeline/stage_registry.py"
BULK = "x = 1\n" * 1_500  # ~2,250 tokens (chars/4) per output


def long_turn() -> Transcript:
    msgs = [system(), user("u0", f"Speed up the pipeline. {RULE}"),
            assistant("a0", "Finding the stages.", [("c0", "bash", {"command": "grep -rl Stage /srv/app"})]),
            tool("t0", "c0", EARLY_PATH)]
    for k in range(1, 36):
        msgs += [assistant(f"a{k}", f"Step {k}.", [(f"c{k}", "bash", {"command": f"cat /srv/app/gen/mod{k}.txt"})]),
                 tool(f"t{k}", f"c{k}", BULK)]
    msgs.append(assistant("a_end", f"Finally I edit {EARLY_PATH}; never change the public signature of "
                                   "run_pipeline.", [("ce", "edit", {"file_path": EARLY_PATH, "old": "a"})]))
    return transcript(*msgs, id="long-turn")


def _visible_at(trace: Trace, step: int) -> tuple[set[str], set[tuple[str, int]]]:
    """Message ids in the prompt of ``step`` and the (id, part) pairs pruned before it."""
    rec = trace.steps[step]
    ids = set(trace.epochs[rec.epoch])
    t = long_turn()
    start = trace.epoch_starts[rec.epoch]
    ids |= {m.id for m in t.messages[start:rec.message_index]}
    pruned = {(mid, part) for p in trace.prunes if p.step < step or (p.step == step and p.phase == "before")
              for mid, part in p.parts}
    return ids, pruned


@pytest.mark.parametrize("name", runnable())
def test_a_long_single_turn_loses_exactly_the_dropped_early_facts(name: str) -> None:
    t = long_turn()
    found, index, trace, _ = hits(t, resolve(name).create(), counter=TokenCounter("chars4", 0), window=40_000)
    rule, path = fact(index, RULE), next(f.id for f in index.facts if f.text == EARLY_PATH)
    last = len(trace.steps) - 1
    end = {h.fact: h for h in found if h.step == last}
    assert set(end) == {rule, path}  # both are needs at the end, whatever the strategy
    visible, pruned = _visible_at(trace, last)
    # mock summaries carry nothing: a need is met exactly when its source message is still in the prompt
    assert not any(h.carried for h in end.values())
    # Crush (go-replace's default) re-sends the user's last request, here the first prompt, in its new history
    resent = name == "go-replace" and any(v.endswith(":synthetic") for v in visible)
    assert end[rule].present == (("u0" in visible and ("u0", 0) not in pruned) or resent)  # Cline rewrites u0
    assert end[path].present == ("t0" in visible and ("t0", 0) not in pruned)


def test_the_long_single_turn_is_lost_by_the_strategies_that_drop_it() -> None:
    lost = set()
    for name in runnable():
        found, _index, trace, _ = hits(long_turn(), resolve(name).create(), window=40_000)
        if trace.compactions or trace.prunes:
            last = len(trace.steps) - 1
            if not all(h.present for h in found if h.step == last):
                lost.add(name)
    # summarizing and truncating strategies drop the early span (the mock summary carries nothing);
    # masking hides the early tool output
    assert {"opencode", "claude-code", "observation-masking"} <= lost


def test_the_hindsight_oracle_bounds_every_strategy() -> None:
    from compbench.measure.retention import oracle_present
    from compbench.sdk.trace import StepRecord

    # three needs at one step; a prompt of 20 tokens holds the two cheapest facts written out
    facts = {f"f{k}": type("F", (), {"text": "x" * n})() for k, n in enumerate((20, 30, 200))}
    missed = [NeedHit(0, f"f{k}", False, False, False, True) for k in range(3)]
    step = StepRecord(0, "a", 1, 25, 1, 0, 0, 1, 0, False)
    trace = type("T", (), {"steps": (step,)})()
    assert oracle_present(trace, missed, facts, system_tokens=5) == 2  # type: ignore[arg-type]
    # a strategy that met more than the oracle's written facts: the oracle can always do what it did
    met = [NeedHit(0, f"f{k}", True, False, False, True) for k in range(3)]
    assert oracle_present(trace, met, facts, system_tokens=5) == 3  # type: ignore[arg-type]
    # and on the long single turn, under every strategy, it meets at least what the strategy met
    for name in runnable():
        row = hits(long_turn(), resolve(name).create(), window=40_000)[3]
        assert row["oracle_present"] >= row["needs_present"]  # type: ignore[operator]


# The user fixes a value; much later the agent uses the value without restating the rule.
PORT = transcript(
    user("u0", "Add a health check. The test server must listen on port 8431."),
    assistant("a1", "Looking at the server.", [("c1", "bash", {"command": "ls server"})]),
    tool("t1", "c1", "app.py"),
    assistant("a2", "Writing the check.", [("c2", "bash", {"command": "echo ok"})]),
    tool("t2", "c2", "ok"),
    assistant("a3", "Running the tests.", [("c3", "bash", {"command": "pytest tests -q --port 8431"})]),
    tool("t3", "c3", "1 passed"),
)


def test_a_constraint_used_later_by_its_value_is_a_need() -> None:
    found, index, _, _ = hits(PORT, resolve("none").create())
    constraint = next(f for f in index.facts if f.kind == "decision")
    assert "8431" in constraint.anchors and constraint.provenance == "user"
    assert [(h.step, h.fact) for h in found] == [(2, constraint.id)]
    # dropped before the step that uses it: missed; a summary that keeps the value: met
    (lost,), _, _, _ = hits(PORT, CutBefore(2), summary="added a health check")
    (kept,), _, _, _ = hits(PORT, CutBefore(2), summary="tests run against port 8431")
    assert not lost.present and kept.carried


def test_a_constraint_whose_value_is_never_used_again_is_no_need() -> None:
    t = transcript(*PORT.messages[:5], assistant("a3", "Done.", [("c3", "bash", {"command": "pytest -q"})]))
    found, _, _, _ = hits(t, resolve("none").create())
    assert found == []


@pytest.mark.parametrize(("path", "need"), [("/repo/package.json", False), ("/repo/README.md", False),
                                            ("/repo/src/pkg/scheduler_core.py", True),
                                            ("/repo/docs/package.json.md", True)])
def test_a_conventional_file_name_is_no_need(path: str, need: bool) -> None:
    """An agent types package.json without having seen it: using it later needs nothing the view kept."""
    t = transcript(
        user("u0", "Fix the build."),
        assistant("a1", "Listing.", [("c1", "bash", {"command": "ls /repo"})]),
        tool("t1", "c1", path),
        assistant("a2", "Thinking.", [("c2", "bash", {"command": "echo hm"})]),
        tool("t2", "c2", "hm"),
        assistant("a3", "Opening it.", [("c3", "read", {"file_path": path})]),
        tool("t3", "c3", "{}"),
    )
    found, _, _, row = hits(t, resolve("none").create())
    assert bool(found) is need
    assert row["facts_conventional"] == (0 if need else 1)


def test_needs_are_split_by_their_distance_from_the_compaction() -> None:
    """CutBefore(2) compacts before call 2: the need at call 2 is 'soon' (0 calls after it)."""
    _, _, _, row = hits(SEARCH, CutBefore(2), summary="worked on the scheduler")
    assert (row["needs_soon"], row["needs_later"]) == (1, 0)
    _, _, _, row = hits(SEARCH, resolve("none").create())
    assert (row["needs_soon"], row["needs_later"]) == (0, 0)  # nothing scored before a strategy acts


def test_a_need_the_recorded_agent_met_only_by_reacquiring_is_marked() -> None:
    """The tool compacted after t1 (its summary does not name the path); the agent listed the folder again
    (t2 shows the path) and used it at a3: a need met, in the record, only by re-acquiring."""
    from dataclasses import replace

    from compbench.data.transcript import RecordedCompaction
    from compbench.measure.retention import reacquired_in_record

    t = transcript(
        user("u0", "The scheduler drops jobs. Find and fix it."),
        assistant("a1", "Searching.", [("c1", "bash", {"command": "grep -rl 'def schedule' /repo/src"})]),
        tool("t1", "c1", PATH),
        user("s", "Summary: looking for the scheduler bug."),
        assistant("a2", "Listing again.", [("c2", "bash", {"command": "ls /repo/src/engine"})]),
        tool("t2", "c2", PATH),
        assistant("a2b", "Thinking.", [("c4", "bash", {"command": "echo hm"})]),
        tool("t4", "c4", "hm"),
        assistant("a3", "Opening it.", [("c3", "read", {"file_path": PATH})]),
        tool("t3", "c3", "def schedule(job): ..."),
    )
    rc = RecordedCompaction(3, "compbench", "auto", 1000, "Summary: looking for the scheduler bug.")
    t = replace(t, compactions=(rc,))
    index = FactIndex.build(t, extract(t))
    path = next(f.id for f in index.facts if f.kind == "artifact" and f.text == PATH)
    assert (8, path) in reacquired_in_record(t, index)
    carried = replace(t, compactions=(replace(rc, summary=f"Found it in {PATH}."),))
    assert (8, path) not in reacquired_in_record(carried, FactIndex.build(carried, extract(carried)))


@pytest.mark.parametrize(("first", "need"), [
    ("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun tests with make check-scheduler-fast\n</INSTRUCTIONS>",
     False),
    ("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>\nmake check-scheduler-fast", False),
    ("Please note: run tests with make check-scheduler-fast", True),  # the user's own words: a need
])
def test_what_an_instructions_file_states_is_no_need(first: str, need: bool) -> None:
    """Codex sends AGENTS.md as a user message and re-sends it after every compaction; the other tools keep
    theirs in the system prompt: an agent never has to remember what its instructions file says."""
    t = transcript(
        user("u0", first),
        user("u1", "Fix the scheduler."),
        assistant("a1", "Looking.", [("c1", "bash", {"command": "echo hm"})]),
        tool("t1", "c1", "hm"),
        assistant("a2", "Still looking.", [("c2", "bash", {"command": "echo hm2"})]),
        tool("t2", "c2", "hm2"),
        assistant("a3", "Testing.", [("c3", "bash", {"command": "make check-scheduler-fast"})]),
        tool("t3", "c3", "ok"),
    )
    found, index, _, _ = hits(t, resolve("none").create())
    stated = [f for f in index.facts if "check-scheduler-fast" in " ".join(f.anchors)]
    assert stated and all(f.provenance == ("user" if need else "system") for f in stated)
    assert bool(found) is need


def _retyped(command: str) -> Transcript:
    """t1 reveals ``command`` (tool provenance); the agent types it at a2, then again at a4 after a gap."""
    return transcript(
        user("u0", "Fix the scheduler."),
        assistant("a1", "How are tests run?", [("c1", "bash", {"command": "cat CONTRIBUTING"})]),
        tool("t1", "c1", f"Run the suite with: {command}"),
        assistant("a2", "Running.", [("c2", "bash", {"command": command})]),
        tool("t2", "c2", "1 failed"),
        assistant("a3", "Editing.", [("c3", "bash", {"command": "echo fix"})]),
        tool("t3", "c3", "fix"),
        assistant("a4", "Again.", [("c4", "bash", {"command": command})]),
        tool("t4", "c4", "ok"),
    )


def test_a_command_the_agent_has_typed_itself_is_no_longer_a_need() -> None:
    """After real compactions that dropped it, agents typed such a command again without looking 20 times in
    22 (compbench.validation.discounts): the first use of what the tool printed is a need (a2 follows t1
    directly, so none here); a later retyping is not, unless the discount is lifted to measure it."""
    t = _retyped("make check-scheduler-fast")
    index = FactIndex.build(t, extract(t))
    cmd = fact(index, "make check-scheduler-fast")
    assert next(f for f in index.facts if f.id == cmd).provenance == "tool"
    assert all(cmd not in ids for ids in index.needs.values())
    lifted = FactIndex.build(t, extract(t), retyped=False)
    assert lifted.needs.get(7) == (cmd,)


def test_a_path_the_agent_has_typed_stays_a_need() -> None:
    """Paths are not retyped from memory as commands are (20 of 68 without looking): still needs."""
    path = "/repo/src/engine/scheduler_core.py"
    t = transcript(
        user("u0", "Fix the scheduler."),
        assistant("a1", "Searching.", [("c1", "bash", {"command": "grep -rl drop /repo"})]),
        tool("t1", "c1", path),
        assistant("a2", "Reading.", [("c2", "read", {"file_path": path})]),
        tool("t2", "c2", "def run(): pass"),
        assistant("a3", "Thinking.", [("c3", "bash", {"command": "echo hm"})]),
        tool("t3", "c3", "hm"),
        assistant("a4", "Editing.", [("c4", "edit", {"file_path": path, "old_string": "pass", "new_string": "x"})]),
        tool("t4", "c4", "ok"),
    )
    index = FactIndex.build(t, extract(t))
    assert any(f.kind == "artifact" for f in index.facts if f.id in index.needs.get(7, ()))

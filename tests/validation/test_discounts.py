"""The measurement behind the needs retention discounts (compbench.validation.discounts), on a hand-made
session with one real compaction: a command the agent had typed comes back without looking; a path comes
back through a search; the sibling of a path the summary names is its own class."""

from __future__ import annotations

from compbench.data.facts import Fact
from compbench.data.transcript import RecordedCompaction, Transcript
from compbench.validation.discounts import category, directories, table, tally
from helpers import assistant, tool, user

CMD = "make check-scheduler-fast"
PATH = "/repo/src/engine/scheduler_core.py"


def session(summary: str) -> Transcript:
    msgs = (
        user("u0", "Fix the scheduler."),
        assistant("a1", "How are tests run?", [("c1", "bash", {"command": "cat CONTRIBUTING"})]),
        tool("t1", "c1", f"Run the suite with: {CMD}"),
        assistant("a2", "Running.", [("c2", "bash", {"command": CMD})]),
        tool("t2", "c2", "1 failed"),
        assistant("a3", "Searching.", [("c3", "bash", {"command": "grep -rl drop /repo"})]),
        tool("t3", "c3", PATH),
        assistant("a4", "Thinking.", [("c4", "bash", {"command": "echo hm"})]),
        tool("t4", "c4", "hm"),
        # the tool compacted here: nothing kept, only the summary
        assistant("a5", "Where was I? Tests first.", [("c5", "bash", {"command": CMD})]),
        tool("t5", "c5", "1 failed"),
        assistant("a6", "Searching again.", [("c6", "bash", {"command": "grep -rl drop /repo"})]),
        tool("t6", "c6", PATH),
        assistant("a6b", "Thinking.", [("c6b", "bash", {"command": "echo hm2"})]),
        tool("t6b", "c6b", "hm2"),
        assistant("a7", "Editing.", [("c7", "edit", {"file_path": PATH, "old_string": "a", "new_string": "b"})]),
        tool("t7", "c7", "ok"),
    )
    return Transcript("s", "claude-code", msgs, compactions=(RecordedCompaction(9, "claude-code", "auto", 1000,
                                                                               summary),))


def test_a_retyped_command_is_met_without_looking_and_a_path_by_searching_again() -> None:
    counts = tally([session("Working on the scheduler.")])
    assert counts[("recall the agent had typed", True)] == 1
    assert counts[("other path", False)] == 1
    assert sum(counts.values()) == 2
    assert table(counts)[0].startswith("class")


def test_what_the_summary_carries_is_no_need_to_measure_and_a_sibling_is_its_own_class() -> None:
    counts = tally([session(f"Tests: {CMD}. Looked at /repo/src/engine/queue.py.")])
    assert ("recall the agent had typed", True) not in counts  # the summary held it
    assert counts[("sibling of a named path", False)] == 1
    assert directories("see /repo/src/engine/queue.py and lib/x.ts") == {"engine", "lib"}
    path = Fact("x", "artifact", PATH, ("engine/scheduler_core.py",))
    assert category(path, {"engine"}, typed=False) == "sibling of a named path"
    assert category(path, {"lib"}, typed=True) == "other path"

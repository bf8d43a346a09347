"""Predicted re-acquisition: content a strategy's view lost that the recorded agent needs again.

Hand-made sessions: a file read, compacted away, then edited must cost a re-read of its size; the same with
the tool re-attaching it, or with a summary quoting it (unless the tool insists on a read), costs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from compbench.data.calls import touches
from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript, Usage
from compbench.measure.facts.presence import FactIndex, PresenceTracker
from compbench.measure.models import Prices
from compbench.measure.reacquire import ContentTracker, Trackers, counted, reacquisition_cost
from compbench.measure.tokens import TokenCounter
from compbench.measure.workset import WorkingSet, content_lines, has_content
from compbench.replay.loop import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.sdk.trace import Trace
from compbench.summarizers.mock import MockSummarizer
from compbench.validation.reacquisition import at_compactions, spearman, summarize
from helpers import assistant, system, tool, transcript, user

BODY = "\n".join(f"{i:>6}→    def handler_{i}(request):  # route number {i} of the service" for i in range(1, 41))
PATH = "/home/u/proj/src/app/main.py"


def _read(mid: str, cid: str, path: str = PATH) -> Message:
    return assistant(mid, "let me read it", [(cid, "Read", {"file_path": path})])


def _session(use: Message) -> Transcript:
    """system, task, read main.py, five unrelated steps, then ``use``."""
    msgs = [system(), user("u1", "fix the routes"), _read("a1", "c1"), tool("t1", "c1", BODY, "Read")]
    for k in range(2, 7):
        msgs += [assistant(f"a{k}", f"step {k}", [(f"c{k}", "Bash", {"command": f"echo {k}"})]),
                 tool(f"t{k}", f"c{k}", f"output {k}")]
    msgs.append(use)
    return transcript(*msgs)


EDIT = assistant("a9", "now the fix", [("c9", "Edit", {"file_path": PATH, "old_string": "x", "new_string": "y"})])
MENTION = assistant("a9", "the bug is in src/app/main.py, as the traceback says", [("c9", "Bash", {"command": "ls"})])


class CompactAt:
    """Summarizes everything but the system prompt before the call of ``step``; ``restore`` re-inserts text."""

    name = "compact-at"

    def __init__(self, step: int, restore: str = "", read_before_edit: bool = False) -> None:
        self.at, self.restore, self.read_before_edit = step, restore, read_before_edit

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.step != self.at:
            return ()
        view = (Keep(s.entries[0].id), Insert("user", "Summary: ", with_summary=True, origin="summary"),
                *((Insert("user", self.restore),) if self.restore else ()))
        return (Compact("test", view, SummaryRequest("", s.rendered(), s.rendered(1), 1000)),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def _replay(t: Transcript, strategy: CompactAt, summary: str, counter: TokenCounter) -> tuple[Trace, ContentTracker]:
    index = counter.index(t)
    content = ContentTracker(WorkingSet.build(t, index.part_tokens))
    facts = FactIndex.build(t, [])
    trace = replay(t, strategy, MockSummarizer(summary), ReplayConfig(ModelLimits(128_000, 4_096)), counter, index,
                   Trackers(PresenceTracker(facts), content))
    return trace, content


def test_a_file_read_compacted_away_then_edited_is_a_reread_of_its_size(o200k: TokenCounter) -> None:
    t = _session(EDIT)
    _, content = _replay(t, CompactAt(5), "worked on the routes", o200k)
    (r,) = content.events
    assert (r.key, r.how, r.kind) == ("file:app/main.py", "edit", "file")
    assert r.tokens == o200k.index(t).part_tokens[3][0]  # the read's output, as counted
    assert r.step == 6 and r.since == 1  # left before call 5, needed at call 6


def test_nothing_is_reacquired_before_the_strategy_acts_or_when_the_view_still_holds_it(o200k: TokenCounter) -> None:
    t = _session(EDIT)
    _, never = _replay(t, CompactAt(99), "", o200k)
    assert never.events == []
    # compacting before the read: the read comes after, the view holds it at the edit
    _, early = _replay(t, CompactAt(0), "", o200k)
    assert early.events == []


def test_a_tool_that_reattaches_the_file_spares_the_reread(o200k: TokenCounter) -> None:
    _, restored = _replay(_session(EDIT), CompactAt(5, restore=BODY), "", o200k)
    assert restored.events == []
    # half the lines is still holding it; a tenth is not
    half = "\n".join(BODY.splitlines()[:20])
    tenth = "\n".join(BODY.splitlines()[:4])
    assert _replay(_session(EDIT), CompactAt(5, restore=half), "", o200k)[1].events == []
    assert len(_replay(_session(EDIT), CompactAt(5, restore=tenth), "", o200k)[1].events) == 1


def test_an_empty_summary_costs_more_than_one_that_carries_the_content(o200k: TokenCounter) -> None:
    t = _session(MENTION)
    _, empty = _replay(t, CompactAt(5), "", o200k)
    _, carrying = _replay(t, CompactAt(5), "Files:\n" + BODY, o200k)
    assert [r.how for r in empty.events] == ["mention"] and carrying.events == []
    # an edit under a read-before-edit tool (Claude Code) still needs the read, quoted or not
    _, guarded = _replay(_session(EDIT), CompactAt(5), "Files:\n" + BODY, o200k)
    assert [r.carried for r in guarded.events] == [True]
    assert counted(guarded.events, read_before_edit=True) == guarded.events
    assert counted(guarded.events, read_before_edit=False) == []


def test_a_path_in_a_summary_is_not_the_files_content(o200k: TokenCounter) -> None:
    _, named = _replay(_session(EDIT), CompactAt(5), "We edited src/app/main.py (routes).", o200k)
    assert len(named.events) == 1


def test_the_cost_rides_along_until_the_next_compaction() -> None:
    from compbench.sdk.trace import StepRecord

    steps = [StepRecord(k, f"m{k}", k, 10_000, 50, 9_000, 0, 1, 0, False) for k in range(10)]

    from compbench.measure.reacquire import Reacquisition
    from compbench.sdk.events import CompactionEvent

    ev = [Reacquisition(4, 8, "file:a/b.py", "file", "edit", 1_000, 1, False)]
    cut = CompactionEvent(1, 7, "before", "x", True, 0, 0, ("m1",), (), 0, "", 0, 0, 0)
    p = Prices(input=3e-6, output=15e-6, cache_read=0.3e-6, cache_write=3.75e-6)
    c = reacquisition_cost(ev, steps, [cut], p, call_tokens=60)
    # the extra call sends step 4's context; 1,060 tokens ride along steps 4, 5, 6 (the compaction at 7 drops them)
    assert (c.count, c.content, c.content_soon) == (1, 1_000, 1_000)
    assert c.input == 10_000 + 1_060 * 3 and c.output == 60
    assert c.usd == pytest.approx(9_000 * 0.3e-6 + 1_000 * 3e-6 + 60 * 15e-6 + 1_060 * 3.75e-6 + 1_060 * 2 * 0.3e-6)
    assert reacquisition_cost([], steps, [cut], p).input == 0


@pytest.mark.parametrize(("name", "args", "want"), [
    ("Read", {"file_path": "/x/src/api/views.py"}, ("file:api/views.py", "read")),
    ("Edit", {"file_path": "api/views.py", "old_string": "a", "new_string": "b"}, ("file:api/views.py", "edit")),
    ("Write", {"file_path": "api/new.py", "content": "x"}, ("file:api/new.py", "write")),
    ("Grep", {"pattern": "def handler", "path": "/x"}, ("search:grep path=/x pattern=def handler", "read")),
    ("Bash", {"command": "cd /x && sed -n 1,200p src/api/views.py"}, ("file:api/views.py", "read")),
    ("Bash", {"command": "rg -n handler src"}, ("search:rg -n handler src", "read")),
    ("Bash", {"command": "git show HEAD~1"}, ("inspect:git show HEAD~1", "read")),
    ("Bash", {"command": "pytest tests/test_api.py -q"}, None),  # a state probe: re-run to see what changed
    ("Bash", {"command": "npm run build"}, None),
])
def test_what_a_tool_call_delivers(name: str, args: dict[str, object], want: tuple[str, str] | None) -> None:
    from compbench.data.transcript import ToolCall

    got = touches(ToolCall("c", name, json.dumps(args)))
    assert ([(x.key, x.verb) for x in got][:1] or [None])[0] == want


def test_content_lines_fold_gutters_and_skip_short_lines() -> None:
    assert content_lines("    12→    return compute_total(items)\n}\n") == content_lines("return compute_total(items)")
    assert content_lines("}\nimport os\n") == frozenset()


@pytest.mark.parametrize("text", [
    "", "}\nimport os\n", "    12→    x = 1          \n", "12\tshort line here\n", "1234567890123456",
    "   a    b    c    d    e    f   ", "  7: return compute_total(items)", "x\r\nreturn compute_total(items)\r\n",
    "\u2028return compute_total(items)", "99999999999999999999→",
])
def test_whether_an_output_has_content_is_what_its_lines_say(text: str) -> None:
    """The early exit the working set takes before hashing a body agrees with the lines it would hash."""
    assert has_content(text) is bool(content_lines(text))


def _real(restored: bool, reread: bool, edit: bool = True) -> Transcript:
    """A recorded session with a real compaction after the read; after it, optionally a re-read, then an edit."""
    msgs = [user("u1", "fix the routes"), _read("a1", "c1"), tool("t1", "c1", BODY, "Read"),
            assistant("a2", "done reading"), Message("s", "user", (Text("Summary of the work so far."),))]
    if reread:
        msgs += [_read("a3", "c3"), tool("t3", "c3", BODY, "Read")]
    msgs += [EDIT if edit else assistant("a9", "all good")]
    meta = {"restored": [PATH]} if restored else {}
    return Transcript("real", "pi", tuple(msgs), compactions=(RecordedCompaction(4, "pi", "auto", 1000, "Summary",
                                                                                 meta=meta),))


def test_at_a_real_compaction_prediction_and_observation(o200k: TokenCounter) -> None:
    size = o200k.index(_real(False, True)).part_tokens[2][0]
    (r,) = at_compactions(_real(False, True), o200k.index(_real(False, True)).part_tokens)
    assert (r.reacq_predicted, r.reacq_observed) == (size, size)
    (r,) = at_compactions(_real(False, False), o200k.index(_real(False, False)).part_tokens)
    assert (r.reacq_predicted, r.reacq_observed) == (size, 0)  # predicted, though this agent did not
    (r,) = at_compactions(_real(True, False), o200k.index(_real(True, False)).part_tokens)
    assert (r.reacq_predicted, r.restored) == (0, 1)  # the tool re-attached it
    (r,) = at_compactions(_real(False, True, edit=False), o200k.index(_real(False, True, edit=False)).part_tokens)
    assert (r.reacq_predicted, r.reacq_observed) == (0, size)  # re-read without a use: observed only


def test_spearman_and_summary() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    assert spearman([1, 2], [1, 2]) != spearman([1, 2], [1, 2])  # NaN: too few points
    s = summarize([])
    assert s["all"]["compactions"] == 0


def test_effective_savings_is_net_savings_less_what_reacquisition_adds() -> None:
    """Pooled over transcripts: 1 − (input + summarizer + re-acquired) / none's input; the
    ``reacquired_tokens`` metric is that last term per transcript (lower is better)."""
    import pandas as pd

    from compbench.decide.compare import estimate
    from compbench.decide.metrics import metric

    df = pd.DataFrame({
        "transcript_id": ["a", "b"], "input_tokens": [400, 300], "summarizer_input_tokens": [50, 0],
        "summarizer_output_tokens": [10, 0], "reacquired_tokens": [140, 0], "reference_input_tokens": [1000, 500],
        "first_action_step": [3, 2]})
    net = estimate(df, metric("net_savings"), resamples=50).value
    eff = estimate(df, metric("effective_savings"), resamples=50).value
    assert net == pytest.approx(1 - 760 / 1500) and eff == pytest.approx(1 - 900 / 1500)
    assert net - eff == pytest.approx(140 / 1500)
    m = metric("reacquired_tokens")
    assert not m.higher_is_better and estimate(df, m, resamples=50).value == pytest.approx(70)

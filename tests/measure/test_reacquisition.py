"""Predicted re-acquisition in a replay: content a strategy's view lost that the recorded agent needs again.

Hand-made sessions, at explicit rates (not the shipped ones): a file read, compacted away, then edited costs the
edit's share of what the agent had of it; re-attached or quoted by a summary it costs nothing, except an edit
under a read-before-edit guard; a mention costs its own share and an edit after it the difference; files of
the replaced segment with no later use cost the orientation share, more when read recently.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from compbench.data.calls import touches
from compbench.data.transcript import Message, Transcript, Usage
from compbench.measure.facts.presence import FactIndex, PresenceTracker
from compbench.measure.models import Prices
from compbench.measure.reacquire import ContentTracker, Trackers, counted, reacquisition_cost
from compbench.measure.reacquire_rules import Rates
from compbench.measure.tokens import TokenCounter
from compbench.measure.workset import WorkingSet, content_lines, has_content
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.sdk.trace import Trace
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, system, tool, transcript, user

BODY = "\n".join(f"{i:>6}→    def handler_{i}(request):  # route number {i} of the service" for i in range(1, 41))
PATH = "/home/u/proj/src/app/main.py"
OTHER = "/home/u/proj/src/app/util.py"
UTIL = "\n".join(f"{i:>6}→    def helper_{i}(value):  # helper number {i} of the module" for i in range(1, 31))
RATES = Rates({"edit": 0.5, "edit-changed": 0.25, "mention": 0.1, "lines": 0.0, "orientation-recent": 0.2,
               "orientation": 0.02}, caused=1.0, recent_steps=3)


def _read(mid: str, cid: str, path: str = PATH, **slice_: int) -> Message:
    return assistant(mid, "let me read it", [(cid, "Read", {"file_path": path, **slice_})])


def _session(*use: Message, before: Sequence[Message] = ()) -> Transcript:
    """system, task, read main.py, ``before``, five unrelated steps, then ``use``."""
    msgs = [system(), user("u1", "fix the routes"), _read("a1", "c1"), tool("t1", "c1", BODY, "Read"), *before]
    for k in range(2, 7):
        msgs += [assistant(f"a{k}", f"step {k}", [(f"c{k}", "Bash", {"command": f"echo {k}"})]),
                 tool(f"t{k}", f"c{k}", f"output {k}")]
    msgs += use
    return transcript(*msgs)


EDIT = assistant("a9", "now the fix", [("c9", "Edit", {"file_path": PATH, "old_string": "x", "new_string": "y"})])
MENTION = assistant("a8", "the bug is in src/app/main.py, as the traceback says", [("c8", "Bash", {"command": "ls"})])


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
    content = ContentTracker(WorkingSet.build(t, index.part_tokens), rates=RATES)
    facts = FactIndex.build(t, [])
    trace = replay(t, strategy, MockSummarizer(summary), ReplayConfig(ModelLimits(128_000, 4_096)), counter, index,
                   Trackers(PresenceTracker(facts), content))
    return trace, content


def _uses(events: Sequence[object]) -> list[object]:
    return [e for e in events if not getattr(e, "klass", "").startswith("orientation")]


def test_a_file_read_compacted_away_then_edited_costs_the_edits_share_of_it(o200k: TokenCounter) -> None:
    t = _session(EDIT)
    _, content = _replay(t, CompactAt(5), "worked on the routes", o200k)
    (r,) = _uses(content.events)
    size = o200k.index(t).part_tokens[3][0]  # the read's output, as counted
    assert (r.key, r.klass, r.kind, r.served) == ("file:app/main.py", "edit", "file", "")
    assert r.tokens == round(0.5 * size)
    assert r.step == 6 and r.since == 1  # left before call 5, needed at call 6


def test_nothing_is_reacquired_before_the_strategy_acts_or_when_the_view_still_holds_it(o200k: TokenCounter) -> None:
    t = _session(EDIT)
    _, never = _replay(t, CompactAt(99), "", o200k)
    assert never.events == []
    # compacting before the read: the read comes after, the view holds it at the edit
    _, early = _replay(t, CompactAt(0), "", o200k)
    assert early.events == []


def test_a_reattached_file_spares_a_mention_and_an_edit_only_without_the_guard(o200k: TokenCounter) -> None:
    """Claude Code's read state does not survive its compaction: an edit of a file it re-attached still costs a
    read (anthropics/claude-code#28160, #85488). The tracker records it; the strategy's guard decides."""
    _, mentioned = _replay(_session(MENTION), CompactAt(5, restore=BODY), "", o200k)
    assert _uses(mentioned.events) == []
    _, edited = _replay(_session(EDIT), CompactAt(5, restore=BODY), "", o200k)
    (r,) = _uses(edited.events)
    assert (r.klass, r.served) == ("edit", "attached")
    assert counted(edited.events, read_before_edit=True) == edited.events  # the guard: paid
    assert _uses(counted(edited.events, read_before_edit=False)) == []  # no guard: the attachment serves it
    # half the lines is still holding it; a tenth is not
    half = "\n".join(BODY.splitlines()[:20])
    tenth = "\n".join(BODY.splitlines()[:4])
    assert _uses(counted(_replay(_session(EDIT), CompactAt(5, restore=half), "", o200k)[1].events, False)) == []
    assert len(_uses(counted(_replay(_session(EDIT), CompactAt(5, restore=tenth), "", o200k)[1].events, False))) == 1


def test_an_empty_summary_costs_more_than_one_that_carries_the_content(o200k: TokenCounter) -> None:
    t = _session(MENTION)
    _, empty = _replay(t, CompactAt(5), "", o200k)
    _, carrying = _replay(t, CompactAt(5), "Files:\n" + BODY, o200k)
    assert [r.klass for r in _uses(empty.events)] == ["mention"] and _uses(carrying.events) == []
    # an edit under a read-before-edit tool (Claude Code) still needs the read, quoted or not
    _, guarded = _replay(_session(EDIT), CompactAt(5), "Files:\n" + BODY, o200k)
    assert [r.served for r in _uses(guarded.events)] == ["summary"]
    assert _uses(counted(guarded.events, read_before_edit=False)) == []


def test_a_path_in_a_summary_is_not_the_files_content(o200k: TokenCounter) -> None:
    _, named = _replay(_session(EDIT), CompactAt(5), "We edited src/app/main.py (routes).", o200k)
    assert len(_uses(named.events)) == 1


def test_an_edit_after_a_mention_adds_what_the_edit_reads_back_beyond_it(o200k: TokenCounter) -> None:
    t = _session(MENTION, EDIT)
    _, content = _replay(t, CompactAt(5), "", o200k)
    size = o200k.index(t).part_tokens[3][0]
    assert [(r.klass, r.tokens) for r in _uses(content.events)] == [("mention", round(0.1 * size)),
                                                                      ("edit", round(0.4 * size))]
    # the other way round, the mention after the edit adds nothing
    again = assistant("a10", "the bug was in src/app/main.py", [("c10", "Bash", {"command": "ls"})])
    _, reverse = _replay(_session(EDIT, again), CompactAt(5), "", o200k)
    assert [r.klass for r in _uses(reverse.events)] == ["edit"]


def test_an_edit_of_a_file_the_agent_changed_since_its_last_read_costs_its_own_share(o200k: TokenCounter) -> None:
    """Read, edited, compacted away, edited again: the agent had changed it since its last read, so the edit is
    of class ``edit-changed`` at its share (it goes back to where it was editing); a read after its edit makes it
    a plain edit again."""
    first = assistant("b0", "first fix", [("e0", "Edit", {"file_path": PATH, "old_string": "a", "new_string": "b"})])
    t = _session(EDIT, before=[first])
    _, content = _replay(t, CompactAt(6), "", o200k)
    (r,) = _uses(content.events)
    size = o200k.index(t).part_tokens[3][0]
    assert (r.klass, r.tokens) == ("edit-changed", round(0.25 * size))
    read_again = [first, _read("b1", "d1"), tool("r1", "d1", BODY, "Read")]
    _, plain = _replay(_session(EDIT, before=read_again), CompactAt(7), "", o200k)
    assert [e.klass for e in _uses(plain.events)] == ["edit"]


def test_what_is_read_back_is_what_the_agent_had_not_its_latest_slice(o200k: TokenCounter) -> None:
    """Read whole, then a 3-line slice: the edit reads back what the agent had (the whole file), where the
    former rule charged the slice."""
    lines = BODY.splitlines()
    sliced = [_read("b1", "d1", offset=10, limit=3), tool("r1", "d1", "\n".join(lines[9:12]), "Read")]
    t = _session(EDIT, before=sliced)
    index = o200k.index(t)
    _, content = _replay(t, CompactAt(6), "", o200k)
    (r,) = _uses(content.events)
    whole, piece = index.part_tokens[3][0], index.part_tokens[5][0]
    assert r.tokens == round(0.5 * whole) and r.tokens > 2 * piece


def test_two_slices_are_what_the_agent_had_of_a_file_it_never_read_whole(o200k: TokenCounter) -> None:
    lines = BODY.splitlines()
    first = [_read("b1", "d1", offset=1, limit=10), tool("r1", "d1", "\n".join(lines[:10]), "Read")]
    t = transcript(system(), user("u1", "x"), *first, _read("b2", "d2", offset=20, limit=10),
                   tool("r2", "d2", "\n".join(lines[19:29]), "Read"), EDIT)
    ws = WorkingSet.build(t, o200k.index(t).part_tokens)
    parts = o200k.index(t).part_tokens
    assert ws.had("file:app/main.py", len(t.messages)) == parts[3][0] + parts[5][0]
    assert ws.had("file:app/main.py", 5) == parts[3][0]  # before the second slice's output (message 5)
    assert ws.had("file:app/main.py", 3) == 0  # the first output is message 3: nothing before it
    # an overlapping slice adds only its new lines
    again = transcript(*t.messages[:6], _read("b3", "d3", offset=1, limit=12),
                       tool("r3", "d3", "\n".join(lines[:12]), "Read"))
    ws2 = WorkingSet.build(again, o200k.index(again).part_tokens)
    p2 = o200k.index(again).part_tokens
    assert ws2.had("file:app/main.py", 8) == round(p2[3][0] + p2[5][0] + p2[7][0] * 2 / 12)


def test_orientation_reads_the_segments_files_with_no_later_use_more_when_recent(o200k: TokenCounter) -> None:
    """util.py's output comes after call 1 (2 calls before it) and is never used again; main.py is edited after:
    it costs its use, not orientation. Recent means fewer than ``recent_steps`` (3) calls before the compaction."""
    util = [_read("b1", "d1", OTHER), tool("r1", "d1", UTIL, "Read")]
    t = _session(EDIT, before=util)
    size = o200k.index(t).part_tokens[5][0]
    # before call 5: 3 calls since util.py's output, not recent
    _, older = _replay(t, CompactAt(5), "", o200k)
    (o,) = [r for r in older.events if r.klass.startswith("orientation")]
    assert (o.key, o.klass, o.tokens, o.step) == ("file:app/util.py", "orientation", round(0.02 * size), 5)
    # before call 4: 2 calls since, recent
    _, recent = _replay(t, CompactAt(4), "", o200k)
    (o,) = [r for r in recent.events if r.klass.startswith("orientation")]
    assert (o.klass, o.tokens) == ("orientation-recent", round(0.2 * size))
    # a file named again later is no orientation read: its use costs it
    named = _session(assistant("a9", "see src/app/util.py"), before=util)
    _, used = _replay(named, CompactAt(5), "", o200k)
    assert [(r.key, r.klass) for r in used.events if r.key == "file:app/util.py"] == [("file:app/util.py", "mention")]
    # a file of an earlier segment (before the strategy's previous compaction) is no orientation read either
    _, twice = _replay(t, CompactTwice(2, 5), "", o200k)
    assert not [r for r in twice.events if r.klass.startswith("orientation") and r.step == 5]


class CompactTwice(CompactAt):
    def __init__(self, first: int, second: int) -> None:
        super().__init__(first)
        self.second = second

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.step == self.second:
            self.at = self.second
        return super().before_step(s)


def test_the_cost_rides_along_until_the_next_compaction() -> None:
    from compbench.sdk.trace import StepRecord

    steps = [StepRecord(k, f"m{k}", k, 10_000, 50, 9_000, 0, 1, 0, False) for k in range(10)]

    from compbench.measure.reacquire import Reacquisition
    from compbench.sdk.events import CompactionEvent

    ev = [Reacquisition(4, 8, "file:a/b.py", "file", "edit", 1_000, 1, "")]
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

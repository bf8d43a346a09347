"""``opencode``'s tool-output prune (seed 001 ``prune``, :mod:`compbench.strategies.opencode_prune`): what it
selects in a replay, when it runs, its boundaries, where its walk stops, and the grid's shared walk
against a line-by-line transcription of the seed.

Counts use the ``chars4`` counter without message overhead; OpenCode's estimate is round(chars/4).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from compbench.data.transcript import Message, Text, ToolResult, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Entry, Prune, SessionView
from compbench.strategies import resolve
from compbench.strategies.opencode import OpenCode, OpenCodeParams
from compbench.strategies.opencode_prune import select
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, tool, transcript, user, view_of

PH = "[Old tool result content cleared]"


def seed() -> OpenCode:
    return OpenCode(OpenCodeParams())


def current() -> OpenCode:
    oc = resolve("opencode:preset=current").create()
    assert isinstance(oc, OpenCode)
    return oc


# --- prune (seed 001) ----------------------------------------------------------------------------------------


def huge(turns: int) -> list[Message]:
    """Each turn: a prompt, an assistant with three calls, three 30,000-char results (7,500 tokens each).
    Turn 2's first call is the protected ``skill``; turn 1's third result is an error."""
    out: list[Message] = []
    for k in range(1, turns + 1):
        names = ["skill" if k == 2 else "bash", "bash", "bash"]
        out += [user(f"u{k}"), assistant(f"a{k}", calls=[(f"c{k}_{j}", names[j], {}) for j in range(3)])]
        out += [tool(f"t{k}_{j}", f"c{k}_{j}", "x" * 30_000, name=names[j], is_error=(k == 1 and j == 2))
                for j in range(3)]
    return out


def test_replay_prunes_exactly_what_seed_001_selects(chars4: TokenCounter) -> None:
    t = transcript(*huge(12), user("u13"), assistant("a13"))
    summarizer = MockSummarizer()
    tr = run(t, seed(), chars4, window=1_000_000, summarizer=summarizer)
    assert tr.compactions == () and summarizer.requests == []
    # When u_k arrives, the prune walks the view before it: turn k-1 (turns 0) and turn k-2 (turns 1) are
    # skipped, counting starts at turn k-3. Every output is round(30000/4) = 7,500; the 6th counted
    # crosses PROTECT (45,000 > 40,000). At u7 the counted outputs, newest first, are t4_2 t4_1 t4_0 t3_2
    # t3_1 (37,500, protected), then t3_0, t2_2, t2_1 (t2_0 is `skill`), t1_1, t1_0 (t1_2 errored):
    # 5 x 7,500 = 37,500 > 20,000. At u5 (4 counted) and u6 (7 counted, 15,000 selected) nothing is pruned.
    first = tr.prunes[0]
    assert (first.step, first.phase) == (6, "before")
    assert first.parts == (("t3_0", 0), ("t2_2", 0), ("t2_1", 0), ("t1_1", 0), ("t1_0", 0))
    assert first.tokens_hidden == 5 * (7_500 - 9)  # the placeholder is ceil(33/4) = 9 tokens
    # From u8 on: turn k-3 whole and t(k-4)_2, t(k-4)_1 are the protected 37,500; t(k-4)_0 crosses; then
    # t(k-5)_2, t(k-5)_1 and the walk stops at t(k-5)_0, already pruned: 3 x 7,500 = 22,500 > 20,000.
    later = [(p.step, p.parts) for p in tr.prunes[1:]]
    assert later == [(k - 1, ((f"t{k - 4}_0", 0), (f"t{k - 5}_2", 0), (f"t{k - 5}_1", 0))) for k in range(8, 14)]
    assert all(p.tokens_hidden == 3 * 7_491 for p in tr.prunes[1:])
    assert len(tr.final_view) == len(t.messages)  # nothing removed, only hidden
    assert current_prunes(t, chars4) == 0  # prune is off in preset current


def current_prunes(t: Transcript, chars4: TokenCounter) -> int:
    return len(run(t, current(), chars4, window=1_000_000).prunes)


def test_prune_runs_once_per_prompt_and_before_a_queued_compaction(chars4: TokenCounter) -> None:
    v = view_of([*huge(6), user("u7")], chars4)
    oc = seed()
    oc.after_step(v, Usage(input=10**9))
    pr, c = oc.before_step(v)
    assert isinstance(pr, Prune) and [m for m, _, _ in pr.targets] == ["t3_0", "t2_2", "t2_1", "t1_1", "t1_0"]
    assert isinstance(c, Compact) and c.request is not None
    shown = {m.id: m for m in c.request.prompt}
    assert shown["t3_0"].parts[0].output == PH and shown["t3_1"].parts[0].output == "x" * 30_000  # type: ignore[union-attr]
    assert not oc.before_step(v)  # the same prompt is not pruned twice


def prune_view(chars4: TokenCounter, newer: int, older: int) -> SessionView:
    msgs = [user("u1"), assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", "o" * older),
            user("u2"), assistant("a2", calls=[("c2", "bash", {})]), tool("t2", "c2", "n" * newer),
            user("u3"), assistant("a3"), user("u4")]
    return view_of(msgs, chars4)


@pytest.mark.parametrize(("newer", "older", "expected"), [
    (159_996, 80_002, ["t1"]),  # t2 = 39,999: protected; t1 = 20,000.5 -> 20,001 > MINIMUM
    (160_000, 80_002, ["t1"]),  # t2 = 40,000: not > PROTECT, still protected
    (160_004, 80_002, ["t2", "t1"]),  # t2 = 40,001 > PROTECT: selected itself
    (160_000, 80_001, None),  # t1 = 20,000.25 -> 20,000: not > MINIMUM
    (160_000, 80_000, None),  # exactly 20,000
])
def test_prune_protect_and_minimum_boundaries(chars4: TokenCounter, newer: int, older: int,
                                              expected: list[str] | None) -> None:
    p = select(prune_view(chars4, newer, older).entries)
    assert (None if p is None else [m for m, _, _ in p.targets]) == expected
    if p is not None:
        assert all(part == 0 and text == PH for _, part, text in p.targets)


def test_prune_skips_the_last_two_user_turns_and_stops_at_the_summary(chars4: TokenCounter) -> None:
    big = "b" * 200_000  # 50,000 tokens: over PROTECT on its own
    two = [user("u1"), assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", big),
           user("u2"), assistant("a2", calls=[("c2", "bash", {})]), tool("t2", "c2", big)]
    assert select(view_of(two, chars4).entries) is None  # t1 is in turn 1 (turns == 1): skipped
    p = select(view_of([*two, user("u3")], chars4).entries)
    assert p is not None and p.targets == (("t1", 0, PH),)
    entries = list(view_of([user("u0"), assistant("a0", calls=[("c0", "bash", {})]), tool("t0", "c0", big),
                            *two, user("u3")], chars4).entries)
    entries[3:3] = [Entry(Message("m", "user", (Text("What did we do so far?"),)), 6, (6,), "marker"),
                    Entry(Message("s", "assistant", (Text("summary"),)), 2, (2,), "summary")]
    p = select(entries)
    assert p is not None and p.targets == (("t1", 0, PH),)  # t0 is behind the pivot


def test_prune_stops_the_whole_walk_at_an_already_pruned_output(chars4: TokenCounter) -> None:
    """``if (part.state.time.compacted) break loop``: the labelled break leaves both loops, so nothing
    older than a pruned output is counted, not even the unpruned parts of its own message. A ``continue``
    would go on to ``mid`` part 0 and ``t_old``; a bare ``break`` (seed 001's pseudocode) to ``t_old``."""
    big = "b" * 200_000  # 50,000 tokens each
    mid = Message("mid", "tool", (ToolResult("c1", "bash", big), ToolResult("c2", "bash", big)))
    msgs = [user("u1"), assistant("a0", calls=[("c0", "bash", {})]), tool("t_old", "c0", big),
            assistant("a1", calls=[("c1", "bash", {}), ("c2", "bash", {})]), mid,
            user("u2"), assistant("a2", calls=[("c3", "bash", {})]), tool("t_new", "c3", big),
            user("u3"), assistant("a3"), user("u4")]
    entries = list(view_of(msgs, chars4).entries)
    entries[4] = replace(entries[4], pruned={1: PH})  # mid's newer output was pruned before
    p = select(entries)
    # t_new alone passes PROTECT (50,000 > 40,000) and is selected; then mid part 1 ends the walk
    assert p is not None and [(m, j) for m, j, _ in p.targets] == [("t_new", 0)]


def _seed_001_prune(entries: list[Entry], protect: int, minimum: int) -> Prune | None:
    """Seed 001's ``prune`` transcribed line by line: the reference ``walk`` + ``choose`` must equal."""
    from compbench.data.transcript import ToolResult
    from compbench.sdk.counting import chars4_round

    total = pruned = turns = 0
    targets = []
    for e in reversed(entries):
        if e.message.role == "user":
            turns += 1
        if turns < 2:
            continue
        if e.message.role == "assistant" and e.origin == "summary":
            break
        for j in range(len(e.message.parts) - 1, -1, -1):
            part = e.message.parts[j]
            if not isinstance(part, ToolResult) or part.is_error or part.name == "skill":
                continue
            if j in e.pruned:
                return Prune(tuple(targets), "prune") if pruned > minimum else None
            total += chars4_round(part.output)
            if total > protect:
                pruned += chars4_round(part.output)
                targets.append((e.id, j, "[Old tool result content cleared]"))
    return Prune(tuple(targets), "prune") if pruned > minimum else None


def test_walk_then_choose_is_seed_001s_prune(chars4: TokenCounter) -> None:
    """The walk is shared by a grid's configurations and each picks its suffix by arithmetic; for
    random sessions, pruned marks, summaries and thresholds it selects exactly what seed 001 does."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from compbench.strategies.opencode_prune import walk

    kinds = st.sampled_from(["user", "call", "skill", "error", "summary"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(kinds, st.integers(0, 4_000), st.booleans()), max_size=30),
           st.integers(-5, 6_000), st.integers(-5, 3_000))
    def check(spec: list[tuple[str, int, bool]], protect: int, minimum: int) -> None:
        entries: list[Entry] = []
        for k, (kind, size, pruned) in enumerate(spec):
            if kind == "user":
                m = user(f"u{k}")
                origin = "recorded"
            elif kind == "summary":
                m, origin = assistant(f"s{k}", "summary"), "summary"
            else:
                m = tool(f"t{k}", f"c{k}", "x" * size, name="skill" if kind == "skill" else "bash",
                         is_error=kind == "error")
                origin = "recorded"
            counts = chars4.parts(m)
            e = Entry(m, chars4.message(m, counts), counts, origin, k)  # type: ignore[arg-type]
            entries.append(replace(e, pruned={0: "[Old tool result content cleared]"}) if pruned else e)
        w = walk(entries)
        # the thresholds drawn, and every boundary: protect at each running sum and one below it,
        # minimum at each saving a suffix would make and one below it
        boundaries = [(c - d, minimum) for c in w.cum for d in (0, 1)]
        boundaries += [(protect, w.cum[-1] - c - d) for c in (0, *w.cum) for d in (0, 1)] if w.cum else []
        for p, m in [(protect, minimum), *boundaries]:
            expected = _seed_001_prune(entries, p, m)
            assert select(entries, p, m) == expected
            assert w.choose(p, m) == expected == w.choose(p, m)

    check()

"""The view's state under a compaction: only what changed between the common prefix and suffix is walked, with
the same observer calls, token sum, prefix sums and positions as comparing the two views whole."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from compbench.measure.tokens import TokenCounter
from compbench.replay.viewstate import ReplayConfig, ViewState
from compbench.sdk.session import Action, Entry, ModelLimits
from helpers import assistant, tool, user


class Log:
    """An observer writing down what it is told."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def added(self, e: Entry) -> None:
        self.calls.append(("added", e.id))

    def removed(self, e: Entry) -> None:
        self.calls.append(("removed", e.id))

    def part_hidden(self, e: Entry, part: int) -> None: ...

    def step(self, step: int, message_index: int) -> None: ...

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None: ...

    def fork(self) -> Log:
        return self


def entries(chars4: TokenCounter, n: int) -> list[Entry]:
    out = []
    for i in range(n):
        m = [user(f"u{i}", "u" * (4 + i)), assistant(f"a{i}", "a" * (8 + i)), tool(f"t{i}", "c", "t" * (12 + i))][i % 3]
        counts = chars4.parts(m)
        out.append(Entry(m, chars4.message(m, counts), counts, "recorded", i))
    return out


def state(chars4: TokenCounter, view: list[Entry]) -> tuple[ViewState, Log]:
    log = Log()
    s = ViewState(ReplayConfig(ModelLimits(10_000, 100)), chars4, log)
    for e in view:
        s.append(e)
    s.call()
    log.calls.clear()
    return s, log


def summary(chars4: TokenCounter, id: str) -> Entry:
    m = user(id, "summary " * 5)
    counts = chars4.parts(m)
    return Entry(m, chars4.message(m, counts), counts, "summary")


def new_views(chars4: TokenCounter, old: list[Entry]) -> dict[str, list[Entry]]:
    s1, s2 = summary(chars4, "s1"), summary(chars4, "s2")
    return {
        "a pair in the middle": [*old[:4], s1, *old[6:]],
        "the head": [s1, *old[5:]],
        "the tail": [*old[:7], s1],
        "everything": [s1],
        "nothing": list(old),
        "an entry dropped at the end": old[:-1],
        "two summaries around a kept entry": [*old[:2], s1, old[5], s2, *old[8:]],
        "kept out of order": [*old[:3], old[6], old[5], old[4], old[3], *old[7:]],
        "grown": [*old, s1],
        "a message kept twice": [*old[:5], old[2], *old[5:]],
    }


@pytest.mark.parametrize("case", list(new_views(TokenCounter("chars4"), entries(TokenCounter("chars4"), 10))))
def test_replacing_the_view_walks_only_what_changed(chars4: TokenCounter, case: str) -> None:
    old = entries(chars4, 10)
    new = new_views(chars4, old)[case]
    fast, fast_log = state(chars4, old)
    whole, whole_log = state(chars4, old)
    fast.replace_view(list(new))
    whole._replace_whole(list(new))
    assert fast_log.calls == whole_log.calls
    assert fast.entries == whole.entries == new
    assert fast.context == whole.context == sum(e.tokens for e in new)
    assert fast.positions == whole.positions
    assert fast.dirty == whole.dirty
    assert [fast.sums.prefix(k) for k in range(len(new) + 1)] == \
        [sum(e.tokens for e in new[:k]) for k in range(len(new) + 1)]
    assert fast.call() == whole.call()


def test_a_message_id_twice_in_the_view_is_compared_whole(chars4: TokenCounter) -> None:
    """Two entries of one message id (a log that repeats an id): the positions say the later one, as before."""
    old = entries(chars4, 6)
    twin = Entry(old[1].message, old[1].tokens, old[1].part_tokens, "recorded", 7)
    s, _ = state(chars4, [*old, twin])
    s.replace_view([*old[:3], summary(chars4, "s1"), twin])
    assert s.positions[old[1].id] == 4
    assert s.context == sum(e.tokens for e in s.entries)


def test_the_view_diff_names_the_lowest_position_each_revision_changed(chars4: TokenCounter) -> None:
    """unchanged_below: a compaction changes the view from its first differing entry on, a prune at the entry it
    marks; across several revisions the lowest; the revision itself (the view only grew) bounds nothing; a
    revision counted by hand, without the loop, says nothing of where (0); a fork keeps the diff."""
    from compbench.replay.viewstate import apply_prune
    from compbench.sdk.session import Prune

    view = entries(chars4, 9)
    s, _ = state(chars4, view)
    v = s.view
    assert v.revision == 0 and v.unchanged_below(0) >= len(view)
    s.replace_view([*view[:4], summary(chars4, "s1"), *view[6:]])  # entries 4 and 5 replaced by a summary
    s.revise()
    assert v.revision == 1 and v.unchanged_below(0) == 4 and v.unchanged_below(1) >= 9
    s.append(entries(chars4, 10)[9])  # growing is no change
    assert v.unchanged_below(1) >= 9
    apply_prune(s, Prune((("t8", 0, "[cleared]"),)), 2, 0, "before")
    s.revise()
    at = s.positions["t8"]
    assert at == 7 and v.unchanged_below(1) == at and v.unchanged_below(0) == 4
    assert v.unchanged_below(2) >= 9
    apply_prune(s, Prune((("t8", 0, "[cleared]"),)), 3, 0, "before")  # already hidden: nothing changes
    s.revise()
    assert v.unchanged_below(2) >= 9 and v.unchanged_below(1) == at
    from compbench.sdk.context import RoundCache

    fork = s.fork(None, RoundCache())
    assert fork.view.unchanged_below(0) == 4 and fork.view is not v
    v.revision += 1  # a test's view, counted by hand
    assert v.unchanged_below(3) == 0

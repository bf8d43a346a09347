"""A view's OpenHands events, built incrementally as the view grows: the same events and event ids as building them
from the start, whatever changed in between (messages appended, a new revision, events forgotten, another view)."""

from __future__ import annotations

from dataclasses import replace

from compbench.data.transcript import Message
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Entry
from compbench.strategies.openhands_events import MASKED, EventState
from helpers import assistant, system, tool, user, view_of


def session(n: int) -> list[Message]:
    out = [system(), user("u0", "fix the bug")]
    for i in range(n):
        out += [assistant(f"a{i}", calls=[(f"c{i}", "bash", {"command": f"ls {i}"})]), tool(f"t{i}", f"c{i}", "out")]
        if i % 3 == 2:
            out.append(user(f"u{i + 1}", "go on"))
    return out


def fresh(state: EventState, entries: list[Entry]) -> list[object]:
    """The events a state that remembered nothing would give (its forgotten events and first user kept)."""
    other = EventState(state.recall)
    other.forgotten, other.first_user = set(state.forgotten), state.first_user
    return list(other.events(entries))


def test_the_events_grow_with_the_view_as_if_built_whole(chars4: TokenCounter) -> None:
    messages = session(9)
    full = view_of(messages, chars4)
    entries = list(full.entries)
    live: list[Entry] = []
    view = view_of([], chars4)
    view._entries = live  # the loop's live list, appended to between questions
    state = EventState(recall=True)
    for k, e in enumerate(entries):
        live.append(e)
        if k % 2:  # asked every other message: the events of two new entries at once
            assert state.view_events(view) == fresh(state, live)
            assert state.count(view) == len(fresh(state, live))
    first_ids = dict(state.ids)
    assert list(first_ids.values()) == list(range(len(first_ids)))  # ids in order of appearance
    key = state.view_events(view)[5].key
    state.forgotten.add(key)  # a condenser forgot an event whose message stays visible
    assert key not in {ev.key for ev in state.view_events(view)}
    assert state.view_events(view) == fresh(state, live)
    k = max(k for k, e in enumerate(live) if e.role == "tool")
    live[k] = replace(live[k], pruned={0: MASKED})  # a mask, in place: as many entries, a new revision
    view.revision += 1
    assert state.view_events(view) == fresh(state, live)
    assert [ev.kind for ev in state.view_events(view) if ev.pos == k] == ["condensation"]
    live[3:7] = []  # a compaction: a new revision
    view.revision += 1
    assert state.view_events(view) == fresh(state, live)
    other = view_of(messages[:6], chars4)  # another view (a forked trajectory): built from its start
    assert state.view_events(other) == fresh(state, list(other.entries))
    assert state.ids == {**first_ids, **state.ids} and all(state.ids[k] == v for k, v in first_ids.items())


def test_of_view_gives_a_list_of_its_own(chars4: TokenCounter) -> None:
    view = view_of(session(2), chars4)
    state = EventState(recall=False)
    evs = state.of_view(view)
    evs.clear()
    assert len(state.of_view(view)) == state.count(view) > 0

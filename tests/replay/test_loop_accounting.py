"""The replay loop's accounting on hand-built sessions."""

from __future__ import annotations

from compbench.data.transcript import from_json, to_json
from compbench.measure.tokens import TokenCounter
from compbench.strategies import resolve
from helpers import assistant, run, tool, transcript, user


def test_usage_cache_and_overflow(chars4: TokenCounter) -> None:
    t = transcript(user("u1", "x" * 40), assistant("a1", "y" * 8, [("c1", "read", {"p": 1})]),
                   tool("t1", "c1", "z" * 400), assistant("a2", "w" * 4))
    tr = run(t, resolve("none").create(), chars4, window=100)
    s0, s1 = tr.steps
    assert (s0.input, s0.cache_read, s0.overflow) == (10, 0, False)
    # a1 = 2 text + ceil(len('read{"p": 1}')/4) = 2 + 3; t1 = 100
    assert s0.output == 5
    assert (s1.input, s1.cache_read, s1.cache_write, s1.overflow) == (115, 10, 105, True)


def test_native_json_round_trip() -> None:
    t = transcript(user("u1", "hé"), assistant("a1", calls=[("c", "bash", {"cmd": "ls"})]), tool("t", "c", "out"))
    assert from_json(to_json(t)) == t


def test_scoped_counter_reuses_the_index_counts_by_identity(o200k: TokenCounter) -> None:
    """A summarizer request over the transcript's own parts is counted from the index, not re-tokenized;
    an equal but distinct part (a pruned copy, a new message) is still tokenized."""
    import dataclasses

    t = transcript(user("u1", "Fix tests/test_api.py please"), assistant("a1", "ok", [("c", "bash", {"cmd": "ls"})]),
                   tool("t", "c", "a.py\nb.py\n" * 50))
    scoped = o200k.scoped()
    index = scoped.index(t)
    assert index == o200k.index(t)
    calls: list[str] = []
    raw = scoped.count_raw
    scoped.count_raw = lambda s: calls.append(s) or raw(s)  # type: ignore[method-assign]
    assert [scoped.message(m) for m in t.messages] == list(index.message_tokens)
    assert calls == []
    copy = dataclasses.replace(t.messages[2].parts[0])
    assert scoped.part(copy) == index.part_tokens[2][0]
    assert len(calls) == 1
    assert o200k._memo is None  # the shared counter never grows a memo

"""The replay loop's accounting on hand-built sessions."""

from __future__ import annotations

from compbench.strategies import resolve
from compbench.tokens import TokenCounter
from compbench.transcript import from_json, to_json
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

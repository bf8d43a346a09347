"""A text framed by a few characters (Goose's ``[user]: tool_response: `` before a tool output) is counted from
the output's own count and its first and last lines where that is the same number (compbench.sdk.framed_text),
and counted whole where it might not be."""

from __future__ import annotations

import random

import pytest

from compbench.data.dataset import default_dataset
from compbench.data.importing import iter_transcripts
from compbench.data.transcript import ToolResult
from compbench.measure.tokens import TokenCounter
from compbench.sdk import framed_text


def _framed(counter: TokenCounter, before: str, text: str, after: str) -> tuple[int, bool]:
    part = framed_text(counter, before, text, after)
    assert part.text == before + text + after
    assert counter._memo is not None
    return counter.part(part), id(part) in counter._memo


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_a_framed_output_counts_as_one_pass_on_every_sample_output(tokenizer: str) -> None:
    one = TokenCounter(tokenizer)
    frames = [("[user]: tool_response: ", ""), ("[assistant]: tool_request(x): {}\n[user]: tool_response: ", ""),
              ("<output>", "</output>"), ("x", "\n"), ("", "  \n/tail")]
    checked = framed = 0
    for t in iter_transcripts(default_dataset()):
        counter = TokenCounter(tokenizer).scoped()
        for m in t.messages:
            for p in m.parts:
                if isinstance(p, ToolResult) and p.output:
                    for before, after in frames:
                        n, remembered = _framed(counter, before, p.output, after)
                        assert n == one.count_raw(before + p.output + after), (t.id, m.id, before, after)
                        checked += 1
                        framed += remembered
    assert checked > 1_000 and framed > checked // 2


@pytest.mark.parametrize(("text", "framed"), [
    ("no newline at all", False),  # nothing to cut at: counted whole
    ("one\n", True),  # one newline, nothing after it
    ("\nafter", True),  # a newline first
    ("a\n/b", False),  # o200k_base's punctuation piece may take the '/' after the newline
    ("a \n\nb\nc", False),  # whitespace reaching a newline after the cut
    ("a\nb\nc", True),
])
def test_cuts_a_tokenizer_could_merge_across_are_counted_whole(text: str, framed: bool) -> None:
    counter = TokenCounter("o200k_base").scoped()
    n, remembered = _framed(counter, "[user]: ", text, "!")
    assert remembered == framed
    assert n == TokenCounter("o200k_base").count_raw("[user]: " + text + "!")


def test_the_character_heuristics_are_counted_whole_and_random_frames_agree() -> None:
    counter = TokenCounter("chars4").scoped()
    assert not _framed(counter, "a", "b\nc", "d")[1]
    one = TokenCounter("o200k_base")
    alphabet = [" ", "\n", "\r", "/", ".", "a", "1", "'", "\t", "é", "\x85", "\u2028", "<", ")", "ll", "\u00a0"]
    rnd, remembered = random.Random(11), 0
    for _ in range(5_000):
        pieces = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8))) for _ in range(3)]
        fresh = TokenCounter("o200k_base").scoped()
        n, was = _framed(fresh, *pieces)
        assert n == one.count_raw("".join(pieces)), pieces
        remembered += was
    assert remembered > 500

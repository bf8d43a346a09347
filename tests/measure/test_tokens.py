"""A prompt made of sections is counted as the sum of its sections' counts where that is the same number
(TokenCounter.sections_add_up): aider's summary request re-sends the whole history at every summarization."""

from __future__ import annotations

import pytest

from compbench.data.dataset import default_dataset
from compbench.data.importing import iter_transcripts
from compbench.data.transcript import Text
from compbench.measure.tokens import TokenCounter
from compbench.strategies.aider import section, summarize_all_content


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_sections_add_up_for_the_bpe_tokenizers_on_every_sample(tokenizer: str) -> None:
    counter = TokenCounter(tokenizer)
    assert counter.sections_add_up
    checked = 0
    for t in iter_transcripts(default_dataset()):
        ms = t.messages
        for k in range(0, len(ms) - 1, 5):
            chunk = ms[k:k + 8]
            whole = summarize_all_content(chunk)
            assert counter.count_raw(whole) == sum(counter.count_raw(section(m)) for m in chunk), (t.id, k)
            checked += 1
    assert checked > 300


@pytest.mark.parametrize("text", ["# USER\nsee x.py  \n", "# USER\n}\n\n\n", "# ASSISTANT\n \t\n", "# USER\nä\n"])
def test_a_section_boundary_is_never_merged(text: str) -> None:
    counter = TokenCounter("o200k_base")
    nxt = "# ASSISTANT\nok\n"
    assert counter.count_raw(text + nxt) == counter.count_raw(text) + counter.count_raw(nxt)


def test_the_heuristics_do_not_add_up_and_a_remembered_count_is_read_back() -> None:
    assert not TokenCounter("chars4").sections_add_up  # ceil(5/4) + ceil(5/4) != ceil(10/4)
    counter = TokenCounter("o200k_base").scoped()
    part = Text("# USER\nhello\n")
    counter.remember_raw(part, 999)
    assert counter.part(part) == 999
    assert TokenCounter("o200k_base").part(part) != 999  # an unscoped counter keeps no memo


@pytest.mark.parametrize("family", ["none", "auto"])
def test_a_transcripts_counter_tokenizes_each_distinct_text_once(monkeypatch: pytest.MonkeyPatch,
                                                                 family: str) -> None:
    """A summary request's system prompt and the texts strategies rebuild at each compaction are counted once per
    transcript, with and without a model family's correction, to the same count; past its bound the memo starts
    over."""
    from compbench.measure import tokens

    t = next(iter(iter_transcripts(default_dataset())))
    prompt = "Summarize the conversation so far. " * 20
    again = "".join(["Summarize the conversation so far. "] * 20)  # another object, the same text
    expected = TokenCounter("o200k_base", mode=family).scoped(t).count_text(prompt)
    calls: list[str] = []
    real = tokens.text_counter("o200k_base")
    monkeypatch.setattr(tokens, "text_counter", lambda name: lambda s: calls.append(s) or real(s))
    counter = TokenCounter("o200k_base", mode=family).scoped(t)
    assert counter.count_text(prompt) == counter.count_text(again) == expected
    assert counter.count_raw(again) == real(prompt)
    assert calls == [prompt]
    from compbench.measure.token_correction import Correction

    session = counter.with_correction(Correction("session", 1100))  # the replay's: at the session's growth rate
    assert session.count_text(again) == tokens.scale(real(prompt), 1100) and calls == [prompt]
    monkeypatch.setattr(tokens, "TEXT_MEMO_CHARS", len(prompt) + 5)
    fresh = TokenCounter("o200k_base").scoped()
    fresh.count_text(prompt)
    fresh.count_text("tiny text")  # past the bound: the memo starts over
    fresh.count_text(prompt)
    assert calls == [prompt, prompt, "tiny text", prompt]


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_joined_sections_count_as_one_pass_and_the_joins_that_would_not_are_counted_whole(tokenizer: str) -> None:
    """joined_text sums where every join is a newline before neither '/' nor whitespace reaching a newline
    (o200k_base's punctuation piece takes the '/' after its newlines: '.\n//x' is 2 tokens, '.\n' and '//x' 3; a
    newline piece takes the newlines after it), else counts in one pass; on random joins too."""
    import random

    from compbench.sdk import joined_text, joins_add_up

    one = TokenCounter(tokenizer)
    sections = ["# A\n", "", "x.  \n\n", "<b>\r\n", "é}\n", "   [y]: ok\n", "\t1\n", "ok"]
    assert joins_add_up(sections) and not joins_add_up(["x", "\n"])
    for bad in (["a.\n", "//x"], ["a \n", "\nb"], ["a\n", " \t\r\nb"], ["ab", "c"], ["a\n", "b", "c"]):
        assert not joins_add_up(bad)
    assert TokenCounter("o200k_base").count_raw(".\n//x") == 2 != 3 == sum(map(TokenCounter("o200k_base").count_raw,
                                                                               [".\n", "//x"]))
    for parts, summed in ((sections, True), (["a.\n", "//x"], False), (["a \n", "\nb"], False)):
        counter = TokenCounter(tokenizer).scoped()
        part = joined_text(counter, parts)
        assert part.text == "".join(parts)
        assert counter._memo is not None and (id(part) in counter._memo) == summed
        assert counter.part(part) == one.count_raw(part.text)
    assert joined_text(TokenCounter("chars4").scoped(), sections).text == "".join(sections)
    alphabet = [" ", "\n", "\r", "/", ".", "a", "A", "1", "'", "\t", "é", "\x0b", "\x85", "\u2028", "<", "s", "\x1c",
                "\u00a0", "ll", ")"]
    rnd, summed_joins = random.Random(7), 0
    for _ in range(20_000):
        a = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6))) + "\n"
        b = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 6)))
        if joins_add_up([a, b]):
            assert one.count_raw(a + b) == one.count_raw(a) + one.count_raw(b), (a, b)
            summed_joins += 1
    assert summed_joins > 15_000

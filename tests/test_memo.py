"""compbench.memo: an answer computed once while remembered, and the memo started over past either bound."""

from __future__ import annotations

from compbench.memo import Memo


def test_an_answer_is_made_once_and_the_memo_starts_over_past_its_characters() -> None:
    made: list[str] = []
    memo: Memo[str, str] = Memo(10)

    def upper(s: str) -> str:
        return memo.get(s, lambda: made.append(s) or s.upper())

    assert upper("abcd") == upper("abcd") == "ABCD" and made == ["abcd"]
    upper("efghij")  # 4 + 6 = 10 characters: at the bound, kept
    assert list(memo) == ["abcd", "efghij"]
    upper("k")  # 11 > 10: started over
    assert list(memo) == ["k"] and upper("abcd") == "ABCD" and made == ["abcd", "efghij", "k", "abcd"]


def test_entries_and_a_size_of_the_value_bound_it_too() -> None:
    memo: Memo[int, str] = Memo(100, entries=2, size=lambda _, v: len(v))
    for k in range(3):
        memo.get(k, lambda: "x" * 10)
    assert list(memo) == [2] and memo[2] == "x" * 10
    big: Memo[int, str] = Memo(15, size=lambda _, v: len(v))
    big.get(1, lambda: "y" * 10)
    big.get(2, lambda: "z" * 10)  # 20 > 15 characters of values
    assert list(big) == [2]

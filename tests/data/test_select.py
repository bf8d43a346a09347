"""The filter grammar of ``--source`` / ``--where`` (compbench.data.select): each operator at, below and above its
boundary, alternatives and wildcards, and a bad filter as one line."""

from __future__ import annotations

import pandas as pd
import pytest

from compbench.data.select import TRANSCRIPT_FIELDS, parse, select_results
from compbench.errors import UsageError

ROW = {"source": "claude-code", "model": "claude-sonnet-4-5", "project": "/home/me/my app", "steps": 50,
       "transcript_id": "abc", "session": "abc", "window": 200_000}


@pytest.mark.parametrize(("where", "hit"), [
    ("steps>=50", True), ("steps>=51", False), ("steps>49", True), ("steps>50", False),
    ("steps<=50", True), ("steps<50", False), ("steps<51", True), ("steps=50", True), ("steps!=50", False),
    ("window>=200k", True), ("window>200k", False), ("window<1m", True), ("window=200_000", True),
    ("model~sonnet", True), ("model~SONNET", True), ("model~opus", False),
    ("model=claude-*", True), ("model=claude-sonnet-4-?", True), ("model=claude", False),
    ("source=codex|claude-code", True), ("source!=codex|claude-code", False), ("source=\"claude code\"", True),
    ('project="/home/me/my app"', True), ("project~'my app'", True),
    ("source=claude-code and steps>=50", True), ("source=claude-code AND steps>50", False),
    ("id=abc", True), ("tool=claude-code", True), ("calls>=50", True),
])
def test_each_operator_at_and_around_its_boundary(where: str, hit: bool) -> None:
    assert parse(where).matches(ROW) is hit


def test_source_names_are_one_clause_and_read_back_as_the_grammar() -> None:
    sel = parse(None, ("claude-code,codex", "gemini-cli"))
    assert sel.text() == "source=claude-code|codex|gemini-cli" and sel.matches(ROW)
    both = parse("steps>=10", ("codex",))
    assert both.text() == "source=codex and steps>=10" and not both.matches(ROW)
    assert parse(both.text()) == both  # what a manifest records parses back to the same filter
    assert not parse(None) and not parse("  ") and parse(None).matches(ROW)


def test_a_missing_or_undefined_value_never_matches_a_comparison() -> None:
    assert not parse("steps>=1").matches({"steps": None})
    assert not parse("steps>=1").matches({"steps": float("nan")})
    empty = parse('model=""')
    assert empty.matches({"model": ""}) and not empty.matches(ROW)  # the log recorded no model
    assert parse(empty.text()) == empty


@pytest.mark.parametrize(("where", "said"), [
    ("steps", "cannot read 'steps'; expected FIELD OP VALUE"),
    ("steps>=lots", "steps>= compares numbers, got 'lots'"),
    ("steps >= 5 or model~x", "cannot read"),
])
def test_a_bad_filter_is_one_line_that_says_the_grammar(where: str, said: str) -> None:
    with pytest.raises(UsageError) as e:
        parse(where)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_fields_before_a_replay_and_in_a_run() -> None:
    with pytest.raises(UsageError, match=r"no field 'modle' before a replay.*did you mean 'model'"):
        parse("modle=x").before_replay()
    with pytest.raises(UsageError, match="no field 'window' before a replay"):
        parse("window>=1").before_replay()
    assert set(TRANSCRIPT_FIELDS) == {"source", "model", "project", "session", "transcript_id", "steps"}
    results = pd.DataFrame({"transcript_id": ["a", "a", "b", "b"], "strategy": ["none", "x"] * 2,
                            "source": ["codex", "codex", "pi", "pi"], "window": [100, 100, 300, 300],
                            "compactions": [0, 2, 0, 0]})
    assert set(select_results(results, parse("window>200"), "run")["transcript_id"]) == {"b"}
    assert len(select_results(results, parse(None, ("codex",)), "run")) == 2  # every strategy's row of it
    with pytest.raises(UsageError, match="compactions differs between the strategies of a transcript"):
        select_results(results, parse("compactions>0"), "run")
    with pytest.raises(UsageError, match=r"no transcript of run matches 'source=gemini' \(it holds source: codex, "
                                         r"pi\)"):
        select_results(results, parse(None, ("gemini",)), "run")


def test_a_stream_filtered_to_nothing_names_what_it_held() -> None:
    items = [{"source": "pi", "steps": 3, "model": "m"}, {"source": "codex", "steps": 9, "model": "m"}]
    sel = parse("steps>=5")
    assert list(sel.filter(items, lambda x: x)) == [items[1]]
    with pytest.raises(UsageError, match=r"no transcript of the dataset matches 'source=goose' \(it holds source: "
                                         r"pi, codex\)"):
        list(parse(None, ("goose",)).filter(items, lambda x: x))


@pytest.mark.parametrize(("where", "held", "said"), [
    ("source=codex|pi", ["codex", "claude-code"], ["source=codex|pi: pi matched no transcript"]),
    ("source=codex|pi", ["codex", "pi"], []),
    ("source=codex|pi|goose", ["pi"], ["source=codex|pi|goose: codex, goose matched no transcript"]),
    ("source=gemini|goose", ["pi"], []),  # nothing matches at all: the filter's own error, not a note
    ("source!=codex|pi", ["codex"], ["source!=codex|pi: pi matched no transcript (it excludes none)"]),
    ("model=claude-*|gpt-*", ["gpt-5"], ["model=claude-*|gpt-*: claude-* matched no transcript"]),
    ("steps=10|20", [10, 30], ["steps=10|20: 20 matched no transcript"]),
    ('source="claude code|codex"', ["claude-code"], ['source="claude code|codex": codex matched no transcript']),
    ("source=codex", ["pi"], []),  # one value: nothing to name beside the filter's own error
    ("model~gpt", ["claude"], []),  # contains lists no alternatives
])
def test_the_alternatives_that_matched_nothing_are_named(where: str, held: list[object], said: list[str]) -> None:
    sel = parse(where)
    field = sel.fields[0]
    assert sel.unmatched({field: held}) == said
    assert sel.unmatched({}) == []  # a field whose values are not known is not checked


def test_a_stream_and_a_run_name_the_alternatives_that_matched_nothing() -> None:
    items = [{"source": "codex", "steps": 3}, {"source": "claude-code", "steps": 9}]
    notes: list[str] = []
    sel = parse("source=codex|pi and steps>=1")
    assert list(sel.filter(items, lambda x: x, said=notes.append)) == [items[0]]
    assert notes == ["source=codex|pi: pi matched no transcript"]
    # a transcript the other clause leaves out still counts as one an alternative matched: pi is there, said of none
    notes.clear()
    list(parse("source=codex|claude-code and steps<5").filter(items, lambda x: x, said=notes.append))
    assert notes == []
    results = pd.DataFrame({"transcript_id": ["a", "a", "b", "b"], "strategy": ["none", "x"] * 2,
                            "source": ["codex", "codex", "claude-code", "claude-code"]})
    got = select_results(results, parse(None, ("codex,pi",)), "run", said=notes.append)
    assert set(got["transcript_id"]) == {"a"} and notes == ["source=codex|pi: pi matched no transcript"]

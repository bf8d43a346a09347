"""Re-acquisition at real compactions, item by item, and what each rule does to the prediction.

Hand-made recorded sessions with a compaction, at explicit rates: each rule comes out well where the recorded
agent did what the rule says (predicted = observed) and badly without it; the natural rate, the excess and
the fit of the rates at, below and above their boundaries.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript
from compbench.measure.reacquire_rules import ALL, Rates
from compbench.measure.tokens import TokenCounter
from compbench.measure.workset import WorkingSet
from compbench.validation.reacquire_fit import MIN_ITEMS, fit
from compbench.validation.reacquisition import (
    MIN_HALF,
    MIN_POINTS,
    NATURAL_EDGES,
    NATURAL_STRIDE,
    NATURAL_WINDOW,
    Item,
    Point,
    RealReacquisition,
    at_compactions,
    natural_curve,
    natural_points,
    natural_reliability,
    spearman,
    summarize,
)
from helpers import assistant, tool, user

BODY = "\n".join(f"{i:>6}→    def handler_{i}(request):  # route number {i} of the service" for i in range(1, 41))
PATH = "/home/u/proj/src/app/main.py"
EVERY = Rates({"edit": 1.0, "edit-changed": 1.0, "mention": 1.0, "lines": 1.0, "orientation-recent": 1.0,
               "orientation": 1.0}, 1.0, 10)


def _read(mid: str, cid: str, path: str = PATH, **slice_: int) -> Message:
    return assistant(mid, "let me read it", [(cid, "Read", {"file_path": path, **slice_})])


EDIT = assistant("a9", "now the fix", [("c9", "Edit", {"file_path": PATH, "old_string": "x", "new_string": "y"})])
SUMMARY = Message("s", "user", (Text("Summary of the work so far."),))


def _real(after: list[Message], before: list[Message] | None = None, restored: bool = False,
          source: str = "pi") -> Transcript:
    """A recorded session: a read of main.py, ``before``, a compaction, then ``after``."""
    msgs = [user("u1", "fix the routes"), _read("a1", "c1"), tool("t1", "c1", BODY, "Read"),
            *(before or []), assistant("a2", "done reading"), SUMMARY, *after]
    meta = {"restored": [PATH]} if restored else {}
    at = msgs.index(SUMMARY)
    return Transcript("real", source, tuple(msgs), compactions=(RecordedCompaction(at, source, "auto", 1000, "Summary",
                                                                                   meta=meta),))


def _one(t: Transcript, counter: TokenCounter, rates: Rates = EVERY, natural_window: int = NATURAL_WINDOW,
         **rules: bool) -> RealReacquisition:
    (r,) = at_compactions(t, counter.index(t).part_tokens, rules=replace(ALL, **rules), rates_=rates,
                          natural_window=natural_window)
    return r


REREAD = [_read("a3", "c3"), tool("t3", "c3", BODY, "Read")]


def test_prediction_and_observation_at_a_real_compaction(o200k: TokenCounter) -> None:
    size = o200k.index(_real([*REREAD, EDIT])).part_tokens[2][0]
    r = _one(_real([*REREAD, EDIT]), o200k)
    assert (r.reacq_predicted, r.reacq_observed) == (size, size)
    (item,) = r.items
    assert (item.key, item.klass, item.predicted, item.observed, item.why) == (
        "file:app/main.py", "edit", size, size, "edited: an edit needs the text it replaces")
    r = _one(_real([EDIT]), o200k)
    assert (r.reacq_predicted, r.reacq_observed) == (size, 0)  # predicted, though this agent did not
    # two compactions: main.py, read before the first, re-read after the second with no later use: observed only
    msgs = [*_real([]).messages, assistant("a5", "more work"), Message("s2", "user", (Text("Second summary."),)),
            *REREAD, assistant("a9", "all good")]
    twice = Transcript("real", "pi", tuple(msgs), compactions=(
        RecordedCompaction(4, "pi", "auto", 1000, "Summary"), RecordedCompaction(6, "pi", "auto", 1000, "S2")))
    _, second = at_compactions(twice, o200k.index(twice).part_tokens, rates_=EVERY)
    assert (second.reacq_predicted, second.reacq_observed) == (0, size)
    assert second.items[0].klass == "" and "no later use" in second.items[0].why


def test_the_guard_rule_an_edit_of_a_reattached_file_still_costs_a_read(o200k: TokenCounter) -> None:
    """Claude Code re-attached main.py, and the agent read it again before editing it (its guard refuses the
    edit otherwise): with the rule the prediction is what the agent read; without it, nothing."""
    t = _real([*REREAD, EDIT], restored=True, source="claude-code")
    size = o200k.index(t).part_tokens[2][0]
    well = _one(t, o200k)
    assert (well.reacq_predicted, well.reacq_observed, well.restored) == (size, size, 1)
    assert "re-attached, but the read-before-edit guard needs a read" in well.items[0].why
    badly = _one(t, o200k, guard=False)
    assert (badly.reacq_predicted, badly.items[0].spared) == (0, True)
    # a tool without the guard (pi recording an attachment): the attachment serves the edit, rule or not
    assert _one(_real([*REREAD, EDIT], restored=True), o200k).reacq_predicted == 0


def test_the_size_rule_what_is_read_back_is_what_the_agent_had(o200k: TokenCounter) -> None:
    """Read whole, then a 3-line slice, compacted; the agent reads the whole file back before editing: sized
    by what it had the prediction is right, sized by the latest delivery (the slice) it is far short."""
    lines = BODY.splitlines()
    sliced = [_read("b1", "d1", offset=10, limit=3), tool("r1", "d1", "\n".join(lines[9:12]), "Read")]
    t = _real([*REREAD, EDIT], before=sliced)
    parts = o200k.index(t).part_tokens
    whole, piece = parts[2][0], parts[4][0]
    assert _one(t, o200k).reacq_predicted == whole == _one(t, o200k).reacq_observed
    assert _one(t, o200k, had=False).reacq_predicted == piece < whole / 5


def test_the_changed_rule_an_edit_of_what_the_agent_changed_reads_back_around_its_edits(o200k: TokenCounter) -> None:
    """The agent read main.py whole and edited it, then after the compaction read back a quarter of it (the
    lines around its edit) and edited it again: at an ``edit-changed`` share of a quarter the prediction is what
    it read; an edit like any other (read back whole) is four times it. A file it had not changed it reads back
    whole, as the plain edit's share says, rule or not."""
    lines = BODY.splitlines()
    changed = assistant("b9", "first fix", [("e9", "Edit", {"file_path": PATH, "old_string": "a", "new_string": "b"})])
    piece = [_read("a3", "c3", offset=1, limit=10), tool("t3", "c3", "\n".join(lines[:10]), "Read")]
    t = _real([*piece, EDIT], before=[changed])
    shares = replace(EVERY, read_back={**EVERY.read_back, "edit-changed": 0.25})
    well = _one(t, o200k, shares)
    assert well.items[0].klass == "edit-changed" and "around its edits" in well.items[0].why
    whole = well.items[0].size
    assert well.reacq_observed < whole / 3 and well.reacq_predicted == pytest.approx(well.reacq_observed, rel=0.15)
    badly = _one(t, o200k, shares, changed=False)
    assert badly.items[0].klass == "edit" and badly.reacq_predicted == whole > 3 * badly.reacq_observed
    plain = _one(_real([*REREAD, EDIT]), o200k, shares)  # read, not changed: read back whole
    assert plain.items[0].klass == "edit" and plain.reacq_predicted == plain.reacq_observed == whole


def test_the_weights_rule_a_mention_costs_its_share_not_the_whole_file(o200k: TokenCounter) -> None:
    """Ten files, each named after the compaction, one of them read again (as real agents re-read about one in
    ten of the files they only name): at the fitted share the pooled prediction is the observation; every use
    read back whole, ten times it."""
    files = [f"/p/src/mod{k}/file{k}.py" for k in range(10)]
    bodies = ["\n".join(f"    def f{k}_{i}(x):  # function {i} of module {k}" for i in range(20)) for k in range(10)]
    before = [m for k in range(10) for m in (_read(f"b{k}", f"d{k}", files[k]), tool(f"r{k}", f"d{k}", bodies[k],
                                                                                        "Read"))]
    after = [_read("x1", "e1", files[0]), tool("y1", "e1", bodies[0], "Read"),
             assistant("z", " ".join(f"see mod{k}/file{k}.py" for k in range(10)))]
    t = _real(after, before=before)
    shares = replace(EVERY, read_back={**EVERY.read_back, "mention": 0.1, "orientation": 0.0})
    well = _one(t, o200k, shares)
    observed = well.reacq_observed
    assert observed > 0 and well.reacq_predicted == pytest.approx(observed, rel=0.15)
    assert _one(t, o200k, shares, weights=False).reacq_predicted == pytest.approx(10 * observed, rel=0.15)


def test_the_orientation_rule_a_file_read_and_never_used_again_is_read_to_orient(o200k: TokenCounter) -> None:
    t = _real([*REREAD, assistant("a9", "the state is clear")])  # main.py read in the segment, re-read, no use
    size = o200k.index(t).part_tokens[2][0]
    well = _one(t, o200k)
    assert (well.reacq_predicted, well.reacq_orientation, well.reacq_observed) == (size, size, size)
    assert well.items[0].klass == "orientation-recent"  # 1 call before the compaction: recent
    assert _one(t, o200k, orientation=False).reacq_predicted == 0


def _busy(rereads_before: list[int], steps_before: int, steps_after: int) -> Transcript:
    """A session of ``steps_before`` calls, re-reading main.py (read at call 0) at the calls listed, a compaction,
    then ``steps_after`` calls."""
    msgs = [user("u1", "go"), _read("a0", "c0"), tool("t0", "c0", BODY, "Read")]
    for k in range(1, steps_before):
        if k in rereads_before:
            msgs += [_read(f"a{k}", f"c{k}"), tool(f"t{k}", f"c{k}", BODY, "Read")]
        else:
            msgs += [assistant(f"a{k}", f"step {k}")]
    at = len(msgs)
    msgs += [SUMMARY, *(assistant(f"p{k}", f"after {k}") for k in range(steps_after))]
    return Transcript("busy", "pi", tuple(msgs), compactions=(RecordedCompaction(at, "pi", "auto", 1000, "S"),))


@pytest.mark.parametrize(("at", "inside"), [
    (100 - NATURAL_WINDOW - 2, False), (100 - NATURAL_WINDOW - 1, True), (100 - NATURAL_WINDOW, True)])
def test_the_sessions_own_rate_counts_the_rereads_of_the_window_before(o200k: TokenCounter, at: int,
                                                                       inside: bool) -> None:
    """A re-read at call 49 (its output after 50 of the 100 calls before the compaction) is in the window of
    ``NATURAL_WINDOW`` (50) calls, one at call 48 is not. Over the whole segment (``natural_window`` past its
    start), each is in it, at the rate over the 100. The session's rate is shown, not subtracted."""
    t = _busy([at], 100, 80)
    size = o200k.index(t).part_tokens[2][0]
    r = _one(t, o200k)
    assert r.natural_rate == pytest.approx(size / NATURAL_WINDOW if inside else 0.0)
    assert r.reacq_natural == 0 and r.steps_after == 80  # EVERY has no natural curve: nothing natural
    assert _one(t, o200k, natural_window=10**9).natural_rate == pytest.approx(size / 100)


def test_the_sessions_own_window_ends_at_the_session_start(o200k: TokenCounter) -> None:
    t = _busy([5], 20, 10)  # 20 calls before: the rate is over them
    size = o200k.index(t).part_tokens[2][0]
    assert _one(t, o200k).natural_rate == pytest.approx(size / 20)


CURVE = ((0, 10.0), (5, 4.0), (20, 1.0))


@pytest.mark.parametrize(("calls", "tokens"), [(0, 0), (4, 40), (5, 50), (6, 54), (19, 106), (20, 110), (21, 111),
                                               (100, 190)])
def test_the_natural_curve_runs_bin_by_bin_and_its_last_rate_on(calls: int, tokens: float) -> None:
    assert Rates(natural=CURVE).natural_after(calls) == pytest.approx(tokens)
    assert Rates().natural_after(calls) == 0


def test_the_natural_rereads_after_a_compaction_are_the_curve_over_its_window(o200k: TokenCounter) -> None:
    """Whatever the session did before it, the natural re-reads of a compaction followed by 80 calls are what
    agents re-read in 80 calls where nothing was compacted; the excess is what was observed beyond them."""
    t = _busy([60], 100, 80)
    r = _one(t, o200k, replace(EVERY, natural=CURVE))
    assert r.reacq_natural == 50 + 60 + 60 and r.reacq_excess == r.reacq_observed - r.reacq_natural
    assert _one(_busy([], 100, 80), o200k, replace(EVERY, natural=CURVE)).reacq_natural == 170


@pytest.mark.parametrize(("steps", "points"), [(NATURAL_WINDOW, 0), (NATURAL_WINDOW + 1, 1),
                                               (NATURAL_WINDOW + NATURAL_STRIDE, 1),
                                               (NATURAL_WINDOW + NATURAL_STRIDE + 1, 2)])
def test_points_without_a_compaction_come_after_a_long_stretch_of_work(o200k: TokenCounter, steps: int,
                                                                       points: int) -> None:
    """A point needs ``NATURAL_WINDOW`` calls of its segment before it and one after it, and comes every
    ``NATURAL_STRIDE`` calls; the segment after a compaction has its own (here too short for any)."""
    t = _busy([], steps, 30)
    ws = WorkingSet.build(t, o200k.index(t).part_tokens)
    assert len(natural_points(t, ws)) == points


def test_a_point_counts_the_rereads_of_content_from_before_it_at_each_edge_it_reaches(o200k: TokenCounter) -> None:
    """main.py (read at call 0) is re-read at call 52 and again at call 70: the point at call 50 counts the first
    from the 5-call edge on (the second re-delivers nothing new) up to the edges its segment reaches (60 calls
    after it: 50)."""
    t = _busy([52, 70], 111, 3)
    ws = WorkingSet.build(t, o200k.index(t).part_tokens)
    size = o200k.index(t).part_tokens[2][0]
    first = natural_points(t, ws)[0]
    assert len(first.cumulated) == NATURAL_EDGES.index(50) + 1
    assert first.cumulated[:3] == (0.0, size, size) and first.cumulated[-1] == size


@pytest.mark.parametrize(("n", "bins"), [(MIN_POINTS - 1, 1), (MIN_POINTS, 2), (MIN_POINTS + 1, 2)])
def test_a_bin_of_the_natural_curve_needs_enough_points_that_reach_it(n: int, bins: int) -> None:
    """Each bin is the mean over the points reaching its end, per call; a bin fewer than ``MIN_POINTS`` reach
    is not measured (the bin before's rate runs on)."""
    short = [Point(f"s{k}", (0.0, 50.0)) for k in range(MIN_POINTS)]  # 10 a call over calls 0-5
    long = [Point(f"l{k}", (0.0, 100.0, 150.0)) for k in range(n)]  # 20 a call, then 10 a call over 5-10
    got = natural_curve(short + long)
    assert len(got) == bins
    assert got[0] == (0, pytest.approx((MIN_POINTS * 10 + n * 20) / (MIN_POINTS + n), abs=0.05))
    if bins == 2:
        assert got[1] == (5, 10.0)


def _row(split: str, predicted: int, observed: int, natural: int, items: tuple[Item, ...] = ()) -> RealReacquisition:
    return RealReacquisition("pi", f"t{predicted}{observed}", 1, "auto", split, predicted, observed, 0, 0, 0, 0, 0, 0,
                             0, reacq_natural=natural, items=items)


def test_the_summary_compares_with_the_observation_the_excess_and_with_the_natural_added() -> None:
    rows = [_row("held-out", 100, 300, 100), _row("held-out", 200, 250, 0), _row("held-out", 300, 600, 200),
            _row("fit", 50, 50, 0)]
    s = summarize(rows)["held-out"]
    assert (s["predicted"], s["observed"], s["natural"], s["excess"]) == (600, 1150, 300, 850)
    assert s["pooled_ratio"] == pytest.approx(600 / 1150) and s["pooled_ratio_excess"] == pytest.approx(600 / 850)
    assert s["pooled_ratio_with_natural"] == pytest.approx(900 / 1150)
    assert s["spearman_excess"] == pytest.approx(spearman([100, 200, 300], [200, 250, 400]))
    assert s["spearman_with_natural"] == pytest.approx(spearman([200, 200, 500], [300, 250, 600]))
    assert math.isnan(summarize([])["all"]["pooled_ratio_excess"])


def _items(klass: str, n: int, size: int, observed: int) -> tuple[Item, ...]:
    return tuple(Item(f"file:x/{klass}{k}.py", klass, "", False, size, size, size, observed) for k in range(n))


def test_the_fit_divides_what_was_read_back_by_what_was_had_on_the_fit_sessions_only() -> None:
    rows = [_row("fit", 0, 600, 150, _items("edit", 4, 100, 50) + _items("mention", 4, 100, 10)),
            _row("held-out", 0, 10_000, 0, _items("edit", 4, 100, 100))]
    got = fit(rows)
    assert got["classes"]["edit"]["read_back"] == 0.5 and got["classes"]["mention"]["read_back"] == 0.1
    assert got["caused"] == pytest.approx((600 - 150) / 600)
    spared = (replace(_items("mention", 1, 100, 100)[0], spared=True),)
    assert fit([_row("fit", 0, 100, 0, _items("mention", 1, 100, 0) + spared)])["classes"]["mention"]["read_back"] == 0


@pytest.mark.parametrize(("n", "pooled"), [(MIN_ITEMS - 1, True), (MIN_ITEMS, False), (MIN_ITEMS + 1, False)])
def test_an_orientation_class_with_too_few_fit_items_takes_the_pooled_share(n: int, pooled: bool) -> None:
    items = _items("orientation-recent", n, 100, 50) + _items("orientation", 40, 100, 5)
    got = fit([_row("fit", 0, 1, 0, items)])["classes"]["orientation-recent"]
    assert got["items"] == n
    assert got["read_back"] == pytest.approx((n * 50 + 200) / (n * 100 + 4000) if pooled else 0.5, abs=1e-4)


def test_the_shipped_rates_are_the_fit_of_the_real_compactions(transcripts_dir: Path, real_compactions_dir: Path
                                                                ) -> None:
    """``reacquire_rates.json`` is what the fit gives on ../shared (stale: run the module's regeneration); every
    rule predicts the held-out compactions better than the former rule did, ranked and pooled."""
    import json

    from compbench.measure.reacquire_rules import TABLE, from_table
    from compbench.validation.reacquire_fit import FORMER, REGENERATE, fitted, load, measure, shipped

    loaded = load([str(transcripts_dir), str(real_compactions_dir)])
    data = shipped(loaded)
    assert json.loads(TABLE.read_text(encoding="utf-8")) == data, f"stale: run {REGENERATE}"
    now = summarize(measure(loaded, rates_=from_table(data)), resamples=0)["held-out"]
    was = summarize(measure(loaded, FORMER, replace(fitted(loaded, FORMER), caused=1.0)), resamples=0)["held-out"]
    assert now["spearman"] > was["spearman"] and now["spearman_excess"] > was["spearman_excess"]
    assert abs(math.log(now["pooled_ratio_excess"])) < abs(math.log(was["pooled_ratio_excess"]))
    assert data["natural_curve"]["points"] >= 50 and 0.5 < data["caused"] < 1


@pytest.mark.parametrize("argv", [[], ["--check"], ["logs", "--held-out"], ["--held-out", "logs"]])
def test_the_fit_module_says_its_usage_on_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from compbench.validation.reacquire_fit import main

    assert main(argv) == 2
    assert "usage: python -m compbench.validation.reacquire_fit" in capsys.readouterr().err


@pytest.mark.parametrize(("before", "halves"), [(2 * MIN_HALF - 1, False), (2 * MIN_HALF, True),
                                                 (2 * MIN_HALF + 1, True)])
def test_the_natural_window_is_split_in_halves_from_two_minimal_halves(o200k: TokenCounter, before: int,
                                                                       halves: bool) -> None:
    """A window of fewer calls than two ``MIN_HALF`` halves gives no halves; one re-read in the later half shows
    as a rate there and none in the earlier."""
    t = _busy([before - 2], before, 5)
    size = o200k.index(t).part_tokens[2][0]
    r = _one(t, o200k)
    if not halves:
        assert r.natural_halves is None
        return
    assert r.natural_halves is not None
    first, second = r.natural_halves
    assert first == 0 and second == pytest.approx(size / (before // 2))


def _paired(session: str, n: int, first: float, second: float) -> RealReacquisition:
    return replace(_row("held-out", 1, 1, 0), transcript=session, n=n, natural_halves=(first, second))


def test_the_natural_rates_reliability_is_its_halves_agreement_stepped_up_to_the_whole_window() -> None:
    """A rate that is a property of the session (each half ranks the sessions alike) is reliable (1); one that
    is a property of its moment (the halves ranked opposite) is not (below 0); under three compactions with
    halves, or none, it is not measurable."""
    steady = [_paired(f"s{k}", 1, 10.0 * k, 10.0 * k + 1) for k in range(6)]
    assert natural_reliability(steady) == (pytest.approx(1.0), 6)
    bursty = [_paired(f"s{k}", 1, 10.0 * k, b) for k, b in enumerate([50.0, 60, 30, 40, 0, 10])]
    assert natural_reliability(bursty)[0] < 0
    rho = spearman([0, 10, 20, 30], [5, 0, 30, 20])
    mixed = [_paired(f"s{k}", 1, a, b) for k, (a, b) in enumerate(zip([0, 10, 20, 30], [5, 0, 30, 20], strict=True))]
    assert natural_reliability(mixed)[0] == pytest.approx(2 * rho / (1 + rho))
    assert math.isnan(natural_reliability(steady[:2])[0])
    assert natural_reliability([_row("fit", 1, 1, 0)])[1] == 0


def test_the_intervals_resample_sessions_and_hold_the_figure() -> None:
    """The 95% intervals are over resampled sessions (a session's compactions go together): deterministic, around
    the figure measured on all, wide where the compactions disagree and narrow where each session says the same;
    none under three sessions."""
    agree = [replace(_row("held-out", 100 * k, 100 * k + 5, 0), transcript=f"s{k}") for k in range(1, 13)]
    s = summarize(agree)["held-out"]
    lo, hi = s["ci"]["pooled_ratio_all"]
    assert summarize(agree)["held-out"]["ci"] == s["ci"]
    assert lo <= s["pooled_ratio_all"] <= hi and s["ci"]["spearman"] == (1.0, 1.0)
    noisy = [replace(_row("held-out", 100 * k, (k * 7919) % 1300, 0), transcript=f"s{k}") for k in range(1, 13)]
    n_lo, n_hi = summarize(noisy)["held-out"]["ci"]["spearman"]
    assert n_hi - n_lo > 0.5
    two = [replace(_row("held-out", 100 * k, 100 * k, 0), transcript=f"s{k % 2}", n=k) for k in range(1, 9)]
    assert summarize(two)["held-out"]["ci"] == {} and summarize(agree, resamples=0)["held-out"]["ci"] == {}


def test_every_reread_is_predicted_beside_what_the_compaction_caused(o200k: TokenCounter) -> None:
    """Against the raw observation the prediction is of every re-read (the shares as fitted); against the
    excess, of what the compaction caused (times the caused share)."""
    t = _real([*REREAD, EDIT])
    half = replace(EVERY, caused=0.5)
    r = _one(t, o200k, half)
    size = o200k.index(t).part_tokens[2][0]
    assert r.reacq_predicted_all == size and r.reacq_predicted == round(size / 2)


def test_a_refit_predicts_from_the_items_what_a_new_pass_would(o200k: TokenCounter) -> None:
    """Repriced from its items, a compaction measured at other rates is the compaction measured at these: totals,
    each item's prediction and order, and the natural re-reads."""
    from compbench.validation.reacquire_fit import UNIT
    from compbench.validation.reacquisition import reprice

    t = _real([*REREAD, EDIT, assistant("a10", f"see {PATH} again")], before=[_read("a1b", "c1b", "/x/y/other.py"),
                                                                             tool("t1b", "c1b", BODY[:400], "Read")])
    rates_ = Rates({"edit": 0.6, "edit-changed": 0.4, "mention": 0.2, "lines": 0.0, "orientation-recent": 0.1,
                    "orientation": 0.05}, 0.7, 10, CURVE)
    again = _one(t, o200k, rates_)
    refit = reprice(_one(t, o200k, UNIT), rates_)
    assert (refit.reacq_predicted, refit.reacq_predicted_all, refit.reacq_orientation) == (
        again.reacq_predicted, again.reacq_predicted_all, again.reacq_orientation)
    assert refit == again and again.reacq_natural > 0
    assert again.reacq_orientation > 0 and again.reacq_predicted > again.reacq_orientation


def test_cross_validation_predicts_each_session_from_the_rates_of_the_others() -> None:
    """Leaving one session out: a session that reads back everything it edits is predicted at the others' share
    (they read back half), not its own, and its natural re-reads are the others' curve; every prediction is out
    of sample and held out."""
    from compbench.validation.reacquire_fit import cross_validated

    greedy = replace(_row("fit", 0, 400, 0, _items("edit", 4, 100, 100)), transcript="greedy", steps_after=10)
    modest = [replace(_row("held-out", 0, 200, 0, _items("edit", 4, 100, 50)), transcript=f"m{k}", steps_after=10)
              for k in range(3)]
    points = {"greedy": [Point("greedy", (0.0, 500.0))] * MIN_POINTS,  # 100 a call
              **{f"m{k}": [Point(f"m{k}", (0.0, 50.0))] * MIN_POINTS for k in range(3)}}  # 10 a call
    got = {r.transcript: r for r in cross_validated([greedy, *modest], points)}
    assert {r.split for r in got.values()} == {"held-out"}
    assert got["greedy"].reacq_predicted_all == 4 * 50  # the others' 0.5 of what it had
    assert got["greedy"].reacq_natural == 10 * 10  # the others' 10 a call over its 10 calls
    # each modest session: the other two read back 0.5, greedy 1.0 -> 800 of 1200 (0.6667), each item rounded
    assert got["m0"].reacq_predicted_all == 4 * round(100 * 0.6667)
    assert got["m0"].reacq_natural == 10 * 40  # (5 points at 100 + 10 at 10) / 15 a call


def test_the_natural_check_holds_the_curve_and_the_sessions_own_rate_against_the_points(o200k: TokenCounter) -> None:
    """At points where nothing was compacted, the curve's prediction and the session's own rate before each point
    (run over the steps the point reaches) are both held against what the agent re-read there."""
    from compbench.validation.reacquire_fit import Loaded, natural_check

    t = _busy([30, 52, 70], 111, 3)
    ws = WorkingSet.build(t, o200k.index(t).part_tokens)
    points = tuple(natural_points(t, ws))
    size = o200k.index(t).part_tokens[2][0]
    got = natural_check([Loaded(t, o200k.index(t).part_tokens, ws, points)], Rates(natural=((0, 1.0),)))
    assert got["points"] == 3 and got["observed"] == round(sum(p.cumulated[-1] for p in points))
    assert got["predicted"] == 50 + 30 + 10  # the points at calls 50, 75 and 100 reach 50, 30 and 10 calls
    assert points[0].rate_before == pytest.approx(size / NATURAL_WINDOW)  # the re-read at call 30
    assert got["session_rate"] == round(sum(p.rate_before * e for p, e in zip(points, (50, 30, 10), strict=True)))
    assert got["ratio"] == pytest.approx(90 / got["observed"])


def test_the_fit_module_cross_validates_over_the_held_out_logs_too(o200k: TokenCounter) -> None:
    """With held-out logs, every session of both is also predicted from the rates and curve of all the others:
    one row over the compactions of both, none of them in its own fit."""
    from compbench.validation.reacquire_fit import Loaded, effects

    def loaded(k: int) -> Loaded:
        t = replace(_busy([60, 70], 120, 30), id=f"session-{k}")
        ws = WorkingSet.build(t, o200k.index(t).part_tokens)
        return Loaded(t, o200k.index(t).part_tokens, ws, tuple(natural_points(t, ws)))

    mine, other = [loaded(k) for k in range(4)], [loaded(k) for k in range(4, 7)]
    (label, found), *_ = effects(mine, other)
    assert label == "every rule"
    both = found["cross-validated, with other"]
    assert both["compactions"] == 7 and both["sessions"] == 7
    assert found["cross-validated"]["compactions"] == 4 and found["other"]["compactions"] == 3
    assert found["natural"]["other"]["points"] == 3 * 3  # points at calls 50, 75 and 100 of each


def test_a_session_the_shipped_rates_were_not_fitted_on_is_held_out_whatever_its_hash(o200k: TokenCounter) -> None:
    """Validating the shipped rates (``compbench fidelity``), a user's session is out of sample even where the fit's
    hash split would have called it fit; a session the rates were fitted on is fit."""
    from compbench.measure.reacquire_rules import fit_sessions
    from compbench.validation.reacquisition import shipped_split, split

    ours = next(iter(sorted(fit_sessions())))
    theirs = next(f"user-{k}" for k in range(100) if split(f"user-{k}") == "fit")
    t = _real([*REREAD, EDIT])
    assert [r.split for r in at_compactions(replace(t, id=theirs), o200k.index(t).part_tokens, rates_=EVERY,
                                            split_of=shipped_split)] == ["held-out"]
    assert [r.split for r in at_compactions(replace(t, id=theirs), o200k.index(t).part_tokens, rates_=EVERY)] == ["fit"]
    assert shipped_split(ours) == "fit" and split(ours) == "fit"

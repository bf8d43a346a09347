"""``compbench.cli.compare_view`` — What ``compare RUN`` prints: a default that fits a terminal of :data:`WIDTH`
columns with the verdict first (the headline, its per-transcript median, recall, cost, one short line per
flag), ``--wide`` for every metric and flag in full, ``--by`` per agent, model or project, and the JSON of each.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from compbench.decide.compare import Metric, fmt, metric
from compbench.decide.headline import HEADLINE, RECALL, Spread

WIDTH = 160  # the default view's widest line
MIN_LABEL = 24  # a strategy label is clipped (in the middle) no shorter than this to fit WIDTH
SHOWN_PER_GROUP = 5  # --by without --wide: the first rows of each group (and the tool's own strategy)


def wrap(text: str, width: int = WIDTH, indent: str = "  ") -> list[str]:
    """``text`` in lines of at most ``width`` characters, continuation lines indented."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=True) or [""]


def clip(label: str, width: int) -> str:
    """``label`` within ``width`` characters: its head and tail kept, ``…`` between (labels end in what differs)."""
    if len(label) <= width:
        return label
    head = (width - 1) // 2
    return label[:head] + "…" + label[len(label) - (width - 1 - head):]


def acted(df: Any, label: str) -> str:
    g = df[df["strategy"] == label]
    if "first_action_step" not in g:
        return "?"
    return f"{int((g['first_action_step'] >= 0).sum())}/{len(g)}"


def median_cell(sp: Spread | None, m: Metric) -> str:
    if sp is None or math.isnan(sp.median):
        return "–"
    return f"{sp.median:.1%}" if m.percent else f"{sp.median:,.3f}"


def compact_table(results: Any, order: Sequence[str], agg: Mapping[str, Mapping[str, Any]],
                  standing: Mapping[str, Any], spreads: Mapping[str, Spread], below: Mapping[str, bool],
                  width: int = WIDTH) -> tuple[list[str], bool]:
    """The default table: strategy, acted, group (its tier, and whether it misses the bar), the headline with
    its interval and per-transcript median, recall, cost, calls over the window; labels clipped to fit
    ``width`` (True when any was)."""
    from compbench.textable import table

    head, rec, cost = metric(HEADLINE), metric(RECALL), metric("cost")
    headers = ["strategy", "acted", "group", f"{head.title} [95%]", "median", f"{rec.title} [95%]", "cost $",
               "over window"]
    rows = []
    for s in order:
        group = standing[s].tier_name + (", below bar" if below.get(s) else "")
        rows.append([s, acted(results, s), group, fmt(agg[s][HEADLINE], head), median_cell(spreads.get(s), head),
                     fmt(agg[s][RECALL], rec), fmt(agg[s]["cost"], cost, ci=False), f"{standing[s].refused:,}"])
    right = [False, True, False, True, True, True, True, True]
    lines = table(headers, rows, right)
    over = max(len(x) for x in lines) - width
    if over <= 0:
        return lines, False
    longest = max(len(r[0]) for r in rows)
    room = max(MIN_LABEL, longest - over)
    for r in rows:
        r[0] = clip(r[0], room)
    return table(headers, rows, right), True


def flag_lines(order: Sequence[str], details: Mapping[str, Sequence[Any]], wide: bool) -> list[str]:
    """``!`` lines: with ``wide`` one per flagged strategy with every flag in full; else one per set of flags,
    in a few words, naming the strategies that carry it, and only the flags the table does not already show
    (an ``acted on 59/61`` is the acted column)."""
    if wide:
        return [f"! {s}: {'; '.join(f.text for f in details[s])}" for s in order if details.get(s)]
    sets: dict[str, list[str]] = {}
    for s in order:
        shorts = [f.short for f in details.get(s, []) if f.severity != "info"]
        if shorts:
            sets.setdefault(", ".join(shorts), []).append(s)
    out = []
    for text, labels in sets.items():
        out += wrap(f"! {text}: {', '.join(labels)}")
    return out


def estimate_json(e: Any) -> dict[str, Any]:
    return {"value": num(e.value), "lo": num(e.lo), "hi": num(e.hi), "n": e.units}


def diff_json(d: Any) -> dict[str, Any]:
    return {"diff": num(d.value), "lo": num(d.lo), "hi": num(d.hi), "significant": d.significant, "n": d.units}


def spread_json(sp: Spread) -> dict[str, Any]:
    return {"median_per_transcript": num(sp.median), "transcripts": sp.n, "top3_share": num(sp.top_share),
            "dominated": sp.dominated}


def num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6) + 0.0  # + 0.0: never -0.0


def group_lines(groups: Sequence[Any], results: Any, wide: bool, width: int = WIDTH) -> list[str]:
    """``--by``: per group its verdict sentence, then its table (the first :data:`SHOWN_PER_GROUP` rows and the
    recording tool's own strategy; every row with ``wide``)."""
    from compbench.decide.breakdown import sentence
    from compbench.decide.headline import PRIMARY
    from compbench.decide.headline import spreads as spreads_of
    from compbench.decide.objective import meets, parse_objective

    obj = parse_objective(PRIMARY)
    out: list[str] = []
    for g in groups:
        agg = g.batch.estimates
        shown = g.order if wide else [s for k, s in enumerate(g.order) if k < SHOWN_PER_GROUP or s in g.own]
        below = {s: not meets(agg[s], obj) for s in shown}
        out.append(f"== {g.name}: {g.transcripts:,} transcript{'s' * (g.transcripts != 1)} ==")
        out += wrap(sentence(g), width) if not wide else [sentence(g)]
        lines, _ = compact_table(g.rows, shown, agg, g.standing, spreads_of(g.rows, metric(HEADLINE)), below,
                                 width if not wide else 10**6)
        out += lines
        if len(shown) < len(g.order):
            out.append(f"  … {len(g.order) - len(shown)} more (--wide shows every strategy)")
        out.append("")
    return out


def group_json(groups: Sequence[Any], chosen: Sequence[Metric]) -> dict[str, Any]:
    from compbench.decide.breakdown import sentence
    from compbench.decide.headline import spreads as spreads_of

    out: dict[str, Any] = {}
    for g in groups:
        agg = g.batch.estimates
        sp = spreads_of(g.rows, metric(HEADLINE))
        out[g.key] = {
            "name": g.name, "transcripts": g.transcripts, "pick": g.pick, "own_strategy": g.own,
            "best_alternative": g.alternative, "verdict": sentence(g),
            "strategies": {s: {"acted": acted(g.rows, s), "tier": g.standing[s].tier_name,
                               "calls_over_window": g.standing[s].refused,
                               **{m.name: estimate_json(agg[s][m.name]) for m in chosen},
                               "spread": {HEADLINE: spread_json(sp[s])}} for s in g.order}}
    return out

"""``compbench.cli.compare_view`` — What ``compare RUN`` prints: a default that fits a terminal of :data:`WIDTH`
columns with the verdict first (the headline, its per-transcript median, recall, cost, one short line per
flag), ``--wide`` for every metric and flag in full, ``--by`` per agent, model or project, and the JSON of each.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from compbench.decide.compare import fmt
from compbench.decide.headline import HEADLINE, RECALL, Spread
from compbench.decide.metrics import Metric, metric

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
        if g.by == "source":  # a tool's logs: as it ran, at its best settings, the best other strategy
            out += tool_block(g, width if not wide else 10**6)
        else:
            out += wrap(sentence(g), width) if not wide else [sentence(g)]
        lines, _ = compact_table(g.rows, shown, agg, g.standing, spreads_of(g.rows, metric(HEADLINE)), below,
                                 width if not wide else 10**6)
        out += lines
        if len(shown) < len(g.order):
            out.append(f"  … {len(g.order) - len(shown)} more (--wide shows every strategy)")
        out.append("")
    return out


def group_json(groups: Sequence[Any], chosen: Sequence[Metric]) -> dict[str, Any]:
    from compbench.decide.breakdown import sentence, tool_sentence, tool_verdict
    from compbench.decide.headline import spreads as spreads_of

    out: dict[str, Any] = {}
    for g in groups:
        agg = g.batch.estimates
        sp = spreads_of(g.rows, metric(HEADLINE))
        out[g.key] = {
            "name": g.name, "transcripts": g.transcripts, "pick": g.pick, "own_strategy": g.own,
            "best_alternative": g.alternative,
            "verdict": tool_sentence(g) if g.by == "source" else sentence(g),
            **({"tool": _tool_json(tool_verdict(g))} if g.by == "source" else {}),
            "strategies": {s: {"acted": acted(g.rows, s), "tier": g.standing[s].tier_name,
                               "calls_over_window": g.standing[s].refused,
                               **{m.name: estimate_json(agg[s][m.name]) for m in chosen},
                               "spread": {HEADLINE: spread_json(sp[s])}} for s in g.order}}
    return out


def tool_block(g: Any, width: int = WIDTH) -> list[str]:
    """A tool's verdict lines (compbench.decide.breakdown.tool_lines) within ``width``; the lines to paste as
    they are (a YAML fragment keeps its indentation)."""
    from compbench.decide.breakdown import tool_lines

    out: list[str] = []
    for line in tool_lines(g)[1:]:
        pasted = line.startswith(("    set: ", "         "))
        out += [line] if pasted else wrap(line, width, indent=" " * (len(line) - len(line.lstrip()) + 4))
    return out


def _tool_json(v: dict[str, Any]) -> dict[str, Any]:
    """A tool's verdict (compbench.decide.breakdown.tool_verdict) as JSON: each change's paired differences."""
    out = {k: x for k, x in v.items() if not k.endswith("_change")}
    for key in ("best_settings_change", "best_other_change"):
        c = v.get(key)
        out[key] = None if c is None else {name: estimate_json(d) for name, d in c.diffs.items() if d is not None}
    return out


def _summarizers(runs: tuple[str, ...]) -> str:
    """Which summarizer wrote each run's summaries, in words: recall depends on it."""
    from compbench.store.runread import Run
    from compbench.summarizers import describe_summarizer

    out = []
    for name, run in zip("AB" if len(runs) > 1 else " ", runs, strict=False):
        what = describe_summarizer(Run.open(run).summarizer)
        out.append(f"summaries{' ' + name if name.strip() else ''}: {what}")
    return "\n".join(out)


def _diff(d: Any, m: Any) -> str:
    """A paired difference: asv's mark (+ worse, - better, ~ not significant), the value and its interval in
    the units of the single-run tables (percentage points for a percentage)."""
    from compbench.decide.compare import fmt_diff

    if math.isnan(d.value):
        return "–"
    better = (d.value > 0) == m.higher_is_better
    mark = "~" if not d.significant else ("-" if better else "+")
    return f"{mark} {fmt_diff(d, m)}"


def _diff_json(d: Any) -> dict[str, Any]:
    return {"diff": _num(d.value), "lo": _num(d.lo), "hi": _num(d.hi), "significant": d.significant, "n": d.units}


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6) + 0.0  # + 0.0: never -0.0


def default_baseline(labels: list[str]) -> str | None:
    """What ``compare RUN`` measures differences from when no ``--baseline`` is given: ``none``; in a sweep of
    one strategy (a tune run) its default configuration; else nothing (no difference table)."""
    if "none" in labels:
        return "none"
    names = {s.split(":")[0] for s in labels}
    if len(names) == 1 and (only := names.pop()) in labels:
        return only
    return None


def _spec(run: str) -> dict[str, Any]:
    from pathlib import Path

    try:
        spec: dict[str, Any] = json.loads((Path(run) / "manifest.json").read_text(encoding="utf-8"))["spec"]
        return spec
    except (OSError, ValueError, KeyError):
        return {}

"""``compbench.cli.compare_view`` — What ``compare RUN`` prints: a default that fits a terminal of :data:`WIDTH`
columns with the verdict first (the headline, its per-transcript median, recall, cost, one short line per
flag), ``--wide`` for every metric and flag in full, ``--by`` per agent, model, project or agent type, ``--by session``
per session with its sub-agents, and the JSON of each.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import click

from compbench.decide.compare import fmt
from compbench.decide.headline import HEADLINE, RECALL, Spread
from compbench.decide.metrics import Metric, metric
from compbench.sdk.kinds import REFERENCE

WIDTH = 160  # the default view's widest line
MIN_LABEL = 24  # a strategy label is wrapped (between its parameters) no narrower than this to fit WIDTH
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


def label_pieces(label: str, width: int) -> list[str]:
    """``label`` in lines of at most ``width`` characters, broken only between its parts (after the ``:`` of
    its name, after a ``,`` between parameters, after a pipeline's ``>``): a value is never cut, and a part
    longer than ``width`` stays whole on its line. Continuation lines are indented by two spaces."""
    import re

    if len(label) <= width:
        return [label]
    parts = [p for p in re.split(r"(?<=[:,>])", label) if p]
    lines: list[str] = []
    for part in parts:
        indent = "  " if lines else ""
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
        else:
            lines.append(indent + part)
    return lines


def fit_labels(rows: list[list[str]], over: int) -> list[list[str]]:
    """``rows`` whose first cell (a label) is wrapped so the table loses ``over`` columns (not below
    :data:`MIN_LABEL`): a long label continues on lines of its own with the other cells empty."""
    longest = max(len(r[0]) for r in rows)
    room = max(MIN_LABEL, longest - over)
    out: list[list[str]] = []
    for r in rows:
        first, *rest = label_pieces(r[0], room)
        out.append([first, *r[1:]])
        out += [[piece, *([""] * (len(r) - 1))] for piece in rest]
    return out


def shared_part(labels: Sequence[str]) -> tuple[str, dict[str, str]]:
    """Configurations of one strategy (a sweep) told apart by what differs: the part every label shares (the
    strategy's name and the parameters all of them set alike) and, per label, the rest (``(default)`` for
    a label that is only the shared part). Labels of different strategies are kept whole (``""``)."""
    names = {s.partition(":")[0] for s in labels}
    if len(labels) < 2 or len(names) != 1:
        return "", {s: s for s in labels}
    items = {s: [x for x in s.partition(":")[2].split(",") if x] for s in labels}
    common = [x for x in items[labels[0]] if all(x in items[s] for s in labels)]
    name = names.pop()
    shared = name + (":" + ",".join(common) if common else "")
    return shared, {s: ",".join(x for x in items[s] if x not in common) or "(default)" for s in labels}


def compact_table(results: Any, order: Sequence[str], agg: Mapping[str, Mapping[str, Any]],
                  standing: Mapping[str, Any], spreads: Mapping[str, Spread], below: Mapping[str, bool],
                  width: int = WIDTH) -> tuple[list[str], bool]:
    """The default table: strategy, acted, group (its tier, and whether it misses the bar), the headline with
    its interval and per-transcript median, recall, cost, calls over the window; a label too long for
    ``width`` wraps between its parameters (True when any did)."""
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
    lines = table(headers, fit_labels(rows, over), right)
    if max(len(x) for x in lines) > width:  # still too wide: "(n=4, few)" said once, under the table
        short = [[c.replace(", few)", ")") if k > 2 else c for k, c in enumerate(r)] for r in rows]
        lines = table(headers, short, right)
        lines = table(headers, fit_labels(short, max(0, max(len(x) for x in lines) - width)), right)
        lines.append("(n=K): a figure resting on K < 5 transcripts or sessions (few)")
    return lines, True


MIN_HEADER = 14  # a figure column's title wraps over lines no narrower than this


def wide_tables(labels: Sequence[str], lead: Sequence[tuple[str, Sequence[str], bool]],
                figures: Sequence[tuple[str, Sequence[str]]], width: int = WIDTH, title: str = "figures") -> list[str]:
    """Every figure of every strategy in tables a terminal or a pager shows whole: each table at most ``width``
    columns, the strategy label in each (wrapped between its parameters when long), ``lead``'s columns
    (header, cells, right-aligned) in the first only, then the ``figures`` (title, cells) packed in their
    order, a title wider than its figures wrapped over several header lines."""
    if not labels:
        return []
    longest = max(len(x) for x in labels)
    room = max(MIN_LABEL, min(longest, width // 3))
    pieces = [label_pieces(x, room) for x in labels]
    label_w = max(max(len(p) for ps in pieces for p in ps), len("strategy"))

    def column(header: str, cells: Sequence[str], right: bool) -> tuple[list[str], list[str], bool, int]:
        cell_w = max((len(c) for c in cells), default=0)
        w = max(cell_w, min(len(header), max(cell_w, MIN_HEADER)))
        head = textwrap.wrap(header, w, break_long_words=False, break_on_hyphens=False) or [""]
        return head, list(cells), right, max(w, *(len(h) for h in head))

    cols = [column(h, c, r) for h, c, r in lead] + [column(h, c, True) for h, c in figures]
    tables: list[list[tuple[list[str], list[str], bool, int]]] = [[]]
    used = label_w
    for k, col in enumerate(cols):
        if k >= len(lead) and tables[-1] and used + 2 + col[3] > width:  # lead columns stay in the first
            tables.append([])
            used = label_w
        tables[-1].append(col)
        used += 2 + col[3]
    out: list[str] = []
    for n, group in enumerate(tables):
        if len(tables) > 1:
            out.append(f"({title}, {n + 1} of {len(tables)})")
        depth = max(len(c[0]) for c in group)
        for row in range(depth):  # the titles, bottom-aligned over their figures
            cells = ["strategy" if row == depth - 1 else ""]
            for head, _, right, w in group:
                text = ([""] * (depth - len(head)) + head)[row]
                cells.append(text.rjust(w) if right else text.ljust(w))
            out.append("  ".join([cells[0].ljust(label_w), *cells[1:]]).rstrip())
        for i, ps in enumerate(pieces):
            for j, piece in enumerate(ps):
                cells = [piece.ljust(label_w)]
                for _, values, right, w in group:
                    text = values[i] if j == 0 else ""
                    cells.append(text.rjust(w) if right else text.ljust(w))
                out.append("  ".join(cells).rstrip())
        out.append("")
    return out[:-1]


def flag_lines(order: Sequence[str], details: Mapping[str, Sequence[Any]], wide: bool) -> list[str]:
    """``!`` lines: with ``wide`` one per flagged strategy with every flag in full; else one per set of flags,
    in a few words, naming the strategies that carry it, and only the flags the table does not already show
    (an ``acted on 59/61`` is the acted column)."""
    if wide:
        return [line for s in order if details.get(s)
                for line in wrap(f"! {s}: {'; '.join(f.text for f in details[s])}")]
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


def diff_json(d: Any, m: Any = None) -> dict[str, Any]:
    """A paired difference for machines, with its reading (``better``, ``worse``, ``not significant``) given
    the metric ``m``."""
    return _diff_json(d, m)


def spread_json(sp: Spread) -> dict[str, Any]:
    return {"median_per_transcript": num(sp.median), "transcripts": sp.n, "top3_share": num(sp.top_share),
            "dominated": sp.dominated}


def num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6) + 0.0  # + 0.0: never -0.0


def group_lines(groups: Sequence[Any], results: Any, wide: bool, width: int = WIDTH,
                verdicts: Mapping[str, Any] | None = None) -> list[str]:
    """``--by``: per group its verdict (a tool's logs: its :class:`~compbench.decide.toolverdict.ToolVerdict`,
    from ``verdicts`` by source), then its table (the first :data:`SHOWN_PER_GROUP` rows and the recording tool's
    own strategy; every row with ``wide``)."""
    from compbench.decide.breakdown import sentence
    from compbench.decide.headline import PRIMARY
    from compbench.decide.headline import spreads as spreads_of
    from compbench.decide.objective import below_bar, parse_objective

    obj = parse_objective(PRIMARY)
    out: list[str] = []
    for g in groups:
        agg = g.batch.estimates
        shown = g.order if wide else [s for k, s in enumerate(g.order) if k < SHOWN_PER_GROUP or s in g.own]
        below = {s: below_bar(agg[s], obj) for s in shown}
        out.append(f"== {g.name}: {g.transcripts:,} transcript{'s' * (g.transcripts != 1)} ==")
        if g.by == "source":  # a tool's logs: as it ran, its settings against the evidence, the best other
            out += tool_block(_verdict_of(g, verdicts), width)
        else:
            out += wrap(sentence(g), width)
        lines, _ = compact_table(g.rows, shown, agg, g.standing, spreads_of(g.rows, metric(HEADLINE)), below, width)
        out += lines
        if len(shown) < len(g.order):
            out.append(f"  … {len(g.order) - len(shown)} more (--wide shows every strategy)")
        out.append("")
    return out


def _verdict_of(g: Any, verdicts: Mapping[str, Any] | None) -> Any:
    from compbench.decide.toolverdict import build

    return verdicts[g.key] if verdicts is not None and g.key in verdicts else build(g)


def group_json(groups: Sequence[Any], chosen: Sequence[Metric], verdicts: Mapping[str, Any] | None = None
               ) -> dict[str, Any]:
    from compbench.decide.breakdown import sentence
    from compbench.decide.headline import spreads as spreads_of
    from compbench.decide.toolverdict import sentence as tool_sentence
    from compbench.decide.toolverdict import to_json

    out: dict[str, Any] = {}
    for g in groups:
        agg = g.batch.estimates
        sp = spreads_of(g.rows, metric(HEADLINE))
        v = _verdict_of(g, verdicts) if g.by == "source" else None
        out[g.key] = {
            "name": g.name, "transcripts": g.transcripts, "pick": g.pick, "own_strategy": g.own,
            "best_alternative": g.alternative,
            "verdict": tool_sentence(v) if v is not None else sentence(g),
            **({"tool": to_json(v)} if v is not None else {}),
            "strategies": {s: {"acted": acted(g.rows, s), "tier": g.standing[s].tier_name,
                               "calls_over_window": g.standing[s].refused,
                               **{m.name: estimate_json(agg[s][m.name]) for m in chosen},
                               "spread": {HEADLINE: spread_json(sp[s])}} for s in g.order}}
    return out


def tool_block(v: Any, width: int = WIDTH) -> list[str]:
    """A tool's verdict lines (:func:`compbench.decide.toolverdict.lines`) within ``width``, its heading left out."""
    from compbench.decide.toolverdict import lines

    return lines(v, width)[1:]


def _summarizers(runs: tuple[str, ...]) -> str:
    """Which summarizer wrote each run's summaries, in words: recall depends on it."""
    from compbench.store.reader import Run
    from compbench.summarizers import describe_summarizer

    out = []
    for name, run in zip("AB" if len(runs) > 1 else " ", runs, strict=False):
        what = describe_summarizer(Run.open(run).summarizer)
        out.append(f"summaries{' ' + name if name.strip() else ''}: {what}")
    return "\n".join(out)


MARKS = ("better", "worse", "n.s.")  # a paired difference's reading, in words (asv's +/-/~ read against the sign)
LEGEND = ("better / worse: significantly, in the metric's own direction (higher savings and recall, lower cost and "
          "re-reads), the 95% paired bootstrap interval excluding 0 on at least 5 transcripts or sessions; n.s.: "
          "not significant; the sign is the difference's own (pp = percentage points)")


def reading(d: Any, m: Any) -> str:
    """``better``, ``worse`` or ``n.s.``: what a paired difference means for a reader, whatever its sign (a
    saving that rises by 13 pp is better, a cost that rises by $0.3 is worse)."""
    if not d.significant:
        return MARKS[2]
    return MARKS[0] if (d.value > 0) == m.higher_is_better else MARKS[1]


def _diff(d: Any, m: Any) -> str:
    """A paired difference: its reading in a word (:func:`reading`), then the value and its interval in the
    units of the single-run tables (percentage points for a percentage): ``better +13.2 pp [+9.0, +17.1]``."""
    from compbench.decide.compare import fmt_diff

    if math.isnan(d.value) or d.units == 0:
        return fmt_diff(d, m)
    return f"{reading(d, m)} {fmt_diff(d, m)}"


def _diff_json(d: Any, m: Any = None) -> dict[str, Any]:
    out = {"diff": _num(d.value), "lo": _num(d.lo), "hi": _num(d.hi), "significant": d.significant, "n": d.units}
    if m is not None and not math.isnan(d.value):
        out["reads"] = {"n.s.": "not significant"}.get(reading(d, m), reading(d, m))
    return out


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6) + 0.0  # + 0.0: never -0.0


def default_baseline(labels: list[str]) -> str | None:
    """What ``compare RUN`` measures differences from when no ``--baseline`` is given: ``none``; in a sweep of
    one strategy (a tune run) its default configuration; else nothing (no difference table)."""
    if REFERENCE in labels:
        return REFERENCE
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


def session_lines(results: Any, order: Sequence[str], fmt: str, wide: bool) -> None:
    """``--by session``: each session with its sub-agents as one unit (:func:`compbench.decide.sessions.table`),
    the sub-agents' share in one line; JSON: every session under every configuration."""
    from compbench.cli.render import table as render
    from compbench.decide import sessions

    if fmt == "json":
        click.echo(json.dumps(sessions.to_json(results), indent=2))
        return
    headers, rows, base = sessions.table(results, order, wide or fmt != "table")
    if fmt == "table":
        headers = [clip(h, MIN_LABEL + 5) for h in headers]
        n = results["transcript_id"].nunique()
        for line in wrap(f"Per session, each with its sub-agents as one unit ({n:,} transcript{'s' * (n != 1)}): "
                         "tokens (calls and summaries) and cost summed over its transcripts; sub-agents' shares under "
                         "the base configuration; the costliest sessions first."):
            click.echo(line)
    text = render(headers, rows, fmt)
    over = max((len(x) for x in text.splitlines()), default=0) - WIDTH
    if fmt == "table" and over > 0 and rows:  # a session's id gives way (head and tail kept): JSON and --wide hold it
        room = max(MIN_LABEL, max(len(r[0]) for r in rows) - over)
        text = render(headers, [[clip(r[0], room), *r[1:]] for r in rows], fmt)
    click.echo(text)
    if fmt != "table":
        return
    total = results.loc[results["strategy"] == base, "session"].nunique()
    if len(rows) < total:
        click.echo(f"… {total - len(rows):,} more sessions (--wide shows every session and configuration)")
    text = sessions.line(results)
    for line in wrap(text or "No transcript of this run is a sub-agent's: each session is its own conversation."):
        click.echo(line)

"""``compbench.cli.compare_one`` — ``compare RUN``: the strategies of one run, ranked by the one rule, with the
verdict first.

By default the view fits :data:`~compbench.cli.compare_view.WIDTH` columns: the verdict, a table of the
headline (with its per-transcript median), recall and cost, a short line per flag. ``--wide`` adds every
metric, each strategy's paired difference from the baseline and every flag in full; ``--by`` ranks each
agent's, model's or project's transcripts on their own. JSON, Markdown and CSV carry every metric.
"""

from __future__ import annotations

import json
from typing import Any

import click

from compbench.cli.render import table as render
from compbench.sdk.kinds import RECORDED


def one_run(run: str, a: Any, fmt: str, sort_by: str | None, metrics: tuple[str, ...], resamples: int,
            baseline: str | None, by: str, group_by: str | None, wide: bool) -> None:
    from compbench.cli import compare_view as view
    from compbench.cli.compare_view import _diff, _summarizers, default_baseline
    from compbench.decide.bootstrap import batch
    from compbench.decide.compare import paired
    from compbench.decide.flags import cache_check, flag_details
    from compbench.decide.headline import HEADLINE, PRIMARY, RECALL, everywhere, spreads
    from compbench.decide.metrics import METRICS, metric
    from compbench.decide.objective import bars, below_bar, edge, parse_objective, ranked, rule
    from compbench.decide.ranking import RULE, order, standings
    from compbench.errors import UsageError
    from compbench.summarizers import describe_summarizer

    everything = a
    others: list[str] = []
    if group_by is None:
        # a row that did not run on every transcript (a settings sweep's, on its tool's logs only) is decided on in
        # that tool's verdict, not pooled
        a, others = everywhere(a)
    chosen = list(dict.fromkeys(metric(m) for m in metrics)) if metrics else list(METRICS)
    obj = parse_objective(PRIMARY)
    details = flag_details(a)
    standing = standings(a, details)
    needed = list(dict.fromkeys([*chosen, *(metric(n) for n in (HEADLINE, RECALL, "cost", obj.metric)),
                                 *(metric(k) for k, _, _ in obj.constraints),
                                 *([metric(sort_by)] if sort_by else [])]))
    b = batch(a, needed, resamples, by=by)
    agg = b.estimates
    labels = list(agg)
    if sort_by:
        key = metric(sort_by)
        order_ = order(labels, standing, lambda s: agg[s][key.name].value, key.higher_is_better)
        rule_text = RULE.format(metric=key.title)
    else:
        order_ = ranked(agg, standing, obj)
        rule_text = rule(obj)
    base = baseline or default_baseline(labels)
    if baseline and baseline not in agg:
        raise UsageError(f"--baseline {baseline!r} is not a strategy of this run (strategies: {', '.join(agg)})")
    spread = {m.name: spreads(a, m) for m in chosen if m.name in (HEADLINE, RECALL)}
    spread.setdefault(HEADLINE, spreads(a, metric(HEADLINE)))
    edges = {s: edge(agg[s], obj) for s in order_}

    groups = None
    if group_by == "session":  # a session with its sub-agents as one unit: sums, not a ranking per session
        view.session_lines(a, order_, fmt, wide)
        return
    if group_by:
        from compbench.decide.breakdown import breakdown

        groups = breakdown(a, group_by, needed, resamples, by)
        verdicts = _tool_verdicts(run, groups) if group_by == "source" else None
        if fmt == "json":
            click.echo(json.dumps({"by": group_by, "groups": view.group_json(groups, chosen, verdicts)}, indent=2))
            return
        if fmt == "table":
            for line in view.group_lines(groups, a, wide, verdicts=verdicts):
                click.echo(line)
            for line in view.wrap("order in each group: " + rule_text):
                click.echo(line)
            if group_by == "source" and RECORDED in set(a["strategy"]):
                for line in view.wrap("as it ran replays each log's own summaries; every other row's summaries "
                                      f"are the run's: {describe_summarizer(_spec_summarizer(run))}"):
                    click.echo(line)
            return
        raise UsageError("--by prints a table or JSON (--format table|json)")

    def diffs_for(ms: list[Any]) -> dict[str, dict[str, Any]]:
        if base is None:
            return {}
        ref = a[a["strategy"] == base]
        return {s: {m.name: b.diff(s, base, m.name) or paired(a[a["strategy"] == s], ref, m, resamples, by=by)
                    for m in ms} for s in order_ if s != base}

    if fmt == "json":
        diffs = diffs_for(chosen)

        def entry(s: str) -> dict[str, Any]:
            out: dict[str, Any] = {"acted": view.acted(a, s), "tier": standing[s].tier_name,
                                   "calls_over_window": standing[s].refused,
                                   "flags": [f.text for f in details.get(s, [])], "edge": edges[s]}
            out.update({m.name: view.estimate_json(agg[s][m.name]) for m in chosen})
            out["spread"] = {name: view.spread_json(sp[s]) for name, sp in spread.items()}
            if s in diffs:
                out[f"vs_{base}"] = {m.name: view.diff_json(diffs[s][m.name], m) for m in chosen}
            return out

        click.echo(json.dumps({s: entry(s) for s in order_}, indent=2))
        return
    from compbench.decide.compare import fmt as show

    if fmt == "csv":  # every figure in one table, as numbers (fractions for percentages)
        click.echo(render(*csv_table(a, order_, agg, standing, chosen, base, diffs_for(chosen)), "csv"))
        return
    if fmt != "table":
        rows = [[s, view.acted(a, s), standing[s].tier_name, *(show(agg[s][m.name], m) for m in chosen)]
                for s in order_]
        click.echo(render(["strategy", "acted", "group", *(m.title for m in chosen)], rows, fmt))
        diffs = diffs_for(chosen)
        if diffs:
            click.echo("")
            click.echo(render(["strategy", *(f"Δ {m.title} vs {base}" for m in chosen)],
                              [[s, *(_diff(diffs[s][m.name], m) for m in chosen)] for s in diffs], fmt))
        return
    from compbench.data.formats.catalog import tool_name as g_name
    from compbench.decide.verdict import lines, verdict

    v = verdict(a, b, standing, {s: [f.text for f in fs] for s, fs in details.items()},
                describe_summarizer(_spec_summarizer(run)), cache=cache_check(a), spreads=spread[HEADLINE])
    out: list[str] = []
    sources = sorted({str(x) for x in everything["source"].unique()}) if "source" in everything.columns else []
    tools_first = len(sources) > 1 or RECORDED in agg
    if tools_first:  # what a user comes for: their own tool's verdict, each tool's logs on their own
        from compbench.decide.breakdown import breakdown

        out.append("Per tool (each tool's logs on their own; (n.s.) not significant, 95% paired intervals; a "
                   "setting is advised only where the evidence on these logs holds it up):")
        from compbench.decide.breakdown import recorded_check, recorded_check_line, recorded_lacks
        from compbench.store.reader import Run

        finished = Run.open(run)
        compactions = finished.table("compactions")
        check = recorded_check_line(recorded_check(compactions, finished.table("steps")), recorded_lacks(compactions))
        if check:
            out += ["  " + x for x in view.wrap(check, view.WIDTH - 2)]
        tool_groups = breakdown(everything, "source", needed, resamples, by)
        verdicts = _tool_verdicts(run, tool_groups)
        for g in tool_groups:
            out.append(f"  {g.name} ({g.transcripts:,} transcript{'s' * (g.transcripts != 1)})")
            out += ["  " + x for x in view.tool_block(verdicts[g.key], view.WIDTH - 2)]
        out.append("")
        if len(sources) > 1:
            names = ", ".join(sorted({g_name(x) for x in sources}))
            out += view.wrap(f"All logs pooled ({len(sources)} tools: {names}): the pick below mixes tools, a strategy "
                             "to build rather than a setting to change; each tool's own verdict is above.")
    for line in lines(v):
        out += view.wrap(line)
    if others:
        out += view.wrap(f"pooled below: the {len(agg)} configurations that ran on every transcript; "
                         f"{len(others)} more ran on one tool's logs only (the settings sweeps): each in its "
                         "tool's verdict above, and in --by source")
    out.append("")
    if wide:  # every metric, in tables of at most WIDTH columns (the label in each)
        lead = [("acted", [view.acted(a, s) for s in order_], True),
                ("group", [standing[s].tier_name for s in order_], False),
                ("over window", [f"{standing[s].refused:,}" for s in order_], True)]
        out += view.wide_tables(order_, lead, [(m.title, [show(agg[s][m.name], m) for s in order_])
                                               for m in chosen])
        out.append("")
        out += view.wrap("median per transcript (" + metric(HEADLINE).title + "): " + ", ".join(
            f"{s} {view.median_cell(spread[HEADLINE].get(s), metric(HEADLINE))}" for s in order_))
        shown_diffs = diffs_for(chosen)
        diff_metrics = chosen
    else:
        below = {s: below_bar(agg[s], obj) for s in order_}
        table_lines, _ = view.compact_table(a, order_, agg, standing, spread[HEADLINE], below)
        out += table_lines
        shown_diffs = diffs_for([metric(HEADLINE), metric(RECALL)]) if baseline else {}
        diff_metrics = [metric(HEADLINE), metric(RECALL)]
    if shown_diffs:
        out.append("")
        out += view.wide_tables(list(shown_diffs), [], [(f"Δ {m.title} vs {base}",
                                                          [_diff(shown_diffs[s][m.name], m) for s in shown_diffs])
                                                         for m in diff_metrics], title=f"differences from {base}")
    out.append("")
    out += view.flag_lines(order_, details, wide)
    for line in ("order: " + rule_text,
                 *([f"Δ = strategy − {base} over the same transcripts (resampled by {by}; n = contributing "
                    f"transcripts); {view.LEGEND}"]
                   if shown_diffs else []),
                 *(["no difference table: the run has no none (--baseline LABEL picks a strategy to measure "
                    "differences from)"] if base is None and wide else []),
                 f"median: {metric(HEADLINE).title} of the median transcript; below bar: misses {bars(obj)}",
                 _summarizers((run,)),
                 *(["every figure in one table, for a spreadsheet or a script: --format csv (or json)"] if wide else
                   ["--wide: every metric (in tables that fit 160 columns), each strategy's difference from "
                    f"{base or 'a --baseline'} and every flag in full; --format csv: every figure in one table; "
                    "--by source: per agent"])):
        out += view.wrap(line)
    click.echo("\n".join(out))


def csv_table(results: Any, order: list[str], agg: Any, standing: Any, chosen: list[Any], base: str | None,
              diffs: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """``--format csv``: one row per strategy with every figure as a number (a percentage as a fraction): each
    metric's value, 95% bounds and contributing transcripts, then its paired difference from ``base`` with its
    bounds and whether it is significant. An empty cell: no figure."""
    from compbench.cli.compare_view import acted, num

    def n(v: float | None) -> str:
        return "" if v is None else repr(v)

    headers = ["strategy", "acted", "group", "calls_over_window"]
    for m in chosen:
        headers += [m.name, f"{m.name}_lo", f"{m.name}_hi", f"{m.name}_n"]
    if diffs:
        for m in chosen:
            headers += [f"{m.name}_vs_{base}", f"{m.name}_vs_{base}_lo", f"{m.name}_vs_{base}_hi",
                        f"{m.name}_vs_{base}_significant"]
    rows = []
    for s in order:
        row = [s, acted(results, s), standing[s].tier_name, str(standing[s].refused)]
        for m in chosen:
            e = agg[s][m.name]
            none = e.units == 0
            row += [n(None if none else num(e.value)), n(None if none else num(e.lo)),
                    n(None if none else num(e.hi)), str(e.units)]
        if diffs:
            for m in chosen:
                d = diffs.get(s, {}).get(m.name)
                row += (["", "", "", ""] if d is None or d.units == 0 else
                        [n(num(d.value)), n(num(d.lo)), n(num(d.hi)), str(d.significant).lower()])
        rows.append(row)
    return headers, rows


def _tool_verdicts(run: str, groups: Any) -> dict[str, Any]:
    """Each tool's verdict (compbench.decide.toolverdict), with the run's compactions and steps for its evidence."""
    from compbench.decide.toolverdict import verdicts
    from compbench.store.reader import Run

    finished = Run.open(run)
    made = verdicts(groups, finished.table("compactions"), finished.table("steps"))
    return {g.key: v for g, v in zip(groups, made, strict=True)}


def _spec_summarizer(run: str) -> str:
    from compbench.cli.compare_view import _spec

    return str(_spec(run).get("summarizer", "?"))

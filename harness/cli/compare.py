"""``compbench.cli.compare`` — ``compbench compare``: strategies as rows with 95% CIs; two runs side by side with
significance."""

from __future__ import annotations

import json
from typing import Any

import click

from compbench.cli import WithMetrics
from compbench.cli.compare_view import LEGEND, _diff, _diff_json, _summarizers, wrap
from compbench.cli.options import selection, selection_options
from compbench.cli.render import table as _table

EPILOG = """\b
Examples:
  compbench compare out/run                         the verdict, then strategies ranked (fits 160 columns)
  compbench compare out/run --wide                  every metric, each one's difference from none, every flag
  compbench compare out/run --by source             per agent: its verdict, its own strategy beside the best
  compbench compare out/run --baseline opencode --metric needed_recall --metric net_savings
  compbench compare out/a out/b --format markdown   B − A for the configurations both runs have
  compbench compare out/a out/b --pair codex codex:preset=0.77
  compbench compare out/run --source claude-code --where "window>=200k"   one tool's logs at their windows

Order: a strategy with calls over the window (a real API refuses them) never ranks above one without;
then degenerate compacting; within each group, those that meet the verdict's first objective's bar
(needed-fact recall >= 90%) first, then by its metric; --sort METRIC orders by METRIC alone instead.
"""


@click.command(cls=WithMetrics, epilog=EPILOG, short_help="Strategies with 95% CIs; two runs: paired differences.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", default="table", show_default=True,
              type=click.Choice(["table", "markdown", "json", "csv"]))
@click.option("--sort", "sort_by", help="Metric that orders strategies within each group of the ranking rule "
                                        "(default: the verdict's first objective, its bar first; see below).")
@click.option("--metric", "metrics", multiple=True, help="Metric to show; repeatable (default: all, listed below).")
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples of the 95% intervals.")
@click.option("--baseline", help="One run: each strategy's paired difference from this strategy (default: none; "
                                 "in a sweep of one strategy, its default configuration).")
@click.option("--pair", "pairs", multiple=True, nargs=2, metavar="A_LABEL B_LABEL",
              help="Two runs: pair these two configurations (labels differ); repeatable. Others pair by exact label.")
@click.option("--cluster", "by", default="session", show_default=True,
              type=click.Choice(["session", "project", "transcript"]),
              help="The bootstrap's resampling unit: a session (a sub-agent with its parent), a project where "
                   "the log records one, or each transcript alone.")
@click.option("--by", "group_by", type=click.Choice(["source", "model", "project"]),
              help="One run: the ranking and verdict per agent (source), recorded model or project, each agent's "
                   "own strategy beside the best alternative.")
@click.option("--wide", is_flag=True, help="Every metric, the difference table and every flag in full, in tables "
                                           "that fit 160 columns (--format csv: every figure in one table).")
@selection_options
def compare(runs: tuple[str, ...], fmt: str, sort_by: str | None, metrics: tuple[str, ...], resamples: int,
            baseline: str | None, pairs: tuple[tuple[str, str], ...], by: str, group_by: str | None,
            wide: bool, sources: tuple[str, ...], where: str | None) -> None:
    """Compare strategies within RUN (each one's paired difference from a baseline strategy), or the same
    configurations across two RUNs (B − A, paired over the transcripts both have)."""
    from compbench.data.select import select_results
    from compbench.decide.compare import load_results
    from compbench.errors import UsageError

    if len(runs) > 2:
        raise UsageError("compare takes one run (strategies) or two runs (A then B)")
    if baseline and len(runs) > 1:
        raise UsageError("--baseline compares strategies within one run; with two runs each is paired with itself")
    if pairs and len(runs) == 1:
        raise UsageError("--pair pairs configurations of two runs; with one run use --baseline")
    if group_by and len(runs) > 1:
        raise UsageError("--by breaks one run down; compare two runs without it")
    chosen = selection({"sources": sources, "where": where})
    whole = load_results(runs[0])
    a = select_results(whole, chosen, runs[0], said=lambda line: click.echo(f"note: {line}", err=True))
    if chosen and fmt == "table":
        n, of = a["transcript_id"].nunique(), whole["transcript_id"].nunique()
        click.echo(f"transcripts: {n:,} of {of:,} in {runs[0]}, those where {chosen.text()}\n")
    if len(runs) == 1:
        from compbench.cli.compare_one import one_run

        one_run(runs[0], a, fmt, sort_by, metrics, resamples, baseline, by, group_by, wide)
        return
    _two_runs(runs, a, fmt, sort_by, metrics, resamples, pairs, by, wide, chosen)


def _two_runs(runs: tuple[str, ...], a: Any, fmt: str, sort_by: str | None, metrics: tuple[str, ...],
              resamples: int, pairs: tuple[tuple[str, str], ...], by: str, wide: bool, selected: Any = None) -> None:
    from compbench.decide.bootstrap import batch
    from compbench.decide.compare import load_results, paired
    from compbench.decide.flags import flag_details
    from compbench.decide.headline import HEADLINE, RECALL
    from compbench.decide.metrics import METRICS, available, metric
    from compbench.decide.ranking import order, standings
    from compbench.errors import UsageError

    chosen = list(dict.fromkeys(metric(m) for m in metrics)) if metrics else available(a, METRICS)
    if fmt == "table" and not wide and not metrics:  # the default view fits a terminal: --wide has every metric
        chosen = [metric(n) for n in (HEADLINE, RECALL, "cost", "overflows")]
    key = metric(sort_by or HEADLINE)
    standing = standings(a, flag_details(a))
    agg = batch(a, [key], resamples, by=by).estimates
    order_ = order(list(agg), standing, lambda s: agg[s][key.name].value, key.higher_is_better)
    from compbench.data.select import select_results

    b = select_results(load_results(runs[1]), selected, runs[1]) if selected else load_results(runs[1])
    matched, only_a, only_b = _pairs(a, b, pairs)
    out: dict[str, Any] = {}
    rows = []
    for s in order_:
        if s not in matched:
            continue
        sub_b = b[b["strategy"] == matched[s]]
        name = s if matched[s] == s else f"{s} → {matched[s]}"
        cells = [name]
        out[name] = {}
        for m in chosen:
            d = paired(sub_b, a[a["strategy"] == s], m, resamples, by=by)
            better = (d.value > 0) == m.higher_is_better
            cells.append(_diff(d, m))
            out[name][m.name] = {**_diff_json(d, m), "worse": d.significant and not better}
        rows.append(cells)
    if not rows:
        raise UsageError("the two runs have no configuration in common (labels differ: pair them with "
                         f"--pair A_LABEL B_LABEL; A has {', '.join(order_)})")
    if fmt == "json":
        click.echo(json.dumps({"strategies": out, "only_in_a": only_a, "only_in_b": only_b}, indent=2))
        return
    if fmt == "table":  # tables that fit 160 columns, the label in each
        from compbench.cli.compare_view import wide_tables

        click.echo("\n".join(wide_tables([r[0] for r in rows], [], [
            (f"Δ {m.title}", [r[k + 1] for r in rows]) for k, m in enumerate(chosen)], title="differences B − A")))
    else:
        click.echo(_table(["strategy", *(f"Δ {m.title}" for m in chosen)], rows, fmt))
    if fmt == "csv":
        return
    for side, labels in (("A", only_a), ("B", only_b)):
        if labels:
            click.echo(f"only in {side} ({runs[0] if side == 'A' else runs[1]}), not compared: {', '.join(labels)} "
                       "(pair two labels with --pair A_LABEL B_LABEL)")
    if fmt == "table":
        for line in wrap(f"Δ = B − A over shared transcripts; {LEGEND}"):
            click.echo(line)
        click.echo(_summarizers(runs))
        if not wide and not metrics:
            click.echo("--wide: the difference of every metric")




def _pairs(a: Any, b: Any, pairs: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], list[str], list[str]]:
    """A label -> B label: each --pair, then every label both runs have, exactly (``codex`` is never
    ``codex:preset=0.77``); and the labels of each run left unpaired, in run order."""
    from compbench.errors import UsageError

    la = [str(s) for s in dict.fromkeys(a["strategy"])]
    lb = [str(s) for s in dict.fromkeys(b["strategy"])]
    matched: dict[str, str] = {}
    for left, right in pairs:
        if left not in la or right not in lb:
            raise UsageError(f"--pair {left} {right}: expected a label of run A, then one of run B "
                             f"(A: {', '.join(la)}; B: {', '.join(lb)})")
        matched[left] = right
    taken = set(matched.values())
    for s in la:
        if s not in matched and s in lb and s not in taken:
            matched[s] = s
    used = set(matched.values())
    return matched, [s for s in la if s not in matched], [s for s in lb if s not in used]

"""``compbench compare``: strategies as rows with 95% CIs; two runs side by side with significance."""

from __future__ import annotations

import json
import math
from typing import Any

import click

from compbench.cli.render import table as _table


def _summarizers(runs: tuple[str, ...]) -> str:
    """Which summarizer wrote each run's summaries, in words: recall depends on it."""
    from compbench.runread import Run
    from compbench.summary import describe_summarizer

    out = []
    for name, run in zip("AB" if len(runs) > 1 else " ", runs, strict=False):
        what = describe_summarizer(Run.open(run).summarizer)
        out.append(f"summaries{' ' + name if name.strip() else ''}: {what}")
    return "\n".join(out)


def _acted(df: Any, label: str) -> str:
    g = df[df["strategy"] == label]
    if "first_action_step" not in g:
        return "?"
    return f"{int((g['first_action_step'] >= 0).sum())}/{len(g)}"


def _diff(d: Any, m: Any) -> str:
    """A paired difference: asv's mark (+ worse, - better, ~ not significant), the value and its interval;
    ``few`` when it rests on fewer than 5 transcripts or clusters."""
    if math.isnan(d.value):
        return "–"
    better = (d.value > 0) == m.higher_is_better
    mark = "~" if not d.significant else ("-" if better else "+")
    few = " few" if d.few else ""
    return f"{mark} {d.value:+.4f} [{d.lo:+.4f}, {d.hi:+.4f}]{few}"


def _est_json(e: Any) -> dict[str, Any]:
    return {"value": _num(e.value), "lo": _num(e.lo), "hi": _num(e.hi), "n": e.units}


def _diff_json(d: Any) -> dict[str, Any]:
    return {"diff": _num(d.value), "lo": _num(d.lo), "hi": _num(d.hi), "significant": d.significant, "n": d.units}


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", default="table", show_default=True,
              type=click.Choice(["table", "markdown", "json", "csv"]))
@click.option("--sort", "sort_by", default="net_savings", show_default=True, help="Metric to sort rows by.")
@click.option("--metric", "metrics", multiple=True, help="Metrics to show (default: the headline set).")
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(min=100))
@click.option("--baseline", help="One run: also print each strategy's paired difference from this strategy "
                                 "(default: none).")
@click.option("--cluster", "by", default="session", show_default=True,
              type=click.Choice(["session", "project", "transcript"]),
              help="The bootstrap's resampling unit: a session (a sub-agent with its parent), a project where "
                   "the log records one, or each transcript alone.")
def compare(runs: tuple[str, ...], fmt: str, sort_by: str, metrics: tuple[str, ...], resamples: int,
            baseline: str | None, by: str) -> None:
    """Compare strategies within RUN (with each one's paired difference from a baseline strategy), or the
    same strategies across two RUNs (B − A, paired)."""
    from compbench.compare import METRICS, aggregate, counterpart, load_results, metric, paired
    from compbench.compare import fmt as show
    from compbench.errors import UsageError
    from compbench.summary import strategy_flags

    chosen = [metric(m) for m in metrics] if metrics else list(METRICS)
    key = metric(sort_by)
    if len(runs) > 2:
        raise UsageError("compare takes one run (strategies) or two runs (A then B)")
    if baseline and len(runs) > 1:
        raise UsageError("--baseline compares strategies within one run; with two runs each is paired with itself")
    a = load_results(runs[0])
    agg = aggregate(a, chosen, resamples, by=by)
    order = sorted(agg, key=lambda s: -agg[s][key.name].value if not math.isnan(agg[s][key.name].value)
                   else math.inf) if key in chosen else list(agg)
    if not key.higher_is_better:
        order.reverse()
    if len(runs) == 1:
        base = baseline or "none"
        if base not in agg:
            raise UsageError(f"--baseline {base!r} is not a strategy of this run (strategies: {', '.join(agg)})")
        ref = a[a["strategy"] == base]
        diffs = {s: {m.name: paired(a[a["strategy"] == s], ref, m, resamples, by=by) for m in chosen}
                 for s in order if s != base}
        flags = strategy_flags(a)
        if fmt == "json":
            def entry(s: str) -> dict[str, Any]:
                out: dict[str, Any] = {"acted": _acted(a, s), "flags": flags.get(s, [])}
                out.update({m.name: _est_json(agg[s][m.name]) for m in chosen})
                if s in diffs:
                    out[f"vs_{base}"] = {m.name: _diff_json(diffs[s][m.name]) for m in chosen}
                return out

            click.echo(json.dumps({s: entry(s) for s in order}, indent=2))
            return
        rows = [[s, _acted(a, s), *(show(agg[s][m.name], m, ci=fmt != "csv") for m in chosen)] for s in order]
        click.echo(_table(["strategy", "acted", *(m.title for m in chosen)], rows, fmt))
        if diffs and fmt != "csv":
            click.echo("")
            click.echo(_table(["strategy", *(f"Δ {m.title} vs {base}" for m in chosen)],
                              [[s, *(_diff(diffs[s][m.name], m) for m in chosen)] for s in diffs], fmt))
        if fmt == "table":
            for s in order:
                if s in flags:
                    click.echo(f"! {s}: {'; '.join(flags[s])}")
            click.echo(f"Δ = strategy − {base} over the same transcripts; + worse, - better, ~ not significant "
                       f"(95% paired bootstrap, resampled by {by}; n = contributing transcripts)")
            click.echo(_summarizers(runs))
        return
    b = load_results(runs[1])
    out: dict[str, Any] = {}
    rows = []
    for s in order:
        sub_b = counterpart(b, s)
        if sub_b.empty:
            continue
        cells = [s]
        out[s] = {}
        for m in chosen:
            d = paired(sub_b, a[a["strategy"] == s], m, resamples, by=by)
            better = (d.value > 0) == m.higher_is_better
            cells.append(_diff(d, m))
            out[s][m.name] = {"diff": _num(d.value), "lo": _num(d.lo), "hi": _num(d.hi), "significant": d.significant,
                              "worse": d.significant and not better, "n": d.units}
        rows.append(cells)
    if not rows:
        raise UsageError("the two runs have no strategy in common")
    if fmt == "json":
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(_table(["strategy", *(f"Δ {m.title}" for m in chosen)], rows, fmt))
    if fmt == "table":
        click.echo("Δ = B − A over shared transcripts; + worse, - better, ~ not significant (95% paired bootstrap)")
        click.echo(_summarizers(runs))

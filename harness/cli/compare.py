"""``compbench compare``: strategies as rows with 95% CIs; two runs side by side with significance."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import click


def _table(headers: list[str], rows: list[list[str]], fmt: str) -> str:
    if fmt == "markdown":
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(headers)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def _summarizers(runs: tuple[str, ...]) -> str:
    """Which summarizer wrote each run's summaries, in words: recall depends on it."""
    from pathlib import Path

    from compbench.summary import describe_summarizer

    out = []
    for name, run in zip("AB" if len(runs) > 1 else " ", runs, strict=False):
        try:
            spec = json.loads((Path(run) / "manifest.json").read_text(encoding="utf-8"))["spec"]
            what = describe_summarizer(str(spec["summarizer"]))
        except (OSError, ValueError, KeyError):
            what = "unknown (no readable manifest)"
        out.append(f"summaries{' ' + name if name.strip() else ''}: {what}")
    return "\n".join(out)


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", default="table", show_default=True,
              type=click.Choice(["table", "markdown", "json", "csv"]))
@click.option("--sort", "sort_by", default="net_savings", show_default=True, help="Metric to sort rows by.")
@click.option("--metric", "metrics", multiple=True, help="Metrics to show (default: the headline set).")
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(min=100))
def compare(runs: tuple[str, ...], fmt: str, sort_by: str, metrics: tuple[str, ...], resamples: int) -> None:
    """Compare strategies within RUN, or the same strategies across two RUNs (B − A, paired)."""
    from compbench.compare import METRICS, aggregate, counterpart, load_results, metric, paired
    from compbench.compare import fmt as show
    from compbench.errors import UsageError

    chosen = [metric(m) for m in metrics] if metrics else list(METRICS)
    key = metric(sort_by)
    if len(runs) > 2:
        raise UsageError("compare takes one run (strategies) or two runs (A then B)")
    a = load_results(runs[0])
    agg = aggregate(a, chosen, resamples)
    order = sorted(agg, key=lambda s: -agg[s][key.name].value if not math.isnan(agg[s][key.name].value)
                   else math.inf) if key in chosen else list(agg)
    if not key.higher_is_better:
        order.reverse()
    if len(runs) == 1:
        if fmt == "json":
            click.echo(json.dumps({s: {m.name: {"value": _num(agg[s][m.name].value), "lo": _num(agg[s][m.name].lo),
                                                "hi": _num(agg[s][m.name].hi), "n": agg[s][m.name].n}
                                       for m in chosen} for s in order}, indent=2))
            return
        rows = [[s, *(show(agg[s][m.name], m, ci=fmt != "csv") for m in chosen)] for s in order]
        click.echo(_table(["strategy", *(m.title for m in chosen)], rows, fmt))
        if fmt == "table":
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
            d = paired(sub_b, a[a["strategy"] == s], m, resamples)
            better = (d.value > 0) == m.higher_is_better
            mark = "~" if not d.significant else ("-" if better else "+")  # asv: + worse, - better, ~ not sig.
            cells.append(f"{mark} {d.value:+.4f} [{d.lo:+.4f}, {d.hi:+.4f}]" if not math.isnan(d.value) else "–")
            out[s][m.name] = {"diff": _num(d.value), "lo": _num(d.lo), "hi": _num(d.hi), "significant": d.significant,
                              "worse": d.significant and not better}
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

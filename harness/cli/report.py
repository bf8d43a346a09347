"""``compbench.cli.report`` — ``compbench report``: the self-contained HTML report of a run."""

from __future__ import annotations

from pathlib import Path

import click

from compbench.cli import WithMetrics
from compbench.cli.options import selection, selection_options
from compbench.decide.headline import DEFAULT_OBJECTIVES


def check_out(out: Path) -> None:
    """The report goes into an existing folder: a typo in --out must not create a tree of folders."""
    from compbench.errors import UsageError

    parent = out.parent
    if not parent.is_dir():
        raise UsageError(f"{parent}: no such folder for --out {out}; create it first")
    if out.is_dir():
        raise UsageError(f"{out} is a directory; --out is the HTML file to write")


EPILOG = """\b
Examples:
  compbench report out/run --out out/report.html
  compbench report out/run --out report.html --redact --objective "max net_savings s.t. needed_recall >= 0.95"
  compbench report out/run --out claude.html --source claude-code     the transcripts one tool recorded

The report opens with a verdict: the best strategy for each objective (by default: "{}"), the frontier
and the caveats that apply.
""".format('", "'.join(DEFAULT_OBJECTIVES))


@click.command(cls=WithMetrics, epilog=EPILOG,
               short_help="Render a run as one self-contained HTML report (opens offline).")
@click.argument("run", type=click.Path())
@click.option("--out", required=True, type=click.Path(), help="HTML file to write (its folder must exist).")
@click.option("--redact", is_flag=True, help="Mask secret-shaped strings (keys, tokens) found in transcripts.")
@click.option("--objective", "objectives", multiple=True, metavar="'max|min METRIC s.t. ...'",
              help="An objective of the verdict (as tune --objective); repeatable; replaces the defaults.")
@selection_options
def report(run: str, out: str, redact: bool, objectives: tuple[str, ...], sources: tuple[str, ...],
           where: str | None) -> None:
    """Render RUN as one HTML file that opens from disk (no network): a verdict, a leaderboard, charts and a
    drill-down from strategy to transcript to compaction to the facts lost."""
    from compbench.data.redact import redact as mask
    from compbench.decide.tune import parse_objective
    from compbench.reports.html import write_report
    from compbench.store.reader import Run, check_run_dir

    check_run_dir(Path(run))
    check_out(Path(out))
    Run.open(run)  # a manifest this compbench reads (an older one upgraded; a newer one refused)
    for o in objectives:
        parse_objective(o)  # a typo ends here, before any work
    chosen = selection({"sources": sources, "where": where})
    if chosen:  # before the work: a filter that selects nothing ends here; alternatives that matched nothing said
        from compbench.data.select import select_results
        from compbench.decide.compare import load_results

        select_results(load_results(run), chosen, run, said=lambda line: click.echo(f"note: {line}", err=True))
    path = write_report(run, out, mask if redact else None, objectives=objectives or None, select=chosen)
    click.echo(f"report written to {path}")

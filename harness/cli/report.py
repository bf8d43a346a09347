"""``compbench report``: the self-contained HTML report of a run."""

from __future__ import annotations

from pathlib import Path

import click


def check_out(out: Path) -> None:
    """The report goes into an existing folder: a typo in --out must not create a tree of folders."""
    from compbench.errors import UsageError

    parent = out.parent
    if not parent.is_dir():
        raise UsageError(f"{parent}: no such folder for --out {out}; create it first")
    if out.is_dir():
        raise UsageError(f"{out} is a directory; --out is the HTML file to write")


@click.command()
@click.argument("run", type=click.Path())
@click.option("--out", required=True, type=click.Path(), help="HTML file to write (its folder must exist).")
@click.option("--redact", is_flag=True, help="Mask secret-shaped strings (keys, tokens) found in transcripts.")
def report(run: str, out: str, redact: bool) -> None:
    """Render RUN as one HTML file that opens from disk (no network)."""
    from compbench.redact import redact as mask
    from compbench.reports.html import write_report
    from compbench.runread import Run, check_run_dir

    check_run_dir(Path(run))
    check_out(Path(out))
    Run.open(run)  # a manifest this compbench reads (an older one upgraded; a newer one refused)
    path = write_report(run, out, mask if redact else None)
    click.echo(f"report written to {path}")

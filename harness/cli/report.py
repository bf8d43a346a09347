"""``compbench report``: the self-contained HTML report of a run."""

from __future__ import annotations

import click


@click.command()
@click.argument("run", type=click.Path(exists=True, file_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option("--redact", is_flag=True, help="Mask secret-shaped strings (keys, tokens) found in transcripts.")
def report(run: str, out: str, redact: bool) -> None:
    """Render RUN as one HTML file that opens from disk (no network)."""
    from compbench.redact import redact as mask
    from compbench.reports.html import write_report

    path = write_report(run, out, mask if redact else None)
    click.echo(f"report written to {path}")

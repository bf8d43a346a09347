"""``compbench run``: replay a dataset through strategies and write a run directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from compbench.cli.options import (
    EXECUTION_NAMES,
    REPLAY_NAMES,
    configured,
    execution_options,
    replay_options,
    spec_of,
    take,
)
from compbench.errors import UsageError


@click.command()
@click.argument("dataset", required=False)
@click.option("--strategy", "strategies", multiple=True, metavar="NAME[:k=v,...]",
              help="Strategy spec; repeatable. Default: all built-in strategies. [strategy.NAME] in compbench.toml "
                   "sets its parameters (a spec's own win).")
@replay_options
@execution_options
@click.option("--out", "out", type=click.Path(file_okay=False), help="Run directory to write.")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False),
              help="Continue an interrupted run (same options and dataset) in this directory.")
@click.option("--quiet", is_flag=True, help="No progress or summary table.")
def run(dataset: str | None, strategies: tuple[str, ...], out: str | None, force: bool, resume_dir: str | None,
        quiet: bool, **options: Any) -> None:
    """Replay DATASET (default: the bundled samples) through strategies and write a run directory.

    Every replay option may be set in compbench.toml ([run]) or pyproject.toml ([tool.compbench.run]); a flag
    wins over the file, the file over the default."""
    from compbench.config import find
    from compbench.dataset import default_dataset, iter_transcripts
    from compbench.rundir import write_run

    if bool(out) == bool(resume_dir):
        raise UsageError("give --out RUN_DIR for a new run, or --resume RUN_DIR to continue one")
    out = out or resume_dir
    assert out is not None
    replay, execution = take(options, REPLAY_NAMES), take(options, EXECUTION_NAMES)
    path = dataset or str(default_dataset())
    spec = spec_of(configured(strategies, find()), replay, path)
    done = [0]

    def progress(tid: str) -> None:
        done[0] += 1
        if not quiet and sys.stderr.isatty():
            click.echo(f"\rreplayed {done[0]} transcripts ({tid[:40]})".ljust(70), err=True, nl=False)

    def warn(msg: str) -> None:  # merges and files passed over on the way, as `datasets import` says them
        click.echo(f"warning: {msg}", err=True)

    manifest = write_run(Path(out), spec, path, iter_transcripts(path, warn=warn), execution["workers"], progress,
                         force, resume=resume_dir is not None, executor=execution["executor"],
                         concurrency=execution["concurrency"], ray_address=execution["ray_address"])
    if not quiet and sys.stderr.isatty():
        click.echo("", err=True)
    for e in manifest.errors:
        click.echo(f"warning: {e['transcript_id']}: {e['error']}", err=True)
    if not quiet:
        from compbench.summary import summary_table

        click.echo(summary_table(Path(out)))
        click.echo(f"run written to {out}")

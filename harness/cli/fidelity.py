"""``compbench.cli.fidelity`` — ``compbench fidelity``: strategies against the compactions the real tools recorded."""

from __future__ import annotations

import json
from pathlib import Path

import click

from compbench.cli.options import TOKENIZER


@click.command(short_help="Each strategy against the compactions the real tools recorded.")
@click.argument("datasets", nargs=-1)
@click.option("--format", "fmt", default="table", show_default=True, type=click.Choice(["table", "markdown", "json"]))
@TOKENIZER
@click.option("--out", "run_dir", type=click.Path(file_okay=False),
              help="Also write fidelity.json into this (run) directory, for the HTML report.")
@click.option("--on-error", type=click.Choice(["fail", "skip", "skip-lines"]), default="fail", show_default=True,
              help="For raw files, as `datasets import`: fail on the first unreadable file or line; skip "
                   "unreadable files; skip-lines: also keep a file with broken lines, skipping only those.")
def fidelity(datasets: tuple[str, ...], fmt: str, tokenizer: str, run_dir: str | None, on_error: str) -> None:
    """Compare each strategy with the tool's own compactions in DATASETS (default: the bundled samples;
    pass ../shared/transcripts ../shared/real-compactions to include the logs that cannot be bundled).

    Each row says which window the tool used and where that figure comes from. Per real compaction with
    a readable summary it also prints the facts of the summarized span kept by the real summary, by the
    calibrated summarizer and by the extractive one on the same span."""
    import itertools

    from compbench.cli.render import table
    from compbench.data.dataset import default_dataset, iter_transcripts
    from compbench.errors import UsageError
    from compbench.validation.fidelity import COLUMNS, agreement_note, as_json, kept_note, reacquisition_note
    from compbench.validation.fidelity import fidelity as compute

    def warn(msg: str) -> None:
        click.echo(f"warning: {msg}", err=True)

    paths = list(datasets) or [str(default_dataset())]
    transcripts = list(itertools.chain.from_iterable(iter_transcripts(p, on_error, warn) for p in paths))
    rows = compute(transcripts, tokenizer)
    if not rows:
        raise UsageError(f"no tool-made compaction in {', '.join(paths)}")
    data = as_json(rows)
    if run_dir:
        d = Path(run_dir)
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / ".fidelity.json.tmp"
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
        tmp.replace(d / "fidelity.json")
    if fmt == "json":
        click.echo(json.dumps(data["records"], indent=2, ensure_ascii=False))
    else:
        click.echo(table(list(COLUMNS), data["rows"], fmt))
        if fmt == "table":
            click.echo(kept_note(rows))
            click.echo(agreement_note(transcripts))
            click.echo(reacquisition_note(rows))

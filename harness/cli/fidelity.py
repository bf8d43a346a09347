"""``compbench fidelity``: strategies against the compactions the real tools recorded."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command()
@click.argument("dataset", nargs=-1)
@click.option("--format", "fmt", default="table", show_default=True, type=click.Choice(["table", "markdown", "json"]))
@click.option("--tokenizer", default="o200k_base", show_default=True)
@click.option("--out", "run_dir", type=click.Path(file_okay=False),
              help="Also write fidelity.json into this (run) directory, for the HTML report.")
def fidelity(dataset: tuple[str, ...], fmt: str, tokenizer: str, run_dir: str | None) -> None:
    """Compare each strategy with the tool's own compactions in DATASET... (default: the bundled samples;
    pass ../shared/transcripts ../shared/real-compactions to include the real logs that cannot be bundled).
    Each row says which window the tool used and where that figure comes from."""
    from compbench.cli.compare import _table
    from compbench.cli.run import default_dataset
    from compbench.dataset import iter_transcripts
    from compbench.errors import UsageError
    from compbench.fidelity import COLUMNS, as_json
    from compbench.fidelity import fidelity as compute

    paths = dataset or (default_dataset(),)
    rows = compute((t for p in paths for t in iter_transcripts(p)), tokenizer)
    if not rows:
        raise UsageError(f"no tool-made compaction in {', '.join(map(str, paths))}")
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
        click.echo(_table(list(COLUMNS), data["rows"], fmt))

"""``compbench datasets import|inspect|validate|synth``."""

from __future__ import annotations

import json
from pathlib import Path

import click


def _default() -> str:
    from compbench.cli.run import default_dataset

    return default_dataset()


@click.group()
def datasets() -> None:
    """Import transcripts of any supported format into a dataset, inspect, validate, synthesize."""


@datasets.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Dataset directory to write.")
@click.option("--format", "fmt", help="Force one format instead of detecting each file's.")
@click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail", show_default=True)
def import_(paths: tuple[str, ...], out: str, fmt: str | None, on_error: str) -> None:
    """Import files or directories (any mix of formats) into a parquet dataset."""
    from compbench.dataset import write_dataset

    def warn(msg: str) -> None:
        click.echo(f"warning: {msg}", err=True)

    r = write_dataset(Path(out), paths, fmt, on_error, warn)
    formats = ", ".join(f"{k} {v}" for k, v in sorted(r.formats.items()))
    click.echo(f"imported {r.transcripts} transcripts ({formats}); {len(r.errors)} skipped; written to {out}")


@datasets.command()
@click.argument("dataset", required=False)
@click.option("--calibrate", is_flag=True, help="Compare our token counts with recorded API usage.")
@click.option("--tokenizer", default="o200k_base", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def inspect(dataset: str | None, calibrate: bool, tokenizer: str, fmt: str) -> None:
    """Per transcript: format, messages by role, tool calls, our tokens, recorded usage, compactions."""
    from compbench.dataset import iter_transcripts, summary_row
    from compbench.tokens import TokenCounter

    path = dataset or _default()
    counter = TokenCounter(tokenizer)
    rows = []
    transcripts = []
    for t in iter_transcripts(path):
        r = summary_row(t)
        r["tokens"] = sum(counter.index(t).message_tokens)
        rows.append(r)
        if calibrate:
            transcripts.append(t)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
    else:
        cols = [("id", 44), ("source", 15), ("n_messages", 6), ("n_user", 5), ("n_assistant", 6), ("n_tool", 5),
                ("n_tool_calls", 6), ("tokens", 9), ("recorded_max_input", 9), ("n_compactions", 4)]
        heads = ["transcript", "format", "msgs", "user", "asst", "tool", "calls", "tokens", "max rec", "cmp"]
        click.echo("".join(h.ljust(w + 1) if i < 2 else h.rjust(w + 1) for i, (h, (_, w)) in enumerate(
            zip(heads, cols, strict=True))))
        for r in rows:
            cells = []
            for i, (k, w) in enumerate(cols):
                v = r[k]
                text = str(v)[:w] if i < 2 else f"{v:,}"
                cells.append(text.ljust(w + 1) if i < 2 else text.rjust(w + 1))
            click.echo("".join(cells))
        click.echo(f"{len(rows)} transcripts, {sum(r['tokens'] for r in rows):,} tokens ({tokenizer})")
    if calibrate:
        from compbench.calibrate import calibrate as run_calibration

        click.echo("\ncalibration against recorded API usage (prompt tokens before each recorded call):")
        click.echo(f"{'tokenizer':<14}{'format':<16}{'calls':>7}{'overhead':>10}{'median err':>12}{'p90 err':>10}")
        for c in run_calibration(transcripts, ["o200k_base", "cl100k_base", "chars4", "chars4-round"]):
            click.echo(f"{c.tokenizer:<14}{c.source:<16}{c.calls:>7}{c.overhead:>10,.0f}{c.median_error:>12.1%}"
                       f"{c.p90_error:>10.1%}")


@datasets.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt")
def validate(paths: tuple[str, ...], fmt: str | None) -> None:
    """Import everything without writing; one line per file; exit 2 if any failed."""
    import sys

    from compbench.errors import TranscriptError
    from compbench.formats import iter_files, read

    failed = 0
    n = 0
    for f in iter_files(paths or (_default(),)):
        n += 1
        try:
            ts = list(read(f, fmt))
            click.echo(f"OK    {f} ({len(ts)} transcript{'s' * (len(ts) != 1)}, {ts[0].source if ts else '-'})")
        except TranscriptError as e:
            failed += 1
            click.echo(f"FAIL  {e}")
    click.echo(f"{n - failed} valid, {failed} invalid")
    if failed:
        sys.exit(2)


@datasets.command()
@click.option("--n", "n", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True)
@click.option("--turns", default=40, show_default=True, type=click.IntRange(min=2))
@click.option("--out", required=True, type=click.Path(), help="Dataset directory (or a .jsonl file) to write.")
def synth(n: int, seed: int, turns: int, out: str) -> None:
    """Generate synthetic sessions with planted facts (deterministic for a seed)."""
    from compbench.synth import generate

    o = Path(out)
    if o.suffix == ".jsonl":
        from compbench.formats.native import write

        write(generate(n, seed, turns), o)
    else:
        import tempfile

        from compbench.dataset import write_dataset
        from compbench.formats.native import write

        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "synth.jsonl"
            write(generate(n, seed, turns), f)
            write_dataset(o, [f])
    click.echo(f"{n} synthetic transcripts (seed {seed}, {turns} turns) written to {out}")

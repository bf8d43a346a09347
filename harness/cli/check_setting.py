"""``compbench.cli.check_setting`` — ``compbench check-setting``: did the setting a verdict advised take effect in the
logs written since?"""

from __future__ import annotations

import json

import click

from compbench.cli.options import SKIP_LINES_HINT, TOKENIZER, broken_lines, refuse_runs

EPILOG = """\b
Examples:
  compbench check-setting ~/.claude/projects --setting claude-code:autocompact_pct_override=60
  compbench check-setting ~/.codex/sessions --setting codex:auto_compact_token_limit=180000 --format json

Exit codes: 0 the setting took effect; 1 it did not (or the logs cannot tell); 2 a usage error.
"""


@click.command(epilog=EPILOG, short_help="Check that an advised setting took effect in your newer logs.")
@click.argument("paths", nargs=-1, required=True)
@click.option("--setting", "spec", required=True, metavar="NAME:param=value",
              help="The configuration the verdict advised (its `then:` line names it).")
@click.option("--format", "fmt", default="table", show_default=True, type=click.Choice(["table", "json"]))
@TOKENIZER
@click.option("--on-error", type=click.Choice(["fail", "skip", "skip-lines"]), default="fail", show_default=True,
              help="As `datasets import`: fail on the first unreadable file or line; skip unreadable files; "
                   "skip-lines: also keep a file with broken lines, skipping only those.")
def check_setting(paths: tuple[str, ...], spec: str, fmt: str, tokenizer: str, on_error: str) -> None:
    """Read PATHS (your logs since you set it, or a dataset) and say whether the tool compacted where SPEC
    compacts rather than where its default does: each automatic compaction the logs record, within 2 calls."""
    import itertools
    from dataclasses import asdict

    from compbench.data.importing import iter_transcripts
    from compbench.validation.setting_check import check_setting as compute

    refuse_runs(list(paths), "check-setting")

    def warn(msg: str) -> None:
        click.echo(f"warning: {msg}", err=True)

    with broken_lines(SKIP_LINES_HINT):
        result = compute(itertools.chain.from_iterable(iter_transcripts(p, on_error, warn) for p in paths), spec,
                         tokenizer)
    if fmt == "json":
        click.echo(json.dumps({**asdict(result), "outcome": result.outcome}, indent=2))
    else:
        click.echo(result.text())
    if result.outcome != "took effect":
        raise SystemExit(1)

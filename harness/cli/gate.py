"""``compbench.cli.gate`` — ``compbench gate``: exit 0 when every threshold holds, 1 when one fails, 2 on bad usage."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from compbench.cli import WithMetrics
from compbench.cli.options import selection, selection_options

EPILOG = """\b
Examples:
  compbench gate out/run --min needed_recall=0.85 --min effective_savings=0.2
  compbench gate out/run --strategy opencode --max overflows=0
  compbench gate out/new --baseline out/main --max-drop needed_recall=0.02
  compbench gate out/run --min needed_recall=0.85 --fail-on-overflow
  compbench gate out/run --source codex --min effective_savings=0.2      one tool's logs
  compbench gate out/run --strategy claude-code:autocompact_pct_override=60 --source claude-code \
      --min needed_recall=0.9                                          a settings-sweep row, named
A strategy with calls over the window (a real API refuses them) gets a warning line; --fail-on-overflow
(or fail-on-overflow = true in the gate table) fails it instead. Not gated unless named (--strategy), and
said in one line: none (the reference), recorded (each tool as it ran) and the settings sweep's rows (each on
its own tool's logs only). A figure resting on fewer than --min-transcripts (default 5) transcripts FAILS a
threshold it meets, saying "few" (on so few a 95% bound is the estimate itself); --allow-few passes it,
marked "few". Thresholds of percentages are fractions (0.85) or written with a percent sign (85%); a bare
85 is refused. They are also read from [tool.compbench.gate] in pyproject.toml or [gate] in compbench.toml,
with strategies, source, where, min-transcripts, allow-few and fail-on-overflow (flags win, key by key). A
strategy whose figure has no value (one that never acted has no recall) is a SKIP, not a failure.
"""


@click.command(cls=WithMetrics, epilog=EPILOG,
               short_help="CI gate on a run's confidence bounds: exit 0 pass, 1 fail, 2 usage.")
@click.argument("run", type=click.Path(exists=True, file_okay=False))
@click.option("--min", "mins", multiple=True, metavar="METRIC=V",
              help="Lower 95% bound must reach V (0.9 or 90% for a percentage).")
@click.option("--max", "maxs", multiple=True, metavar="METRIC=V", help="Upper 95% bound must stay at or under V.")
@click.option("--baseline", type=click.Path(exists=True, file_okay=False), help="Run to compare against.")
@click.option("--max-drop", "drops", multiple=True, metavar="METRIC=D",
              help="Paired drop vs --baseline: its lower 95% bound must stay above -D.")
@click.option("--strategy", "strategies", multiple=True, help="Gate only these strategies (name or label).")
@click.option("--fail-on-overflow", is_flag=True, default=None,
              help="Fail a strategy with any call over the window (a real API refuses it); without it such "
                   "strategies pass their thresholds with a warning line.")
@click.option("--min-transcripts", type=click.IntRange(min=1),
              help="Transcripts a figure must rest on to pass (default 5, as compare's 'few'); under it a met "
                   "threshold FAILS, saying few, unless --allow-few.")
@click.option("--allow-few", is_flag=True, default=None,
              help="Pass a figure on fewer than --min-transcripts transcripts that meets its threshold, marked few.")
@selection_options
@click.option("--config", "config_dir", type=click.Path(exists=True, file_okay=False), default=".",
              help="Where to look for compbench.toml / pyproject.toml (default: cwd and parents).")
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples of the 95% intervals.")
def gate(run: str, mins: tuple[str, ...], maxs: tuple[str, ...], baseline: str | None, drops: tuple[str, ...],
         strategies: tuple[str, ...], fail_on_overflow: bool | None, min_transcripts: int | None,
         allow_few: bool | None, sources: tuple[str, ...], where: str | None, config_dir: str, resamples: int) -> None:
    """Check RUN's retention and savings against thresholds (exit 0 pass, 1 fail, 2 usage)."""
    from compbench.decide.gate import (
        MIN_TRANSCRIPTS,
        config_file,
        config_names,
        config_value,
        merge_thresholds,
        parse_thresholds,
        run_gate,
    )

    conf = config_file(Path(config_dir).resolve())
    strict = config_value(conf, "fail-on-overflow", bool, False) if fail_on_overflow is None else fail_on_overflow
    few_ok = config_value(conf, "allow-few", bool, False) if allow_few is None else allow_few
    minimum = min_transcripts or config_value(conf, "min-transcripts", int, MIN_TRANSCRIPTS)
    chosen = selection({"sources": sources or config_names(conf, "source"),
                        "where": where if where is not None else config_value(conf, "where", str, None)})
    said: list[str] = []
    checks = run_gate(run, merge_thresholds(parse_thresholds(mins, "--min"), conf, "min"),
                      merge_thresholds(parse_thresholds(maxs, "--max"), conf, "max"),
                      baseline or conf.get("baseline"),
                      merge_thresholds(parse_thresholds(drops, "--max-drop"), conf, "max-drop"),
                      strategies or config_names(conf, "strategies"), resamples, strict, said, select=chosen,
                      min_transcripts=minimum, allow_few=few_ok)
    for line in said:
        click.echo(line)
    for c in checks:
        click.echo(c.line())
    click.echo(tally(checks))
    sys.exit(0 if all(c.passed for c in checks) else 1)


def tally(checks: list[Any]) -> str:
    """The last line: passed (of them few), failed (of them on too few transcripts alone), skipped."""
    failed = [c for c in checks if not c.passed]
    skipped = [c for c in checks if c.missing]
    passed = len(checks) - len(failed) - len(skipped)
    few_passed = sum(1 for c in checks if c.passed and c.few)
    few_failed = sum(1 for c in failed if c.held and c.few)
    return (f"{passed} passed" + (f" ({few_passed} of them few)" if few_passed else "")
            + f", {len(failed)} failed" + (f" ({few_failed} on too few transcripts alone)" if few_failed else "")
            + (f", {len(skipped)} without a value (skipped)" if skipped else ""))

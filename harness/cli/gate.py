"""``compbench.cli.gate`` — ``compbench gate``: exit 0 when every threshold holds, 1 when one fails, 2 on bad usage."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compbench.cli import WithMetrics

EPILOG = """\b
Examples:
  compbench gate out/run --min needed_recall=0.85 --min effective_savings=0.2
  compbench gate out/run --strategy opencode --max overflows=0
  compbench gate out/new --baseline out/main --max-drop needed_recall=0.02
  compbench gate out/run --min needed_recall=0.85 --fail-on-overflow
A strategy with calls over the window (a real API refuses them) gets a warning line; --fail-on-overflow
(or fail-on-overflow = true in the gate table) fails it instead. The reference none is not gated unless
named (--strategy none), and the gate says so. Thresholds of percentages are fractions (0.85) or written
with a percent sign (85%); a bare 85 is refused. They are also read from [tool.compbench.gate] in
pyproject.toml or [gate] in compbench.toml (flags win, key by key). A strategy whose figure has no value
(one that never acted has no recall) is a SKIP, not a failure.
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
@click.option("--config", "config_dir", type=click.Path(exists=True, file_okay=False), default=".",
              help="Where to look for compbench.toml / pyproject.toml (default: cwd and parents).")
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples of the 95% intervals.")
def gate(run: str, mins: tuple[str, ...], maxs: tuple[str, ...], baseline: str | None, drops: tuple[str, ...],
         strategies: tuple[str, ...], fail_on_overflow: bool | None, config_dir: str, resamples: int) -> None:
    """Check RUN's retention and savings against thresholds (exit 0 pass, 1 fail, 2 usage)."""
    from compbench.decide.gate import config_file, merge_thresholds, parse_thresholds, run_gate
    from compbench.errors import UsageError

    conf = config_file(Path(config_dir).resolve())
    strict = (conf.get("fail-on-overflow", conf.get("fail_on_overflow", False)) if fail_on_overflow is None
              else fail_on_overflow)
    if not isinstance(strict, bool):
        raise UsageError(f"gate config: 'fail-on-overflow' must be true or false, got {strict!r}")
    said: list[str] = []
    checks = run_gate(run, merge_thresholds(parse_thresholds(mins, "--min"), conf, "min"),
                      merge_thresholds(parse_thresholds(maxs, "--max"), conf, "max"),
                      baseline or conf.get("baseline"),
                      merge_thresholds(parse_thresholds(drops, "--max-drop"), conf, "max-drop"),
                      strategies or tuple(conf.get("strategies", ())), resamples, strict, said)
    for line in said:
        click.echo(line)
    for c in checks:
        click.echo(c.line())
    failed = [c for c in checks if not c.passed]
    skipped = [c for c in checks if c.missing]
    click.echo(f"{len(checks) - len(failed) - len(skipped)} passed, {len(failed)} failed"
               + (f", {len(skipped)} without a value (skipped)" if skipped else ""))
    sys.exit(1 if failed else 0)

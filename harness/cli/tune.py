"""``compbench.cli.tune`` — ``compbench tune``: sweep a strategy's parameters, print the Pareto frontier and the best
config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from compbench.cli import WithMetrics
from compbench.cli.options import (
    EXECUTION_NAMES,
    IMPORT_HINT,
    REPLAY_NAMES,
    SELECTION_NAMES,
    broken_lines,
    execution_options,
    noted,
    refuse_runs,
    replay_options,
    say_unmatched,
    selection,
    selection_options,
    spec_of,
    take,
)
from compbench.decide.headline import HEADLINE, PRIMARY

EPILOG = """\b
Examples:
  compbench tune --strategy opencode --grid protect=20000,40000 --grid minimum=10000,20000 --out out/tune
  compbench tune DATASET --strategy pi --random 20 --range keep_recent_tokens=5000:40000 --out out/tune \\
      --objective "max needed_recall s.t. effective_savings >= 0.3"
  compbench tune --strategy codex --set preset=current --grid auto_compact_token_limit=100000,150000 \\
      --out out/tune

The objective is 'max|min METRIC [s.t. METRIC >= V [and METRIC <= V ...]]'; values are fractions
(0.9) or percentages with a percent sign (90%). Without one: "{primary}", the verdict's
first objective (the {headline} of compare, the report and every ranking). The strategy's
default configuration (with --set and [strategy.NAME] applied) is always replayed: every
configuration's change is measured from it, paired, with a 95% interval. Configurations with calls
over the window (a real API refuses them), and then those that compact on most calls, never win over
one without; the frontier is drawn among the others.
""".format(primary=PRIMARY, headline=HEADLINE.replace("_", " "))


@click.command(cls=WithMetrics, epilog=EPILOG,
               short_help="Sweep a strategy's parameters; frontier and best configuration.")
@click.argument("dataset", required=False)
@click.option("--strategy", "strategy_name", required=True, help="Strategy to tune (a name: strategies list).")
@click.option("--set", "fixed", default="", metavar="K=V,...",
              help="Overrides every configuration shares, e.g. preset=current or keep=4,trigger=2000.")
@click.option("--grid", "grids", multiple=True, metavar="NAME=V1,V2,...",
              help="One swept parameter and its values; repeat for more parameters (each name once).")
@click.option("--random", "n_random", type=click.IntRange(min=1),
              help="Also sample N configurations uniformly from the --range bounds (seeded).")
@click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI",
              help="Bounds of one parameter for --random; repeatable.")
@click.option("--seed", default=0, show_default=True, help="Seed of --random.")
@click.option("--objective", metavar="'max|min METRIC s.t. ...'",
              help=f'Pick the best configuration (default: "{PRIMARY}", the verdict\'s first objective).')
@replay_options
@selection_options
@execution_options
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run directory to write.")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
@click.option("--resamples", default=2_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples of the intervals.")
def tune(dataset: str | None, strategy_name: str, fixed: str, grids: tuple[str, ...], n_random: int | None,
         ranges: tuple[str, ...], seed: int, objective: str | None, out: str, force: bool, resamples: int,
         **options: Any) -> None:
    """Run every configuration of a strategy over DATASET (default: the bundled samples) and print the
    savings/recall frontier, the flags that make a configuration misleading, and the best configuration
    for --objective.

    Replays as `run` does, with the same options (and their [run] defaults from compbench.toml). The best
    configuration is printed as a [tool.compbench.strategy.NAME] block: pasted into pyproject.toml, it
    makes `--strategy NAME` mean that configuration."""
    import sys

    from compbench.config import find
    from compbench.data.dataset import default_dataset
    from compbench.data.importing import iter_transcripts, replayable
    from compbench.decide.compare import load_results
    from compbench.decide.headline import PRIMARY
    from compbench.decide.metrics import metric
    from compbench.decide.tune import grid_specs, parse_objective, random_specs
    from compbench.progress import Progress, dataset_total
    from compbench.run.write import selected, write_run

    replay, execution = take(options, REPLAY_NAMES), take(options, EXECUTION_NAMES)
    chosen = selection(take(options, SELECTION_NAMES)).before_replay()
    preset, base = find().strategy(strategy_name)  # [strategy.NAME]: beneath --set, key by key
    given = dict(item.strip().split("=", 1) for item in fixed.split(",") if "=" in item)
    merged = {**({"preset": preset} if preset else {}), **base, **given}
    fixed = ",".join(f"{k}={v}" for k, v in merged.items())
    default = grid_specs(strategy_name, [], fixed)[0]  # what `--strategy NAME` means: every change is from it
    specs = grid_specs(strategy_name, grids, fixed) if grids or not n_random else []
    if n_random:
        specs += random_specs(strategy_name, n_random, ranges, seed, fixed)
    specs = list(dict.fromkeys([default, *specs]))
    from compbench.cli.run import setting_values

    for line in setting_values(specs):  # a value the tool ignores is refused here, before any replay
        click.echo(f"warning: {line}", err=True)
    obj = parse_objective(objective or PRIMARY)
    for name in (obj.metric, *(c[0] for c in obj.constraints)):
        metric(name)
    path = dataset or str(default_dataset())
    refuse_runs([path], "tune")
    with broken_lines(IMPORT_HINT):  # the boilerplate scan reads every transcript first
        spec = spec_of(tuple(specs), replay, path, chosen.text())
    said: set[str] = set()  # the alternatives of --source / --where said to match nothing, said once
    say_unmatched(chosen, {"source": (spec.boilerplate.get("transcripts") or {}).keys()}, said)
    click.echo(f"tuning {strategy_name}: {len(specs)} configurations (the default {default} among them) over "
               f"{path}" + (f", the transcripts where {chosen.text()}" if chosen else ""), err=True)
    progress = Progress(sys.stderr, None if chosen else dataset_total(path))
    with broken_lines(IMPORT_HINT):
        def warn(msg: str) -> None:
            click.echo(f"warning: {msg}", err=True)

        replayed = selected(spec, replayable(iter_transcripts(path), spec.keep_empty, warn, progress.tick), path,
                            noted(said))
        write_run(Path(out), spec, path, replayed, execution["workers"], progress.tick, force=force,
                  executor=execution["executor"], concurrency=execution["concurrency"],
                  ray_address=execution["ray_address"])
    progress.close()
    from compbench.cli.tune_view import report

    for line in report(load_results(out), obj, objective is None, default, resamples):
        click.echo(line)
    click.echo(f"\nrun written to {out}")

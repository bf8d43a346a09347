"""``compbench.cli.tune`` — ``compbench tune``: sweep a strategy's parameters, print the Pareto frontier and the best
config."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from compbench.cli import WithMetrics
from compbench.cli.options import EXECUTION_NAMES, REPLAY_NAMES, execution_options, replay_options, spec_of, take

EPILOG = """\b
Examples:
  compbench tune --strategy opencode --grid protect=20000,40000 --grid minimum=10000,20000 --out out/tune
  compbench tune DATASET --strategy pi --random 20 --range keep_recent_tokens=5000:40000 --out out/tune \\
      --objective "max net_savings s.t. needed_recall >= 0.9"
  compbench tune --strategy codex --set preset=current --grid compact_limit=100000,150000 --out out/tune

The objective is 'max|min METRIC [s.t. METRIC >= V [and METRIC <= V ...]]'; values are fractions
(0.9 = 90%). Configurations with calls over the window (a real API refuses them), and then those that
compact on most calls, never win over one without; the frontier is drawn among the others.
"""


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
              help='Pick the best configuration, e.g. "max net_savings s.t. needed_recall >= 0.9".')
@replay_options
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
    from compbench.config import find
    from compbench.data.dataset import default_dataset, iter_transcripts
    from compbench.decide.compare import aggregate, load_results, metric
    from compbench.decide.ranking import frontier, standings
    from compbench.decide.summary import flag_details, identical_configurations
    from compbench.decide.tune import (
        choose,
        decisive,
        grid_specs,
        parse_objective,
        random_specs,
        satisfies,
        toml_snippet,
    )
    from compbench.errors import UsageError
    from compbench.store.rundir import write_run

    replay, execution = take(options, REPLAY_NAMES), take(options, EXECUTION_NAMES)
    preset, base = find().strategy(strategy_name)  # [strategy.NAME]: beneath --set, key by key
    given = dict(item.strip().split("=", 1) for item in fixed.split(",") if "=" in item)
    merged = {**({"preset": preset} if preset else {}), **base, **given}
    fixed = ",".join(f"{k}={v}" for k, v in merged.items())
    specs = grid_specs(strategy_name, grids, fixed) if grids or not n_random else []
    if n_random:
        specs += random_specs(strategy_name, n_random, ranges, seed, fixed)
    specs = list(dict.fromkeys(specs))
    obj = parse_objective(objective) if objective else None
    if obj:
        for name in (obj.metric, *(c[0] for c in obj.constraints)):
            metric(name)
    path = dataset or str(default_dataset())
    spec = spec_of(tuple(specs), replay, path)
    click.echo(f"tuning {strategy_name}: {len(specs)} configurations over {path}", err=True)
    write_run(Path(out), spec, path, iter_transcripts(path), execution["workers"], force=force,
              executor=execution["executor"], concurrency=execution["concurrency"],
              ray_address=execution["ray_address"])
    results = load_results(out)
    wanted = ["net_savings", "needed_recall", "cost", "overflows"]
    if obj:
        wanted += [obj.metric, *(c[0] for c in obj.constraints)]
    agg = aggregate(results, [metric(n) for n in dict.fromkeys(wanted)], resamples)
    details = flag_details(results)
    standing = standings(results, details)
    thresholds = {k: v for k, _, v in obj.constraints} if obj else {}

    def show(s: str, name: str) -> str:
        v, m = agg[s][name].value, metric(name)
        if math.isnan(v):
            return "–"
        return decisive(v, thresholds[name], m.percent) if name in thresholds else (
            f"{v:.1%}" if m.percent else f"{v:,.3f}")

    points = {s: (m["net_savings"].value, m["needed_recall"].value) for s, m in agg.items()}
    front = frontier(points, standing)
    click.echo(f"Pareto frontier (net savings vs needed-fact recall, configurations with no call over the window "
               f"and no degenerate compacting), {len(front)} of {len(agg)} configurations:")
    for s in front:
        click.echo(f"  {s:<60} net savings {show(s, 'net_savings'):>8}  needed_recall {show(s, 'needed_recall'):>8}"
                   f"  cost ${show(s, 'cost')}/transcript")
    identical = identical_configurations(results)
    all_same = len(agg) > 1 and len(identical) == 1 and len(identical[0]) == len(agg)
    if all_same:  # a tune-level flag: the grid measured one configuration N times
        click.echo(f"! all {len(agg)} configurations behave identically on every transcript: the swept parameters "
                   "change nothing on this dataset (a wider range, another window or other transcripts may)")
    for label in agg:
        fs = [f.text for f in details.get(label, []) if not (all_same and f.kind == "identical")]
        if fs:
            click.echo(f"! {label}: {'; '.join(fs)}")
    if obj:
        best = choose(agg, obj, standing)
        if best is None:
            close = sorted(agg, key=lambda s: -sum(agg[s][k].value if not math.isnan(agg[s][k].value) else -9
                                                   for k, _, _ in obj.constraints))[:3]
            said = "; ".join(f"{s}: " + ", ".join(f"{k} {show(s, k)}" for k, _, _ in obj.constraints) for s in close)
            raise UsageError(f"no configuration satisfies: {objective} (closest: {said})")
        click.echo(f"\nbest for '{objective}': {best} ({standing[best].tier_name}; "
                   + ", ".join(f"{k} {show(best, k)}" for k in dict.fromkeys([obj.metric, *thresholds])) + ")")
        if not standing[best].sound:
            click.echo("  ! no sound configuration satisfies the objective: this one has calls over the window or "
                       "compacts on most calls")
        assert satisfies(agg[best], obj)
        click.echo(f"  --strategy '{best}'\n\n{toml_snippet(best)}")
    click.echo(f"\nrun written to {out}")

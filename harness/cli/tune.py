"""``compbench tune``: sweep a strategy's parameters, print the Pareto frontier and the best config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from compbench.cli.options import EXECUTION_NAMES, REPLAY_NAMES, execution_options, replay_options, spec_of, take


@click.command()
@click.argument("dataset", required=False)
@click.option("--strategy", "strategy_name", required=True, help="Strategy to tune (name).")
@click.option("--set", "fixed", default="", help="Fixed overrides for every configuration, e.g. preset=current "
                                                 "(over [strategy.NAME] in compbench.toml).")
@click.option("--grid", "grids", multiple=True, metavar="NAME=V1,V2,...", help="Grid axis; repeatable.")
@click.option("--random", "n_random", type=click.IntRange(min=1), help="Sample N configurations from --range.")
@click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI", help="Range for --random; repeatable.")
@click.option("--seed", default=0, show_default=True, help="Seed for --random.")
@click.option("--objective", help='e.g. "max net_savings s.t. recall >= 0.9".')
@replay_options
@execution_options
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run directory to write.")
@click.option("--force", is_flag=True)
@click.option("--resamples", default=2_000, show_default=True, type=click.IntRange(min=100))
def tune(dataset: str | None, strategy_name: str, fixed: str, grids: tuple[str, ...], n_random: int | None,
         ranges: tuple[str, ...], seed: int, objective: str | None, out: str, force: bool, resamples: int,
         **options: Any) -> None:
    """Run every configuration of a strategy over DATASET and print the savings/recall frontier.

    Replays as `run` does, with the same options (and their [run] defaults from compbench.toml). The best
    configuration for --objective is printed as a [tool.compbench.strategy.NAME] block: pasted into
    pyproject.toml, it makes `--strategy NAME` mean that configuration."""
    from compbench.compare import aggregate, load_results, metric
    from compbench.config import find
    from compbench.dataset import default_dataset, iter_transcripts
    from compbench.errors import UsageError
    from compbench.rundir import write_run
    from compbench.tune import choose, grid_specs, pareto, parse_objective, random_specs, toml_snippet

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
    wanted = ["net_savings", "needed_recall", "cost"]
    if obj:
        wanted += [obj.metric, *(c[0] for c in obj.constraints)]
    agg = aggregate(load_results(out), [metric(n) for n in dict.fromkeys(wanted)], resamples)
    front = pareto({s: (m["net_savings"].value, m["needed_recall"].value) for s, m in agg.items()})
    click.echo(f"Pareto frontier (net savings vs needed-fact recall), {len(front)} of {len(agg)} configurations:")
    for s in front:
        m = agg[s]
        click.echo(f"  {s:<60} net savings {m['net_savings'].value:7.1%}  recall {m['needed_recall'].value:7.1%}"
                   f"  cost ${m['cost'].value:,.3f}/transcript")
    if obj:
        best = choose(agg, obj)
        if best is None:
            raise UsageError(f"no configuration satisfies: {objective}")
        click.echo(f"\nbest for '{objective}': {best}")
        click.echo(f"  --strategy '{best}'\n\n{toml_snippet(best)}")
    click.echo(f"\nrun written to {out}")

"""``compbench tune``: sweep a strategy's parameters, print the Pareto frontier and the best config."""

from __future__ import annotations

import math
from pathlib import Path

import click

from compbench.cli import WithMetrics
from compbench.cli.run import SYSTEM_TOKENS, auto_overhead, default_dataset, limits_option

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
@click.option("--model", help="Simulated model: window and output limit from litellm's table.")
@click.option("--context-window", type=click.IntRange(min=1),
              help="Simulated window for every transcript (default: each transcript's own).")
@click.option("--max-output", type=click.IntRange(min=1), help="Simulated max output tokens.")
@click.option("--system-tokens", default="auto", show_default=True, type=SYSTEM_TOKENS,
              help="Hidden overhead (system prompt, tool schemas) per call: a number, or auto (each transcript's "
                   "own from its recorded usage, else its agent's default: `datasets inspect --calibrate`).")
@click.option("--tokenizer", default="o200k_base", show_default=True,
              type=click.Choice(["o200k_base", "cl100k_base", "chars4", "chars4-round"]), help="Token counter.")
@click.option("--summarizer", default="calibrated", show_default=True,
              help="calibrated | extractive | mock | litellm:MODEL | cache-only:DIR[@MODEL] (as `run`).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Replay transcripts in N local processes.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run directory to write.")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
@click.option("--resamples", default=2_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples of the intervals.")
def tune(dataset: str | None, strategy_name: str, fixed: str, grids: tuple[str, ...], n_random: int | None,
         ranges: tuple[str, ...], seed: int, objective: str | None, model: str | None, context_window: int | None,
         max_output: int | None, system_tokens: int | None, tokenizer: str, summarizer: str, workers: int, out: str,
         force: bool, resamples: int) -> None:
    """Run every configuration of a strategy over DATASET (default: the bundled samples) and print the
    savings/recall frontier, the flags that make a configuration misleading, and the best configuration
    for --objective."""
    from compbench.compare import BY_NAME, aggregate, load_results, metric
    from compbench.dataset import iter_transcripts
    from compbench.errors import UsageError
    from compbench.facts.boilerplate import scan_dataset
    from compbench.ranking import frontier, standings
    from compbench.rundir import write_run
    from compbench.runs import RunSpec
    from compbench.session import ModelLimits
    from compbench.summary import flag_details, identical_configurations
    from compbench.tune import choose, decisive, grid_specs, parse_objective, random_specs, satisfies, toml_snippet

    specs = grid_specs(strategy_name, grids, fixed) if grids or not n_random else []
    if n_random:
        specs += random_specs(strategy_name, n_random, ranges, seed, fixed)
    specs = list(dict.fromkeys(specs))
    obj = parse_objective(objective) if objective else None
    limits = limits_option(model, context_window, max_output)
    assert limits is None or isinstance(limits, ModelLimits)
    path = dataset or default_dataset()
    spec = RunSpec(strategies=tuple(specs), limits=limits, summarizer=summarizer, tokenizer=tokenizer, model=model,
                   system_tokens=auto_overhead(system_tokens, limits), boilerplate=scan_dataset(path))
    click.echo(f"tuning {strategy_name}: {len(specs)} configurations over {path}", err=True)
    write_run(Path(out), spec, path, iter_transcripts(path), workers, force=force)
    results = load_results(out)
    wanted = ["net_savings", "needed_recall", "cost", "overflows"]
    if obj:
        wanted += [obj.metric, *(c[0] for c in obj.constraints)]
    agg = aggregate(results, [metric(n) for n in dict.fromkeys(wanted)], resamples)
    details = flag_details(results)
    standing = standings(results, details)
    thresholds = {k: v for k, _, v in obj.constraints} if obj else {}

    def show(s: str, name: str) -> str:
        v, m = agg[s][name].value, BY_NAME[name]
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

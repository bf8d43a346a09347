"""``compbench.cli.strategies`` — ``compbench strategies list|show|check``: what each strategy is, where it comes from,
its parameters; and whether an author's strategy keeps the rules every built-in keeps
(:mod:`compbench.cli.strategy_check`)."""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from compbench.strategies import StrategyInfo


@click.group(short_help="List strategies, show their sources, parameters and presets, check a new one.")
def strategies() -> None:
    """List strategies, show their parameters, check one on the bundled samples."""


@strategies.command("list")
def list_() -> None:
    """Every registered strategy with its source."""
    from compbench.strategies import get, names

    known = names()
    width = max(22, *(len(n) + 2 for n in known))  # the name column fits the longest name
    for n in known:
        info = get(n)
        presets = f"  [presets: {', '.join(info.presets)}]" if info.presets else ""
        caps = _capabilities(info)
        example = "  [example: not in a run of every strategy]" if info.example else ""
        shown = f"  [{', '.join(caps)}]" if caps else ""
        click.echo(f"{n:<{width}}{info.summary}  ({info.upstream}){presets}" + shown + example)


def _capabilities(info: StrategyInfo) -> list[str]:
    """What the strategy supports besides its triggers, in the words ``list`` and ``show`` print."""
    from compbench.sdk import CAPABILITIES

    if info.needs_model:
        return ["needs a model"]
    have = info.capabilities()
    return [("/compact" if c == "manual" else c) for c in CAPABILITIES if c in have]


@strategies.command()
@click.argument("name")
def show(name: str) -> None:
    """NAME's source, parameters with defaults, and presets."""
    from compbench.sdk.registry import param_doc
    from compbench.strategies import get

    info = get(name)
    click.echo(f"{info.name}: {info.summary}\nupstream: {info.upstream}")
    if info.example:
        click.echo("an example for strategy authors (docs/writing-a-strategy.md): replayed only when named, never in "
                   "a run of every strategy")
    if info.needs_model:
        click.echo(f"needs a model: {info.needs_model}")
    else:
        from compbench.sdk import CAPABILITIES

        have = info.capabilities()
        click.echo("supports: " + ("; ".join(f"{c} ({CAPABILITIES[c]})" for c in CAPABILITIES if c in have)
                                   or "its triggers only (no /compact, no summary check, no follow-up)"))
    if info.tool is not None:
        click.echo(_tool_lines(name, info.tool, list(info.presets)))
    click.echo("")
    defaults = info.defaults()
    click.echo("parameters (seed defaults):")
    for f in dataclasses.fields(defaults):
        doc = param_doc(f)
        click.echo(f"  {f.name:<28}{getattr(defaults, f.name)!r}" + (f"\n  {'':<28}{doc}" if doc else ""))
    for preset, values in info.presets.items():
        click.echo(f"\npreset {preset!r} ({name}:preset={preset}):")
        for k, v in values.items():
            click.echo(f"  {k:<28}{v!r}")
    doc = (info.factory.__doc__ or "").strip()
    if doc:
        click.echo(f"\n{doc}")


def _tool_lines(name: str, tool: Any, presets: list[str]) -> str:
    """The real tool a strategy reproduces, as its declaration says it (compbench.sdk.tools): its logs, the preset
    each log runs at, and the settings its users write, with the line to paste and the values a run sweeps."""
    from compbench.sdk.tools import sweep_specs

    newest = tool.newest if tool.newest in presets else "its defaults"
    out = [f"reproduces: {tool.name} (its logs: {', '.join(tool.formats)}); named without a preset, each of them "
           f"replays at the preset of the version it recorded (other logs, unknown versions: {newest})"]
    out += [f"  preset {p}: {v}" for p, v in tool.preset_versions.items()]
    if tool.settings:
        swept = {s.param: [v for spec, x, v in sweep_specs(name, tool) if x is s] for s in tool.settings}
        out.append(f"settings {tool.name}'s users write:")
        for s in tool.settings:
            out.append(f"  {s.name} ({s.where}; the tool's default: {s.default}) -> {s.param}")
            if s.note:
                out.append(f"      {s.note}")
            if swept[s.param]:
                out.append(f"      a run tries {', '.join(map(str, swept[s.param]))} on {tool.name}'s logs; e.g.")
                out += [f"        {line}" for line in s.paste(swept[s.param][0]).splitlines()]
    return "\n".join(out)


@strategies.command(short_help="Check a strategy on the bundled samples: exit 0 fine, 1 a check failed, 2 bad spec.")
@click.argument("spec")
@click.option("--window", default=32_000, show_default=True, type=click.IntRange(min=1_000),
              help="The second window the samples are replayed at (besides each one's own).")
def check(spec: str, window: int) -> None:
    """Check the strategy SPEC names on the bundled samples: its module imports compbench.sdk only, every
    parameter has param() (a doc, bounds), its presets resolve, it acts on a sample (or the line says how far
    the samples reach), its wake is exact (the same tables asked every question), it answers with actions only,
    its Tool names real formats and parameters; it warns when it sends calls over the window that a view would
    fit, or compacts at most calls.

    \b
    SPEC: a strategy's name (built-in or plug-in, with :key=value overrides), or FILE.py[:NAME] or
    package.module[:NAME] of a module to import first (its @strategy registers it).
    Exit codes: 0 no check failed (warnings and notes are not failures), 1 a check failed, 2 a bad SPEC.

    \b
    Examples:
      compbench strategies check example-keep-last
      compbench strategies check my_strategy.py:keep-last
      compbench strategies check mypkg.keep_last:keep-last:keep=4"""
    from compbench.cli.strategy_check import check as run_checks
    from compbench.cli.strategy_check import report

    configured, findings = run_checks(spec, window)
    for line in report(configured, findings):
        click.echo(line)
    sys.exit(1 if any(f.status == "fail" for f in findings) else 0)

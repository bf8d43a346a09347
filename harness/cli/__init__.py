"""``compbench.cli`` — The ``compbench`` command. Every user error ends as one line on stderr and exit code 2."""

from __future__ import annotations

import sys
from typing import ClassVar

import click

from compbench import __version__
from compbench.errors import CompbenchError


class Group(click.Group):
    """Sub-commands load lazily so ``compbench --help`` imports nothing heavy."""

    COMMANDS: ClassVar[dict[str, str]] = {
        "datasets": "compbench.cli.datasets:datasets",
        "strategies": "compbench.cli.strategies:strategies",
        "run": "compbench.cli.run:run",
        "compare": "compbench.cli.compare:compare",
        "gate": "compbench.cli.gate:gate",
        "tune": "compbench.cli.tune:tune",
        "report": "compbench.cli.report:report",
        "judge": "compbench.cli.judge:judge",
        "fidelity": "compbench.cli.fidelity:fidelity",
        "check-setting": "compbench.cli.check_setting:check_setting",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = self.COMMANDS.get(name)
        if target is None:
            return None
        import importlib

        mod, _, attr = target.partition(":")
        cmd: click.Command = getattr(importlib.import_module(mod), attr)
        return cmd


REPLAYING = ("run", "tune")  # commands whose options compbench.toml's [run] sets (compbench.config)


EPILOG = """\b
Start here:
  compbench run --out out/run            replay the bundled samples through every strategy
  compbench compare out/run              the ranking, each strategy's difference from none, the verdict
  compbench report out/run --out out/report.html

Every command defaults to the bundled samples; `compbench COMMAND --help` lists its options and examples.
Exit codes: 0 done, 1 a gate failed, 2 a usage error (one line on stderr).
"""


class WithMetrics(click.Command):
    """A command whose help ends with every metric it accepts (from compbench.decide.compare, imported only
    when the help is shown)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from compbench.decide.metrics import metrics_help

        base = self.epilog or ""
        self.epilog = (base.rstrip() + "\n\n" if base else "") + metrics_help()
        try:
            super().format_epilog(ctx, formatter)
        finally:
            self.epilog = base


@click.group(cls=Group, epilog=EPILOG, context_settings={"max_content_width": 120})
@click.version_option(__version__, prog_name="compbench")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Replay agent transcripts through context-compaction strategies and measure what each saves and loses.

    Options of the commands that replay may be set in compbench.toml ([run], [strategy.NAME]) or in
    pyproject.toml ([tool.compbench.run], ...): a flag wins over the file, the file over the default."""
    name = ctx.invoked_subcommand
    if name in REPLAYING:  # the file's values become the command's defaults: click keeps flags above them
        from compbench.cli.options import config_defaults
        from compbench.config import find

        command = cli.get_command(ctx, name)
        assert command is not None
        ctx.default_map = {name: config_defaults(ctx, command, find())}


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except CompbenchError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if e.exit_code == 2 else e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)

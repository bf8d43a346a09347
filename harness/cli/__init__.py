"""The ``compbench`` command. Every user error ends as one line on stderr and exit code 2."""

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


@click.group(cls=Group)
@click.version_option(__version__, prog_name="compbench")
def cli() -> None:
    """Replay agent transcripts through context-compaction strategies and measure what each saves and loses."""


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

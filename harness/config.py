"""``compbench.config`` — One configuration, one precedence: a flag > ``compbench.toml`` / ``[tool.compbench]`` > the
defaults.

The configuration file is the first ``compbench.toml`` (its tables at the top level) or ``pyproject.toml``
with a ``[tool.compbench]`` table, in the current directory or above it. Its tables:

- ``[run]``: defaults for the options of every command that replays (``run``, ``tune``): ``summarizer``,
  ``tokenizer``, ``context_window``, ``system_tokens``, ``price_model``, ``workers``... (an option's name,
  ``-`` or ``_``). A flag given on the command line wins; ``--help`` shows the configured default.
- ``[strategy.NAME]``: parameters of strategy ``NAME`` (and ``preset``), applied wherever it is replayed
  (``--strategy NAME``, a run of every strategy, a tune sweep); a parameter in the spec wins, key by key.
  ``compbench tune`` prints its best configuration as such a block, ready to paste.
- ``[gate]``: the thresholds of ``compbench gate`` (see :mod:`compbench.decide.gate`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.errors import UsageError

FILES = (("compbench.toml", ()), ("pyproject.toml", ("tool", "compbench")))


@dataclass(frozen=True)
class Config:
    """The configuration table found (empty when none), and where it was found."""

    data: Mapping[str, Any] = field(default_factory=dict)
    source: Path | None = None

    def section(self, name: str) -> dict[str, Any]:
        """A table of the configuration (``[run]``, ``[gate]``...); an error if it is not a table."""
        table = self.data.get(name, {})
        if not isinstance(table, dict):
            raise UsageError(f"{self.source}: [{name}] must be a table")
        return dict(table)

    def options(self, command: str = "run") -> dict[str, Any]:
        """``[run]`` (and ``[COMMAND]`` over it) as option defaults, keys with ``_`` (click's names)."""
        merged = {**self.section("run"), **(self.section(command) if command != "run" else {})}
        return {k.replace("-", "_"): v for k, v in merged.items()}

    def strategy(self, name: str) -> tuple[str, dict[str, str]]:
        """``[strategy.NAME]``: its preset and its parameters, as spec text (``8000``, ``true``, ``a|b``)."""
        table = self.section("strategy").get(name, {})
        if not isinstance(table, dict):
            raise UsageError(f"{self.source}: [strategy.{name}] must be a table of parameters")
        values = {str(k): spec_text(v) for k, v in table.items()}
        return values.pop("preset", ""), values


def spec_text(v: Any) -> str:
    """A TOML value as a strategy spec writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return "|".join(spec_text(x) for x in v)
    return "none" if v is None else str(v)


def find(start: Path | None = None) -> Config:
    """The configuration of ``start`` (default: the current directory): the nearest file that has one."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        for name, keys in FILES:
            p = d / name
            if not p.is_file():
                continue
            try:
                data: Any = tomllib.loads(p.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
                raise UsageError(f"{p}: invalid TOML ({e})") from None
            for k in keys:
                data = data.get(k, {}) if isinstance(data, dict) else {}
            if data:
                if not isinstance(data, dict):
                    raise UsageError(f"{p}: the compbench table must be a table")
                return Config(data, p)
    return Config()


def apply_to_spec(config: Config, spec: str) -> str:
    """``spec`` with the configured parameters of its strategy beneath its own (the spec wins, key by key)."""
    from compbench.sdk.registry import label

    name, _, rest = spec.strip().partition(":")
    preset, values = config.strategy(name)
    if not preset and not values:
        return spec
    if name == "pipeline":  # a pipeline's keys name its stages: its configured ones come first, as text
        given = [x for x in rest.split(",") if x.strip()]
        keys = {x.partition("=")[0].strip() for x in given}
        extra = [f"{k}={v}" for k, v in sorted(values.items()) if k not in keys]
        return name + ":" + ",".join([*extra, *given])
    own: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            return spec  # malformed: resolve() says so
        own[key.strip()] = value.strip()
    preset = own.pop("preset", preset)
    return label(name, preset, {**values, **own})


def strategy_block(spec: str) -> str:
    """The ``[tool.compbench.strategy.NAME]`` block that makes ``--strategy NAME`` mean ``spec``: its preset
    and the parameters it sets (what ``compbench tune`` prints, ready to paste)."""
    from compbench.strategies import resolve

    c = resolve(spec)
    items = [x for x in c.label.partition(":")[2].split(",") if x]
    lines = [f"[tool.compbench.strategy.{c.name}]"]
    typed = c.param_dict() if c.name != "pipeline" else {}  # a pipeline's keys are its stages': as written
    for item in items:
        key, _, raw = item.partition("=")
        value = typed.get(key, raw) if key != "preset" else raw
        lines.append(f"{_toml_key(key)} = {_toml(value)}")
    return "\n".join(lines)


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else '"' + key + '"'


def _toml(v: Any) -> str:
    import math

    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return '"none"'
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return "nan" if isinstance(v, float) and math.isnan(v) else str(v)

"""``compbench.sdk.registry``, the strategy registry: ``@strategy(name, ...)`` on a factory whose one argument
is a frozen params dataclass.

The params dataclass *is* the configuration: its fields and defaults (the source's defaults) are what
``strategies show`` prints and what ``tune`` sweeps. Built-in strategies are imported on first lookup;
third-party packages register through the ``compbench.strategies`` entry-point group, also loaded
lazily (:class:`compbench.plugins.Registry`: a name registered twice is an error, an unknown name fails
with the known ones and a "did you mean"). Strategy authors read :mod:`compbench.sdk`, which re-exports
what they need from here.

A spec string configures one: ``opencode``, ``opencode:preset=current``, ``pi:keep_recent_tokens=8000``.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from compbench.errors import UsageError
from compbench.plugins import Registry

if TYPE_CHECKING:
    from compbench.data.transcript import Transcript
    from compbench.sdk.protocols import Capability, Strategy
    from compbench.sdk.tools import Tool

P = TypeVar("P")
T = TypeVar("T")


def param(default: T, doc: str, *, lo: float | None = 0, hi: float | None = None) -> T:
    """A strategy parameter with the one sentence that explains it (``strategies show`` prints it):
    ``keep: int = param(3, "Tool uses kept, newest first (Anthropic's keep).")``.

    A number must lie in ``[lo, hi]``: by default it is a size, a count or a share and cannot be negative
    (``lo=None`` allows any); a fraction sets ``hi=1``, a percentage ``hi=100``. Every configuration is
    checked (:func:`check_bounds`), so ``protect=-5`` is refused in one line instead of replayed."""
    return field(default=default, metadata={"doc": doc, "lo": lo, "hi": hi})


def param_doc(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("doc", ""))


def _numbers(value: Any) -> list[float]:
    """The numbers a parameter value holds (a tuple's each; a bool is no number)."""
    items = value if isinstance(value, tuple) else (value,)
    return [float(x) for x in items if isinstance(x, int | float) and not isinstance(x, bool)]


def check_bounds(name: str, params: Any) -> None:
    """Every numeric parameter of ``params`` within its bounds (:func:`param`); a field declared without
    ``param()`` is a size or count: never negative."""
    for f in dataclasses.fields(params):
        lo, hi = f.metadata.get("lo", 0), f.metadata.get("hi")
        for v in _numbers(getattr(params, f.name)):
            shown = f"{v:g}"
            if v != v:  # NaN
                raise UsageError(f"strategy {name!r}: {f.name}={shown} is not a number")
            if lo is not None and v < lo:
                what = "negative; it is a size, count or share" if lo == 0 else f"below its minimum {lo:g}"
                raise UsageError(f"strategy {name!r}: {f.name}={shown} is {what} (expected >= {lo:g})")
            if hi is not None and v > hi:
                what = ("a fraction" if hi == 1 else "a percentage" if hi == 100 else "a value") + \
                    f" between {lo if lo is not None else '-inf'} and {hi:g}"
                raise UsageError(f"strategy {name!r}: {f.name}={shown} is above {hi:g}: it is {what}")


BUILTIN: dict[str, str] = {
    "recorded": "compbench.strategies.recorded",  # the tool as it ran: the baseline a verdict starts from
    "opencode": "compbench.strategies.opencode",
    "codex": "compbench.strategies.codex",
    "claude-code": "compbench.strategies.claude_code",
    "pi": "compbench.strategies.pi",
    "go-replace": "compbench.strategies.go_replace",
    "round-chained": "compbench.strategies.round_chained",
    "observation-masking": "compbench.strategies.observation_masking",
    "truncate": "compbench.strategies.truncate",
    "none": "compbench.strategies.none",
    "anthropic-context-editing": "compbench.strategies.anthropic_context_editing",
    "anthropic-compaction": "compbench.strategies.anthropic_compaction",
    "langchain": "compbench.strategies.langchain",
    "langchain-clear-tool-uses": "compbench.strategies.langchain_clear_tool_uses",
    "deepagents": "compbench.strategies.deepagents",
    "gemini-cli": "compbench.strategies.pipeline",
    "gemini-cli-compression": "compbench.strategies.gemini_cli",
    "gemini-cli-masking": "compbench.strategies.gemini_cli_masking",
    "gemini-cli-context": "compbench.strategies.gemini_cli_context",  # opt-in: experimental.contextManagement
    "openai-compaction": "compbench.strategies.openai_compaction",
    "openhands-llm-summarizing": "compbench.strategies.openhands_summarizing",
    "openhands-observation-masking": "compbench.strategies.openhands_condensers",
    "openhands-browser-output": "compbench.strategies.openhands_condensers",
    "openhands-recent-events": "compbench.strategies.openhands_condensers",
    "openhands-amortized-forgetting": "compbench.strategies.openhands_condensers",
    "openhands-conversation-window": "compbench.strategies.openhands_condensers",
    "openhands-llm-attention": "compbench.strategies.openhands_condensers",
    "openhands": "compbench.strategies.pipeline",
    "pipeline": "compbench.strategies.pipeline",
    "cline": "compbench.strategies.cline",
    "cline-condense": "compbench.strategies.cline_condense",
    "cline-sdk": "compbench.strategies.cline_sdk",
    "roo-code": "compbench.strategies.roo_code",
    "goose": "compbench.strategies.goose",
    "aider": "compbench.strategies.aider",
    "swe-agent": "compbench.strategies.swe_agent",
    "copilot-cli": "compbench.strategies.copilot_cli",  # a documented heuristic: Copilot CLI is closed source
    # an example for strategy authors (docs/writing-a-strategy.md): listed, never in a run of every strategy
    "example-keep-last": "compbench.strategies.example_keep_last",
}
ENTRY_POINT_GROUP = "compbench.strategies"


@dataclass(frozen=True)
class StrategyInfo:
    """A registered strategy: its factory, params type, where it comes from, and named presets."""

    name: str
    factory: Callable[[Any], Strategy]
    params: type
    upstream: str  # what it reproduces: a repository at a commit and its files, a document
    summary: str
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    configurable_only: bool = False  # runs only when configured (a pipeline needs its stages)
    needs_model: str = ""  # why it cannot run offline (a decision the tool makes with a model); "" if it can
    composition: str = ""  # a named composition's pipeline items (see strategies/pipeline.py compose)
    # how a spec of this strategy is configured when it is not a list of its own parameters (a composition
    # configures its stages): (spec, the text after "NAME:", name) -> Configured; None: the parameters
    resolver: Callable[[str, str, str], Configured] | None = None
    tool: Tool | None = None  # the real tool it reproduces (compbench.sdk.tools): its logs, presets, settings
    example: bool = False  # an example for authors: listed and runnable by name, never in a run of every strategy
    # bumped when its behaviour changes: the results cache (compbench.run.cache) keys a replay on it, and a test
    # fails when the strategy's decisions on the bundled samples change under the same version
    version: str = "1"

    def defaults(self) -> Any:
        return self.params()

    def capabilities(self) -> frozenset[Capability]:
        """The optional capabilities (``/compact`` ...) of an instance with the default parameters
        (:func:`compbench.sdk.capabilities`); a composed strategy is made of ``stages``."""
        from compbench.sdk.protocols import capabilities

        if self.configurable_only:
            return frozenset({"stages"})
        if self.composition:  # a named composition: its own stages, as resolve() configures them
            return capabilities(resolve(self.name).create())
        return capabilities(self.factory(self.defaults()))


STRATEGIES: Registry[StrategyInfo] = Registry("strategy", ENTRY_POINT_GROUP, BUILTIN)
_registry = STRATEGIES._items  # the registered strategies by name (tests remove throwaway ones from it)


def strategy(name: str, *, params: type, summary: str, upstream: str = "", source: str = "",
             presets: Mapping[str, Mapping[str, Any]] | None = None,
             configurable_only: bool = False, needs_model: str = "", composition: str = "",
             resolver: Callable[[str, str, str], Configured] | None = None, tool: Tool | None = None,
             example: bool = False, version: str = "1") -> Callable[[Callable[[P], Strategy]], Callable[[P], Strategy]]:
    """Register a strategy factory under ``name`` (an error if the name is taken). ``needs_model`` says why
    a strategy cannot run offline: it is listed and shown, refused when configured, and left out of the
    runs of every strategy; ``configurable_only`` likewise keeps it out of those runs (a pipeline needs
    its stages); ``example`` too (an example for authors, replayed only when named, and never the
    strategy a default run sets beside its tool's logs); ``resolver`` configures a spec that is not a list
    of the params' fields (a composition's stages); ``tool`` declares the real tool it reproduces
    (:class:`compbench.sdk.tools.Tool`: its logs, the preset each log runs at, the settings its users
    write); ``version`` is bumped whenever its behaviour changes (cached results are keyed on it).

    ``upstream`` cites what it reproduces (a repository at a commit and its files, a document): required.
    ``source`` is its name before run format 4 (``source`` also names a transcript's recording tool), still
    accepted so that plug-ins written against it load; giving both is an error."""
    if not dataclasses.is_dataclass(params):
        raise TypeError(f"strategy {name!r}: params must be a dataclass")
    if upstream and source:
        raise TypeError(f"strategy {name!r}: give upstream= (source= is its old name), not both")
    upstream = upstream or source
    if not upstream:
        raise TypeError(f"strategy {name!r}: upstream= must cite what the strategy reproduces")

    def deco(factory: Callable[[P], Strategy]) -> Callable[[P], Strategy]:
        check_bounds(name, params())  # a default out of its own bounds is the author's mistake: said at once
        for preset, values in (presets or {}).items():
            _check_fields(name, params, values, f"preset {preset!r}")
            check_bounds(name, params(**values))
        for s in tool.settings if tool is not None and resolver is None else ():  # a composition's: STAGE.param
            _check_fields(name, params, {s.param: None}, f"parameter of setting {s.name}:")
        STRATEGIES.register(name, StrategyInfo(name, factory, params, upstream, summary, dict(presets or {}),
                                               configurable_only, needs_model, composition, resolver, tool,
                                               example, str(version)),
                           factory.__module__)
        return factory

    return deco


def names() -> list[str]:
    """Every known strategy name: built-ins in their canonical order, then plug-ins."""
    return STRATEGIES.names()


def runnable() -> list[str]:
    """The strategies a run of every strategy replays: all but those that need a real model or their own
    configuration (a pipeline), and the examples."""
    return [n for n in names() if not get(n).needs_model and not get(n).configurable_only and not get(n).example]


def get(name: str) -> StrategyInfo:
    return STRATEGIES.get(name)


def own_strategy(source: str) -> str | None:
    """The strategy a default run sets beside a tool's logs (``source``: a transcript's): the one that declares
    it reproduces the tool writing them (``tool=Tool(..., own=True)``); None when no strategy does. An example
    never is."""
    for name in names():
        tool = get(name).tool
        if tool is not None and tool.own and tool.writes(source) and not get(name).example:
            return name
    return None


@dataclass(frozen=True)
class Configured:
    """A strategy with its parameters fixed: ``create()`` gives a fresh instance per replay.

    ``auto``: the spec named no preset of a strategy that declares its tool, so each log runs at the preset
    its tool version calls for (:meth:`for_log`), with ``overrides`` on top; ``params`` are then the newest
    preset's, what ``strategies show`` and a replay without a log (a test) use."""

    info: StrategyInfo
    params: Any
    label: str
    auto: bool = False
    overrides: Mapping[str, str] = field(default_factory=dict)
    preset: str = ""  # the preset the params are, as named ("": the params' defaults)

    def value(self, param: str) -> Any:
        """The value this configuration gives ``param``; ``STAGE.PARAM`` (or ``N.PARAM``) reads a composed
        strategy's stage, as a spec sets it (Gemini CLI's compression threshold lives in its compression stage)."""
        if hasattr(self.params, param):
            return getattr(self.params, param)
        prefix, dot, rest = param.partition(".")
        stages: Sequence[str] = getattr(self.params, "stages", ())
        for k, stage in enumerate(stages, 1):
            if dot and prefix in (stage.partition(":")[0].strip(), str(k)):
                return resolve(stage).value(rest)
        raise UsageError(f"strategy {self.label!r} has no parameter {param!r}")

    def for_log(self, t: Transcript) -> tuple[Configured, str]:
        """This configuration as it replays ``t`` (the preset of the log's tool version when ``auto``) and
        why that preset, in words ("" for a fixed configuration)."""
        if not self.auto or self.info.tool is None:
            return self, ""
        tool = self.info.tool
        preset, why = tool.preset_for(t, list(self.info.presets))
        shown = tool.log_settings(t) if tool.log_settings is not None and tool.writes(t.source) else None
        # what the log shows the tool ran with, unless the user set one of those settings: then theirs, all of it
        if shown is not None and not set(shown[0]) & set(self.overrides):
            values, said = shown
            mine = dataclasses.replace(self, overrides={**values, **self.overrides})
            from compbench.sdk.tools import FROM_LOG

            return _at_preset(mine, preset or ""), f"{why}; {FROM_LOG}: {said}"
        return _at_preset(self, preset or ""), why

    @property
    def name(self) -> str:
        return self.info.name

    def create(self) -> Strategy:
        return self.info.factory(self.params)

    def param_dict(self) -> dict[str, Any]:
        return {f.name: _jsonable(getattr(self.params, f.name)) for f in dataclasses.fields(self.params)}


def resolve(spec: str) -> Configured:
    """Parse ``NAME[:k=v,...]``; ``preset=P`` applies a named preset before the other overrides. A strategy
    that declares its tool, given no preset, runs each log at its version's preset (``Configured.auto``)."""
    name, _, rest = spec.strip().partition(":")
    info = get(name)
    if info.needs_model:
        raise UsageError(info.needs_model)
    if info.resolver is not None:  # a composition configures its stages; with a tool and no preset, per log
        made = info.resolver(spec, rest, name)
        items = [x.strip() for x in rest.split(",") if x.strip()]
        if info.tool is not None and info.presets and not any(x.startswith("preset=") for x in items):
            return dataclasses.replace(made, auto=True, overrides=dict(x.partition("=")[::2] for x in items))
        return made
    overrides: dict[str, str] = {}
    preset = ""
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"strategy {spec!r}: expected key=value, got {item!r}")
        if key == "preset":
            if value not in info.presets and value != "seed":
                raise UsageError(f"strategy {name!r} has no preset {value!r} "
                                 f"(presets: {', '.join(['seed', *info.presets])})")
            preset = value
        else:
            overrides[key.strip()] = value.strip()
    auto = not preset and info.tool is not None and bool(info.presets)
    if auto and info.tool is not None and info.tool.newest in info.presets:
        preset = info.tool.newest or ""
    params = _params(info, preset, overrides)
    return Configured(info, params, label(name, "" if auto else preset, overrides), auto, dict(overrides),
                      preset)


def _params(info: StrategyInfo, preset: str, overrides: Mapping[str, str]) -> Any:
    """The parameters of ``preset`` (""/"seed": the defaults) with ``overrides`` (spec text) on top, checked."""
    values: dict[str, Any] = dict(info.presets.get(preset, {}))
    _check_fields(info.name, info.params, overrides, "parameter")
    hints = typing.get_type_hints(info.params)
    for key, raw in overrides.items():
        values[key] = parse_value(info.name, key, raw, hints[key])
    params = info.params(**values)
    check_bounds(info.name, params)
    return params


_AT_PRESET: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], Configured] = {}


def _at_preset(c: Configured, preset: str) -> Configured:
    """``c`` fixed at ``preset`` (its label kept: every log's row is the one configuration's), made once per
    label and preset (the label names the strategy and every override)."""
    key = (c.info.name, c.label, preset, tuple(sorted(c.overrides.items())))
    hit = _AT_PRESET.get(key)
    if hit is None or hit.info is not c.info:
        if c.info.resolver is not None:
            rest = ",".join(([f"preset={preset}"] if preset else []) + [f"{k}={v}" for k, v in c.overrides.items()])
            made = c.info.resolver(f"{c.info.name}:{rest}", rest, c.info.name)
            hit = dataclasses.replace(made, label=c.label, auto=False, overrides=c.overrides, preset=preset)
        else:
            hit = Configured(c.info, _params(c.info, preset, c.overrides), c.label, False, c.overrides, preset)
        _AT_PRESET[key] = hit
    return hit


def configure(name: str, **values: Any) -> Configured:
    """Programmatic counterpart of :func:`resolve` with typed values."""
    info = get(name)
    if info.needs_model:
        raise UsageError(info.needs_model)
    preset = values.pop("preset", "")
    merged = {**info.presets.get(preset, {}), **values}
    _check_fields(name, info.params, merged, "parameter")
    params = info.params(**merged)
    check_bounds(name, params)
    return Configured(info, params, label(name, preset, {k: _fmt(v) for k, v in values.items()}))


def label(name: str, preset: str, overrides: Mapping[str, str]) -> str:
    """Canonical spec string: the name, the preset, then overrides sorted by key."""
    items = ([f"preset={preset}"] if preset else []) + [
        f"{k}={v}" for k, v in sorted(overrides.items())]
    return name + (":" + ",".join(items) if items else "")


def _check_fields(name: str, params: type, values: Mapping[str, Any], what: str) -> None:
    known = [f.name for f in dataclasses.fields(params)]
    for key in values:
        if key not in known:
            hint = difflib.get_close_matches(key, known, n=1)
            did = f"; did you mean {hint[0]!r}?" if hint else ""
            raise UsageError(f"strategy {name!r}: unknown {what} {key!r}{did} (known: {', '.join(known)})")


def parse_value(strategy_name: str, key: str, raw: str, typ: Any) -> Any:
    """Convert a spec string to the field's type: int, float, bool, str, a Literal of strings, tuples
    (``a|b``), optionals."""
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        if raw.lower() in ("none", "null", ""):
            return None
        typ = next(a for a in args if a is not type(None))
        origin, args = typing.get_origin(typ), typing.get_args(typ)
    if origin is typing.Literal:
        if raw in args:
            return raw
        raise UsageError(f"strategy {strategy_name!r}: {key}={raw!r} is not one of {', '.join(map(str, args))}")
    try:
        if origin is tuple:
            inner = args[0] if args else str
            return tuple(parse_value(strategy_name, key, x, inner) for x in raw.split("|") if x)
        if typ is bool:
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if typ is int:
            return int(raw.replace("_", ""))
        if typ is float:
            return float(raw)
        if typ is str:
            return raw
    except ValueError:
        kind = getattr(typ, "__name__", typ)
        raise UsageError(f"strategy {strategy_name!r}: {key}={raw!r} is not a valid {kind}") from None
    raise UsageError(f"strategy {strategy_name!r}: parameter {key} of type {typ} cannot be set from text")


def _fmt(v: Any) -> str:
    if isinstance(v, tuple):
        return "|".join(map(str, v))
    return str(v).lower() if isinstance(v, bool) else str(v)


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v

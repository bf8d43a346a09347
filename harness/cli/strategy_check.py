"""``compbench.cli.strategy_check`` — What ``compbench strategies check SPEC`` checks of a strategy, on the samples.

An author's strategy is ready when it keeps the rules every built-in keeps, each checked here in a line:

* **imports** — its module imports ``compbench.sdk`` only (the layer rule ``tools/layers.py`` holds every
  built-in to: the SDK, ``compbench.errors``, other strategy modules; never the engine, nor the test kit);
* **parameters** — a frozen dataclass whose every field is declared with ``param()``: a sentence for
  ``strategies show`` and bounds every configuration is checked against;
* **presets** — each preset (and ``seed``) resolves and builds a strategy; a Tool's newest preset and its
  presets by version are presets it has, and the versions the samples record map to one;
* **acts** — it changes the view on at least one sample (at each sample's own window, or at a small window);
  if it never does, the line says how far the samples' contexts reached (a note, not a failure: a strategy
  whose trigger lies beyond the samples is not wrong);
* **window** — a warning when it sends calls over the window that a view would have fit (more than 1% of the
  calls), with the figures;
* **frequency** — a warning when it compacts at most calls from its first compaction on, with the figures;
* **wake** — the tables a run writes are the same with and without its ``wake``
  (:func:`compbench.testing.wake_differences`);
* **actions only** — it never changes the view it is shown nor a message, and answers every hook with
  what the hook returns (:func:`compbench.testing.untouched`);

(the checks on its replays are in :mod:`compbench.cli.strategy_replays`)
* **tool** — its Tool declaration, if any, names log formats compbench reads and settings of its real
  parameters, whose swept values are valid configurations.

A SPEC is a registered name (a built-in or a plug-in's, with ``:key=value`` overrides if wanted), or
``FILE.py[:SPEC]`` / ``package.module[:SPEC]``: the module is imported first, so that its ``@strategy``
registers (a file that registers one strategy needs no name).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from compbench.cli.strategy_replays import SHOWN, Conditions, Finding, check_actions, count, replayed
from compbench.errors import CompbenchError, UsageError
from compbench.sdk.registry import STRATEGIES, Configured, StrategyInfo, resolve
from compbench.sdk.session import ModelLimits
from compbench.sdk.tools import sweep_specs, version_tuple

# What a strategy module may import: tools/layers.py's STRATEGY_IMPORTS (a test keeps the two the same). The test
# kit, compbench.testing, is not among them: it replays, so it stands above the engine.
STRATEGY_IMPORTS = ("compbench.sdk", "compbench.errors", "compbench.strategies")
SMALL_WINDOW = 32_000  # the second condition: most thresholds are reached on the samples at this window


# --- the spec ------------------------------------------------------------------------------------------------

def _is_module(head: str) -> bool:
    """A strategy name has no dot or slash; a file ends in .py, a module path has dots."""
    return head.endswith(".py") or "/" in head or "\\" in head or "." in head


def _import_file(path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path}: no such file (expected FILE.py[:NAME] of a strategy module)")
    name = path.stem if path.stem not in sys.modules else f"_compbench_check_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python module (expected FILE.py[:NAME])")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # the module's own siblings import as they would installed
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except CompbenchError:
        raise
    except Exception as e:  # an author's module that fails to import: its error in one line
        sys.modules.pop(name, None)
        raise UsageError(f"{path}: importing it failed: {_said(e)}") from None


def load(spec: str) -> Configured:
    """The configured strategy a SPEC names, importing its module first when it names one."""
    head, _, rest = spec.strip().partition(":")
    if not _is_module(head):
        return resolve(spec)
    before = set(STRATEGIES._items)
    if head.endswith(".py") or "/" in head or "\\" in head:
        _import_file(Path(head))
    else:
        try:
            importlib.import_module(head)
        except ModuleNotFoundError:
            raise UsageError(f"{head}: no such module (expected FILE.py[:NAME] or package.module[:NAME])") from None
    if rest:
        return resolve(rest)
    added = sorted(set(STRATEGIES._items) - before)
    if len(added) != 1:
        said = f"it registered {', '.join(added)}" if added else "it registered no strategy (an @strategy on import)"
        raise UsageError(f"{head}: name the strategy to check ({head}:NAME): {said}")
    return resolve(added[0])


# --- the static checks ---------------------------------------------------------------------------------------

def module_file(info: StrategyInfo) -> tuple[str, Path | None]:
    """The module that registered the strategy and its file."""
    name = info.factory.__module__
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    return name, Path(file) if file else None


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    out = []
    for a in node.names:
        full = f"{module}.{a.name}"
        out.append(full if module == "compbench" or _is_a_module(full) else module)
    return out


def _is_a_module(name: str) -> bool:
    if not name.startswith("compbench."):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _allowed(target: str) -> bool:
    return any(target == p or target.startswith(p + ".") for p in STRATEGY_IMPORTS)


def check_imports(info: StrategyInfo) -> Finding:
    name, path = module_file(info)
    if path is None or not path.is_file():
        return Finding("imports", "note", f"{name}: no source file to read")
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bad = [f"{path.name}:{node.lineno}: imports {t}" for node in ast.walk(tree)
           if isinstance(node, ast.Import | ast.ImportFrom) for t in _targets(node, package)
           if (t == "compbench" or t.startswith("compbench.")) and not _allowed(t)]
    if bad:
        return Finding("imports", "fail", f"{name} imports past the SDK: a strategy imports compbench.sdk only "
                                          "(what it needs of the engine comes through it)", tuple(bad))
    return Finding("imports", "ok", f"{name} imports compbench.sdk only")


def check_parameters(info: StrategyInfo) -> Finding:
    fields = dataclasses.fields(info.params)
    frozen = info.params.__dataclass_params__.frozen  # type: ignore[attr-defined]
    undeclared = [f.name for f in fields if "lo" not in f.metadata]
    undocumented = [f.name for f in fields if "lo" in f.metadata and not str(f.metadata.get("doc", "")).strip()]
    details = [f"{n}: declared without param(default, doc): no sentence for `strategies show`, no bounds"
               for n in undeclared] + [f"{n}: param() with an empty doc" for n in undocumented]
    if not frozen:
        details.insert(0, f"{info.params.__name__} is not frozen: @dataclass(frozen=True) (a configuration is a value)")
    if details:
        return Finding("parameters", "fail", f"{count(len(details), 'problem')} in {info.params.__name__}",
                       tuple(details))
    if not fields:
        return Finding("parameters", "ok", "no parameters")
    return Finding("parameters", "ok", f"{count(len(fields), 'parameter')}, each with param(): a doc and its bounds")


def _builds(what: str, spec: str) -> str | None:
    """None when ``spec`` resolves and builds a strategy, else what failed, in a line."""
    try:
        resolve(spec).create()
    except CompbenchError as e:
        return f"{what}: {e}"
    except Exception as e:  # an author's factory raising: named, not a traceback
        return f"{what}: {_said(e)}"
    return None


def _said(e: BaseException) -> str:
    """An exception in a line: its type and the first line of its message."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def check_presets(info: StrategyInfo, versions: Sequence[str]) -> Finding:
    names = ["seed", *info.presets]  # "seed": the parameters' own defaults, a preset of every strategy
    problems = [p for p in (_builds(f"preset {n}", f"{info.name}:preset={n}")
                            for n in names) if p]
    tool = info.tool
    if tool is not None:
        if tool.newest is not None and tool.newest not in names:
            problems.append(f"Tool(newest={tool.newest!r}) is no preset of it (presets: {', '.join(names)})")
        problems += [f"Tool.preset_versions names {p!r}, no preset of it" for p in tool.preset_versions
                     if p not in names]
        if tool.version_preset is not None:
            for v in versions:
                try:
                    picked = tool.version_preset(v)
                except Exception as e:  # the author's function raising on a real version
                    problems.append(f"Tool.version_preset({v!r}) raised {_said(e)}")
                    continue
                if picked is not None and picked not in names:
                    problems.append(f"Tool.version_preset({v!r}) = {picked!r}, no preset of it")
    if problems:
        return Finding("presets", "fail", f"{count(len(problems), 'problem')} with its presets", tuple(problems))
    by_version = f"; the {count(len(versions), 'version')} its tool's samples record map to one" if versions else ""
    return Finding("presets", "ok", f"{', '.join(names)} resolve{'s' * (len(names) == 1)}{by_version}")


def known_sources() -> set[str]:
    """The ``Transcript.source`` values compbench's importers write, and the formats plug-ins add."""
    from compbench.data.formats.catalog import FORMATS, IMPORTERS, TOOL_NAMES

    return set(FORMATS) | set(TOOL_NAMES) | set(IMPORTERS.names())


def check_tool(info: StrategyInfo) -> Finding:
    tool = info.tool
    if tool is None:
        return Finding("tool", "note", "no Tool declared (optional: its logs, presets by version, the settings its "
                                       "users write)")
    problems = [f"formats: {f!r} is no log format compbench reads" for f in tool.formats if f not in known_sources()]
    fields = {f.name for f in dataclasses.fields(info.params)}
    for s in tool.settings:
        if "{value}" not in s.line:
            problems.append(f"setting {s.name}: its line {s.line!r} has no {{value}}")
        if info.resolver is None and s.param not in fields:
            problems.append(f"setting {s.name}: {s.param!r} is no parameter of it")
    problems += [p for p in (_builds(f"sweep {spec}", spec)
                             for spec, _, _ in sweep_specs(info.name, tool)) if p]
    if problems:
        return Finding("tool", "fail", f"{tool.name}: {count(len(problems), 'problem')} in its declaration",
                       tuple(problems))
    settings = ", ".join(f"{s.param} ({s.name})" for s in tool.settings) or "none"
    return Finding("tool", "ok", f"{tool.name}: formats {', '.join(tool.formats)}; settings {settings}")


# --- the replays ---------------------------------------------------------------------------------------------

def check(spec: str, window: int = SMALL_WINDOW) -> tuple[Configured, list[Finding]]:
    """Every check of the strategy SPEC names, on the bundled samples (at their own windows and at ``window``)."""
    from compbench.testing import samples

    c = load(spec)
    info = c.info
    data = samples()
    versions = sorted({str(t.meta.get("tool_version")) for t in data
                       if info.tool is not None and info.tool.writes(t.source) and t.meta.get("tool_version")
                       and version_tuple(str(t.meta["tool_version"])) is not None})
    findings = [check_imports(info), check_parameters(info), check_presets(info, versions)]
    conditions: Conditions = [("at their own windows", None),
                              (f"at {window:,} tokens", ModelLimits(window, min(4_096, window // 4)))]
    # the watched replays first: they go on past a wrong answer, which a run's replays would stop at
    steps: list[Callable[[], list[Finding]]] = [lambda: [check_actions(c, data, conditions)],
                                                lambda: replayed(c, data, conditions)]
    for step in steps:
        try:
            findings += step()
        except Exception as e:  # the strategy (or its factory) raised in a replay: where, in a line
            findings.append(Finding("replays", "fail", f"it raised {_said(e)} replaying the samples",
                                    tuple(_where(e, info))))
            break
    return c, [*findings, check_tool(info)]


def _where(e: BaseException, info: StrategyInfo) -> list[str]:
    """The lines of the strategy's own module the exception passed through, innermost last."""
    _, path = module_file(info)
    frames = traceback.extract_tb(e.__traceback__)
    return [f"{Path(f.filename).name}:{f.lineno} in {f.name}: {f.line}" for f in frames
            if path is not None and Path(f.filename).resolve() == path.resolve()][-SHOWN:]


def report(c: Configured, findings: Sequence[Finding]) -> list[str]:
    name, path = module_file(c.info)
    out = [f"{c.label}: {c.info.summary} ({name}{', ' + _shown(path) if path else ''})"]
    for f in findings:
        out += f.lines()
    failed = [f.check for f in findings if f.status == "fail"]
    warned = [f.check for f in findings if f.status == "warn"]
    notes = sum(f.status == "note" for f in findings)
    said = [f"{count(len(warned), 'warning')}: {', '.join(warned)}"] if warned else []
    said += [count(notes, "note")] if notes and not failed else []
    if failed:
        out.append("; ".join([f"{len(failed)} of {len(findings)} checks failed: {', '.join(failed)}", *said]))
    else:
        out.append("every check passed" + (f" ({'; '.join(said)})" if said else ""))
    return out


def _shown(path: Path) -> str:
    """A file under the working directory by its relative path (the line reads the same in any checkout)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)

"""The engine's layers, checked: every import between compbench modules goes down the layer order, and no
module imports itself back through others (no cycles), imports inside functions and under TYPE_CHECKING
included (an import hidden in a function is still a dependency).

Run by ``make lint`` (and so ``make test``): ``python tools/layers.py`` prints each violation with the line
that makes it and exits 1. The order is the one ``../shared/DESIGN.md`` and the README describe:

    base        compbench.errors, compbench.memo, compbench.plugins, compbench.textable
    data        transcripts in (and the root package, which re-exports the transcript model)
    sdk         the vocabulary strategies and summarizers speak, and token counting
    measure     windows, prices, cache, facts, the working set, re-acquisition, per-replay metrics
    summarizers
    strategies  (they speak the SDK only: see STRATEGY_IMPORTS)
    config      [tool.compbench] and the strategy blocks it holds
    replay      the loop that applies one strategy's actions to one transcript
    store       the run directory, written and read; it never drives a replay
    run         a benchmark: every transcript x every configuration, executors, the judged track
    decide      statistics, ranking, the verdict, gate, tune
    validation  against real logs
    surface     cli, reports, bench, demo, the pytest plug-in, the strategy author's test kit (compbench.testing)

A module's layer is its longest matching prefix. Within a layer, modules may import each other (never in a
cycle). A package's modules share its layer: no layer lists a module inside another layer's package (the root
``compbench`` aside), so a package cannot reach above its layer through one of its own modules listed higher
(the author's test kit replays, so it lives in ``compbench.testing``, not in ``compbench.sdk``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# where each import namespace lives on disk (pyproject's package-dir)
PACKAGE_DIRS = {"compbench": "harness", "compbench.strategies": "strategies", "compbench.reports": "reports"}

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("compbench.errors", "compbench.memo", "compbench.plugins", "compbench.textable")),
    ("data", ("compbench.data", "compbench")),
    ("sdk", ("compbench.sdk",)),
    ("measure", ("compbench.measure",)),
    ("summarizers", ("compbench.summarizers",)),
    ("strategies", ("compbench.strategies",)),
    ("config", ("compbench.config",)),
    ("replay", ("compbench.replay",)),
    ("store", ("compbench.store",)),
    ("run", ("compbench.run",)),
    ("decide", ("compbench.decide",)),
    ("validation", ("compbench.validation",)),
    ("surface", ("compbench.cli", "compbench.reports", "compbench.bench", "compbench.bench_report",
                 "compbench.demo", "compbench.pytest_plugin", "compbench.progress", "compbench.testing")),
)
# What a strategy may import: the SDK (the vocabulary, counting, the helpers strategies share), the base
# modules and other strategy modules; never the data model's modules, measure or the engine directly.
STRATEGY_IMPORTS = ("compbench.sdk", "compbench.errors", "compbench.strategies")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    path: Path


def modules(dirs: Mapping[str, str] = PACKAGE_DIRS, root: Path = ROOT) -> dict[str, Path]:
    """Every module of the namespace, by dotted name (a package by its own name)."""
    out: dict[str, Path] = {}
    nested = sorted(dirs.items(), key=lambda kv: -len(kv[0]))
    for prefix, folder in dirs.items():
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            # a folder that is another namespace's package-dir belongs to that namespace only
            owner = next(p for p, f in nested if (root / f) in path.parents or path.parent == root / f)
            if owner == prefix:
                out[name] = path
    return out


def _resolve(name: str, known: Mapping[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[Import]:
    """The compbench modules ``name`` imports, wherever the import statement is."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from pkg import mod`` imports the module; ``from mod import name`` the module that holds it
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        for t in targets:
            if t == "compbench" or t.startswith("compbench."):
                target = _resolve(t, known)
                if target is not None and target != name:
                    yield Import(name, target, node.lineno, path)


def layer_of(name: str, layers: Sequence[tuple[str, Sequence[str]]] = LAYERS) -> int:
    best, index = -1, -1
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            if (name == p or name.startswith(p + ".")) and len(p) > best:
                best, index = len(p), i
    if index < 0:
        raise SystemExit(f"tools/layers.py: {name} is in no layer; add it to LAYERS")
    return index


def _cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def violations(found: Iterable[Import], layers: Sequence[tuple[str, Sequence[str]]] = LAYERS,
               strategy_imports: Sequence[str] = STRATEGY_IMPORTS, root: Path = ROOT) -> list[str]:
    """One line per upward import, per forbidden strategy import and per cycle."""
    out: list[str] = []
    edges: dict[str, set[str]] = {}
    where: dict[tuple[str, str], Import] = {}
    for imp in found:
        edges.setdefault(imp.source, set()).add(imp.target)
        where.setdefault((imp.source, imp.target), imp)
        here = f"{imp.path.relative_to(root)}:{imp.line}"
        a, b = layer_of(imp.source, layers), layer_of(imp.target, layers)
        if b > a:
            out.append(f"{here}: {imp.source} ({layers[a][0]}) imports {imp.target} ({layers[b][0]}), a layer "
                       "above it")
        elif (imp.source.startswith("compbench.strategies") and
              not any(imp.target == p or imp.target.startswith(p + ".") for p in strategy_imports)):
            out.append(f"{here}: {imp.source} imports {imp.target}; a strategy imports the SDK only")
    for comp in _cycles(edges):
        members = set(comp)
        links = sorted(f"{s} -> {t} ({where[(s, t)].path.relative_to(root)}:{where[(s, t)].line})"
                       for s in comp for t in edges.get(s, ()) if t in members)
        out.append(f"import cycle among {', '.join(comp)}: " + "; ".join(links))
    return out


def nested(layers: Sequence[tuple[str, Sequence[str]]] = LAYERS, root_package: str = "compbench") -> list[str]:
    """One line per layer prefix inside another layer's package (the root package aside): such a module would
    let its package import above the package's layer through it."""
    out: list[str] = []
    for a, (name_a, prefixes_a) in enumerate(layers):
        for p in prefixes_a:
            for b, (name_b, prefixes_b) in enumerate(layers):
                out += [f"{p} ({name_a}) lies inside {q} ({name_b}): a package's modules share its layer; move the "
                        f"module out of {q}" for q in prefixes_b
                        if a != b and q != root_package and p.startswith(q + ".")]
    return out


def check(dirs: Mapping[str, str] = PACKAGE_DIRS, root: Path = ROOT,
          layers: Sequence[tuple[str, Sequence[str]]] = LAYERS) -> list[str]:
    known = modules(dirs, root)
    found = [imp for name, path in known.items() for imp in imports(name, path, known)]
    return nested(layers) + violations(found, layers, root=root)


def main() -> int:
    problems = check()
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layer violation(s): see tools/layers.py for the order", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

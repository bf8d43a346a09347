"""Every cross-reference a docstring or comment makes (``:func:`compbench.x.y```, ``:mod:``, ``:class:``,
``:meth:``, ``:data:``, ``:attr:``, ``:exc:``) names something that exists: a reference to a name that moved
sends a reader to nothing, and nothing else notices. A failure names the file and line of each broken one."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIRS = {"harness": "compbench", "strategies": "compbench.strategies", "reports": "compbench.reports"}
ROLE = re.compile(r":(?:func|mod|class|meth|data|attr|obj|exc):`~?([A-Za-z_.][\w.]*)`")


def module_name(path: Path) -> str:
    folder = path.relative_to(ROOT).parts[0]
    rel = path.relative_to(ROOT / folder).with_suffix("")
    return ".".join([DIRS[folder], *(p for p in rel.parts if p != "__init__")])


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _attr(obj: object, dotted: str) -> bool:
    for part in dotted.split(".") if dotted else ():
        if not hasattr(obj, part):
            # a dataclass field without a default, a Protocol's annotated attribute: declared, not set
            if part in getattr(obj, "__annotations__", {}) or part in getattr(obj, "__dataclass_fields__", {}):
                return True
            return isinstance(obj, type) and _instance_attribute(obj, part)
        obj = getattr(obj, part)
    return True


def _instance_attribute(cls: type, name: str) -> bool:
    """``name`` is an attribute a class's own code sets or reads on its instances (``self.name``)."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return False
    return re.search(rf"\bself\.{re.escape(name)}\b", source) is not None


def _absolute(target: str) -> bool:
    """``compbench.a.b.C.m``: the longest importable module prefix, then attributes."""
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        mod = _module(".".join(parts[:k]))
        if mod is not None:
            return _attr(mod, ".".join(parts[k:]))
    return False


def resolves(target: str, where: str) -> bool:
    """Whether ``target``, referenced in module ``where``, names something: absolute names from the package;
    ``.x`` from the referring module's package; a bare name from the referring module, one of its classes
    (a method named inside its class), or a sibling module."""
    if target.startswith("compbench"):
        return _absolute(target)
    here = importlib.import_module(where)
    package = where if hasattr(here, "__path__") else where.rpartition(".")[0]
    name = target.lstrip(".")
    if _absolute(f"{package}.{name}") or _attr(here, name):
        return True
    if target.startswith("."):
        return False
    classes = [v for v in vars(here).values() if isinstance(v, type) and v.__module__ == where]
    return any(_attr(c, name) for c in classes)


def references(root: Path = ROOT) -> list[tuple[Path, int, str, str]]:
    out = []
    for folder in DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            where = module_name(path)
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                out += [(path, n, m.group(1).rstrip("."), where) for m in ROLE.finditer(line)]
    return out


def test_every_cross_reference_names_something() -> None:
    refs = references()
    assert len(refs) > 300  # the scan found the references (an empty scan would pass vacuously)
    broken = [f"{path.relative_to(ROOT)}:{n}: {target}" for path, n, target, where in refs
              if not resolves(target, where)]
    assert not broken, "cross-references to names that do not exist:\n" + "\n".join(broken)


@pytest.mark.parametrize(("target", "where", "ok"), [
    ("compbench.sdk.kinds", "compbench.errors", True),  # a module
    ("compbench.sdk.kinds.RECORDED", "compbench.errors", True),  # a module's name
    ("compbench.sdk.kinds.NOT_THERE", "compbench.errors", False),
    ("compbench.sdk.nothere", "compbench.errors", False),  # a module that does not exist
    ("compbench.store.manifest.Manifest.from_json", "compbench.errors", True),  # a method
    ("compbench.store.manifest.Manifest.to_yaml", "compbench.errors", False),
    (".catalog", "compbench.data.formats.codex", True),  # a sibling module
    (".catalogue", "compbench.data.formats.codex", False),
    ("UsageError", "compbench.errors", True),  # a name of the referring module
    ("UsageErrors", "compbench.errors", False),
    ("compbench.sdk.session.SessionView.counter", "compbench.errors", True),  # an instance attribute
    ("compbench.sdk.session.SessionView.counters", "compbench.errors", False),
])
def test_resolves(target: str, where: str, ok: bool) -> None:
    assert resolves(target, where) is ok

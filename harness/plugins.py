"""``compbench.plugins`` — One small registry for every kind of plug-in: strategies, formats (importers), summarizers,
executors, metrics.

A registry maps names to objects of one kind. Built-ins are named with the module that provides them,
imported on first lookup (so ``compbench --help`` imports none of them); third-party packages add their own
through an entry-point group (``compbench.strategies``, ``compbench.formats``, ``compbench.summarizers``,
``compbench.executors``, ``compbench.metrics``), loaded only when a name no built-in has is looked up, or
when every name is listed. An entry point names a module or an object: importing it may register through
the kind's decorator (``@strategy``, ``@summarizer``), or the loaded object itself is adopted under the entry
point's name when it is of the kind (a format module with ``sniff`` and ``read``, a ``Metric``).

Strict, as lm-evaluation-harness is: registering a name twice is an error (a plug-in that takes a built-in's
name included), and an unknown name fails with the known ones and a "did you mean".
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from compbench.errors import UsageError

T = TypeVar("T")

GROUP_PREFIX = "compbench."


class Registry(Generic[T]):
    """Names -> objects of one ``kind``; ``builtin`` maps each built-in name to its module (``module`` or
    ``module:attribute``), in listing order; ``adopt`` turns a loaded module or object into an item (None:
    not of this kind)."""

    def __init__(self, kind: str, group: str, builtin: Mapping[str, str] | None = None,
                 adopt: Callable[[str, object], T | None] | None = None,
                 spell: Callable[[str], str] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.builtin = dict(builtin or {})
        self._adopt = adopt
        self._spell = spell  # how the list of known names shows a name (a summarizer's "litellm:MODEL")
        self._items: dict[str, T] = {}
        self._origin: dict[str, str] = {}
        self._plugins: list[str] = []
        self._plugins_loaded = False

    # --- registration ---------------------------------------------------------------------------------
    def register(self, name: str, item: T, origin: str = "") -> T:
        """Add ``item`` under ``name``; a name already taken is an error naming who took it."""
        if name in self._items:
            by = self._origin[name] or "an earlier call"
            raise UsageError(f"{self.kind} {name!r} is already registered (by {by})")
        self._items[name] = item
        self._origin[name] = origin
        return item

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register throwaway items clean up with this)."""
        self._items.pop(name, None)
        self._origin.pop(name, None)

    # --- lookup -----------------------------------------------------------------------------------------
    def get(self, name: str) -> T:
        """The item registered as ``name``: a built-in is imported now, a plug-in's entry points loaded now."""
        if name not in self._items and name in self.builtin:
            self._load(name, self.builtin[name], "built-in")
        if name not in self._items:
            self.load_plugins()
        if name not in self._items:
            raise self.unknown(name)
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self.builtin

    def unknown(self, name: str) -> UsageError:
        """The error for an unknown name: the closest known one and every known name."""
        known = self.names()
        hint = difflib.get_close_matches(name, known, n=1)
        did = f"; did you mean {hint[0]!r}?" if hint else ""
        shown = [self._spell(n) for n in known] if self._spell is not None else known
        return UsageError(f"unknown {self.kind} {name!r}{did} (known: {', '.join(shown)})")

    def names(self) -> list[str]:
        """Every name: built-ins in their canonical order, then plug-ins (and items registered in code) sorted."""
        self.load_plugins()
        return list(self.builtin) + sorted(n for n in self._items if n not in self.builtin)

    def plugins(self) -> list[str]:
        """The names third-party entry points brought, sorted."""
        self.load_plugins()
        return sorted(self._plugins)

    def items(self) -> Iterator[tuple[str, T]]:
        """Every (name, item), in :meth:`names` order (each built-in imported)."""
        for n in self.names():
            yield n, self.get(n)

    # --- loading ----------------------------------------------------------------------------------------
    def load_plugins(self) -> None:
        """Load this registry's entry points once. A plug-in may not take a built-in's name."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        for ep in sorted(entry_points(group=self.group), key=lambda e: e.name):
            dist = getattr(ep.dist, "name", None) or "a package"
            if ep.name in self.builtin:
                raise UsageError(f"the {self.group} entry point {ep.name!r} of {dist} takes the name of a built-in "
                                 f"{self.kind}; rename it")
            if ep.name in self._items:
                continue  # its module was imported already (a plug-in registering several names)
            self._load(ep.name, ep.value, f"{dist} ({ep.value})")
            self._plugins.append(ep.name)

    def _load(self, name: str, target: str, origin: str) -> None:
        module, _, attr = target.partition(":")
        obj: object = importlib.import_module(module.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
        if name in self._items:
            return  # it registered itself on import (a decorator)
        item = self._adopt(name, obj) if self._adopt is not None else None
        if item is None:
            raise UsageError(f"{target} (for {self.kind} {name!r}, from {origin}) registered no {self.kind} named "
                             f"{name!r}")
        self.register(name, item, origin)

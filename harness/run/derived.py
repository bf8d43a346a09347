"""``compbench.run.derived`` — What a run derives from its own tables (the widening's next configurations, the
summary it prints), remembered in the cache directory under exactly what it is derived from.

A re-run over an unchanged dataset reads every row from the results cache, and its tables come out byte-identical;
what is derived from them then comes out the same too, and costs more than the reading (the summary's bootstrap,
the flags). So it is kept under a hash of its input (the tables' bytes, or a frame's) and of every file of compbench
and the versions of the libraries it computes with (:func:`code_version`): a change to either is a new key, never a
stale answer. Entries are small texts; past :data:`KEEP` the least recently used are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

DERIVED = "derived"
KEEP = 256  # entries
PACKAGES = ("compbench", "compbench.strategies", "compbench.reports")
LIBRARIES = ("pandas", "numpy", "pyarrow", "tiktoken", "litellm")

T = TypeVar("T")


@cache
def code_version() -> str:
    """A digest of every file of compbench's packages, of Python's and the libraries' versions."""
    import importlib.util
    import platform

    from compbench.run.cache import library_versions

    h = hashlib.sha256(f"python {platform.python_version()}\n".encode())
    h.update(library_versions(LIBRARIES).encode())
    seen: set[Path] = set()
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        for base in map(Path, spec.submodule_search_locations or ()) if spec is not None else ():
            for p in sorted(base.rglob("*")):
                if p in seen or not p.is_file() or "__pycache__" in p.parts or p.suffix == ".pyc":
                    continue
                seen.add(p)
                h.update(f"{package} {p.relative_to(base).as_posix()}\n".encode())
                h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def files_digest(paths: Iterable[Path], skip: Callable[[Path, bytes], bytes] | None = None) -> str:
    """A digest of the files ``paths`` (names and bytes, in the order given); ``skip`` may drop what varies
    without changing what is derived (a manifest's creation time)."""
    h = hashlib.sha256()
    for p in paths:
        data = p.read_bytes()
        h.update(f"{p.name} {len(data)}\n".encode())
        h.update(skip(p, data) if skip is not None else data)
    return h.hexdigest()


def frame_digest(frame: Any) -> str:
    """A digest of a pandas frame's content (its pickle: an equal frame pickled otherwise is a miss, never a
    wrong answer)."""
    return hashlib.sha256(pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()


def remembered(root: Path | None, what: str, digest: str, make: Callable[[], T]) -> T:
    """``make()``'s JSON-able answer for ``what`` of the input whose digest is ``digest``: from ``root`` when kept
    there under this code version, else made and kept (``root`` None: made, nothing kept)."""
    if root is None:
        return make()
    key = hashlib.sha256(f"{what} {digest} {code_version()}".encode()).hexdigest()
    p = root / DERIVED / f"{key}.json"
    try:
        kept = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and kept.get("what") == what:
            os.utime(p)
            return kept["value"]  # type: ignore[no-any-return]
    except (OSError, ValueError, KeyError):
        pass
    value = make()
    from compbench.run.cache import drop_least_recent

    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"what": what, "value": value}, ensure_ascii=False), encoding="utf-8")
        tmp.replace(p)
        drop_least_recent(p.parent, KEEP)
    except OSError:
        pass
    return value



"""``compbench.store.manifest`` — A run's manifest, typed and versioned: what ``manifest.json`` holds, and how an older
one is read.

``format_version`` says which layout a run directory has. A reader accepts every version up to
:data:`FORMAT_VERSION`, bringing an older manifest up to date one step at a time (``UPGRADES[n]`` turns
version n into n + 1, as asv's ``update_to_N`` do), and refuses a newer one in one line: this compbench
cannot know what it means.

Versions:

1. The first layout. An empty table was written with a single ``transcript_id`` column; a run from before
   token corrections has no ``spec.token_correction`` (it counted without one).
2. Every table is written with its declared schema (:mod:`compbench.store.tables`), empty ones included; the spec
   always names its token correction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.errors import UsageError

FORMAT_VERSION = 2
MANIFEST = "manifest.json"


def _from_1(d: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2: the spec names the token correction it counted with (none before corrections); its
    empty tables are read with their declared schema (:meth:`compbench.store.reader.Run.table`)."""
    spec = dict(d.get("spec") or {})
    spec.setdefault("token_correction", "none")
    return {**d, "spec": spec, "format_version": 2}


UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_1}


@dataclass(frozen=True)
class DatasetRef:
    """The dataset a run replayed: where it was, its fingerprint (the transcripts' hashes), how many."""

    path: str
    fingerprint: str
    transcripts: int


@dataclass(frozen=True)
class StrategyRecord:
    """A configured strategy of the run: its label (the spec string), name, source and every parameter."""

    label: str
    name: str
    source: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Manifest:
    """Everything ``manifest.json`` says, in the order it says it."""

    compbench_version: str
    created_at: str
    dataset: DatasetRef
    spec: Mapping[str, Any]  # compbench.run.spec.RunSpec.manifest(); RunSpec.from_manifest reads it back
    strategies: tuple[StrategyRecord, ...]
    errors: tuple[Mapping[str, str], ...] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    method_limits: tuple[str, ...] = ()
    format_version: int = FORMAT_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": self.format_version,
            "compbench_version": self.compbench_version,
            "created_at": self.created_at,
            "dataset": {"path": self.dataset.path, "fingerprint": self.dataset.fingerprint,
                        "transcripts": self.dataset.transcripts},
            "spec": dict(self.spec),
            "strategies": [{"label": s.label, "name": s.name, "source": s.source, "params": dict(s.params)}
                           for s in self.strategies],
            "errors": [dict(e) for e in self.errors],
            "environment": dict(self.environment),
            "method_limits": list(self.method_limits),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = MANIFEST) -> Manifest:
        """Read a manifest of any version up to this one; anything else fails in one line naming ``where``."""
        d = upgrade(d, where)
        try:
            data = d["dataset"]
            return cls(
                compbench_version=str(d["compbench_version"]), created_at=str(d.get("created_at", "")),
                dataset=DatasetRef(str(data["path"]), str(data["fingerprint"]), int(data["transcripts"])),
                spec=dict(d["spec"]),
                strategies=tuple(StrategyRecord(str(s["label"]), str(s["name"]), str(s.get("source", "")),
                                                dict(s.get("params", {}))) for s in d["strategies"]),
                errors=tuple(dict(e) for e in d.get("errors", ())), environment=dict(d.get("environment", {})),
                method_limits=tuple(str(x) for x in d.get("method_limits", ())),
                format_version=int(d["format_version"]))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            what = f"no {e}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
            raise UsageError(f"{where}: not a readable run manifest ({what})") from None

    @classmethod
    def load(cls, path: Path) -> Manifest:
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise UsageError(f"{path}: not a readable run manifest ({type(e).__name__}: {e})") from None
        if not isinstance(d, dict):
            raise UsageError(f"{path}: not a readable run manifest (a JSON object)")
        return cls.from_json(d, str(path))


def upgrade(d: Mapping[str, Any], where: str = MANIFEST) -> dict[str, Any]:
    """``d`` brought to :data:`FORMAT_VERSION`; a version this compbench does not know is refused."""
    version = d.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UsageError(f"{where}: no run format_version this compbench reads (found {version!r}; "
                         f"it reads 1 to {FORMAT_VERSION})")
    if version > FORMAT_VERSION:
        raise UsageError(f"{where}: run format_version {version} is newer than this compbench reads "
                         f"({FORMAT_VERSION}); upgrade compbench to read it")
    out = dict(d)
    while out["format_version"] < FORMAT_VERSION:
        out = UPGRADES[out["format_version"]](out)
    return out

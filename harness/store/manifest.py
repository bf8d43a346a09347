"""``compbench.store.manifest`` — A run's manifest, typed and versioned: what ``manifest.json`` holds, and how an older
one is read.

``format_version`` says which layout a run directory has. A reader accepts every version up to
:data:`FORMAT_VERSION`, bringing an older run up to date one named step at a time (``UPGRADES[n]`` turns
version n into n + 1, as asv's ``update_to_N`` do): the manifest's spec gains the options added since, with
the value the old run used, and its tables the columns added since, with the value their absence meant
(:func:`upgrade_table`), so no reader patches a missing key or column itself. A newer version is refused in
one line: this compbench cannot know what it means.

Versions:

1. The first layout. An empty table was written with a single ``transcript_id`` column; a run from before
   token corrections has no ``spec.token_correction`` (it counted without one).
2. Every table is written with its declared schema (:mod:`compbench.store.tables`), empty ones included; the spec
   always names its token correction. Options and columns were added while runs still said version 2, so a
   version 2 run may lack any of them.
3. The spec names every option (its cache lifetime, price model, whether empty sessions were replayed, its
   settings sweep) and every table has every column declared when version 3 began.
4. The dataset's hash is named ``replayed_hash`` (was ``fingerprint``): it hashes the content hashes of the
   transcripts the run replayed, in run order, which a dataset's ``fingerprint`` (the sha256 of its transcripts'
   JSON, :func:`compbench.data.dataset.fingerprint_of`) never equals; one name for two hashes that cannot be
   compared invited comparing them. The results column that marks the settings sweep's rows is named ``swept``
   (was ``settings``, also the name of the spec's list of swept configurations and of a tool's settings). A
   strategy's citation of what it reproduces is named ``upstream`` (was ``source``, which names a transcript's
   recording tool everywhere else).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.errors import UsageError

FORMAT_VERSION = 4
MANIFEST = "manifest.json"

Upgrader = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Upgrade:
    """One step, version ``to - 1`` to ``to``: what it does (``name``), how the manifest's spec changes, and per
    table the columns that version added (with the value an older run meant by their absence; None: the run
    did not measure it) and the ones it dropped."""

    to: int
    name: str
    spec: Upgrader
    added: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    dropped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    manifest: Upgrader | None = None  # how the rest of the manifest changes (None: only its spec)
    renamed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # per table: old column -> new


def spec_names_token_correction(spec: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: the spec names the token correction it counted with (none before corrections)."""
    return {"token_correction": "none", **spec}


def spec_names_every_option(spec: dict[str, Any]) -> dict[str, Any]:
    """2 -> 3: the options added while runs said version 2, at the value a run from before each one used: a
    cache that never expired, prices at the default model, empty sessions replayed, no settings sweep."""
    from compbench.measure.pricing import DEFAULT_PRICE_MODEL

    return {"cache_ttl": "none", "price_model": DEFAULT_PRICE_MODEL, "keep_empty": True, "settings": [], **spec}


# The columns added to the declared tables while runs said version 2 (compbench.store.tables): each with the
# value a run without it meant; the rest are figures such a run did not measure (None).
_RESULTS_SINCE_2: dict[str, Any] = {
    "preset": "", "preset_source": "", "settings": "", "recorded_inferred": 0, **dict.fromkeys((
        "model", "tool_version", "window_known", "window_calibrated", "auto_compactions", "manual_compactions",
        "unchecked_compactions", "trigger_checked", "trigger_within", "trigger_early", "trigger_late",
        "trigger_within_table", "overhead_rate", "overhead_first_error", "overhead_error", "overhead_p90",
        "overhead_flag", "price_model", "price_model_source", "cache_ttl", "cache_ttl_source", "reacquisitions",
        "reacquired_content_tokens", "reacquired_content_tokens_soon", "reacquired_tokens",
        "reacquired_output_tokens", "reacquired_cost_usd", "effective_savings", "effective_cost_savings",
        "facts_conventional", "needs_soon", "needs_later", "needs_present_soon", "needs_present_later",
        "needs_reacquired_real", "agent_type"))}

def spec_unchanged(spec: dict[str, Any]) -> dict[str, Any]:
    """A step that leaves the spec as it was."""
    return spec


def names_told_apart(manifest: dict[str, Any]) -> dict[str, Any]:
    """3 -> 4: ``dataset.fingerprint`` becomes ``dataset.replayed_hash`` and each strategy's ``source`` its
    ``upstream`` (the same values: what they always were)."""
    out = dict(manifest)
    data = out.get("dataset")
    if isinstance(data, Mapping) and "fingerprint" in data:
        out["dataset"] = {("replayed_hash" if k == "fingerprint" else k): v for k, v in data.items()}
    strategies = out.get("strategies")
    if isinstance(strategies, list):
        out["strategies"] = [{("upstream" if k == "source" else k): v for k, v in s.items()}
                             if isinstance(s, Mapping) else s for s in strategies]
    return out


UPGRADES: dict[int, Upgrade] = {
    1: Upgrade(2, "spec names its token correction", spec_names_token_correction),
    2: Upgrade(3, "spec names every option; tables have every column", spec_names_every_option,
               added={"results": _RESULTS_SINCE_2,
                      "compactions": {"recorded_next_input": -1, "recorded_lacks": ""}},  # -1, "": none known
               dropped={"results": ("refetch_debt_tokens",)}),
    3: Upgrade(4, "the dataset's hash is named replayed_hash, a strategy's citation upstream, the sweep's mark swept",
               spec_unchanged, manifest=names_told_apart, renamed={"results": {"settings": "swept"}}),
}


@dataclass(frozen=True)
class DatasetRef:
    """The dataset a run replayed: where it was, the hash of the replayed transcripts' content hashes in run
    order (not the dataset's ``fingerprint``: a run may replay a selection), how many."""

    path: str
    replayed_hash: str
    transcripts: int


@dataclass(frozen=True)
class StrategyRecord:
    """A configured strategy of the run: its label (the spec string), name, what it reproduces and every
    parameter."""

    label: str
    name: str
    upstream: str
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
    written_as: int = FORMAT_VERSION  # the version the run was written at (read older, it was upgraded)

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": self.format_version,
            "compbench_version": self.compbench_version,
            "created_at": self.created_at,
            "dataset": {"path": self.dataset.path, "replayed_hash": self.dataset.replayed_hash,
                        "transcripts": self.dataset.transcripts},
            "spec": dict(self.spec),
            "strategies": [{"label": s.label, "name": s.name, "upstream": s.upstream, "params": dict(s.params)}
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
        written = version_of(d, where)
        d = upgrade(d, where)
        try:
            data = d["dataset"]
            return cls(
                compbench_version=str(d["compbench_version"]), created_at=str(d.get("created_at", "")),
                dataset=DatasetRef(str(data["path"]), str(data["replayed_hash"]), int(data["transcripts"])),
                spec=dict(d["spec"]),
                strategies=tuple(StrategyRecord(str(s["label"]), str(s["name"]), str(s.get("upstream", "")),
                                                dict(s.get("params", {}))) for s in d["strategies"]),
                errors=tuple(dict(e) for e in d.get("errors", ())), environment=dict(d.get("environment", {})),
                method_limits=tuple(str(x) for x in d.get("method_limits", ())),
                format_version=int(d["format_version"]), written_as=written)
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


def version_of(d: Mapping[str, Any], where: str = MANIFEST) -> int:
    """The run format version ``d`` says, if this compbench reads it; else one line naming ``where``."""
    version = d.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UsageError(f"{where}: no run format_version this compbench reads (found {version!r}; "
                         f"it reads 1 to {FORMAT_VERSION})")
    if version > FORMAT_VERSION:
        raise UsageError(f"{where}: run format_version {version} is newer than this compbench reads "
                         f"({FORMAT_VERSION}); upgrade compbench to read it")
    return version


def upgrade(d: Mapping[str, Any], where: str = MANIFEST) -> dict[str, Any]:
    """``d`` brought to :data:`FORMAT_VERSION`; a version this compbench does not know is refused."""
    version = version_of(d, where)
    if version == FORMAT_VERSION:
        return dict(d)
    out = dict(d)
    for v in range(version, FORMAT_VERSION):
        step = UPGRADES[v].manifest
        if step is not None:
            out = step(out)
    return {**out, "spec": upgrade_spec(dict(d.get("spec") or {}), version), "format_version": FORMAT_VERSION}


def upgrade_spec(spec: Mapping[str, Any], version: int) -> dict[str, Any]:
    """A spec written at run format ``version`` (a manifest's, an interrupted run's identity) at this one."""
    out = dict(spec)
    for v in range(version, FORMAT_VERSION):
        out = UPGRADES[v].spec(out)
    return out


def upgrade_table(name: str, frame: Any, version: int) -> Any:
    """The pandas ``frame`` of table ``name``, written at run format ``version``, at this one: the columns each
    later version added (with the value their absence meant, or null), renamed as it renamed them and without
    those it dropped; the declared order and types are :mod:`compbench.store.tables`'."""
    from compbench.store.tables import COLUMNS

    for v in range(version, FORMAT_VERSION):
        step = UPGRADES[v]
        frame = frame.drop(columns=[c for c in step.dropped.get(name, ()) if c in frame.columns])
        frame = frame.rename(columns=dict(step.renamed.get(name, {})))
        for column, value in step.added.get(name, {}).items():
            if column not in frame.columns:
                frame[column] = value
    if version < FORMAT_VERSION:  # in the declared order, anything else (a column dropped later) after
        declared = [c for c, _ in COLUMNS[name]]
        frame = frame[[c for c in declared if c in frame.columns] + [c for c in frame.columns if c not in declared]]
    return frame

"""``compbench.run.cache`` — The results cache: a transcript's rows under a run's configurations, kept under exactly
what determines them, so a re-run replays only what changed.

A transcript's outcome (its rows in every table, under every configuration of the run) is determined by its
content, the configuration and the versions of the engine and of the strategies (DESIGN: "cache it under
exactly that key"). The key is made of:

- the transcript: a hash of the normalized :class:`~compbench.data.transcript.Transcript` (not its path, not
  its dataset: a log imported again, into another dataset, hits);
- the configuration: the :class:`~compbench.run.spec.RunSpec` fields that change a replay (not the selection,
  which only picks transcripts), each strategy with its resolved parameters and its declared ``version``
  (:func:`compbench.sdk.registry.strategy`), the gold facts by content;
- the engine: compbench's version and a digest of the code and data files every row is computed with
  (:func:`engine_version`; the importers are left out: what they make is the transcript's hash).

One input is the dataset's rather than the transcript's: the boilerplate templates (lines most transcripts of a
source share, :mod:`compbench.data.boilerplate`). One more log can move a line across the share, and a key over
all of them would miss every transcript of that source. The replay's reads of them are recorded instead
(:class:`TemplateReads`: which fact anchors were looked up, and what was found), stored with the rows, and an
entry is used only where today's templates give the same answers.

Where: ``--results-cache DIR``, else ``COMPBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/compbench``, else
``~/.cache/compbench`` (entries under ``results/``): never beside the user's logs. How much: after a run that
wrote entries, the least recently used are removed until the results take at most ``COMPBENCH_CACHE_MAX``
(default 2G; ``0`` keeps nothing). Only runs with a deterministic summarizer are cached: a model's answers
(and its failures) are not the content's.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from compbench.data.boilerplate import Templates
from compbench.errors import UsageError
from compbench.sdk.kinds import REFERENCE

if TYPE_CHECKING:
    from compbench.run.spec import RunSpec
    from compbench.store.columns import Table

MAGIC = b"compbench-results 1\n"
DEFAULT_MAX = 2 * 2**30
PRUNED_TO = 0.8  # of the cap: a prune leaves room, so the next run does not prune again at once
# the code and data a transcript's rows are computed with: the packages below the decisions, less what makes no row
# (the importers, whose output is hashed as the transcript; the run's scheduling, writing, stopping and estimate; the
# store's directory, manifest and reader). A module added to them counts until it is named here.
ENGINE_PACKAGES = ("compbench.data", "compbench.sdk", "compbench.measure", "compbench.summarizers",
                   "compbench.replay", "compbench.store", "compbench.run")
ENGINE_MODULES = ("compbench", "compbench.errors", "compbench.memo", "compbench.plugins", "compbench.config")
NOT_ENGINE = ("data/formats/", "data/importing.py", "data/reading.py", "data/hf.py",
              "run/derived.py", "run/estimate.py", "run/executors.py", "run/judge.py", "run/listing.py", "run/stop.py",
              "run/write.py",
              "store/manifest.py", "store/reader.py", "store/rundir.py")
LIBRARIES = ("tiktoken", "litellm")  # their tables count tokens and price them


def library_versions(libraries: tuple[str, ...]) -> str:
    """One line per library, its installed version or "absent": what a digest of derived results must change
    with besides compbench's own files."""
    from importlib.metadata import PackageNotFoundError, version

    lines = []
    for lib in libraries:
        try:
            lines.append(f"{lib} {version(lib)}\n")
        except PackageNotFoundError:
            lines.append(f"{lib} absent\n")
    return "".join(lines)


def drop_least_recent(d: Path, keep: int) -> None:
    """Remove the ``*.json`` entries of ``d`` past the ``keep`` most recently used (by mtime, then name); an entry
    another process removed meanwhile is skipped."""
    entries = []
    for p in d.glob("*.json"):
        try:
            entries.append((p.stat().st_mtime, p.name, p))
        except OSError:
            continue
    for _, _, p in sorted(entries)[:max(0, len(entries) - keep)]:
        p.unlink(missing_ok=True)


def cache_root(named: str | Path | None = None) -> Path:
    """The cache directory: the one named, else ``COMPBENCH_CACHE_DIR``, else XDG's, else ``~/.cache/compbench``."""
    if named:
        return Path(named).expanduser()
    env = os.environ.get("COMPBENCH_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"  # XDG: a relative one is ignored
    return base / "compbench"


def size_cap() -> int:
    """The results' size cap in bytes (``COMPBENCH_CACHE_MAX``: ``500M``, ``2G``, a number of bytes)."""
    raw = os.environ.get("COMPBENCH_CACHE_MAX", "").strip()
    if not raw:
        return DEFAULT_MAX
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    scale = units.get(raw[-1].upper(), 1)
    try:
        value = float(raw[:-1] if scale > 1 else raw)
    except ValueError:
        raise UsageError(f"COMPBENCH_CACHE_MAX={raw!r}: expected a size such as 500M, 2G or a number of bytes"
                         ) from None
    if value < 0:
        raise UsageError(f"COMPBENCH_CACHE_MAX={raw!r} is negative (expected a size such as 500M or 2G)")
    return int(value * scale)


def _files(package: str) -> Iterator[tuple[str, Path]]:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return
    for base in map(Path, spec.submodule_search_locations):
        for p in sorted(base.rglob("*")):
            rel = f"{package.split('.')[-1]}/{p.relative_to(base).as_posix()}"
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc" and not rel.startswith(NOT_ENGINE):
                yield rel, p


@cache
def engine_version() -> str:
    """compbench's version, the libraries' and a digest of every file the rows are computed with: a change to
    the engine's code or data is a new version, whether or not anyone remembered to say so."""
    import importlib.util
    import platform

    from compbench import __version__

    h = hashlib.sha256(f"compbench {__version__}; python {platform.python_version()}\n".encode())
    h.update(library_versions(LIBRARIES).encode())
    files = [(m, Path(s.origin)) for m in ENGINE_MODULES
             if (s := importlib.util.find_spec(m)) is not None and s.origin]
    for rel, path in [*files, *(f for pkg in ENGINE_PACKAGES for f in _files(pkg))]:
        h.update(f"{rel}\n".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def strategy_versions(labels: tuple[str, ...]) -> dict[str, str]:
    """The declared version of every strategy the configurations ``labels`` replay (and of ``none``, the
    reference); a composition's stages change with the preset each log runs at, so with one configured, every
    registered strategy's."""
    from compbench.sdk.registry import get, names, resolve

    configured = [resolve(x) for x in labels]
    if any(c.info.resolver is not None for c in configured):
        used = set(names())
    else:
        used = {c.name for c in configured} | {REFERENCE}
    return {n: get(n).version for n in sorted(used)}


def config_key(spec: RunSpec) -> str:
    """The hash of everything in ``spec`` that changes a transcript's rows (see this module)."""
    from compbench.sdk.registry import resolve

    d = dict(spec.manifest())
    for name in ("select", "keep_empty", "boilerplate", "gold"):
        d.pop(name, None)
    d["gold"] = hashlib.sha256(Path(spec.gold).read_bytes()).hexdigest() if spec.gold else None
    d["configurations"] = [[c.label, c.name, c.param_dict(), c.auto, dict(c.overrides)]
                           for c in (resolve(x) for x in spec.strategies)]
    d["versions"] = strategy_versions(spec.strategies)
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=repr).encode()).hexdigest()


def transcript_hash(payload: str) -> str:
    """The hash of a transcript's normalized JSON (:func:`compbench.data.transcript.to_json`)."""
    return hashlib.sha256(payload.encode()).hexdigest()


class _Probe:
    """A source's template text as :func:`compbench.data.boilerplate.boilerplate_keys` reads it: every substring
    test is recorded. It is no ``str`` on purpose: a reading this does not record (a regex, a slice) fails at
    once instead of leaving a dependency out of the key. It answers as the text would, but it is never empty:
    an empty text's reader that stops there ("no templates") would record nothing, and a source whose templates
    appear with one more log would then miss for every transcript; its anchors are tested, and found in nothing."""

    __slots__ = ("_found", "_text")

    def __init__(self, text: str, found: dict[str, bool]) -> None:
        self._text, self._found = text, found

    def __contains__(self, item: object) -> bool:
        hit = _found(str(item), self._text)
        self._found[str(item)] = hit
        return hit

    def __bool__(self) -> bool:
        return True


def _found(anchor: str, text: str) -> bool:
    """``anchor in text``, as a reader that stops on an empty text finds it: nowhere."""
    return bool(text) and anchor in text


Reads = dict[str, dict[str, bool]]  # source -> {anchor looked up in its template text: found}


@dataclass(frozen=True)
class TemplateReads(Templates):
    """The dataset's templates, recording what one replay read of them (:attr:`reads`, cleared per transcript)."""

    reads: Reads = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, t: Templates) -> TemplateReads:
        return cls(t.lines, t.transcripts)

    def text(self, source: str) -> str:
        return cast(str, _Probe(super().text(source), self.reads.setdefault(source, {})))

    def taken(self) -> Reads:
        """What the last replay read, and a clean slate for the next."""
        out = {k: dict(v) for k, v in self.reads.items()}
        self.reads.clear()
        return out


def same_reads(reads: Mapping[str, Mapping[str, bool]], templates: Templates) -> bool:
    """Whether ``templates`` answer every read a cached replay made as its own templates did."""
    for source, found in reads.items():
        text = templates.text(source)
        if any(_found(a, text) != hit for a, hit in found.items()):
            return False
    return True


def _variant(reads: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(reads, sort_keys=True).encode()).hexdigest()[:16]


class ResultsCache:
    """The entries under ``root/results``: ``get`` a transcript's rows, ``put`` them, ``prune`` to the cap.
    ``read=False`` (``--rebuild-cache``) writes fresh entries and reads none."""

    def __init__(self, root: Path, *, read: bool = True) -> None:
        self.root = Path(root)
        self.results = self.root / "results"
        self.read = read
        self.hits = self.misses = self.written = 0

    def key(self, transcript: str, config: str) -> str:
        return hashlib.sha256(f"{transcript} {config} {engine_version()}".encode()).hexdigest()

    def _dir(self, key: str) -> Path:
        return self.results / key[:2] / key

    def find(self, key: str, templates: Templates) -> Path | None:
        """The entry of ``key`` whose template reads today's ``templates`` answer alike, whole (its checksum
        holds: a damaged one is a miss, and replaced); None on a miss. Its use is recorded for the prune."""
        d = self._dir(key)
        if not self.read or not d.is_dir():
            return None
        for p in sorted(d.glob("*.bin")):
            header = self._check(p)
            if header is not None and same_reads(header["reads"], templates):
                try:
                    os.utime(p)
                except OSError:
                    continue
                return p
        return None

    @staticmethod
    def _split(data: bytes) -> tuple[dict[str, Any], bytes]:
        if not data.startswith(MAGIC):
            raise ValueError("not an entry")
        at = len(MAGIC)
        (n,) = struct.unpack(">I", data[at:at + 4])
        header = json.loads(data[at + 4:at + 4 + n])
        if not isinstance(header, dict) or not isinstance(header.get("reads"), dict):
            raise ValueError("no reads")
        return header, data[at + 4 + n:]

    def _check(self, p: Path) -> dict[str, Any] | None:
        try:
            header, body = self._split(p.read_bytes())
            if hashlib.sha256(body).hexdigest() != header.get("sha256"):
                raise ValueError("damaged")
        except (OSError, ValueError, struct.error):
            p.unlink(missing_ok=True)
            return None
        return header

    def load(self, p: Path) -> dict[str, Table] | None:
        """The rows of entry ``p``; None if it cannot be read (removed since it was found)."""
        import pyarrow as pa

        try:
            header, body = self._split(p.read_bytes())
            rows = pickle.loads(pa.decompress(body, int(header["size"]), codec="zstd", asbytes=True))
        except (OSError, ValueError, KeyError, struct.error, pickle.UnpicklingError, EOFError, AttributeError,
                ImportError):
            return None
        self.hits += 1
        return cast(dict[str, Any], rows)

    def put(self, key: str, rows: Mapping[str, Table], reads: Reads) -> None:
        """Store ``rows`` under ``key`` and their template ``reads`` (written whole, then renamed into place)."""
        import pyarrow as pa

        body = pickle.dumps(dict(rows), protocol=pickle.HIGHEST_PROTOCOL)
        packed = pa.compress(body, codec="zstd", asbytes=True)
        header = json.dumps({"reads": reads, "size": len(body), "sha256": hashlib.sha256(packed).hexdigest()},
                            sort_keys=True).encode()
        d = self._dir(key)
        dest = d / f"{_variant(reads)}.bin"
        try:
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".{dest.name}.{os.getpid()}.tmp"
            tmp.write_bytes(MAGIC + struct.pack(">I", len(header)) + header + packed)
            tmp.replace(dest)
        except OSError:
            return  # a full or read-only disk costs the next run its cache, not this run its results
        self.written += 1

    def entries(self) -> list[tuple[float, int, Path]]:
        """Every entry: (last use, bytes, path)."""
        out = []
        for p in self.results.glob("*/*/*.bin") if self.results.is_dir() else ():
            try:
                st = p.stat()
            except OSError:
                continue
            out.append((st.st_mtime, st.st_size, p))
        return out

    def prune(self, cap: int | None = None) -> tuple[int, int]:
        """Remove the least recently used entries until the results take at most ``cap`` bytes (then
        :data:`PRUNED_TO` of it); returns (entries removed, bytes kept)."""
        cap = size_cap() if cap is None else cap
        entries = sorted(self.entries(), key=lambda e: (e[0], str(e[2])))
        total = sum(size for _, size, _ in entries)
        if total <= cap:
            return 0, total
        removed = 0
        goal = int(cap * PRUNED_TO)
        for _, size, p in entries:
            if total <= goal:
                break
            p.unlink(missing_ok=True)
            try:
                p.parent.rmdir()  # the key's folder, once its last variant is gone
            except OSError:
                pass
            total -= size
            removed += 1
        return removed, total

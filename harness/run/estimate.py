"""``compbench.run.estimate`` — What a run will cost, said before it is paid, and how to make it cost less.

A replay's time grows with the transcript's size and with the configurations replayed on it. The model is
``seconds = size × (PER_CHAR + PER_CHAR_CONFIG × configurations) / speed``: ``size`` the characters of the
normalized transcript (known once it is read, without tokenizing it), the two constants fitted on real logs of
twelve tools on this project's machines (2 cores), ``speed`` this machine's against those, measured by every run
that replays (:class:`Meter`) and kept in the cache directory (``throughput.json``). What the results cache already
holds costs its reading: :data:`READ_PER_CHAR` per character, the cached rows at :data:`LOAD_PER_BYTE`.

:func:`survey` reads the transcripts once (feeding the boilerplate scan a run over raw logs needs anyway);
:func:`estimate` prices them under a spec; ``compbench run`` says it in words, with the options that shorten it.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compbench.data.boilerplate import Scanner
    from compbench.run.cache import ResultsCache
    from compbench.run.spec import RunSpec

# CPU seconds on this project's machines (2 cores), fitted on ../shared's 56 real logs of 9 tools (41 M characters):
# every default configuration (35 a log) cost 250 s, `none` alone 3.0 times tokenizing them once (18 s)
PER_CHAR = 4.0e-7
PER_CHAR_CONFIG = 1.5e-7
READ_PER_CHAR = 6.5e-8  # reading a transcript from a dataset and hashing it (2.6 s for the 41 M characters)
RAW_READ_PER_CHAR = 4.5e-7  # importing it from the tool's own files instead (18 s)
LOAD_PER_BYTE = 2.0e-8  # reading its cached rows
SAY_ABOVE = 60.0  # seconds: a shorter run starts without a word
THROUGHPUT = "throughput.json"


@functools.lru_cache(maxsize=64)
def configurations(strategies: tuple[str, ...], settings: tuple[str, ...], source: str) -> int:
    """How many of the configurations replay a transcript of ``source`` (a settings configuration replays only
    its tool's logs, as :class:`compbench.run.engine.Replayer` does)."""
    from compbench.sdk.registry import resolve

    scoped = [tool.formats for tool in (resolve(label).info.tool for label in settings) if tool is not None]
    return len(strategies) - len(scoped) + sum(1 for formats in scoped if source in formats)


def units(spec: RunSpec, source: str, size: int) -> float:
    """The model's work units of replaying a transcript of ``source`` (``size`` characters) under ``spec``:
    its CPU seconds on a machine of speed 1."""
    return size * (PER_CHAR + PER_CHAR_CONFIG * configurations(spec.strategies, spec.settings, source))


@dataclass
class Meter:
    """What the replays of a run cost: work units (:func:`units`) and CPU seconds."""

    units: float = 0.0
    seconds: float = 0.0
    replays: int = 0

    def add(self, units: float, seconds: float) -> None:
        self.units += units
        self.seconds += seconds
        self.replays += 1


def speed(root: Path) -> float:
    """This machine's speed against the model's (units per CPU second), as the last runs measured it; 1 unmeasured."""
    try:
        value = json.loads((root / THROUGHPUT).read_text(encoding="utf-8")).get("speed", 1.0)
        return float(value) if isinstance(value, int | float) and value > 0 else 1.0
    except (OSError, ValueError, AttributeError):
        return 1.0


MIN_MEASURED = 2.0  # CPU seconds: below, a run's measure is noise
WEIGHT = 0.5  # of a new measure against what was kept


def record_speed(root: Path, meter: Meter) -> None:
    """Fold a run's measure into the kept speed (a run too short to measure changes nothing)."""
    if meter.seconds < MIN_MEASURED or meter.units <= 0:
        return
    measured = meter.units / meter.seconds
    old = speed(root) if (root / THROUGHPUT).exists() else measured
    new = (1 - WEIGHT) * old + WEIGHT * measured
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".{THROUGHPUT}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"speed": round(new, 4)}) + "\n", encoding="utf-8")
        tmp.replace(root / THROUGHPUT)
    except OSError:
        pass


@dataclass(frozen=True)
class Surveyed:
    """What the estimate needs of one transcript: its id, source, size in characters and content hash."""

    id: str
    source: str
    size: int
    digest: str


@dataclass
class Survey:
    """The transcripts a run will replay, read once before it (and, for raw logs, the boilerplate scan)."""

    items: list[Surveyed] = field(default_factory=list)
    scanner: Scanner | None = None


def survey(transcripts: Iterable[Any], keep: Callable[[Any], bool], scan: bool,
           skip: Sequence[str] = (), tick: Callable[[], None] | None = None) -> Survey:
    """One pass over ``transcripts`` (or references to them, :class:`compbench.run.listing.Ref`, priced as their
    listing keeps them): those ``keep`` accepts, after the ``skip`` already done (a resumed run's), and every one
    into the boilerplate scan when ``scan``."""
    from compbench.data.boilerplate import Scanner
    from compbench.run.listing import hashed, load

    out = Survey(scanner=Scanner() if scan else None)
    done = set(skip)
    for t in transcripts:
        if out.scanner is not None:
            out.scanner.add(load(t))
        if t.id in done or not keep(t):
            continue
        digest, size = hashed(t)
        out.items.append(Surveyed(t.id, t.source, size, digest))
        if tick:
            tick()
    return out


@dataclass(frozen=True)
class Estimate:
    """A run's cost before it starts: the replays (CPU seconds, and wall seconds with the workers) and what the
    results cache holds; per source, the replays' share (to say what ``--source`` would save)."""

    replays: int
    replay_seconds: float
    wall_seconds: float
    cached: int
    cached_seconds: float
    configurations: int
    settings: int
    by_source: dict[str, tuple[int, float]]  # source -> (transcripts, replay seconds)
    workers: int
    busy: float = 1.0  # how much longer the wall clock runs than the CPU, for the other work on the machine

    @property
    def seconds(self) -> float:
        return self.wall_seconds + self.cached_seconds


def estimate(spec: RunSpec, items: Sequence[Surveyed], workers: int = 1, cache: ResultsCache | None = None,
             root: Path | None = None, raw: bool = False, load: float = 0.0, listed: bool = False) -> Estimate:
    """The cost of replaying ``items`` under ``spec`` with ``workers`` processes, those ``cache`` holds read from
    it; at the speed measured on this machine (kept under ``root``); ``raw``: read from the tools' own files;
    ``load``: the other processes that want a core (the load average): each worker gets its share; ``listed``: a
    dataset's transcripts by reference (:mod:`compbench.run.listing`): one the cache holds is never read."""
    from compbench.data.boilerplate import Templates
    from compbench.run.cache import config_key

    rate = speed(root) if root is not None else 1.0
    templates = Templates.from_json(spec.boilerplate)
    config = config_key(spec) if cache is not None else ""
    replays: list[float] = []
    by_source: dict[str, tuple[int, float]] = {}
    cached = 0
    cached_seconds = 0.0
    for it in items:
        entry = cache.find(cache.key(it.digest, config), templates) if cache is not None else None
        read = it.size * (RAW_READ_PER_CHAR if raw else READ_PER_CHAR)
        if entry is not None:
            cached += 1
            cached_seconds += (0.0 if listed else read) + _size(entry) * LOAD_PER_BYTE
            continue
        secs = units(spec, it.source, it.size) / rate + read
        replays.append(secs)
        n, s = by_source.get(it.source, (0, 0.0))
        by_source[it.source] = (n + 1, s + secs)
    total = sum(replays)
    cpus = os.cpu_count() or 1
    parallel = max(1, min(workers, cpus))
    busy = max(1.0, (load + parallel) / cpus)  # a core shared with the others' processes
    wall = max(total / parallel, max(replays, default=0.0)) * busy
    return Estimate(len(replays), total, wall, cached, cached_seconds * busy, len(spec.strategies),
                    len(spec.settings), by_source, workers, busy)


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def said(e: Estimate) -> bool:
    """Whether a run costs enough to say so first."""
    return e.seconds > SAY_ABOVE


def as_json(e: Estimate) -> dict[str, Any]:
    return {"replays": e.replays, "wall_seconds": round(e.wall_seconds, 1), "cached": e.cached,
            "cached_seconds": round(e.cached_seconds, 1)}

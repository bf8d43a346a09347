"""``compbench.run.write`` — A run from start to end: every transcript replayed through the executor named, its
rows committed to the run directory batch by batch (:class:`compbench.store.rundir.RunDir`), the manifest
written last. ``run --resume`` reads back what an interrupted run was started with (:func:`recorded`)."""

from __future__ import annotations

import hashlib
import itertools
import json
import platform
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compbench import __version__
from compbench.data.transcript import Transcript, to_json
from compbench.errors import CompbenchError, UsageError
from compbench.run.engine import Outcome, Replayed, Replayer
from compbench.run.spec import RunSpec
from compbench.run.stop import Interrupted, on_signals, until_stopped
from compbench.store import rundir
from compbench.store.columns import Table
from compbench.store.manifest import DatasetRef, Manifest, StrategyRecord
from compbench.store.rundir import RUN_FORMAT_VERSION, RunDir, interrupted
from compbench.store.tables import TABLES
from compbench.strategies import resolve
from compbench.summarizers import describe_summarizer

if TYPE_CHECKING:
    from compbench.run.cache import ResultsCache
    from compbench.run.estimate import Meter


def recorded(out: Path) -> tuple[RunSpec, str, int]:
    """What an interrupted run was started with: its spec, its dataset, and how many transcripts it has
    committed (``run --resume`` takes its options from here; the run's own words if it cannot)."""
    identity, done = interrupted(out)
    return RunSpec.from_manifest(identity["spec"]), str(identity["dataset"]), done


def _skip_done(transcripts: Iterable[Transcript], done: list[str]) -> Iterator[Transcript]:
    it = iter(transcripts)
    for expected in done:
        t = next(it, None)
        if t is None or t.id != expected:
            raise UsageError(f"cannot resume: the dataset changed since the run started (expected transcript "
                             f"{expected!r}, found {t.id if t else 'the end of the dataset'!r})")
    yield from it


def selected(spec: RunSpec, transcripts: Iterable[Transcript], dataset: str = "the dataset") -> Iterable[Transcript]:
    """The transcripts ``spec.select`` picks (``--source``, ``--where``: :mod:`compbench.data.select`), by what each
    records (:func:`fields`); every one without a filter."""
    if not spec.select:
        return transcripts
    from compbench.data.select import parse

    return parse(spec.select).filter(transcripts, fields, dataset)


def fields(t: Transcript) -> dict[str, Any]:
    """What a filter of the transcripts a run replays reads of one (:func:`compbench.run.engine.units`)."""
    from compbench.run.engine import units

    return {"transcript_id": t.id, "source": t.source, **units(t), "steps": t.steps}


def summarizer_limit(summarizer: str) -> str:
    """The method limit of the run's own summarizer, in words (a calibrated run is not an extractive one)."""
    return f"Summaries by {describe_summarizer(summarizer)}."
def replay_all(spec: RunSpec, transcripts: Iterable[Transcript], workers: int = 1,
               progress: Callable[[str], None] | None = None, executor: str = "local", concurrency: int = 1,
               ray_address: str | None = None, cache: ResultsCache | None = None, meter: Meter | None = None
               ) -> Iterator[tuple[str, str, Outcome]]:
    """Replay every transcript under every strategy; yields (transcript id, the hash of its content, its rows or
    an error string) in dataset order, through the executor named (:data:`compbench.run.executors.EXECUTORS`:
    local processes, threads, Ray, a plug-in's). With a ``cache`` (:mod:`compbench.run.cache`), the transcripts
    it holds are read from it and only the others replayed (and then stored); ``meter`` adds up what the replays
    cost (:mod:`compbench.run.estimate`)."""
    from compbench.data.boilerplate import Templates
    from compbench.run.cache import config_key, transcript_hash
    from compbench.run.estimate import units
    from compbench.run.executors import EXECUTORS, Job

    run = EXECUTORS.get(executor)
    config = config_key(spec) if cache is not None else ""
    templates = Templates.from_json(spec.boilerplate)
    # in dataset order, the transcripts read and not yet yielded: id, hash, cache key, size, the entry of a hit.
    # A hit keeps no transcript and no rows here (an executor reads ahead past any number of them)
    pending: deque[tuple[str, str, str, float, Path | None]] = deque()

    def read() -> Iterator[Transcript | None]:  # each transcript into pending; a miss, or None for a hit
        for t in transcripts:
            payload = to_json(t)
            digest = transcript_hash(payload)
            key = cache.key(digest, config) if cache is not None else ""
            entry = cache.find(key, templates) if cache is not None else None
            pending.append((t.id, digest, key, units(spec, t.source, len(payload)), entry))
            yield t if entry is None else None

    def hits() -> Iterator[tuple[str, str, Outcome]]:  # those ahead of the next replay
        while pending and pending[0][4] is not None:
            tid, digest, _, _, entry = pending.popleft()
            assert entry is not None and cache is not None
            rows = cache.load(entry)
            if progress:
                progress(tid)
            yield tid, digest, rows if rows is not None else (
                f"error: its cached rows could not be read ({entry}); run again to replay it")

    stream = read()
    first = None
    for first in stream:  # the cache's transcripts up to the first to replay: no executor started for them
        if first is not None:
            break
        yield from hits()
    if first is None:
        return
    Replayer(spec)  # validates the spec here, before any worker starts
    misses = (t for t in itertools.chain([first], stream) if t is not None)
    for t, out in run(Job(spec, misses, workers, concurrency, ray_address)):
        yield from hits()
        tid, digest, key, size, _ = pending.popleft()
        if tid != t.id:
            raise RuntimeError(f"executor {executor!r} returned transcript {t.id!r} where {tid!r} was next")
        if isinstance(out, Replayed):
            if meter is not None:
                meter.add(size, out.seconds)
            if cache is not None:
                cache.put(key, out, out.reads)
        if progress:
            progress(tid)
        yield tid, digest, out
    yield from hits()  # after the last replay (or a stop: never past a transcript not replayed)


def versions() -> dict[str, str]:
    """The versions of the libraries a run's numbers depend on (for its manifest)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("tiktoken", "litellm", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out


def write_run(out: Path, spec: RunSpec, dataset: str, transcripts: Iterable[Transcript], workers: int = 1,
              progress: Callable[[str], None] | None = None, force: bool = False,
              resume: bool = False, executor: str = "local", concurrency: int = 1,
              ray_address: str | None = None, cache: ResultsCache | None = None, meter: Meter | None = None,
              notify: Callable[[str], None] | None = None) -> Manifest:
    """Replay ``transcripts`` and write the run directory ``out``; returns the manifest. A crash or kill
    leaves ``OUT.partial`` for ``--resume``; SIGINT or SIGTERM (:mod:`compbench.run.stop`) finish the transcripts
    in hand, commit every one replayed and raise :class:`~compbench.run.stop.Interrupted` (``notify`` is told at
    once). ``cache``, ``meter``: :func:`replay_all`."""
    identity = {"spec": spec.manifest(), "dataset": dataset, "batch": rundir.BATCH,
                "format_version": RUN_FORMAT_VERSION}
    store = RunDir(Path(out), identity, force=force, resume=resume)
    with on_signals(notify) as stop:
        try:
            todo = until_stopped(_skip_done(selected(spec, transcripts, dataset), store.done), stop)
            batch: list[tuple[str, str, Outcome]] = []
            try:
                for item in replay_all(spec, todo, workers, progress, executor, concurrency, ray_address, cache,
                                       meter):
                    batch.append(item)
                    if len(batch) == rundir.BATCH:  # read at the call: tests set it
                        _commit(store, batch)
                        batch = []
            except KeyboardInterrupt:  # asked twice: what is finished is still kept
                _commit(store, batch)
                raise
            _commit(store, batch)
            if stop.signum is not None:
                raise Interrupted(stop.signum, len(store.done), str(out))
            if not store.committed:
                raise UsageError(f"no transcripts in {dataset}")
            return store.finalize(lambda committed: _manifest(spec, dataset, committed))
        except Interrupted:
            raise
        except CompbenchError:
            store.abandon()
            raise


def _commit(store: RunDir, batch: list[tuple[str, str, Outcome]]) -> None:
    """One batch of (id, hash, rows or error) into the run directory (nothing for an empty one)."""
    if not batch:
        return
    record: dict[str, Any] = {"ids": [], "hashes": [], "errors": []}
    rows = {k: Table() for k in TABLES}
    for tid, digest, result in batch:
        record["ids"].append(tid)
        record["hashes"].append(digest)
        if isinstance(result, str):
            record["errors"].append({"transcript_id": tid, "error": result})
            continue
        for k in TABLES:
            rows[k].merge(result[k])
    store.commit(record, rows)


def _manifest(spec: RunSpec, dataset: str, committed: list[dict[str, Any]]) -> Manifest:
    fingerprint = hashlib.sha256("".join(h for b in committed for h in b["hashes"]).encode()).hexdigest()
    return Manifest(
        format_version=RUN_FORMAT_VERSION, compbench_version=__version__,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),  # the one field that varies
        dataset=DatasetRef(dataset, fingerprint, sum(len(b["ids"]) for b in committed)),
        spec=json.loads(json.dumps(spec.manifest())),  # as it reads back
        strategies=tuple(StrategyRecord(c.label, c.name, c.info.source, c.param_dict())
                         for c in (resolve(s) for s in spec.strategies)),
        errors=tuple(e for b in committed for e in b["errors"]),
        environment={"python": platform.python_version(), **versions()},
        method_limits=("The replay assumes the agent would have acted the same after a compaction.",
                       summarizer_limit(spec.summarizer)))

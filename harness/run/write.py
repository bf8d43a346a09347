"""``compbench.run.write`` — A run from start to end: every transcript replayed through the executor named, its
rows committed to the run directory batch by batch (:class:`compbench.store.rundir.RunDir`), the manifest
written last. ``run --resume`` reads back what an interrupted run was started with (:func:`started_with`)."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import platform
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compbench import __version__
from compbench.errors import CompbenchError, UsageError
from compbench.run.engine import Outcome, Replayed, Replayer
from compbench.run.listing import Item, fields
from compbench.run.spec import RunSpec
from compbench.run.stop import Interrupted, Stop, on_signals, until_stopped
from compbench.sdk.kinds import WIDENED, WIDENED_IDS
from compbench.store import rundir
from compbench.store.columns import Table
from compbench.store.manifest import DatasetRef, Manifest, StrategyRecord, upgrade_spec, version_of
from compbench.store.rundir import RUN_FORMAT_VERSION, RunDir, interrupted, partial_of
from compbench.store.tables import TABLES
from compbench.strategies import resolve
from compbench.summarizers import describe_summarizer

if TYPE_CHECKING:
    from compbench.run.cache import ResultsCache
    from compbench.run.estimate import Meter


def started_with(out: Path) -> tuple[RunSpec, str, int]:
    """What an interrupted run was started with: its spec, its dataset, and how many transcripts it has
    committed (``run --resume`` takes its options from here; the run's own words if it cannot)."""
    identity, done = interrupted(out)
    spec = upgrade_spec(identity["spec"], version_of(identity, str(partial_of(out) / "spec.json")))
    return RunSpec.from_manifest(spec), str(identity["dataset"]), done


def _skip_done(transcripts: Iterable[Item], done: list[str]) -> Iterator[Item]:
    it = iter(transcripts)
    for expected in done:
        t = next(it, None)
        if t is None or t.id != expected:
            raise UsageError(f"cannot resume: the dataset changed since the run started (expected transcript "
                             f"{expected!r}, found {t.id if t else 'the end of the dataset'!r})")
    yield from it


def selected(spec: RunSpec, transcripts: Iterable[Item], dataset: str = "the dataset",
             said: Callable[[str], None] | None = None) -> Iterable[Item]:
    """The transcripts ``spec.select`` picks (``--source``, ``--where``: :mod:`compbench.data.select`), by what each
    records (:func:`fields`); every one without a filter. ``said`` is told, once the stream ends, each
    alternative of the filter that matched no transcript."""
    if not spec.select:
        return transcripts
    from compbench.data.select import parse

    return parse(spec.select).filter(transcripts, fields, dataset, said)


def summarizer_limit(summarizer: str) -> str:
    """The method limit of the run's own summarizer, in words (a calibrated run is not an extractive one)."""
    return f"Summaries by {describe_summarizer(summarizer)}."
def replay_all(spec: RunSpec, transcripts: Iterable[Item], workers: int = 1,
               progress: Callable[[str], None] | None = None, executor: str = "local", concurrency: int = 1,
               ray_address: str | None = None, cache: ResultsCache | None = None, meter: Meter | None = None
               ) -> Iterator[tuple[str, str, Outcome]]:
    """Replay every transcript (or reference to one, :class:`compbench.run.listing.Ref`: read only if replayed, by
    the worker that replays it) under every strategy; yields (transcript id, the hash of its content, its rows or
    an error string) in dataset order, through the executor named (:data:`compbench.run.executors.EXECUTORS`:
    local processes, threads, Ray, a plug-in's). With a ``cache`` (:mod:`compbench.run.cache`), the transcripts
    it holds are read from it and only the others replayed (and then stored); ``meter`` adds up what the replays
    cost (:mod:`compbench.run.estimate`)."""
    from compbench.data.boilerplate import Templates
    from compbench.run.cache import config_key
    from compbench.run.estimate import units
    from compbench.run.executors import EXECUTORS, Job
    from compbench.run.listing import hashed

    run = EXECUTORS.get(executor)
    config = config_key(spec) if cache is not None else ""
    templates = Templates.from_json(spec.boilerplate)
    # in dataset order, the transcripts read and not yet yielded: id, hash, cache key, size, the entry of a hit.
    # A hit keeps no transcript and no rows here (an executor reads ahead past any number of them)
    pending: deque[tuple[str, str, str, float, Path | None]] = deque()

    def read() -> Iterator[Item | None]:  # each transcript into pending; a miss, or None for a hit
        for t in transcripts:
            digest, size = hashed(t)  # a reference's as its dataset's listing keeps it: nothing read
            key = cache.key(digest, config) if cache is not None else ""
            entry = cache.find(key, templates) if cache is not None else None
            pending.append((t.id, digest, key, units(spec, t.source, size), entry))
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


# what decides, from a run's results so far, which settings configurations to add (compbench.decide.sweep)
Widen = Callable[[Any], list[str]]


def write_run(out: Path, spec: RunSpec, dataset: str, transcripts: Iterable[Item], workers: int = 1,
              progress: Callable[[str], None] | None = None, force: bool = False,
              resume: bool = False, executor: str = "local", concurrency: int = 1,
              ray_address: str | None = None, widen: Widen | None = None,
              again: Callable[[], Iterable[Item]] | None = None, rounds: int = 3,
              cache: ResultsCache | None = None, meter: Meter | None = None,
              notify: Callable[[str], None] | None = None) -> Manifest:
    """Replay ``transcripts`` and write the run directory ``out``; returns the manifest. A crash or kill
    leaves ``OUT.partial`` for ``--resume``; SIGINT or SIGTERM (:mod:`compbench.run.stop`) finish the transcripts
    in hand, commit every one replayed and raise :class:`~compbench.run.stop.Interrupted` (``notify`` is told at
    once). ``cache``, ``meter``: :func:`replay_all`.

    ``widen``: asked, once every transcript is replayed, which settings configurations to add (a best value at
    the edge of those tried); they are replayed on their tool's logs (read again through ``again``) and
    committed as batches of their own, up to ``rounds`` times. The manifest lists them with the sweep."""
    identity = {"spec": spec.manifest(), "dataset": dataset, "batch": rundir.BATCH,
                "format_version": RUN_FORMAT_VERSION}
    store = RunDir(Path(out), identity, force=force, resume=resume)
    with on_signals(notify) as stop:
        try:
            todo = until_stopped(_skip_done(selected(spec, transcripts, dataset), store.done), stop)
            _commit(store, replay_all(spec, todo, workers, progress, executor, concurrency, ray_address, cache, meter))
            if not stop and not store.committed:
                raise UsageError(f"no transcripts in {dataset}")
            added: list[str] = []
            if widen is not None and again is not None and not stop:
                added = _widen(store, spec, dataset, widen, again, workers, executor, concurrency, ray_address,
                               rounds, cache, stop)
            if stop.signum is not None:
                raise Interrupted(stop.signum, len(store.done), str(out))
            final = dataclasses.replace(spec, strategies=spec.strategies + tuple(added),
                                        settings=spec.settings + tuple(added)) if added else spec
            return store.finalize(lambda committed: _manifest(final, dataset, committed))
        except Interrupted:
            raise
        except CompbenchError:
            store.abandon()
            raise


def _commit(store: RunDir, items: Iterable[tuple[str, str, Outcome]], widened: Sequence[str] = ()) -> None:
    """``items`` (id, hash, rows or error) into the run directory, batch by batch; asked twice to stop
    (``KeyboardInterrupt``), the transcripts finished are still written."""
    batch: list[tuple[str, str, Outcome]] = []
    try:
        for item in items:
            batch.append(item)
            if len(batch) == rundir.BATCH:  # read at the call: tests set it
                store.commit(*_record(batch, widened))
                batch = []
    except KeyboardInterrupt:
        if batch:
            store.commit(*_record(batch, widened))
        raise
    if batch:
        store.commit(*_record(batch, widened))


def _record(batch: list[tuple[str, str, Outcome]], widened: Sequence[str] = ()
            ) -> tuple[dict[str, Any], dict[str, Table]]:
    """A batch's commit record and rows. A widening batch lists its transcripts apart (``widened_ids``), with the
    configurations it adds: they are not the run's transcripts twice, and a resume knows what is done."""
    record: dict[str, Any] = {"ids": [], "hashes": [], "errors": []}
    if widened:
        record.update({WIDENED: list(widened), WIDENED_IDS: []})
    rows = {k: Table() for k in TABLES}
    for tid, digest, result in batch:
        if widened:
            record[WIDENED_IDS].append(tid)
        else:
            record["ids"].append(tid)
            record["hashes"].append(digest)
        if isinstance(result, str):
            if not widened:  # a failing transcript fails the same way again: recorded once
                record["errors"].append({"transcript_id": tid, "error": result})
            continue
        for k in TABLES:
            rows[k].merge(result[k])
    return record, rows


def _widen(store: RunDir, spec: RunSpec, dataset: str, widen: Widen, again: Callable[[], Iterable[Item]],
           workers: int, executor: str, concurrency: int, ray_address: str | None, rounds: int,
           cache: ResultsCache | None, stop: Stop) -> list[str]:
    """The widening rounds (see :func:`write_run`); a resumed run finishes a round it had begun, a stopped one
    commits what it replayed of its round."""
    added: list[str] = []
    done: dict[tuple[str, ...], set[str]] = {}
    for b in store.committed:
        if b.get(WIDENED):
            key = tuple(b[WIDENED])
            done.setdefault(key, set()).update(b.get(WIDENED_IDS, []))
            added += [x for x in key if x not in added]
    for _ in range(rounds):
        pending = [k for k in done if k and not _round_done(k, done[k], spec, dataset, again)]
        labels = list(pending[0]) if pending else [x for x in widen(store.table("results"))
                                                   if x not in spec.strategies and x not in added]
        if not labels:
            break
        key = tuple(labels)
        tools = _formats(labels)
        ext = dataclasses.replace(spec, strategies=key, settings=key)
        skip = done.get(key, set())
        todo = until_stopped((t for t in selected(spec, again(), dataset) if t.source in tools and t.id not in skip),
                             stop)
        _commit(store, replay_all(ext, todo, workers, None, executor, concurrency, ray_address, cache), key)
        if stop:
            break
        done[key] = {"*"}  # finished
        added += [x for x in labels if x not in added]
    return added


def _formats(labels: Sequence[str]) -> set[str]:
    """The sources whose logs the configurations ``labels`` replay (their tools')."""
    from compbench.strategies import resolve

    out: set[str] = set()
    for x in labels:
        tool = resolve(x).info.tool
        out |= set(tool.formats) if tool is not None else set()
    return out


def _round_done(key: tuple[str, ...], ids: set[str], spec: RunSpec, dataset: str,
                again: Callable[[], Iterable[Item]]) -> bool:
    """Whether a widening round a resumed run had begun replayed every transcript of its tools."""
    if "*" in ids:
        return True
    tools = _formats(key)
    return all(t.id in ids for t in selected(spec, again(), dataset) if t.source in tools)


def _manifest(spec: RunSpec, dataset: str, committed: list[dict[str, Any]]) -> Manifest:
    replayed = hashlib.sha256("".join(h for b in committed for h in b["hashes"]).encode()).hexdigest()
    return Manifest(
        format_version=RUN_FORMAT_VERSION, compbench_version=__version__,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),  # the one field that varies
        dataset=DatasetRef(dataset, replayed, sum(len(b["ids"]) for b in committed)),
        spec=json.loads(json.dumps(spec.manifest())),  # as it reads back
        strategies=tuple(StrategyRecord(c.label, c.name, c.info.upstream, c.param_dict())
                         for c in (resolve(s) for s in spec.strategies)),
        errors=tuple(e for b in committed for e in b["errors"]),
        environment={"python": platform.python_version(), **versions()},
        method_limits=("The replay assumes the agent would have acted the same after a compaction.",
                       summarizer_limit(spec.summarizer)))

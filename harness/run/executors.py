"""``compbench.run.executors`` — Where replays run: this process, local worker processes, threads (for network-bound
summarizers), Ray.

Every executor returns results in dataset order, so a run's bytes do not depend on how it was executed.
Work is submitted in bounded windows (a few tasks per worker ahead), so memory stays flat however large
the dataset.

- ``local`` with ``--workers N``: N processes on this machine, each building its replayer once.
- ``threads`` with ``--concurrency N``: N transcripts replayed at once in one process. Summaries from a
  real model are network-bound and rate-limited; threads keep N requests in flight (bounded
  concurrency) without N copies of the process.
- ``ray`` (``--executor ray [--ray-address ADDR]``): tasks on a Ray cluster; without an address a local
  single-node instance starts. Ray's old ``local_mode`` was removed in Ray 2.5x, so tests start a real
  local instance. On a cluster: ``ray start --head`` on one node, ``ray start --address HEAD:6379`` on the
  others (each with ``pip install compbench[ray]`` and the dataset reachable at the same path), then
  ``compbench run DATASET --executor ray --ray-address HEAD:6379 --out RUN``.

An executor is a function ``(Job) -> Iterator[(transcript, outcome)]`` registered in :data:`EXECUTORS`;
other packages add theirs through the ``compbench.executors`` entry-point group. It replays each transcript
with a :class:`compbench.run.engine.Replayer` of the job's spec (:func:`compbench.run.engine.run_one`), built once per
worker, and yields the outcomes in dataset order.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from compbench.errors import UsageError
from compbench.plugins import Registry

if TYPE_CHECKING:
    from compbench.data.transcript import Transcript
    from compbench.run.engine import Outcome, Replayer
    from compbench.run.spec import RunSpec

T = TypeVar("T")
R = TypeVar("R")
AHEAD = 4  # tasks queued per worker


@dataclass(frozen=True)
class Job:
    """What an executor is given: the run's spec, the transcripts in dataset order, how many at once.

    ``items`` are transcripts or, from a dataset, references to them (:class:`compbench.run.listing.Ref`): the
    built-in executors hand a reference to the worker, which reads the transcript itself, so the main process
    neither reads nor sends it. An executor takes ``items`` or :attr:`transcripts` (each read here), not both,
    and yields each item it took with its outcome."""

    spec: RunSpec
    items: Iterable[Any]
    workers: int = 1
    concurrency: int = 1
    address: str | None = None  # a cluster's (Ray)

    @property
    def transcripts(self) -> Iterator[Transcript]:
        """The transcripts themselves, each read in this process (an executor that sends them whole)."""
        from compbench.run.listing import load

        return (load(x) for x in self.items)


Executor = Callable[[Job], Iterator[tuple[Any, "Outcome"]]]


def _executor(name: str, obj: object) -> Executor | None:
    return obj if callable(obj) else None


EXECUTORS: Registry[Executor] = Registry("executor", "compbench.executors", {
    "local": "compbench.run.executors:run_local",
    "threads": "compbench.run.executors:run_threads",
    "ray": "compbench.run.executors:run_ray",
}, adopt=_executor)


def ordered(submit: Callable[[T], Any], result: Callable[[Any], R], items: Iterable[T], window: int
            ) -> Iterator[tuple[T, R]]:
    """Submit ahead up to ``window`` items, yield (item, result) strictly in input order. Asked to stop
    (:mod:`compbench.run.stop`), the items already started are finished and yielded, those not started cancelled
    (a future without ``cancel``, Ray's, is waited for)."""
    from compbench.run.stop import requested

    pending: deque[tuple[T, Any]] = deque()
    for item in items:
        pending.append((item, submit(item)))
        if len(pending) >= window:
            head, fut = pending.popleft()
            yield head, result(fut)
    while pending:
        if requested() and any([_cancel(fut) for _, fut in pending]):  # every one tried (no short cut)
            while pending and not pending[0][1].cancelled():  # the started ones before the first cancelled
                head, fut = pending.popleft()
                yield head, result(fut)
            return
        head, fut = pending.popleft()
        yield head, result(fut)


def _cancel(fut: Any) -> bool:
    cancel = getattr(fut, "cancel", None)
    return bool(cancel()) if callable(cancel) else False


def processes(fn: Callable[[Any], R], payloads: Iterable[T], encode: Callable[[T], Any], workers: int,
              init: Callable[..., None], initargs: tuple[Any, ...]) -> Iterator[tuple[T, R]]:
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, initializer=init, initargs=initargs) as pool:
        yield from ordered(lambda x: pool.submit(fn, encode(x)), lambda f: f.result(), payloads, workers * AHEAD)


def threads(fn: Callable[[T], R], items: Iterable[T], concurrency: int) -> Iterator[tuple[T, R]]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(concurrency) as pool:
        yield from ordered(lambda x: pool.submit(fn, x), lambda f: f.result(), items, concurrency * 2)


def ray_map(fn: Callable[[Any, Any], R], state: Any, payloads: Iterable[T], encode: Callable[[T], Any],
            address: str | None, workers: int) -> Iterator[tuple[T, R]]:
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs Ray: pip install 'compbench[ray]'") from None
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 num_cpus=None if address else workers)
        started = True
    try:
        remote = ray.remote(fn)
        ref = ray.put(state)
        get: Callable[[Any], R] = ray.get
        yield from ordered(lambda x: remote.remote(ref, encode(x)), get, payloads, max(1, workers) * AHEAD)
    finally:
        if started:
            ray.shutdown()


# --- the built-in executors -------------------------------------------------------------------------------

def run_local(job: Job) -> Iterator[tuple[Any, Outcome]]:
    """In this process, or ``workers`` local processes (each reading the transcripts it replays); with
    ``concurrency`` > 1, threads."""
    from compbench.run.engine import Replayer, run_one
    from compbench.run.listing import load

    if job.concurrency > 1:
        yield from run_threads(job)
    elif job.workers > 1:
        for x, (_, out) in processes(_work, job.items, _payload, job.workers, _init_worker, (job.spec,)):
            yield x, out
    else:
        r = Replayer(job.spec)
        for x in job.items:
            yield x, run_one(r, load(x))


def run_threads(job: Job) -> Iterator[tuple[Any, Outcome]]:
    """``max(concurrency, workers)`` transcripts in flight in this process, a replayer (and its replay
    context) per thread: a context serves one transcript at a time."""
    from compbench.run.engine import Replayer, run_one
    from compbench.run.listing import load

    local = threading.local()

    def run(x: Any) -> Outcome:
        if not hasattr(local, "replayer"):
            local.replayer = Replayer(job.spec)
        out: Outcome = run_one(local.replayer, load(x))
        return out

    yield from threads(run, job.items, max(job.concurrency, job.workers))


def run_ray(job: Job) -> Iterator[tuple[Any, Outcome]]:
    """Tasks on a Ray cluster (``address``; without one a local instance with ``workers`` CPUs): a transcript of a
    dataset by reference (the dataset reachable at the same path on every node), any other whole."""
    yield from ray_map(_ray_work, job.spec, job.items, _payload, job.address, job.workers)


def _payload(x: Any) -> Any:
    """What a worker is sent of a stream item: a reference as it is (it reads the transcript), a transcript's JSON."""
    from compbench.data.transcript import to_json
    from compbench.run.listing import Ref

    return x if isinstance(x, Ref) else to_json(x)


def _transcript(payload: Any) -> Transcript:
    from compbench.data.transcript import from_json

    return from_json(payload) if isinstance(payload, str) else payload.load()


_worker: Replayer | None = None  # a worker process's replayer, built once by its initializer


def _init_worker(spec: RunSpec) -> None:
    from compbench.run.engine import Replayer
    from compbench.run.stop import ignore_in_worker

    ignore_in_worker()  # the main process finishes the transcripts in hand and stops the pool
    global _worker
    _worker = Replayer(spec)


def _work(payload: Any) -> tuple[str, Outcome]:
    from compbench.run.engine import run_one

    assert _worker is not None
    t = _transcript(payload)
    return t.id, run_one(_worker, t)


_ray_replayers: dict[str, Replayer] = {}


def _ray_work(spec: RunSpec, payload: Any) -> Outcome:
    """A Ray task: one replayer per worker process and spec, reused across tasks."""
    from compbench.run.engine import Replayer, run_one

    key = repr(spec)
    if key not in _ray_replayers:
        _ray_replayers[key] = Replayer(spec)
    return run_one(_ray_replayers[key], _transcript(payload))

"""Where replays run: this process, local worker processes, threads (for network-bound summarizers), Ray.

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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from compbench.errors import UsageError

T = TypeVar("T")
R = TypeVar("R")
EXECUTORS = ("local", "threads", "ray")
AHEAD = 4  # tasks queued per worker


def ordered(submit: Callable[[T], Any], result: Callable[[Any], R], items: Iterable[T], window: int
            ) -> Iterator[tuple[T, R]]:
    """Submit ahead up to ``window`` items, yield (item, result) strictly in input order."""
    pending: deque[tuple[T, Any]] = deque()
    for item in items:
        pending.append((item, submit(item)))
        if len(pending) >= window:
            head, fut = pending.popleft()
            yield head, result(fut)
    while pending:
        head, fut = pending.popleft()
        yield head, result(fut)


def processes(fn: Callable[[str], R], payloads: Iterable[T], encode: Callable[[T], str], workers: int,
              init: Callable[..., None], initargs: tuple[Any, ...]) -> Iterator[tuple[T, R]]:
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, initializer=init, initargs=initargs) as pool:
        yield from ordered(lambda x: pool.submit(fn, encode(x)), lambda f: f.result(), payloads, workers * AHEAD)


def threads(fn: Callable[[T], R], items: Iterable[T], concurrency: int) -> Iterator[tuple[T, R]]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(concurrency) as pool:
        yield from ordered(lambda x: pool.submit(fn, x), lambda f: f.result(), items, concurrency * 2)


def ray_map(fn: Callable[[Any, str], R], state: Any, payloads: Iterable[T], encode: Callable[[T], str],
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

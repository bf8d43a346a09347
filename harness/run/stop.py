"""``compbench.run.stop`` — A run asked to stop (SIGINT, SIGTERM) finishes the transcripts in hand, writes what is
done and says how to resume; it is never killed half-way through a batch.

:func:`on_signals` turns the two signals into a request (:class:`Stop`) for the run's lifetime; the run stops
taking transcripts (:func:`until_stopped`), the executors let the ones already started finish and cancel the
ones not started (:func:`requested`), and :func:`compbench.run.write.write_run` commits them and raises
:class:`Interrupted`. A second signal stops at once (``KeyboardInterrupt``), the committed batches kept.
Worker processes ignore both signals (:func:`ignore_in_worker`): a terminal's Ctrl-C reaches its whole process
group, and the main process decides.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from compbench.errors import CompbenchError

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(CompbenchError):
    """A run stopped on request with its finished transcripts committed: ``done`` of them in ``out``'s partial
    directory, resumable with ``compbench run --resume``."""

    def __init__(self, signum: int, done: int, out: str) -> None:
        self.signum, self.done, self.out = signum, done, out
        super().__init__(f"interrupted ({signal.Signals(signum).name}): {done:,} transcripts written; resume with: "
                         f"compbench run --resume {out}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # as a shell reports a process its signal ended


class Stop:
    """A request to stop: which signal asked (None: none yet)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __bool__(self) -> bool:
        return self.signum is not None


_current: Stop | None = None


def requested() -> bool:
    """Whether the run in this process was asked to stop (the executors cancel work not yet started)."""
    return bool(_current)


@contextlib.contextmanager
def on_signals(notify: Callable[[str], None] | None = None) -> Iterator[Stop]:
    """SIGINT and SIGTERM ask the run to stop for the duration (the previous handlers restored after); a second
    one stops at once. Outside the main thread (where Python cannot take signals) nothing is installed."""
    global _current
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(signum: int, frame: Any) -> None:
        if stop:
            raise KeyboardInterrupt
        stop.signum = signum
        if notify:
            notify(f"{signal.Signals(signum).name}: finishing the transcripts in hand, then writing what is done "
                   "(again to stop at once)")

    previous = {s: signal.signal(s, handle) for s in SIGNALS}
    outer, _current = _current, stop
    try:
        yield stop
    finally:
        _current = outer
        for s, h in previous.items():
            signal.signal(s, h)


def until_stopped(items: Iterable[T], stop: Stop) -> Iterator[T]:
    """``items`` until a stop is requested (checked before each is taken: reading the next may cost)."""
    it = iter(items)
    while not stop:
        try:
            item = next(it)
        except StopIteration:
            return
        yield item


def ignore_in_worker() -> None:
    """A worker process leaves both signals to the main process, which stops it when it is done."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)

"""``compbench.progress`` — Progress of a long run, with the total and the time left, on a terminal and in a log alike.

On a terminal one line is rewritten in place; anywhere else (a CI log, ``2> run.log``, a pipe) a line is
written every :data:`LOG_SECONDS` seconds and at the end, so a run of 2,000 transcripts is never minutes of
silence. The rate counts only what this process replayed (a resumed run's committed transcripts are in the
count, not in the speed).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

LOG_SECONDS = 10.0  # between two lines in a log (COMPBENCH_PROGRESS_SECONDS overrides)
TTY_SECONDS = 0.2


def duration(seconds: float) -> str:
    """``45s``, ``6m 41s``, ``2h 05m``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


class Progress:
    """Call :meth:`tick` once per replayed transcript and :meth:`close` at the end."""

    def __init__(self, stream: TextIO, total: int | None, done: int = 0, tty: bool | None = None,
                 every: float | None = None, clock: Callable[[], float] = time.monotonic, verb: str = "replayed",
                 noun: str = "transcripts", unknown: str = "raw files: total unknown") -> None:
        self.stream, self.total, self.done, self.start_done = stream, total, done, done
        self.verb, self.noun, self.unknown = verb, noun, unknown  # what is counted (judge: model calls)
        self.tty = stream.isatty() if tty is None else tty
        env = os.environ.get("COMPBENCH_PROGRESS_SECONDS")
        self.every = every if every is not None else float(env) if env else (TTY_SECONDS if self.tty else LOG_SECONDS)
        self.clock = clock
        self.started = self.last = clock()
        self.written = False
        self.shown = done  # the count of the last line written

    def line(self) -> str:
        elapsed = self.clock() - self.started
        n = self.done - self.start_done
        rate = n / elapsed if elapsed > 0 else 0.0
        if self.total:
            text = (f"{self.verb} {self.done:,}/{self.total:,} {self.noun} ({self.done / self.total:.0%}) in "
                    f"{duration(elapsed)}")
            left = self.total - self.done
            if left > 0 and rate > 0:
                text += f", about {duration(left / rate)} left"
        else:
            text = f"{self.verb} {self.done:,} {self.noun} in {duration(elapsed)}" + (
                f" ({self.unknown})" if self.unknown else "")
        return text + (f" ({rate:,.1f}/s)" if rate > 0 else "")

    def note(self, text: str) -> None:
        """A line of its own between progress lines (a retry, a warning), never lost in a rewritten line."""
        if self.tty and self.written:
            self.stream.write("\n")
        self.stream.write(text + "\n")
        self.stream.flush()
        self.written = False

    def tick(self, _tid: str = "") -> None:
        self.done += 1
        now = self.clock()
        if now - self.last >= self.every or (self.total is not None and self.done >= self.total):
            self._write()
            self.last = now

    def _write(self) -> None:
        if self.tty:
            self.stream.write("\r" + self.line().ljust(100))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
        self.written = True
        self.shown = self.done

    def close(self) -> None:
        """The last line (a log always ends with the final count), and the newline a terminal needs."""
        if self.done != self.shown:
            self._write()
        if self.tty and self.written:
            self.stream.write("\n")
            self.stream.flush()


def dataset_total(path: str) -> int | None:
    """The number of transcripts, when it is cheap to know: a dataset's manifest records it; raw files would
    have to be imported to be counted."""
    from compbench.data.dataset import is_dataset, read_meta

    if is_dataset(path):
        n = read_meta(path).get("n_transcripts")
        return int(n) if isinstance(n, int) else None
    return None

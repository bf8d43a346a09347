"""``compbench.data.formats`` — Importers: one module per native transcript format, chosen by content, never by file
name alone.

Each format module defines ``NAME``, ``sniff(head, record) -> bool`` (``head``: the file's first 64 KiB
as text; ``record``: one JSON record of the file, parsed, or None), optionally ``sniff_document(doc) ->
bool`` for a whole JSON document, and ``read(path) -> Iterator[Transcript]`` raising
:class:`~compbench.errors.TranscriptError` for anything it cannot read (see ``detect.py`` for how the
records are chosen); ``MULTI_TRANSCRIPT = True`` when one file holds many transcripts. Modules are
imported lazily, in detection order (:mod:`.catalog`): specific formats first, the generic OpenAI chat format last.

The contract that keeps a file from being read as another format: a sniffer says True only when the file
fits the format *as a whole* (a document: every message; JSON lines: the record it is shown, and ``read``
raises with the line for a later one that does not fit); optionally ``misfit(doc) -> detect.Misfit | None``
says how far a file no format claims is from this one, so the error can name the closest format; and
optionally ``WALK_SUFFIXES`` (e.g. ``(".md",)``): other file endings a folder walk offers to ``sniff``
(the head only; what no format claims there is passed over, a README is no transcript). After reading,
:mod:`.coverage` refuses an import that read too little of what the file holds. Files of tools that are
known but not imported are data in :mod:`.known`.

Other packages add an importer through the ``compbench.formats`` entry-point group (``name = "pkg.module"``,
a module as above): it is tried after the built-in specific formats, before the generic one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from compbench.data.formats.catalog import is_multi, module
from compbench.data.formats.walk import iter_files as iter_files  # the folder walk: its own module
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

LIMIT_ENV = "COMPBENCH_MAX_TRANSCRIPT_MB"
DEFAULT_MAX_TRANSCRIPT_MB = 1024  # measured: a 200 MB transcript imports and replays in ~785 MB peak RSS


def max_transcript_bytes() -> int:
    import os

    raw = os.environ.get(LIMIT_ENV, "")
    try:
        return int(float(raw) * 2**20) if raw else DEFAULT_MAX_TRANSCRIPT_MB * 2**20
    except ValueError:
        raise TranscriptError(LIMIT_ENV, None, f"a number of MiB, got {raw!r}") from None


def read(path: str | Path, fmt: str | None = None,
         skipped: list[TranscriptError] | None = None, check: bool = True) -> Iterator[Transcript]:
    """Read every transcript in one file, detecting its format unless ``fmt`` names it.

    ``skipped``: collect broken lines there and go on (``--on-error skip-lines``) instead of failing on
    the first; the transcript of a one-transcript file also lists them (``meta["skipped_lines"]``, warnings).
    ``check``: refuse a one-transcript file whose import read too little of what it holds
    (:mod:`.coverage`; the generic chat reader checks each conversation itself).

    Importers raise TranscriptError themselves, with the line; anything else escaping one is an importer
    bug, turned here into a TranscriptError marked ``internal`` so the user still gets one clear line
    (and the fuzz tests, which reject ``internal`` errors, catch the bug).
    """
    from compbench.data.formats.detect import detect
    from compbench.data.formats.jsonio import SKIPPED_LINES, forget

    p = Path(path)
    try:
        name = fmt or detect(p)
        limit = max_transcript_bytes()
        multi = is_multi(name)
        if not multi and p.stat().st_size > limit:
            raise TranscriptError(p, None, f"a transcript under {limit // 2**20} MiB, the limit that keeps a "
                                           f"replay's memory bounded (file is {p.stat().st_size // 2**20} MiB; "
                                           f"raise {LIMIT_ENV} to allow it: a replay needs about 4x the file "
                                           "size in memory)")
        from compbench.data.formats.coverage import FORCED
        from compbench.data.formats.coverage import check as covered

        transcripts = module(name).read(p)
        lines: list[TranscriptError] = []
        while True:
            token = SKIPPED_LINES.set(lines if skipped is not None else None)  # only while the importer runs
            forced = FORCED.set(fmt is not None or not check)  # a named format is warned, never refused
            try:
                t = next(transcripts, None)
            except TranscriptError:
                raise
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, UnicodeError) as e:
                err = TranscriptError(p, None, f"a readable {name} transcript (the importer failed: "
                                               f"{type(e).__name__}: {e})")
                err.internal = True
                raise err from e
            finally:
                SKIPPED_LINES.reset(token)
                FORCED.reset(forced)
            if t is None:
                break
            if lines and skipped is not None:
                if not multi:
                    t = replace(t, meta={**t.meta, "skipped_lines": [e.line for e in lines]},
                                warnings=(*t.warnings, *(f"skipped line {e.line}: {e.expected}" for e in lines)))
                skipped.extend(lines)
                lines.clear()
            if check and not multi:
                forced = FORCED.set(fmt is not None)
                try:
                    t = covered(p, name, t)
                finally:
                    FORCED.reset(forced)
            yield t
        if skipped is not None:
            skipped.extend(lines)
    finally:
        forget()


def read_all(paths: Iterable[str | Path], fmt: str | None = None) -> Iterator[Transcript]:
    for f in iter_files(paths):
        yield from read(f, fmt)

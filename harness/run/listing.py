"""``compbench.run.listing`` — A dataset's transcripts by reference: what a run needs of each without its messages.

A re-run over an unchanged dataset replays nothing (the results cache holds every row), so what it would spend is
the reading: parsing every transcript to hash it, to price it, to filter it. A :class:`Ref` is what those need (its
id, source, size, content hash, whether it is empty, the fields ``--where`` reads) and where the transcript is
(its dataset's data file and row): the listing of a data file is kept in the cache directory (``listings/``) under
the file's identity, and a run reads the transcript itself only to replay it, in the worker that replays it.

The identity of a data file is its path, size, mtime and ctime (in nanoseconds) and inode: any write changes one
of them. Where they differ, the file's bytes are hashed: the same bytes (a file touched, copied back) keep their
listing, other bytes are listed again, and then a row whose payload (by its hash) another listing holds is taken
from there: a dataset imported again with one more log parses only that log. A file written within
:data:`RACY_SECONDS` of its listing may have changed since within the clock's tick: its listing is trusted only on
its bytes' hash. The listing also keeps the version of the code that made it (:func:`stamp`): a change to how a
transcript is normalized or filtered lists again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compbench.data.transcript import Transcript

LISTINGS = "listings"
LISTING_VERSION = 1
KEEP_LISTINGS = 64  # data files whose listings are kept (the least recently used go)
RACY_SECONDS = 2.0  # a file written this close to its listing may have changed since within the same clock tick


@dataclass(frozen=True)
class Ref:
    """A transcript of a dataset by reference (see the module): enough to hash, price, filter and find it."""

    id: str
    source: str
    size: int  # characters of its normalized JSON (:func:`compbench.data.transcript.to_json`)
    digest: str  # its content hash (:func:`compbench.run.cache.transcript_hash`)
    empty: bool  # no reply (:func:`compbench.data.dataset.is_empty`)
    fields: Mapping[str, Any]  # what a filter reads (:func:`fields`)
    file: str  # the dataset's data file
    row: int  # its row there
    identity: tuple[int, ...]  # the data file's, as listed: a file changed under a run is an error, not another log

    def load(self) -> Transcript:
        """The transcript itself, read from its dataset (in the process that replays it)."""
        return read_row(self)


Item = Any  # Transcript | Ref: what a run's stream of transcripts carries


def load(x: Item) -> Transcript:
    """A stream item's transcript: a :class:`Ref` read from its dataset, a transcript as it is."""
    return x.load() if isinstance(x, Ref) else x


def hashed(x: Item) -> tuple[str, int]:
    """A stream item's content hash and size in characters (a :class:`Ref`'s as listed)."""
    if isinstance(x, Ref):
        return x.digest, x.size
    from compbench.data.transcript import to_json
    from compbench.run.cache import transcript_hash

    payload = to_json(x)
    return transcript_hash(payload), len(payload)


def fields(t: Item) -> dict[str, Any]:
    """What a filter of the transcripts a run replays reads of one (:func:`compbench.run.engine.units`); a
    reference's as its listing keeps it."""
    if isinstance(t, Ref):
        return dict(t.fields)
    from compbench.run.engine import units

    return {"transcript_id": t.id, "source": t.source, **units(t), "steps": t.steps}


def is_empty(x: Item) -> bool:
    """Whether a stream item is a session with no reply."""
    if isinstance(x, Ref):
        return x.empty
    from compbench.data.dataset import is_empty as empty

    return empty(x)


def identity(p: Path) -> tuple[int, ...]:
    """What changes when a file is written: size, mtime, ctime, inode."""
    st = p.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def file_hash(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stamp() -> str:
    """The version of the code a listing is made with: the engine's (how a transcript is normalized, what
    ``units`` reads) and this module's (what fills a :class:`Ref`)."""
    from compbench.run.cache import engine_version

    h = hashlib.sha256(f"listing {LISTING_VERSION} {engine_version()}\n".encode())
    h.update(hashlib.sha256(Path(__file__).read_bytes()).digest())
    return h.hexdigest()


def fresh(kept: Mapping[str, Any], now: tuple[int, ...], content: Callable[[], str]) -> bool:
    """Whether a kept listing holds for a file whose identity is ``now``: the same identity, unless it was listed
    while racy; else the same bytes (``content`` hashes them, asked only then)."""
    if list(now) == kept.get("identity") and not kept.get("racy"):
        return True
    return bool(content() == kept.get("sha256"))


def _racy(ident: tuple[int, ...], since_ns: int) -> bool:
    return max(ident[1], ident[2]) >= since_ns - int(RACY_SECONDS * 1e9)


def listing(dataset: str | Path, root: Path, *, keep: bool = True, trust: bool = True,
            tick: Callable[[], None] | None = None) -> list[Ref]:
    """The transcripts of the dataset directory ``dataset`` as refs, from the listing kept under ``root`` when it
    holds (see the module) and ``trust``, else read (``tick`` after each) and, with ``keep``, kept."""
    from compbench.data.dataset import DATA_FILE, read_meta
    from compbench.run.cache import drop_least_recent

    read_meta(dataset)  # a dataset this compbench cannot read fails here, as reading it would
    data = (Path(dataset) / DATA_FILE).resolve()
    where = root / LISTINGS / f"{hashlib.sha256(str(data).encode()).hexdigest()[:32]}.json"
    code = stamp()
    now = identity(data)
    content: dict[str, str] = {}

    def bytes_hash() -> str:
        if "sha256" not in content:
            content["sha256"] = file_hash(data)
        return content["sha256"]

    kept = _read(where) if keep and trust else None
    if kept is not None and kept.get("stamp") == code and fresh(kept, now, bytes_hash):
        refs = [_ref(item, str(data), now) for item in kept["items"]]
        if list(now) != kept["identity"] or kept.get("racy"):  # touched, the same bytes: trusted by identity now
            _write(where, {**kept, "identity": list(now), "racy": _racy(now, time.time_ns())})
        else:
            _touch(where)  # used: the last to go
        return refs
    since = time.time_ns()
    items = list(_items(data, _known(root, code) if keep and trust else {}, tick))
    after = identity(data)
    if after != now:  # written while it was read: list nothing that may be half of two versions
        return listing(dataset, root, keep=keep, trust=trust, tick=tick)
    if keep:
        _write(where, {"version": LISTING_VERSION, "stamp": code, "file": str(data), "identity": list(now),
                       "racy": _racy(now, since), "sha256": bytes_hash(), "items": items})
        drop_least_recent(where.parent, KEEP_LISTINGS)
    return [_ref(item, str(data), now) for item in items]


def _items(data: Path, known: Mapping[str, list[Any]], tick: Callable[[], None] | None) -> Iterator[list[Any]]:
    """Each row's item: ``[id, source, size, digest, empty, fields, row, the row's own hash]``; a row whose payload
    another listing of this code holds (``known``, by the payload's hash) is taken from there, not parsed."""
    import pyarrow.parquet as pq

    from compbench.data.dataset import READ_BATCH_ROWS
    from compbench.data.dataset import is_empty as empty
    from compbench.errors import TranscriptError

    row = 0
    for batch in pq.ParquetFile(data).iter_batches(batch_size=READ_BATCH_ROWS, columns=["transcript"]):
        for payload in batch.column(0).to_pylist():
            own = hashlib.sha256(payload.encode()).hexdigest() if isinstance(payload, str) else ""
            if own in known:
                yield [*known[own][:6], row, own]
            else:
                try:
                    t = _parse(payload)
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    raise TranscriptError(data, row + 1, f"a valid transcript row ({e})") from None
                digest, size = hashed(t)
                yield [t.id, t.source, size, digest, empty(t), fields(t), row, own]
            row += 1
            if tick:
                tick()


def _parse(payload: Any) -> Transcript:
    from compbench.data.transcript import from_json

    return from_json(payload)


def _known(root: Path, code: str) -> dict[str, list[Any]]:
    """The items of every listing kept under ``root`` by this code, by their payload's hash: a dataset imported
    again with one more log parses only that log."""
    out: dict[str, list[Any]] = {}
    for p in sorted((root / LISTINGS).glob("*.json")) if (root / LISTINGS).is_dir() else ():
        kept = _read(p)
        if kept is None or kept.get("stamp") != code:
            continue
        for item in kept["items"]:
            if len(item) > 7 and item[7]:
                out[item[7]] = item
    return out


def _touch(p: Path) -> None:
    try:
        os.utime(p)
    except OSError:
        pass




def _ref(item: list[Any], file: str, ident: tuple[int, ...]) -> Ref:
    return Ref(item[0], item[1], int(item[2]), item[3], bool(item[4]), item[5], file, int(item[6]), ident)


def _read(p: Path) -> dict[str, Any] | None:
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(d, dict) and d.get("version") == LISTING_VERSION and isinstance(d.get("items"), list)
    return d if ok else None


def _write(p: Path, d: Mapping[str, Any]) -> None:
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(d, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        tmp.replace(p)
    except OSError:
        pass  # a read-only cache costs the next run its listing, not this run anything


# --- reading one transcript by reference (in the worker that replays it) ------------------------------------------

_group: tuple[Any, ...] = ()  # the last row group read in this process (key, start, end, column), set whole: threads


def read_row(ref: Ref) -> Transcript:
    """The transcript ``ref`` names, read from its data file (one row group decoded, kept for the next row)."""
    import pyarrow.parquet as pq

    from compbench.data.transcript import from_json
    from compbench.errors import TranscriptError

    global _group
    p = Path(ref.file)
    if identity(p) != ref.identity:
        raise TranscriptError(p, ref.row + 1, f"the dataset as listed when the run started (transcript {ref.id!r}); "
                                              "it was written since: run again")
    key = (ref.file, ref.identity)
    group = _group
    if not group or group[0] != key or not (group[1] <= ref.row < group[2]):
        pf = pq.ParquetFile(p)
        start = 0
        for g in range(pf.num_row_groups):
            n = pf.metadata.row_group(g).num_rows
            if ref.row < start + n:
                group = (key, start, start + n, pf.read_row_group(g, columns=["transcript"]).column(0))
                _group = group
                break
            start += n
        else:
            raise TranscriptError(p, ref.row + 1, f"a row for transcript {ref.id!r}")
    t = from_json(group[3][ref.row - group[1]].as_py())
    if t.id != ref.id:
        raise TranscriptError(p, ref.row + 1, f"transcript {ref.id!r} as listed, found {t.id!r}")
    return t

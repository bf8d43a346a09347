"""``compbench.data.formats.detect`` — Content sniffing: which importer reads this file, decided by structure, never by
key order or size.

* **JSON lines.** Each format's ``sniff(head, record)`` looks at a parsed record. The first record decides
  for most formats; when it is claimed by none (an administrative record a format writes first, such as
  Claude Code's ``queue-operation`` or ``file-history-snapshot``, or a broken first line), the records
  after it are tried, up to :data:`SNIFF_RECORDS` records or :data:`SNIFF_BYTES` bytes.
* **JSON documents** (pretty-printed, or arrays): the whole document is parsed, once (the importer gets
  the same parse, see :func:`~compbench.data.formats.jsonio.load_json`), and each format's ``sniff_document``
  (or ``sniff`` with the document as the record) looks at its keys wherever they are: a first field larger
  than any window cannot hide them.
* **SQLite stores**: each format's ``sniff_store(schema)`` looks at the tables and their columns
  (:mod:`~compbench.data.formats.sqlite_store`); a SQLite file no store claims is an error naming its tables.
* **Anything else** (a markdown export): ``sniff(head, None)`` on the first 64 KiB.

A format claims a file only if the file fits it as a whole (each format's sniffers look at every message
of a document, not the first). When none does, the one-line error names what the file is instead: a
tool's file compbench knows but does not read (:mod:`.known`), else the closest format and what did not
fit — each format may say how far a document is from it with ``misfit(doc) -> Misfit | None`` (``doc``:
the parsed document, or the list of a JSONL file's first records); the fewest misfits name the closest.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import MAX_JSON_DOCUMENT_BYTES, forget, load_json
from compbench.data.formats.sqlite_store import MAGIC as SQLITE_MAGIC
from compbench.errors import TranscriptError

HEAD_BYTES = 64 * 1024
SNIFF_RECORDS = 64  # records a JSONL sniff may look past: Claude Code writes a few bookkeeping records first
SNIFF_BYTES = 16 * 2**20


@dataclass(frozen=True)
class Misfit:
    """How far a file is from one format: ``bad`` of its ``total`` items (records, messages) do not fit it,
    and how (``what``: "messages have `parts` where it expects `content`")."""

    format: str
    layout: str
    bad: int
    total: int
    what: str

    def __str__(self) -> str:
        return f"closest is {self.format} ({self.layout}), but {self.bad} of {self.total} {self.what}"


def head_of(path: Path) -> tuple[str, dict[str, Any] | None]:
    """The file's first 64 KiB as text and its first line parsed as a JSON object (None if not one).

    The first line is read whole, however long: a record larger than the head is still a record.
    """
    with path.open("rb") as f:
        raw = f.read(HEAD_BYTES)
        if not raw.strip():
            raise TranscriptError(path, None, "a transcript (file is empty)")
        line = b""
        if raw.lstrip()[:1] in (b"{", b"["):  # JSON: the first line, whole (a binary store has no lines)
            f.seek(0)
            while not line.strip():
                line = f.readline(MAX_JSON_DOCUMENT_BYTES)
                if not line:
                    break
    first: dict[str, Any] | None = None
    try:
        obj = json.loads(line) if line else None
        if isinstance(obj, dict):
            first = obj
    except (ValueError, RecursionError):
        first = None
    return raw.decode("utf-8", errors="replace"), first


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON-object lines after the first, bounded; lines that do not parse are passed over."""
    budget = SNIFF_BYTES
    n = 0
    with path.open("rb") as f:
        f.readline(MAX_JSON_DOCUMENT_BYTES)
        for raw in f:
            budget -= len(raw)
            if budget < 0 or n >= SNIFF_RECORDS:
                return
            if not raw.strip():
                continue
            n += 1
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                yield obj


def _claim(head: str, record: dict[str, Any] | None, generic: bool = True) -> str | None:
    from compbench.data.formats.catalog import GENERIC, detection_order, module

    for name in detection_order():
        if name == GENERIC and not generic:
            continue
        try:
            mod = module(name)
        except ModuleNotFoundError:  # an importer that is not installed cannot claim the file
            continue
        if mod.sniff(head, record):
            return name
    return None


def _claim_document(head: str, doc: Any) -> str | None:
    from compbench.data.formats.catalog import detection_order, module

    for name in detection_order():
        try:
            mod = module(name)
        except ModuleNotFoundError:
            continue
        by_doc = getattr(mod, "sniff_document", None)
        if by_doc is not None:
            if by_doc(doc):
                return name
        elif isinstance(doc, dict) and mod.sniff(head, doc):
            return name
    return None


def store_format(found: Mapping[str, frozenset[str]]) -> str | None:
    """The store whose tables these are (OpenCode, Crush, Goose), or None."""
    from compbench.data.formats.catalog import detection_order, module

    for name in detection_order():
        try:
            by_tables = getattr(module(name), "sniff_store", None)
        except ModuleNotFoundError:
            continue
        if by_tables is not None and by_tables(found):
            return name
    return None


def _claim_store(path: Path) -> str:
    """The store whose tables these are, or an error naming the tables found."""
    from compbench.data.formats.sqlite_store import schema

    found = schema(path)
    name = store_format(found)
    if name is None:
        tables = ", ".join(sorted(found)) or "none"
        raise TranscriptError(path, None, "a tool's SQLite store (OpenCode's opencode.db, Crush's crush.db, Goose's "
                                          f"sessions.db); this SQLite file has tables: {tables}")
    return name


def _is_document_start(head: str, first: dict[str, Any] | None) -> bool:
    """A first line that is not a whole object, opening a JSON value: a document over several lines."""
    return first is None and head.lstrip().startswith(("{", "["))


def closest(sample: Any) -> Misfit | None:
    """The format ``sample`` (a parsed document, or a JSONL file's first records) misses by the least."""
    from compbench.data.formats.catalog import detection_order, module

    found = []
    for name in detection_order():
        try:
            fn = getattr(module(name), "misfit", None)
        except ModuleNotFoundError:
            continue
        m = fn(sample) if fn is not None else None
        if m is not None and m.total:
            found.append(m)
    return min(found, key=lambda m: m.bad / m.total, default=None)


def _unsupported(path: Path, head: str, sample: Any) -> TranscriptError:
    """Why no format claims ``path``: a known tool's file, the closest format, or none."""
    from compbench.data.formats.catalog import detection_order
    from compbench.data.formats.known import by_content, by_name, describe

    known = by_content(path, head) or by_name(path)
    near = closest(sample) if sample is not None else None
    said = [describe(known)] if known is not None else []
    if near is not None:
        said.append(str(near))
    if said:
        return TranscriptError(path, None, "not a supported transcript: " + "; ".join(said))
    if not head.lstrip().startswith(("{", "[")):
        return TranscriptError(path, 1, "JSON or JSONL text, or a markdown task export (a known transcript format)")
    return TranscriptError(path, 1, f"a known transcript format ({', '.join(detection_order())}); none matched "
                                    "(if you know the format, pass --format NAME)")


def detect(path: Path) -> str:
    """The name of the format that recognizes ``path``; a TranscriptError if none does."""
    from compbench.data.formats.known import by_content

    head, first = head_of(path)
    if head.startswith("SQLite format 3\x00") and by_content(path, head) is not None:
        raise _unsupported(path, head, None)  # a store another tool keeps: never guessed as another's
    name: str | None = None
    jsonl, document = first is not None, False
    doc: Any = None
    if jsonl:
        name = _claim(head, first)
    elif _is_document_start(head, first):
        try:
            doc = load_json(path, keep=True)
            document = True
        except TranscriptError:
            jsonl = True  # not one valid document: JSON lines whose first line is broken, perhaps
        if document:
            name = _claim_document(head, doc)
    if name is None and jsonl:  # the records after the first: structure before any textual evidence
        name = next((n for n in map(lambda r: _claim(head, r), _records(path)) if n is not None), None)
    if name is None and not document:
        # byte-level formats (a database), and head evidence when nothing parsed; never the generic chat format
        # for JSON lines whose records it has just refused
        name = _claim(head, None, generic=first is None)
    if name is None and head.startswith(SQLITE_MAGIC):
        name = _claim_store(path)
    if name is not None:
        return name
    forget()
    sample: Any = doc if document else [first, *_records(path)] if jsonl and first is not None else None
    raise _unsupported(path, head, sample)

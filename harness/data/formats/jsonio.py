"""``compbench.data.formats.jsonio`` — Reading JSON and JSONL safely: every failure becomes a TranscriptError naming
file and line.

Two policies cross every importer without changing their signatures:

* **Broken lines.** By default a line that is not a JSON object (truncated, invalid UTF-8, garbage) is a
  TranscriptError naming file and line. While :data:`SKIPPED_LINES` holds a list (``--on-error
  skip-lines``, set by ``formats.read``) such a line is recorded there and skipped instead, so one bad
  line in a long session does not cost the session.
* **One parse per document.** Detection must parse a JSON document to look at its keys wherever they are
  (a first field may be larger than any sniffing window); :func:`load_json` with ``keep=True`` holds that
  parse for the importer's own ``load_json`` of the same unchanged file, so the file is parsed once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from compbench.errors import TranscriptError

# Files above this are refused with a clear message instead of exhausting memory (one JSON document
# must be parsed whole; JSONL streams and has no such limit).
MAX_JSON_DOCUMENT_BYTES = 512 * 1024 * 1024

# None: strict (a broken line raises); a list: broken lines are appended to it and skipped.
SKIPPED_LINES: ContextVar[list[TranscriptError] | None] = ContextVar("SKIPPED_LINES", default=None)
_kept: dict[tuple[str, int, int], Any] = {}  # at most one document parsed by detection, for its importer
_DECODER = json.JSONDecoder()


def _at(e: json.JSONDecodeError) -> str:
    """``Expecting ',' delimiter at column 42``; json's "Unterminated string starting at" already ends in
    "at" (never "starting at at column")."""
    return f"{e.msg.removesuffix(' at').rstrip()} at column {e.colno}"


def _broken(path: Path, lineno: int, text: str, e: json.JSONDecodeError) -> TranscriptError:
    """A line cut short (a crash mid-write) says so: the error is at its end, or in a string left open."""
    cut = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")
    what = "a complete JSON object (line is truncated)" if cut else f"a JSON object ({_at(e)})"
    return TranscriptError(path, lineno, what)


def parse_line(path: Path, lineno: int, raw: bytes) -> dict[str, Any]:
    """One JSONL line as an object, or the TranscriptError that says what is wrong with it (marked as a
    broken line: ``--on-error skip-lines`` would skip it)."""
    try:
        return _parse_line(path, lineno, raw)
    except TranscriptError as e:
        e.broken_line = True
        raise


def _parse_line(path: Path, lineno: int, raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, lineno, f"UTF-8 text (invalid byte at column {e.start + 1})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise _broken(path, lineno, text, e) from None
    except RecursionError:
        raise TranscriptError(path, lineno, "a JSON object (nesting too deep)") from None
    if not isinstance(obj, dict):
        raise TranscriptError(path, lineno, f"a JSON object, found {type(obj).__name__}")
    return obj


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; streamed, so size is unbounded.

    A broken line raises, unless lines are being skipped (:data:`SKIPPED_LINES`): then it is recorded there.
    """
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                obj = parse_line(path, lineno, raw)
            except TranscriptError as e:
                sink = SKIPPED_LINES.get()
                if sink is None:
                    raise
                sink.append(e)
                continue
            yield lineno, obj


def is_document(path: Path) -> bool:
    """True when the file is one JSON document over several lines (pretty-printed, or an array) rather than
    JSON lines: its first non-blank line is not a complete JSON object on its own, nor is the next one (JSON
    lines whose first line is broken are still JSON lines)."""
    lines: list[bytes] = []
    with path.open("rb") as f:
        for raw in f:
            if raw.strip():
                lines.append(raw)
                if len(lines) == 2:
                    break
    parsed: list[Any] = []
    for raw in lines:
        try:
            parsed.append(json.loads(raw))
        except (ValueError, RecursionError):
            parsed.append(None)
    if not lines:
        return False
    if parsed[0] is not None:
        return not isinstance(parsed[0], dict)
    if lines[0].lstrip()[:1] not in (b"{", b"["):
        return False  # garbage: reported as a broken line
    return not (len(parsed) > 1 and isinstance(parsed[1], dict))


def whole_document(path: Path) -> Any:
    """The file as one JSON value (pretty-printed, or on its only non-blank line), or None for JSON lines."""
    if is_document(path):
        return load_json(path)
    lines: list[tuple[int, bytes]] = []
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            if raw.strip():
                lines.append((n, raw))
                if len(lines) == 2:
                    break
    return parse_line(path, *lines[0]) if len(lines) == 1 else None


def iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a JSONL file, or of a JSON document that is an array of the same records (a hook that
    copies a session log with ``json.dump(records, indent=2)``); each with the line where it starts."""
    if not is_document(path):
        yield from iter_jsonl(path)
        return
    text = _text(path)
    pos = _skip_ws(text, 0)
    if text[pos:pos + 1] != "[":
        raise TranscriptError(path, 1, "JSON lines, or a JSON array of records")
    if not text.rstrip().endswith("]"):
        raise TranscriptError(path, None, "a complete JSON array (file is truncated)")
    line, at = 1, 0
    pos = _skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] != "]":
        line += text.count("\n", at, pos)
        at = pos
        try:
            obj, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise TranscriptError(path, e.lineno, f"valid JSON ({_at(e)})") from None
        except RecursionError:
            raise TranscriptError(path, line, "a JSON object (nesting too deep)") from None
        if not isinstance(obj, dict):
            raise TranscriptError(path, line, f"a JSON object, found {type(obj).__name__}")
        yield line, obj
        pos = _skip_ws(text, end)
        if text[pos:pos + 1] == ",":
            pos = _skip_ws(text, pos + 1)
        elif text[pos:pos + 1] != "]":
            raise TranscriptError(path, text.count("\n", 0, pos) + 1, "',' or ']' between array records")


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_JSON_DOCUMENT_BYTES:
        raise TranscriptError(path, None, f"a JSON document under {MAX_JSON_DOCUMENT_BYTES // 2**20} MiB "
                                          f"(file is {size // 2**20} MiB; convert it to JSONL to stream it)")
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise TranscriptError(path, line, "UTF-8 text") from None


def _key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def forget() -> None:
    """Drop a document detection kept for an importer that did not ask for it."""
    _kept.clear()


def load_json(path: Path, keep: bool = False) -> Any:
    """Parse a whole JSON document, reporting the line of a syntax error.

    ``keep``: hold the result for the next ``load_json`` of the same unchanged file (detection's parse,
    handed to the importer); that call takes it, so it is held no longer than one import.
    """
    key = _key(path)
    if key in _kept:
        doc = _kept[key] if keep else _kept.pop(key)
        return doc
    doc = _load(path)
    if keep:
        _kept.clear()
        _kept[key] = doc
    return doc


def _load(path: Path) -> Any:
    text = _text(path)
    if not text.strip():
        raise TranscriptError(path, None, "a non-empty JSON document (file is empty)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        cut = e.pos >= len(text.rstrip()) or (e.msg.startswith("Unterminated string") and "\n" not in text[e.pos:])
        what = "a complete JSON document (file is truncated)" if cut else f"valid JSON ({_at(e)})"
        raise TranscriptError(path, e.lineno, what) from None
    except RecursionError:
        raise TranscriptError(path, None, "a JSON document (nesting too deep)") from None


def json_args(value: Any) -> str:
    """Tool-call arguments as JSON text: strings pass through (as the model emitted them)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def as_text(value: Any) -> str:
    """Tool output of any JSON shape as text: strings as-is, content-block lists joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        chunks = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                chunks.append(item["text"])
            elif isinstance(item, str):
                chunks.append(item)
            else:
                chunks.append(json.dumps(item, ensure_ascii=False))
        return "\n".join(chunks)
    return json.dumps(value, ensure_ascii=False)

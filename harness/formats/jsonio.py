"""Reading JSON and JSONL safely: every failure becomes a TranscriptError naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.errors import TranscriptError

# Files above this are refused with a clear message instead of exhausting memory (one JSON document
# must be parsed whole; JSONL streams and has no such limit).
MAX_JSON_DOCUMENT_BYTES = 512 * 1024 * 1024


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; streamed, so size is unbounded."""
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise TranscriptError(path, lineno, f"UTF-8 text (invalid byte at column {e.start + 1})") from None
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                what = "a complete JSON object (line is truncated)" if e.pos >= len(text.rstrip()) else (
                    f"a JSON object ({e.msg} at column {e.colno})")
                raise TranscriptError(path, lineno, what) from None
            except RecursionError:
                raise TranscriptError(path, lineno, "a JSON object (nesting too deep)") from None
            if not isinstance(obj, dict):
                raise TranscriptError(path, lineno, f"a JSON object, found {type(obj).__name__}")
            yield lineno, obj


def load_json(path: Path) -> Any:
    """Parse a whole JSON document, reporting the line of a syntax error."""
    size = path.stat().st_size
    if size > MAX_JSON_DOCUMENT_BYTES:
        raise TranscriptError(path, None, f"a JSON document under {MAX_JSON_DOCUMENT_BYTES // 2**20} MiB "
                                          f"(file is {size // 2**20} MiB; convert it to JSONL to stream it)")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise TranscriptError(path, line, "UTF-8 text") from None
    if not text.strip():
        raise TranscriptError(path, None, "a non-empty JSON document (file is empty)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        what = "a complete JSON document (file is truncated)" if e.pos >= len(text.rstrip()) else (
            f"valid JSON ({e.msg} at column {e.colno})")
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

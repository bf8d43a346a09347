"""``compbench.data.transcript`` — The normalized transcript model every importer produces and every strategy reads.

Immutable value objects: a replay shares one Transcript between many strategy runs, so nothing may
mutate it. Native JSONL (``format_version`` 1) is the lossless serialization: one header record per
transcript followed by its message and recorded-compaction records, so files stream line by line.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

FORMAT_VERSION = 1

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Text:
    """Model-visible text."""

    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Model reasoning ("thinking"). Kept for reports; APIs do not resend it, so it is not context.

    ``encrypted`` marks provider-encrypted blobs (OpenAI ``encrypted_content``): never counted.
    """

    text: str
    encrypted: bool = False
    type: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool invocation. ``args`` is the JSON text of the arguments, as the model emitted it."""

    id: str
    name: str
    args: str
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's output. ``orphan`` flags a result whose call is missing from the transcript."""

    call_id: str
    name: str
    output: str
    is_error: bool = False
    orphan: bool = False
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class Media:
    """An image or file attachment. ``data`` holds the bytes when the source embeds them."""

    kind: str
    mime: str = ""
    data: bytes = b""
    name: str = ""
    type: Literal["media"] = "media"


Part: TypeAlias = Text | Reasoning | ToolCall | ToolResult | Media


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call.

    ``input`` is the whole prompt (cached tokens included), the OpenAI convention; ``cache_read`` and
    ``cache_write`` are the parts of ``input`` read from / written to the prompt cache. Importers of
    Anthropic-style usage (where input excludes the cache) convert, so every consumer sees one meaning.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    @property
    def uncached_input(self) -> int:
        return self.input - self.cache_read - self.cache_write

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(frozen=True, slots=True)
class Message:
    """One message. ``meta`` carries source facts (timestamp, model, native ids, flags)."""

    id: str
    role: Role
    parts: tuple[Part, ...]
    usage: Usage | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The model-visible text parts joined; tool parts excluded."""
        return "\n".join(p.text for p in self.parts if isinstance(p, Text))

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCall))

    def tool_results(self) -> tuple[ToolResult, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolResult))

    def __hash__(self) -> int:
        return hash((self.id, self.role))


@dataclass(frozen=True, slots=True)
class RecordedCompaction:
    """A compaction the source tool itself performed, kept as a real-world data point.

    ``index`` is the position in ``Transcript.messages`` where the tool's post-compaction context
    begins (the first message recorded after the compaction). ``kept_ids`` are the messages the tool
    kept verbatim (Codex replacement history, pi's first kept entry onwards); ``summary_id`` is the
    message holding the summary when the source records it as a message.
    """

    index: int
    tool: str
    trigger: Literal["auto", "manual", "unknown"] = "unknown"
    tokens_before: int | None = None
    summary: str = ""
    summary_id: str = ""
    kept_ids: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.index, self.tool))


@dataclass(frozen=True, slots=True)
class Transcript:
    """A whole recorded session, normalized. ``source`` names the importer's format."""

    id: str
    source: str
    messages: tuple[Message, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    compactions: tuple[RecordedCompaction, ...] = ()
    warnings: tuple[str, ...] = ()

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def steps(self) -> int:
        """Recorded model calls: one per assistant message."""
        return sum(1 for m in self.messages if m.role == "assistant")

    def count_parts(self, kind: type) -> int:
        return sum(1 for m in self.messages for p in m.parts if isinstance(p, kind))


# --- native JSONL -----------------------------------------------------------------------------------


def part_to_dict(p: Part) -> dict[str, Any]:
    if isinstance(p, Text):
        return {"type": "text", "text": p.text}
    if isinstance(p, Reasoning):
        d: dict[str, Any] = {"type": "reasoning", "text": p.text}
        if p.encrypted:
            d["encrypted"] = True
        return d
    if isinstance(p, ToolCall):
        return {"type": "tool_call", "id": p.id, "name": p.name, "args": p.args}
    if isinstance(p, ToolResult):
        d = {"type": "tool_result", "call_id": p.call_id, "name": p.name, "output": p.output}
        if p.is_error:
            d["is_error"] = True
        if p.orphan:
            d["orphan"] = True
        return d
    d = {"type": "media", "kind": p.kind, "mime": p.mime, "name": p.name}
    if p.data:
        d["data"] = base64.b64encode(p.data).decode("ascii")
    return d


def part_from_dict(d: Mapping[str, Any]) -> Part:
    """Inverse of :func:`part_to_dict`; raises KeyError/TypeError/ValueError on malformed input."""
    t = d["type"]
    if t == "text":
        return Text(_str(d["text"]))
    if t == "reasoning":
        return Reasoning(_str(d["text"]), bool(d.get("encrypted", False)))
    if t == "tool_call":
        return ToolCall(_str(d["id"]), _str(d["name"]), _str(d["args"]))
    if t == "tool_result":
        return ToolResult(
            _str(d["call_id"]),
            _str(d["name"]),
            _str(d["output"]),
            bool(d.get("is_error", False)),
            bool(d.get("orphan", False)),
        )
    if t == "media":
        raw = d.get("data")
        data = base64.b64decode(_str(raw), validate=True) if raw else b""
        return Media(_str(d["kind"]), _str(d.get("mime", "")), data, _str(d.get("name", "")))
    raise ValueError(f"unknown part type {t!r}")


def usage_to_dict(u: Usage) -> dict[str, int]:
    return {"input": u.input, "output": u.output, "cache_read": u.cache_read,
            "cache_write": u.cache_write, "reasoning": u.reasoning}


def usage_from_dict(d: Mapping[str, Any]) -> Usage:
    return Usage(*(_int(d.get(k, 0)) for k in ("input", "output", "cache_read", "cache_write", "reasoning")))


def message_to_dict(m: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "message", "id": m.id, "role": m.role,
                         "parts": [part_to_dict(p) for p in m.parts]}
    if m.usage is not None:
        d["usage"] = usage_to_dict(m.usage)
    if m.meta:
        d["meta"] = dict(m.meta)
    return d


def message_from_dict(d: Mapping[str, Any]) -> Message:
    role = d["role"]
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    parts = d["parts"]
    if not isinstance(parts, list):
        raise TypeError("parts must be a list")
    usage = d.get("usage")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise TypeError("meta must be an object")
    return Message(
        _str(d["id"]), role, tuple(part_from_dict(p) for p in parts),
        usage_from_dict(usage) if usage is not None else None, meta,
    )


def compaction_to_dict(c: RecordedCompaction) -> dict[str, Any]:
    return {"type": "compaction", "index": c.index, "tool": c.tool, "trigger": c.trigger,
            "tokens_before": c.tokens_before, "summary": c.summary, "summary_id": c.summary_id,
            "kept_ids": list(c.kept_ids), "meta": dict(c.meta)}


def compaction_from_dict(d: Mapping[str, Any]) -> RecordedCompaction:
    trigger = d.get("trigger", "unknown")
    if trigger not in ("auto", "manual", "unknown"):
        raise ValueError(f"unknown compaction trigger {trigger!r}")
    tb = d.get("tokens_before")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise TypeError("meta must be an object")
    return RecordedCompaction(
        _int(d["index"]), _str(d["tool"]), trigger, None if tb is None else _int(tb),
        _str(d.get("summary", "")), _str(d.get("summary_id", "")),
        tuple(_str(k) for k in d.get("kept_ids", [])), meta,
    )


def header_dict(t: Transcript) -> dict[str, Any]:
    return {"type": "transcript", "format": "compbench", "format_version": FORMAT_VERSION,
            "id": t.id, "source": t.source, "meta": dict(t.meta), "warnings": list(t.warnings)}


def to_records(t: Transcript) -> Iterator[dict[str, Any]]:
    """The native records of one transcript: header, messages, recorded compactions."""
    yield header_dict(t)
    for m in t.messages:
        yield message_to_dict(m)
    for c in t.compactions:
        yield compaction_to_dict(c)


def dumps_line(record: Mapping[str, Any]) -> str:
    """One JSON line; stable key order and no ASCII escaping so files diff and hash reproducibly."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def to_jsonl(t: Transcript) -> str:
    return "".join(dumps_line(r) + "\n" for r in to_records(t))


def to_json(t: Transcript) -> str:
    """The transcript as one JSON document (a dataset row's payload)."""
    return dumps_line({"header": header_dict(t), "messages": [message_to_dict(m) for m in t.messages],
                       "compactions": [compaction_to_dict(c) for c in t.compactions]})


def from_json(text: str) -> Transcript:
    d = json.loads(text)
    return build_transcript(d["header"], d["messages"], d["compactions"])


def build_transcript(header: Mapping[str, Any], messages: Iterable[Mapping[str, Any]],
                     compactions: Iterable[Mapping[str, Any]]) -> Transcript:
    return assemble(header, tuple(message_from_dict(m) for m in messages),
                    tuple(compaction_from_dict(c) for c in compactions))


def assemble(header: Mapping[str, Any], messages: tuple[Message, ...],
             compactions: tuple[RecordedCompaction, ...]) -> Transcript:
    """A transcript from its header record and its messages and compactions already built (a reader that
    validated each record on its own line keeps what it built rather than building it twice)."""
    meta = header.get("meta", {})
    if not isinstance(meta, dict):
        raise TypeError("meta must be an object")
    return Transcript(_str(header["id"]), _str(header["source"]), messages, meta, compactions,
                      tuple(_str(w) for w in header.get("warnings", [])))


def _str(v: object) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {type(v).__name__}")
    return v


def _int(v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, got {type(v).__name__}")
    return v

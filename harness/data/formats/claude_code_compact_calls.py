"""``compbench.data.formats.claude_code_compact_calls`` — Claude Code 2.1.39–2.1.81 save each compaction's own
summarizer call as ``<session>/subagents/agent-acompact-<hex>.jsonl``: the conversation's tail, the summary prompt
and the reply (records ``isSidechain``, ``agentId: "acompact-<hex>"``). That file is part of the compaction it made,
not a session: its reply's usage is the compaction's real summarizer input (the cache read and written included)
and output, its reply the summary the model wrote (with its ``<analysis>``, which Claude Code drops).

Each call is matched to one compaction of the session file beside its folder (or of a sub-agent's file beside
it): by text first (the reply's ``<summary>``, tags and the analysis left out, opens the compaction's summary,
whitespace ignored), else, for the main conversation only, by time (the reply within :data:`WITHIN_SECONDS` of
the summary the log wrote, the nearest; a heuristic for a summary the log reworded). A matched compaction carries
it in ``meta["summarizer_call"]``; a call matched to none is listed in the transcript's
``meta["summarizer_calls_unmatched"]`` and warned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from compbench.data.transcript import RecordedCompaction, Transcript

SUMMARIZER_PREFIX = "agent-acompact-"  # the name Claude Code gives a compaction's summarizer call
WITHIN_SECONDS = 120.0  # a reply this close to a compaction's summary is that compaction's (time fallback)
PROBE_CHARS = 200  # of the reply's summary looked for in the compaction's summary
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.DOTALL)
_TAGS = re.compile(r"</?summary>")


@dataclass(frozen=True, slots=True)
class Call:
    """One summarizer call as its file records it."""

    file: str
    agent_id: str
    model: str
    input_tokens: int  # the request, the cache read and written included (compbench's convention)
    cache_read: int
    cache_write: int
    output_tokens: int
    request_messages: int  # the records before the reply: the conversation tail and the summary prompt
    prompt: str
    reply: str
    at: str  # the reply's timestamp

    def as_meta(self, matched_by: str) -> dict[str, Any]:
        return {"file": self.file, "agent_id": self.agent_id, "model": self.model, "input_tokens": self.input_tokens,
                "cache_read": self.cache_read, "cache_write": self.cache_write, "output_tokens": self.output_tokens,
                "request_messages": self.request_messages, "prompt": self.prompt, "reply": self.reply,
                "timestamp": self.at, "matched_by": matched_by}


def call_files(t: Transcript, path: Path) -> list[Path]:
    """The summarizer calls that may be ``t``'s: in the session's ``subagents`` folder beside the main file, or
    beside a sub-agent's own file."""
    if t.meta.get("sidechain"):
        folder = path.parent
    else:
        names = dict.fromkeys([path.name.removesuffix(".jsonl"), str(t.meta.get("session_id") or "")])
        folder = next((d for n in names if n and (d := path.parent / n / "subagents").is_dir()), path.parent / "-")
    if not folder.is_dir():
        return []
    return sorted(f for f in folder.glob(f"{SUMMARIZER_PREFIX}*.jsonl") if f.is_file())


def with_calls(t: Transcript, path: Path) -> Transcript:
    """``t`` with each of its compactions' summarizer calls on the compaction (``meta["summarizer_call"]``)."""
    files = call_files(t, path)
    if not files:
        return t
    calls = [c for f in files if (c := read_call(f)) is not None]
    taken: dict[int, tuple[Call, str]] = {}
    left: list[Call] = []
    bodies = [_flat(c.summary) for c in t.compactions]
    for call in calls:
        probe = _flat(_TAGS.sub("", _ANALYSIS.sub("", call.reply)))[:PROBE_CHARS]
        k = next((i for i, b in enumerate(bodies) if probe and i not in taken and probe in b), None)
        if k is None:
            left.append(call)
        else:
            taken[k] = (call, "text")
    unmatched = []
    for call in left:
        k = None if t.meta.get("sidechain") else _nearest(t, call, set(taken))
        if k is None:
            unmatched.append(call.file)
        else:
            taken[k] = (call, "time")
    compactions = tuple(replace(c, meta={**c.meta, "summarizer_call": taken[i][0].as_meta(taken[i][1])})
                        if i in taken else c for i, c in enumerate(t.compactions))
    meta, warnings = dict(t.meta), list(t.warnings)
    if unmatched and not t.meta.get("sidechain"):  # a sub-agent's folder holds its siblings' and the session's too
        meta["summarizer_calls_unmatched"] = unmatched
        warnings.append(f"{len(unmatched)} compaction summarizer call{'s' * (len(unmatched) != 1)} "
                        f"({', '.join(unmatched)}) matched none of this session's compactions")
    return replace(t, compactions=compactions, meta=meta, warnings=tuple(warnings))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _nearest(t: Transcript, call: Call, taken: set[int]) -> int | None:
    """The compaction whose summary the log wrote nearest the reply, within :data:`WITHIN_SECONDS`."""
    at = _when(call.at)
    if at is None:
        return None
    best: tuple[float, int] | None = None
    for i, c in enumerate(t.compactions):
        when = _when(t.messages[c.index].meta.get("timestamp")) if 0 <= c.index < len(t.messages) else None
        if i in taken or when is None or (when.tzinfo is None) != (at.tzinfo is None):
            continue
        gap = abs((when - at).total_seconds())
        if gap <= WITHIN_SECONDS and (best is None or gap < best[0]):
            best = (gap, i)
    return best[1] if best else None


def read_call(path: Path) -> Call | None:
    """The summarizer call a file records (None: no reply in it, or it cannot be read)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _read_call(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _read_call(path: str, mtime_ns: int, size: int) -> Call | None:
    import json

    from compbench.data.formats.jsonio import as_text

    records: list[dict[str, Any]] = []
    with open(path, "rb") as f:
        for raw in f:
            try:
                r = json.loads(raw)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("type") in ("user", "assistant") and isinstance(r.get("message"), dict):
                records.append(r)
    # the reply: the assistant records after the last user record (the summary prompt), one record per content
    # block of one response; none: the call did not finish
    first = 1 + max((k for k, r in enumerate(records) if r["type"] == "user"), default=-1)
    if first == 0 or first >= len(records):
        return None
    last = len(records) - 1
    reply = "".join(as_text([b for b in _blocks(r) if b.get("type") == "text"]) for r in records[first:])
    prompt = as_text([b for b in _blocks(records[first - 1]) if b.get("type") == "text"])
    fresh, read, write, out = _usage(records[last]["message"].get("usage"))
    model = records[last]["message"].get("model")
    agent = records[last].get("agentId")
    return Call(Path(path).name, agent if isinstance(agent, str) else "", model if isinstance(model, str) else "",
                fresh + read + write, read, write, out, first, prompt, reply, str(records[last].get("timestamp") or ""))


def _usage(u: Any) -> tuple[int, int, int, int]:
    """Anthropic's usage: input (the cache excluded), cache read, cache written, output (0 where absent)."""
    def n(k: str) -> int:
        v = u.get(k, 0) if isinstance(u, dict) else 0
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    return n("input_tokens"), n("cache_read_input_tokens"), n("cache_creation_input_tokens"), n("output_tokens")


def _blocks(r: dict[str, Any]) -> list[dict[str, Any]]:
    content = r["message"].get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def summarizer_call(c: RecordedCompaction) -> dict[str, Any] | None:
    """The summarizer call attached to ``c`` (None: the log saved none)."""
    call = c.meta.get("summarizer_call")
    return call if isinstance(call, dict) else None

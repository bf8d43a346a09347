"""``compbench.data.formats.claude_chain`` — Which of a Claude Code file's records form the conversation: rewinds,
resumed sessions, preserved segments.

Split from the importer (``claude_code.py``) because these are questions about the ``parentUuid`` tree and
about the file's sessions, not about what a record holds.

* **Rewinds.** Editing an earlier prompt (``/rewind``) leaves the old branch in the file: a user prompt
  hanging off the chain of the last record beside the chain's own next prompt. Such branches are dropped.
* **Resumed sessions.** Resuming a session writes a new file that starts with the parent session's records
  (under the parent's ``sessionId``) and goes on with its own: the file's own session is the last one in
  it, the earlier ones are the sessions it continues. :func:`session_ids` lists them without parsing the
  file, so an import of a whole project folder can tell, before reading, which files another continues.
* **Preserved segments.** Claude Code 2.1's partial compaction keeps a segment of messages verbatim
  (``compactMetadata.preservedSegment {headUuid, anchorUuid, tailUuid}``, later ``preservedMessages
  {uuids}``): those are the compaction's ``kept_ids``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from compbench.data.transcript import Message, RecordedCompaction

# A record's own "sessionId": key then value, as JSON writes it (compact or indented). A value inside a
# string is escaped (\"sessionId\"), so text that merely mentions the key does not match.
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_CHUNK = 8 * 2**20


class ChainState(Protocol):
    messages: list[Message]
    compactions: list[RecordedCompaction]
    warnings: list[str]
    meta: dict[str, Any]
    links: list[tuple[str, str]]
    parent: dict[str, str | None]
    prompts: set[str]
    last: str | None


def session_ids(path: Path) -> list[str]:
    """The distinct ``sessionId`` values in the file, in order of first appearance; streamed, not parsed."""
    seen: list[str] = []
    tail = b""
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            data = tail + chunk
            for m in _SESSION_ID.finditer(data):
                sid = m.group(1).decode("utf-8", errors="replace")
                if sid not in seen:
                    seen.append(sid)
            tail = data[-512:]  # a key cut by the chunk boundary is found again in the overlap
    return seen


def lineage(sessions: list[str]) -> tuple[str | None, list[str]]:
    """The file's own session (the last) and the sessions it continues (those before it)."""
    return (sessions[-1], sessions[:-1]) if sessions else (None, [])


def preserved_uuids(st: ChainState, metadata: dict[str, Any]) -> list[str]:
    """The uuids a partial compaction kept verbatim: ``preservedMessages.uuids``, or the chain from
    ``preservedSegment.tailUuid`` up to its ``headUuid``; [] when there is none or it cannot be followed."""
    msgs = metadata.get("preservedMessages", metadata.get("preserved_messages"))
    if isinstance(msgs, dict) and isinstance(msgs.get("uuids"), list):
        return [u for u in msgs["uuids"] if isinstance(u, str)]
    seg = metadata.get("preservedSegment", metadata.get("preserved_segment"))
    if not isinstance(seg, dict):
        return []
    head, tail = seg.get("headUuid", seg.get("head_uuid")), seg.get("tailUuid", seg.get("tail_uuid"))
    chain: list[str] = []
    node = tail if isinstance(tail, str) else None
    while node is not None and node not in chain and node in st.parent:
        chain.append(node)
        if node == head:
            return chain[::-1]
        node = st.parent[node]
    return []


def _rewound_roots(st: ChainState) -> set[str]:
    """The re-prompts hanging off the chain of the last record beside the chain's own next prompt: the
    first records of rewound branches."""
    chain: list[str] = []
    seen: set[str] = set()
    node = st.last
    while node is not None and node not in seen and node in st.parent:
        seen.add(node)
        chain.append(node)
        node = st.parent[node]
    children: dict[str | None, list[str]] = {}
    for uid, up in st.parent.items():
        children.setdefault(up if up in st.parent else None, []).append(uid)
    roots: set[str] = set()
    for k, node in enumerate(chain):
        if node in st.prompts:
            up = chain[k + 1] if k + 1 < len(chain) else None  # a rewind to the start re-prompts at the top
            roots.update(c for c in children.get(up, ()) if c not in seen and c in st.prompts)
    return roots


def drop_rewound(st: ChainState) -> None:
    """Drop the messages of rewound branches (and everything below them)."""
    roots = _rewound_roots(st)
    if not roots:
        return
    below: dict[str, list[str]] = {}
    for uid, up in st.parent.items():
        if up is not None:
            below.setdefault(up, []).append(uid)
    dropped: set[str] = set()
    todo = sorted(roots)
    while todo:
        uid = todo.pop()
        if uid not in dropped:
            dropped.add(uid)
            todo.extend(below.get(uid, ()))
    kept = [m for m in st.messages if m.id.split(":", 1)[0] not in dropped]
    position = {m.id: i for i, m in enumerate(kept)}
    st.compactions = [replace(c, index=position[c.summary_id], kept_ids=tuple(k for k in c.kept_ids if k in position))
                      for c in st.compactions if c.summary_id in position]
    st.messages = kept
    st.links = [(uid, up) for uid, up in st.links if uid not in dropped]
    st.meta["abandoned_records"] = len(dropped)
    st.warnings.append(f"dropped {len(dropped)} records of {len(roots)} rewound branches: the conversation is the "
                       "parentUuid chain of the last message")

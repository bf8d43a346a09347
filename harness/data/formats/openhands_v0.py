"""``compbench.data.formats.openhands_v0`` — OpenHands V0 event streams (the OpenHands app and CLI before 1.0).

Shapes, from the writer (All-Hands-AI/OpenHands @ 156d068: ``events/serialization/event.py``, ``storage/
locations.py``, ``core/main.py`` ``save_trajectory_path``, ``server/routes/trajectory.py``):

* a JSON array of events (``save_trajectory_path``; the repository's ``tests/runtime/trajs/*.json``);
* ``{"trajectory": [events]}`` (the app's trajectory download);
* JSON lines, one event a line;
* a session folder ``sessions/<sid>/events/<id>.json`` (one event a file), read through its first event file;
  any other event file named alone is refused, pointing at the folder.

Every event is ``{id, timestamp, source, message, action + args | observation + content + extras, cause?,
tool_call_metadata?, llm_metrics?}``; a file is V0 only if every record is one. The mapping:
:mod:`.openhands_v0_events`. Evaluation and resolver outputs (``output.jsonl``) are :mod:`.openhands_eval`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import iter_jsonl, whole_document
from compbench.data.formats.openai_chat import line_of
from compbench.data.formats.openhands_v0_events import V0Builder
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "openhands-v0"
SOURCES = frozenset({"agent", "user", "environment"})  # events/event.py EventSource
EVENT_FILE = re.compile(r"^(\d+)\.json$")  # storage/locations.py get_conversation_event_filename


def is_event(d: Any) -> bool:
    """A V0 event as ``event_to_dict`` writes it: an int id, a source, and an action with its args or an
    observation with its content and extras."""
    if not isinstance(d, dict) or not isinstance(d.get("id"), int) or isinstance(d.get("id"), bool):
        return False
    if not isinstance(d.get("source"), str) or d["source"] not in SOURCES or not isinstance(d.get("timestamp"), str):
        return False
    if isinstance(d.get("action"), str):
        return isinstance(d.get("args"), dict)
    return isinstance(d.get("observation"), str) and isinstance(d.get("extras"), dict) and "content" in d


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A first line that is a V0 event, or a one-line trajectory download."""
    return first is not None and (is_event(first) or sniff_document(first))


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict) and set(doc) <= {"trajectory", "error"} and isinstance(doc.get("trajectory"), list):
        doc = doc["trajectory"]
    if isinstance(doc, list):
        return bool(doc) and all(is_event(e) for e in doc)
    return is_event(doc)


def read(path: Path) -> Iterator[Transcript]:
    doc = whole_document(path)
    if doc is None or (is_event(doc) and not _session_event(path)):
        yield _read_jsonl(path)
        return
    if is_event(doc):
        yield _read_session(path)
        return
    key: tuple[str, ...] = ()
    if isinstance(doc, dict) and isinstance(doc.get("trajectory"), list):
        doc, key = doc["trajectory"], ("trajectory",)
    if not isinstance(doc, list) or not doc:
        raise TranscriptError(path, 1, "OpenHands V0 events: an array of events, {\"trajectory\": [...]}, JSON lines "
                                       "or a session's events/ folder")
    for i, ev in enumerate(doc):
        if not is_event(ev):
            raise TranscriptError(path, line_of(path, (*key, i)), f"an OpenHands V0 event (item {i}: id, source, "
                                                                   "action + args or observation + content + extras)")

    def where(i: int) -> TranscriptError:
        return TranscriptError(path, line_of(path, (*key, i)), f"a readable OpenHands V0 event (item {i})")

    yield transcript(path.stem, doc, where, {"path": str(path)})


def _session_event(path: Path) -> bool:
    return bool(EVENT_FILE.match(path.name)) and path.parent.name == "events"


def _read_jsonl(path: Path) -> Transcript:
    events: list[dict[str, Any]] = []
    lines: list[int] = []
    for lineno, ev in iter_jsonl(path):
        if not is_event(ev):
            raise TranscriptError(path, lineno, "an OpenHands V0 event on every line (id, source, action + args or "
                                                "observation + content + extras)")
        events.append(ev)
        lines.append(lineno)
    if not events:
        raise TranscriptError(path, None, "OpenHands V0 events (the file has none)")

    def where(i: int) -> TranscriptError:
        return TranscriptError(path, lines[i], "a readable OpenHands V0 event")

    return transcript(path.stem, events, where, {"path": str(path)})


def _read_session(path: Path) -> Transcript:
    """A session folder's events, each in its own file, in id order."""
    files = sorted((int(m.group(1)), p) for p in path.parent.iterdir() if (m := EVENT_FILE.match(p.name)))
    session = path.parent.parent
    if files[0][1].name != path.name:
        raise TranscriptError(path, None, f"a whole session: this is one of its events; import {session}")
    events = []
    for _, p in files:
        ev = whole_document(p)
        if not is_event(ev):
            raise TranscriptError(p, 1, "an OpenHands V0 event (id, source, action + args or observation + content "
                                        "+ extras)")
        events.append(ev)
    paths = [p for _, p in files]

    def where(i: int) -> TranscriptError:
        return TranscriptError(paths[i], 1, "a readable OpenHands V0 event")

    t = transcript(session.name, events, where, {"path": str(session)})
    gaps = sum(1 for k, (idx, _) in enumerate(files) if idx != files[0][0] + k)
    if gaps:
        t = Transcript(t.id, t.source, t.messages, t.meta, t.compactions,
                       (*t.warnings, f"event ids are not contiguous ({gaps} out of sequence): events missing"))
    return t


def transcript(tid: str, events: list[Any], where: Any, meta: dict[str, Any], flat: bool = False,
               source: str = NAME, builder: V0Builder | None = None) -> Transcript:
    b = builder or V0Builder(where, flat)
    for i, ev in enumerate(events):
        b.add(i, ev, events[i + 1] if i + 1 < len(events) and isinstance(events[i + 1], dict) else None)
    if not b.messages:
        raise TranscriptError(str(meta.get("path", tid)), None, "at least one message, action or observation "
                                                                "the agent's history keeps")
    meta = {**meta, "events": dict(sorted(b.counts.items())), "format_version": "v0"}
    if b.models:
        meta["model"] = b.models[0]
    system = next((m for m in b.messages if m.role == "system"), None)
    if system is not None:
        for key in ("openhands_version", "agent_class"):
            if key in system.meta:
                meta[key] = system.meta[key]
        if "openhands_version" in meta:
            meta["tool_version"] = meta["openhands_version"]
    return Transcript(tid, source, tuple(b.messages), meta, tuple(b.compactions), tuple(b.warnings))

"""``compbench.data.formats.openhands`` — OpenHands V1 conversations (software-agent-sdk; OpenHands CLI and app >= 1.0).

Shapes, from the writer (OpenHands/software-agent-sdk @ 611629e: ``conversation/persistence_const.py``,
``state.py`` ``_save_base_state``, ``event_store.py``) and the files seen in the wild:

* **A conversation folder**: ``base_state.json`` (the ``ConversationState`` without its events: agent, its LLM
  and condenser, ``stats``) and ``events/event-<index, 5+ digits>-<event id>.json``, one event a file. The
  folder is read through ``base_state.json``; without one, through its first event file. Any other event file
  named alone is refused, pointing at the folder.
* **One array** ``events.json`` (the events in index order), with the base state beside it as
  ``base_state.json`` or inside ``trajectory.json`` (``{id, created, eventCount, model, baseState}``).
* **JSON lines** (``events.jsonl``, as the agent server's log and the SDK's own test trace): one event a line;
  without a base state, usage comes from its ``stats`` state updates (``ConversationStateUpdateEvent``): a
  call's usage is the growth of the accumulated usage between two updates, taken only where that growth is
  exactly one call (its ``per_turn_token``).

Detection is structural: a base state is an object whose ``agent`` has a ``kind`` and an ``llm``; an event
is ``{id, timestamp, source, kind}`` with a known V1 kind; an array or a JSONL file is V1 only if every
record is such an event. The mapping: :mod:`.openhands_v1_events`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import iter_jsonl, load_json, whole_document
from compbench.data.formats.openai_chat import line_of
from compbench.data.formats.openhands_v1_events import (
    Builder,
    TokenUsage,
    active_branch,
    to_usage,
    usages_of,
)
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "openhands"
BASE_STATE = "base_state.json"  # persistence_const.py
EVENTS_DIR = "events"
EVENT_NAME_RE = re.compile(r"^event-(?P<idx>\d{5,})-(?P<event_id>[0-9a-fA-F\-]{8,})\.json$")  # persistence_const.py
TRAJECTORY = "trajectory.json"
EVENTS_ARRAY = "events.json"
SOURCES = frozenset({"user", "agent", "environment", "hook"})  # event/types.py SourceType
KINDS = frozenset({  # the serialized kinds of sdk/event/*
    "SystemPromptEvent", "MessageEvent", "ActionEvent", "ObservationEvent", "UserRejectObservation",
    "AgentErrorEvent", "Condensation", "CondensationRequest", "CondensationSummaryEvent",
    "ConversationStateUpdateEvent", "ConversationErrorEvent", "PauseEvent", "TokenEvent", "LLMCompletionLogEvent",
    "HookExecutionEvent", "StreamingDeltaEvent", "ACPToolCallEvent", "InterruptEvent", "ServerErrorEvent"})


def is_event(d: Any) -> bool:
    """A V1 event: the envelope every event has, and a known kind (another tool's ``kind`` key is not one)."""
    return (isinstance(d, dict) and isinstance(d.get("kind"), str) and d["kind"] in KINDS
            and isinstance(d.get("id"), str) and isinstance(d.get("timestamp"), str)
            and isinstance(d.get("source"), str) and d["source"] in SOURCES)


def expected(d: Any) -> str:
    """What a record that is not a V1 event should have been, naming an unknown kind."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if isinstance(kind, str) and kind not in KINDS and isinstance(d, dict) and isinstance(d.get("id"), str):
        return f"an OpenHands V1 event of a known kind (not {kind!r}: the kinds of software-agent-sdk @ 611629e)"
    return "an OpenHands V1 event {id, timestamp, source, kind}"


def is_base_state(d: Any) -> bool:
    agent = d.get("agent") if isinstance(d, dict) else None
    return (isinstance(agent, dict) and isinstance(agent.get("kind"), str) and isinstance(agent.get("llm"), dict)
            and isinstance(d.get("id"), str) and ("stats" in d or "execution_status" in d))


def is_trajectory(d: Any) -> bool:
    return isinstance(d, dict) and is_base_state(d.get("baseState")) and "eventCount" in d


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A first line that is a V1 event (the other lines are checked as the file is read), or a base state or
    ``trajectory.json`` written on one line (as the SDK writes every file: ``model_dump_json``)."""
    return first is not None and (is_event(first) or is_base_state(first) or is_trajectory(first))


def sniff_document(doc: Any) -> bool:
    """A base state, a ``trajectory.json``, one event (a file of an ``events/`` folder), or an array of events."""
    if isinstance(doc, list):
        return bool(doc) and all(is_event(e) for e in doc)
    return is_base_state(doc) or is_trajectory(doc) or is_event(doc)


def read(path: Path) -> Iterator[Transcript]:
    doc = whole_document(path)
    if doc is None:
        yield _read_jsonl(path)
        return
    if is_base_state(doc):
        yield _read_folder(path.parent, doc, path)
    elif is_trajectory(doc):
        beside = path.parent / EVENTS_ARRAY
        raise TranscriptError(path, 1, f"a conversation's events: this is its base state; import {beside}"
                              if beside.exists() else "a conversation's events (this trajectory.json holds "
                              "only its base state, and no events.json is beside it)")
    elif isinstance(doc, list):
        yield _read_array(path, doc)
    elif is_event(doc) and EVENT_NAME_RE.match(path.name) and path.parent.name == EVENTS_DIR:
        yield _read_event_file(path)
    elif is_event(doc):
        yield _read_jsonl(path)
    else:
        raise TranscriptError(path, 1, "an OpenHands conversation: its base_state.json, its events folder, "
                                       "an events.json array or events.jsonl (one event alone is not a transcript)")


def event_files(events_dir: Path) -> list[tuple[int, Path]]:
    """The folder's event files in index order."""
    found = []
    for p in events_dir.iterdir() if events_dir.is_dir() else ():
        m = EVENT_NAME_RE.match(p.name)
        if m and p.is_file():
            found.append((int(m.group("idx")), p))
    return sorted(found)


def _read_event_file(path: Path) -> Transcript:
    conv = path.parent.parent
    if (conv / BASE_STATE).is_file():
        raise TranscriptError(path, None, f"a whole conversation: this is one of its events; import {conv} "
                                          f"(or its {BASE_STATE})")
    files = event_files(path.parent)
    if files and files[0][1].name != path.name:
        raise TranscriptError(path, None, f"a whole conversation: this is one of its events; import {conv}")
    return _read_folder(conv, None, path)


def _read_folder(conv: Path, base: dict[str, Any] | None, entry: Path) -> Transcript:
    files = event_files(conv / EVENTS_DIR)
    if not files:
        raise TranscriptError(entry, None, f"the conversation's events in {conv / EVENTS_DIR} "
                                           "(event-NNNNN-<id>.json files); none found")
    events: list[dict[str, Any]] = []
    gaps = sum(1 for k, (idx, _) in enumerate(files) if idx != files[0][0] + k)
    for _, p in files:
        ev = load_json(p)
        if not is_event(ev):
            raise TranscriptError(p, 1, expected(ev))
        events.append(ev)
    paths = [p for _, p in files]

    def where(i: int) -> TranscriptError:
        return TranscriptError(paths[i], 1, f"a readable {events[i].get('kind', 'event')} (an OpenHands V1 event)")

    t = _transcript(entry, events, base, where, str(base["id"]) if base else conv.name)
    if gaps:
        t.warnings.append(f"event files' indexes are not contiguous ({gaps} out of sequence): events missing")
    return t.build()


def _read_array(path: Path, doc: list[Any]) -> Transcript:
    base = None
    for name in (BASE_STATE, TRAJECTORY):
        beside = path.parent / name
        if beside.is_file() and beside != path:
            try:
                found = load_json(beside)
            except TranscriptError:
                continue
            base = found if is_base_state(found) else found.get("baseState") if is_trajectory(found) else None
            if base is not None:
                break
    for i, ev in enumerate(doc):
        if not is_event(ev):
            raise TranscriptError(path, line_of(path, (i,)), f"{expected(ev)} (item {i})")

    def where(i: int) -> TranscriptError:
        return TranscriptError(path, line_of(path, (i,)), f"a readable {doc[i].get('kind')} (item {i})")

    tid = str(base["id"]) if base else (path.parent.name if path.name == EVENTS_ARRAY else path.stem)
    return _transcript(path, doc, base, where, tid).build()


def _read_jsonl(path: Path) -> Transcript:
    events: list[dict[str, Any]] = []
    lines: list[int] = []
    for lineno, ev in iter_jsonl(path):
        if not is_event(ev):
            raise TranscriptError(path, lineno, f"{expected(ev)} on every line")
        events.append(ev)
        lines.append(lineno)
    if not events:
        raise TranscriptError(path, None, "OpenHands V1 events (the file has none)")

    def where(i: int) -> TranscriptError:
        return TranscriptError(path, lines[i], f"a readable {events[i].get('kind')}")

    return _transcript(path, events, None, where, path.parent.name if path.name == "events.jsonl" else path.stem,
                       streamed=True).build()


# --- one transcript -------------------------------------------------------------------------------------------------


class _Pending:
    """A transcript being built (warnings may still be added)."""

    def __init__(self, tid: str, b: Builder, meta: dict[str, Any]) -> None:
        self.tid, self.b, self.meta = tid, b, meta
        self.warnings = b.warnings

    def build(self) -> Transcript:
        return Transcript(self.tid, NAME, tuple(self.b.messages), self.meta, tuple(self.b.compactions),
                          tuple(self.warnings))


def _transcript(path: Path, events: list[dict[str, Any]], base: dict[str, Any] | None, where: Any, tid: str,
                streamed: bool = False) -> _Pending:
    usages = usages_of(base.get("stats")) if base else {}
    note = "base state stats" if usages else ""
    if not usages and streamed:
        usages, note = _usages_from_updates(events), "stats state updates"
    leaf = base.get("leaf_event_id") if base else None
    branch, off = active_branch(events, leaf if isinstance(leaf, str) else None)
    b = Builder(where, usages)
    position = {id(e): i for i, e in enumerate(events)}
    for ev in branch:
        b.add(position[id(ev)], ev)
    b.finish()
    meta: dict[str, Any] = {"path": str(path), "events": dict(sorted(b.kinds.items())), "format_version": "v1"}
    if off:
        meta["off_branch_events"] = off
        b.warnings.append(f"{off} events are on other branches of the conversation tree: the active branch is read")
    if note:
        meta["usage_from"] = note
    if b.models:
        meta["model"] = b.models[0]
        if len(b.models) > 1:
            meta["models"] = b.models
    if b.tools:
        meta["tools"] = b.tools
    if base:
        _base_meta(base, meta)
    if not b.messages:
        raise TranscriptError(path, None, "at least one message, action or observation event")
    return _Pending(tid, b, meta)


def _base_meta(base: dict[str, Any], meta: dict[str, Any]) -> None:
    """What the base state says about the run: the agent LLM (its window), the condenser's configuration."""
    agent = base["agent"]
    llm = agent.get("llm") or {}
    if isinstance(llm.get("model"), str):
        meta.setdefault("model", llm["model"])
        meta["agent_model"] = llm["model"]
    for key in ("max_input_tokens", "max_output_tokens"):
        if isinstance(llm.get(key), int) and not isinstance(llm.get(key), bool) and llm[key] > 0:
            meta[key] = llm[key]
    cond = agent.get("condenser")
    if isinstance(cond, dict) and isinstance(cond.get("kind"), str):
        meta["condenser"] = {k: v for k, v in cond.items() if k != "llm" and not isinstance(v, dict | list)}
    for key in ("execution_status", "max_iterations"):
        if key in base and not isinstance(base[key], dict | list):
            meta[key] = base[key]


def _usages_from_updates(events: list[dict[str, Any]]) -> dict[str, TokenUsage]:
    """A call's usage from two consecutive ``stats`` updates of the agent's LLM, where the growth of its
    accumulated usage is exactly one call (``per_turn_token`` = prompt + completion of the last call); it
    belongs to the next model call recorded after the update."""
    out: dict[str, TokenUsage] = {}
    prev: dict[str, dict[str, Any]] = {}
    waiting: TokenUsage | None = None
    for ev in events:
        if ev.get("kind") == "ConversationStateUpdateEvent" and ev.get("key") == "stats":
            metrics = (ev.get("value") or {}).get("usage_to_metrics") if isinstance(ev.get("value"), dict) else None
            for uid, m in (metrics or {}).items() if isinstance(metrics, dict) else ():
                acc = m.get("accumulated_token_usage") if isinstance(m, dict) else None
                if not isinstance(acc, dict) or uid == "condenser":
                    continue
                before = prev.get(uid, {})
                delta = {k: _num(acc, k) - _num(before, k) for k in
                         ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
                          "reasoning_tokens")}
                if delta["prompt_tokens"] > 0 and delta["prompt_tokens"] + delta["completion_tokens"] == _num(
                        acc, "per_turn_token"):
                    waiting = TokenUsage(to_usage(delta), str(m.get("model_name") or ""), str(uid), 0)
                prev[uid] = acc
        elif waiting is not None and isinstance(ev.get("llm_response_id"), str) and ev["llm_response_id"]:
            out[ev["llm_response_id"]] = waiting
            waiting = None
    return out


def _num(d: dict[str, Any], key: str) -> int:
    v = d.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0

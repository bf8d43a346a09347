"""``compbench.data.formats.cline_events`` — The compactions a Cline, Roo Code or Kilo Code task recorded, each as
the tool's own: what was hidden, what was kept, the summary, the count that triggered it.

**Cline** (cline/cline 9ee618111d58; the API history is never shortened, the deleted range says what the
model saw: the first user/assistant pair and the messages after ``range[1]``):

* *truncation*: ``getNewContextMessagesAndMetadata`` grows ``conversationHistoryDeletedRange`` before a
  request; every ui message created after carries it. A range that first appears inside request N and ends
  before N's user message was applied to N (``getNextTruncationRange`` keeps half or a quarter); strategy
  ``cline``.
* *summarize_task* (auto-compact, ``SummarizeTaskHandler``): the assistant calls ``summarize_task``; only its
  ``context`` parameter is the summary, returned as the tool result ``continuationPrompt(context)``; the
  range then hides everything after the first pair (a range ending at or after N's user message is the
  handler's: it applies from the next request). Strategy ``cline-condense``. Found in the API history alone.
* *condense* (``/smol``, ``CondenseHandler``): the assistant calls ``condense``, the user accepts; the call
  itself (holding the summary) stays. Manual.

**Roo Code / Kilo Code** (RooCodeInc/Roo-Code cb836567180a and the layouts before it, read from the git
history of ``src/core/condense/index.ts``): a summary is an API message ``isSummary: true``. A *user* summary
is the fresh start (cf5d42e1e1, 2026-01): nothing before it stays. An *assistant* summary (7c1185ed33 to
9d65772d24) was inserted before the last ``N_MESSAGES_TO_KEEP = 3`` messages: those stay, and the first
message too when it is the only one before the summary (c4c478023d: ``[first, summary, ...kept]``) or the
only one not tagged ``condenseParent`` (23605bed3f); compbench moves such a summary after the messages it
kept, where it happened. A sliding-window marker (``isTruncationMarker``) hides the messages tagged with its
``truncationParent``; it is moved to where the truncation happened (the time of its ui record; without one,
the fewest kept messages the rule allows, said in its meta). Strategy ``roo-code``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from compbench.data.formats.cline_api import Converted
from compbench.data.formats.cline_ui import Event, Ui
from compbench.data.transcript import Message, RecordedCompaction, Text, ToolCall, ToolResult

ROO_KEEP = 3  # condense/index.ts N_MESSAGES_TO_KEEP, every assistant-summary layout
ROO_HEADING = "## Conversation Summary\n"
SUMMARIZE_INSTRUCTIONS = '<explicit_instructions type="summarize_task">'
CONDENSE_ACCEPTED = "The user has accepted the condensed conversation summary"
_XML_CALL = {name: re.compile(rf"<{name}>\s*<context>([\s\S]*?)(?:</context>|$)") for name in ("summarize_task",
                                                                                                 "condense")}


@dataclass
class Found:
    """What the events module decided: the API messages' order, their roles in a compaction, the records."""

    order: list[int]
    flags: dict[int, str] = field(default_factory=dict)  # API index -> "summary" | "summarizer" | "request" | "marker"
    flagged: dict[int, str] = field(default_factory=dict)  # the messages (positions) that are those artifacts
    records: list[tuple[int, RecordedCompaction]] = field(default_factory=list)  # (API index it sits at, record)
    warnings: list[str] = field(default_factory=list)


def _call(m: Message, name: str) -> str | None:
    """The ``context`` argument of a native ``name`` call, or of its XML form in the text."""
    import json

    for p in m.parts:
        if isinstance(p, ToolCall) and p.name == name:
            try:
                args = json.loads(p.args)
            except ValueError:
                return p.args
            return str(args.get("context", "")) if isinstance(args, dict) else str(args)
    found = _XML_CALL[name].search(m.text)
    return found.group(1).strip() if found else None


def _text_of(conv: Converted, i: int) -> str:
    parts = [p for pos in conv.at.get(i, []) for p in conv.messages[pos].parts]
    return "\n".join(p.text if isinstance(p, Text) else p.output if isinstance(p, ToolResult) else "" for p in parts)


def _assistant(conv: Converted, i: int) -> Message | None:
    pos = conv.assistant_of.get(i)
    return conv.messages[pos] if pos is not None else None


class _Builder:
    def __init__(self, doc: Sequence[Any], conv: Converted, ui: Ui | None, asked: dict[int, int]) -> None:
        self.doc, self.conv, self.ui = doc, conv, ui
        self.asked = asked  # ui index of an api_req_started -> API index of the assistant that answered it
        self.found = Found(list(range(len(doc))))

    def ids(self, indices: Sequence[int]) -> tuple[str, ...]:
        return tuple(self.conv.messages[p].id for i in indices for p in self.conv.at.get(i, [])
                     if p not in self.found.flagged)

    def flag(self, i: int, kind: str) -> str:
        """Mark API message ``i`` as a compaction artifact: of a summary's message only the tool results that
        carry it (a tool-result summary's environment details are a recorded message), of a request only its
        text (the tool results beside it answer earlier calls). Returns the id of the first marked message."""
        self.found.flags[i] = kind
        pos = self.conv.at.get(i, [])
        msgs = [(p, self.conv.messages[p]) for p in pos]
        if kind == "summary" and any(m.role == "tool" for _, m in msgs):
            pos = [p for p, m in msgs if m.role == "tool"][:1]
        elif kind == "request":
            pos = [p for p, m in msgs if m.role == "user"]
        for p in pos:
            self.found.flagged[p] = kind
        return self.conv.messages[pos[0]].id if pos else ""

    def count_before(self, i: int) -> int | None:
        """Cline's count of the request before API message ``i`` (in + out of the assistant message before it;
        None when that one has no recorded usage: an older request's count is not the one compared)."""
        j = next((j for j in range(i - 1, -1, -1) if j in self.conv.assistant_of), None)
        m = _assistant(self.conv, j) if j is not None else None
        return m.usage.input + m.usage.output if m is not None and m.usage is not None else None

    def add(self, at: int, rc: RecordedCompaction) -> None:
        self.found.records.append((at, rc))


# --- Cline -----------------------------------------------------------------------------------------------


def _cline_calls(b: _Builder) -> dict[int, int]:
    """summarize_task and condense calls found in the API history; API index of the call -> of its result."""
    seen: dict[int, int] = {}
    n = len(b.doc)
    for j in range(n):
        m = _assistant(b.conv, j)
        if m is None or j + 1 >= n:
            continue
        ctx = _call(m, "summarize_task")
        if ctx:  # a call without its context is refused by the handler: nothing was compacted
            seen[j] = j + 1
            before = b.count_before(j)
            b.flag(j, "summarizer")
            sid = b.flag(j + 1, "summary")
            if j >= 1 and SUMMARIZE_INSTRUCTIONS in _text_of(b.conv, j - 1):
                b.flag(j - 1, "request")
            b.add(j + 1, RecordedCompaction(
                index=0, tool="cline", trigger="auto", tokens_before=before, summary=ctx, summary_id=sid,
                kept_ids=b.ids([0, 1]), meta={"kind": "summarize_task", "strategy": "cline-condense",
                                              "deleted_range": [2, j]}))
            continue
        ctx = _call(m, "condense")
        if ctx is not None and CONDENSE_ACCEPTED in _text_of(b.conv, j + 1):
            seen[j] = j + 1
            native = any(isinstance(p, ToolCall) for p in m.parts) and m.meta.get("tool_protocol") != "xml"
            end = j - 2 if native else j - 1  # "lastTwo" after the call was stored, else "none" before it
            b.add(j + 1, RecordedCompaction(
                index=0, tool="cline", trigger="manual", summary=ctx,
                kept_ids=b.ids([0, 1, *range(end + 1, j + 1)]),
                meta={"kind": "condense", "strategy": "cline-condense", "deleted_range": [2, end]}))
    return seen


def _request_of_change(ui: Ui, k: int, end: int) -> int | None:
    """Which request (its position in ``ui.requests``) a range first seen on ui message ``k`` applied to."""
    prior = [n for n, r in enumerate(ui.requests) if r.ui <= k]
    if not prior:
        return None
    n = prior[-1]
    r = ui.requests[n]
    if r.ui == k:
        return n  # changed before the request was said (the bump after a summary)
    if r.history_index is not None and end >= r.history_index + 1:
        return n + 1 if n + 1 < len(ui.requests) else None  # a handler's range: from the next request
    return n


def _cline_ranges(b: _Builder, calls: dict[int, int]) -> None:
    """The deleted range's growth, as truncations (a range that hides a summary's span belongs to it)."""
    ui = b.ui
    if ui is None:
        return
    current: tuple[int, int] | None = None
    applied: dict[int, tuple[int, int]] = {}
    for k, rng in ui.ranges:
        if rng is None or rng == current:
            continue
        if current is not None and rng[1] < current[1]:
            current = rng  # a checkpoint restore or a rewind: the range went back, nothing was hidden
            continue
        current = rng
        n = _request_of_change(ui, k, rng[1])
        if n is not None:
            applied[n] = rng
    prev_end = 1
    for n in sorted(applied):
        rng = applied[n]
        a = b.asked.get(ui.requests[n].ui)
        if a is None or a in calls or a - 2 in calls:  # no answer, or the range is a summary's: recorded with it
            prev_end = max(prev_end, rng[1])
            continue
        b.add(a, RecordedCompaction(
            index=0, tool="cline", trigger="auto", tokens_before=b.count_before(a),
            kept_ids=b.ids([0, 1, *range(rng[1] + 1, a)]),
            meta={"kind": "truncation", "strategy": "cline", "deleted_range": list(rng),
                  "hidden_now": rng[1] - max(prev_end, 1), "stand_in": ""}))
        prev_end = rng[1]


# --- Roo Code / Kilo Code --------------------------------------------------------------------------------


def _event(ui: Ui | None, kind: str, key: str, value: Any, nth: int) -> Event | None:
    """The ui record of a summary / truncation: by its id, else the nth of its kind."""
    if ui is None:
        return None
    same = [e for e in ui.events if e.kind == kind]
    by_id = [e for e in same if value is not None and e.data.get(key) == value]
    return by_id[0] if by_id else (same[nth] if nth < len(same) else None)


def _existing(b: _Builder, start: int, ts: float | None, at_least: int) -> int:
    """The last API index after ``start`` that existed at time ``ts``; without a time (or no message stamped
    before it), ``at_least`` messages on."""
    if ts is not None:
        before = [i for i in range(start + 1, len(b.doc))
                  if isinstance(t := b.doc[i].get("ts"), (int, float)) and not isinstance(t, bool) and t < ts]
        if before:
            return max(before)
    return min(start + at_least, len(b.doc) - 1)


def _key(v: Any) -> Any:
    """An id as a set member: a scalar as it is, anything else (a list or object a damaged file holds) by its
    JSON text, so ids still match by equality as ``==`` compares them."""
    return v if v is None or isinstance(v, (str, int, float)) else json.dumps(v, sort_keys=True, default=str)


def _hidden_at(doc: Sequence[Any], mk: int, summaries: list[int], markers: list[int]) -> set[int]:
    """The messages a truncation at marker ``mk`` found hidden already, or hid: by its own or an earlier marker,
    or by a summary before it (all before a fresh-start summary, the tagged ones of an older one)."""
    tids = {_key(doc[x].get("truncationId")) for x in markers if x <= mk}
    out = {i for i, m in enumerate(doc) if _key(m.get("truncationParent")) in tids and m.get("truncationParent")}
    for x in summaries:
        if x < mk:
            cid = doc[x].get("condenseId")
            out |= set(range(x)) if doc[x].get("role") == "user" else {
                i for i, m in enumerate(doc) if cid and m.get("condenseParent") == cid}
    return out


def _move(order: list[int], item: int, after: int) -> None:
    if item == after:  # a summary with nothing after it (an export cut there): it stays where it is
        return
    order.remove(item)
    order.insert(order.index(after) + 1, item)


def _roo(b: _Builder, tool: str) -> None:
    doc = b.doc
    summaries = [i for i, m in enumerate(doc) if m.get("isSummary") is True and "role" in m]
    markers = [i for i, m in enumerate(doc) if m.get("isTruncationMarker") is True]
    for nth, s in enumerate(summaries):
        cid = doc[s].get("condenseId")
        ev = _event(b.ui, "condense_context", "condenseId", cid, nth)
        sid = b.flag(s, "summary")
        text = _text_of(b.conv, s)
        first = text.split("\n\n<system-reminder>", 1)[0]
        summary = ev.data.get("summary") if ev and isinstance(ev.data.get("summary"), str) else (
            first[len(ROO_HEADING):] if first.startswith(ROO_HEADING) else first)
        meta: dict[str, Any] = {"kind": "condense", "strategy": "roo-code", "condense_id": cid}
        if ev is not None:
            meta.update({k: ev.data[k] for k in ("cost", "newContextTokens") if k in ev.data})
        if doc[s].get("role") == "user":
            kept: list[int] = []
            meta["layout"] = "fresh start: a user summary (Roo Code 3.43+)"
        else:
            tagged = [i for i in range(s) if doc[i].get("condenseParent") == cid]
            keep_first = s == 1 or doc[s].get("keepFirst") is True or (
                bool(tagged) and doc[0].get("condenseParent") != cid)
            last = _existing(b, s, None, ROO_KEEP)
            kept = ([0] if keep_first and s > 0 else []) + list(range(s + 1, last + 1))
            meta["layout"] = "assistant summary before the last 3 (Roo Code before 3.43, Kilo Code)"
            _move(b.found.order, s, last)
        trigger: Literal["auto", "manual", "unknown"] = (
            "unknown" if ev is None else "auto" if ev.after_request else "manual")
        prev = ev.data.get("prevContextTokens") if ev else None
        b.add(s, RecordedCompaction(index=0, tool=tool, trigger=trigger, summary=str(summary or ""), summary_id=sid,
                                    tokens_before=int(prev) if isinstance(prev, (int, float)) else None,
                                    kept_ids=b.ids(kept), meta=meta))
    for nth, mk in enumerate(markers):
        tid = doc[mk].get("truncationId")
        ev = _event(b.ui, "sliding_window_truncation", "truncationId", tid, nth)
        b.flag(mk, "marker")
        hidden = {i for i, m in enumerate(doc) if m.get("truncationParent") == tid}
        last = _existing(b, mk, ev.ts if ev else None, len(hidden))
        kept = [i for i in range(last + 1) if i != mk and i not in _hidden_at(doc, mk, summaries, markers)]
        meta = {"kind": "sliding_window", "strategy": "roo-code", "truncation_id": tid, "messages_removed": len(hidden),
                "stand_in": _text_of(b.conv, mk)}
        if ev is None:
            meta["placement"] = "estimated: no ui record of this truncation, placed after the fewest kept messages"
        else:
            meta["newContextTokens"] = ev.data.get("newContextTokens")
        prev = ev.data.get("prevContextTokens") if ev else None
        _move(b.found.order, mk, last)
        b.add(mk, RecordedCompaction(index=0, tool=tool, trigger="auto" if ev else "unknown",
                                     tokens_before=int(prev) if isinstance(prev, (int, float)) else None,
                                     kept_ids=b.ids(kept), meta=meta))


def find(doc: Sequence[Any], conv: Converted, ui: Ui | None, tool: str, asked: dict[int, int]) -> Found:
    """The recorded compactions of a task; ``asked`` maps each request's ui index to the API index answering it."""
    b = _Builder(doc, conv, ui, asked)
    if tool == "cline":
        calls = _cline_calls(b)
        _cline_ranges(b, calls)
    else:
        _roo(b, tool)
    if ui is not None:
        sdk = [e for e in ui.events if e.kind == "compaction" and e.data.get("status") == "completed"]
        if sdk:
            b.found.warnings.append(f"{len(sdk)} compactions of Cline's SDK path recorded in ui_messages.json only "
                                    "(their API history is the SDK's session store): not imported")
    return b.found


def assemble(conv: Converted, found: Found) -> tuple[list[Message], list[RecordedCompaction]]:
    """The messages in the order things happened, the artifacts marked, and each record at its place: its
    summary's message, else the first message of the API message it sits at."""
    from dataclasses import replace

    messages: list[Message] = []
    first_of: dict[int, int] = {}
    for i in found.order:
        for pos in conv.at.get(i, []):
            m = conv.messages[pos]
            if pos in found.flagged:
                m = replace(m, meta={**m.meta, "compaction": found.flagged[pos]})
            first_of.setdefault(i, len(messages))
            messages.append(m)
    at_id = {m.id: k for k, m in enumerate(messages)}
    records = [replace(rc, index=at_id[rc.summary_id] if rc.summary_id in at_id else first_of.get(i, len(messages)))
               for i, rc in found.records]
    return messages, sorted(records, key=lambda rc: rc.index)

"""``compbench.data.formats.gemini_recording`` — Gemini CLI's own chat recordings
(``~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.json[l]``; a sub-agent's in ``chats/<parent>/``).

Followed: google-gemini/gemini-cli ``packages/core/src/services/chatRecordingService.ts`` and
``chatRecordingTypes.ts`` at 5411f113ca (and ``loadConversationRecord``, whose reading this module repeats),
at v0.17.0, v0.20.0, v0.38.0 (the last ``.json``), v0.39.0 (the first ``.jsonl``) and v0.44.0 (``$set``
``messages``, tool responses recorded as user messages); ``packages/cli/src/ui/hooks/useHistoryManager.ts``
and ``useGeminiStream.ts`` (v0.18.0-5411f11) for the ``info`` records.

* Up to v0.38 one JSON object ``{sessionId, projectHash, startTime, lastUpdated, messages[], summary?, ...}``,
  rewritten on each update (a dump of the loader's result adds ``messageCount`` etc.: same reading).
* From v0.39 JSON lines: the metadata line; full ``MessageRecord`` lines (one re-appended with the same
  ``id`` replaces it in place: last wins); ``{"$set": {...}}`` metadata (``messages``: the whole list
  replaced); ``{"$rewindTo": id}`` drops that message and every later one (an unknown id drops all, as the
  loader does). A broken line is an error (or skipped under ``--on-error skip-lines``; the loader skips it).
* ``user`` records are user messages (from v0.44 a tool response is one too: kept once, from the call's
  ``toolCalls[].result``); ``gemini`` records are model calls: ``content`` text, ``thoughts`` as Reasoning,
  ``toolCalls`` as calls followed by their results (one ``tool`` message each), ``tokens`` as Usage (``input``
  = ``promptTokenCount``: the context of that call; ``output`` = candidates + thoughts, OpenAI's convention;
  ``cache_read`` = ``cachedContentTokenCount``). ``info`` / ``error`` / ``warning`` records are the UI's:
  counted in ``meta["ui_records"]``, never context. A tool output the tool masked later (its
  ``<tool_output_masked>`` placeholder synced into the log) is read as first recorded.

Compressions (RecordedCompaction, ``tool="gemini-cli"``):

* an ``info`` record "IMPORTANT: This conversation exceeded the compress threshold. ... (compressed from: X
  to Y tokens)." (v0.18-v0.32) or "Context compressed from N% to M%." (v0.33+): ``auto``; an empty ``info``
  is ``/compress``'s (``manual``), kept only when the next call's recorded input dropped (a ``/compress``
  that failed writes the same record). ``tokens_before`` = the last recorded input before it, the count
  Gemini CLI compared (``lastPromptTokenCount``); ``meta["tokens_after"]`` the next call's input.
* from v0.44 the new history itself: the ``<state_snapshot>`` user record and the :data:`ACK` record, then a
  ``$set`` ``messages`` that starts with them: the summary and the kept messages are known, and the
  replaced ones stay in the transcript before the summary (flagged ``compaction``, as Claude Code's).
* a recording with no UI record at all (v0.17 wrote none) and a recorded input that falls below
  :data:`INFERRED_DROP` of the previous call's: an inferred compression (a heuristic: ``trigger="unknown"``,
  ``meta["inferred"]``).

Before v0.44 the summary and the kept messages are not recorded: ``summary`` is empty and
``meta["kept_unknown"]`` is set.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from compbench.data.formats.gemini_content import SNAPSHOT_TAG, Contents, as_parts, content_text, is_ack
from compbench.data.formats.gemini_export import version_meta
from compbench.data.formats.jsonio import is_document, iter_jsonl, load_json
from compbench.data.transcript import Message, Part, Reasoning, RecordedCompaction, Transcript, Usage
from compbench.errors import TranscriptError

NAME = "gemini-cli"
OLD_INFO = re.compile(r"IMPORTANT: This conversation exceeded the compress threshold\. A compressed context will be "
                      r"sent for future messages \(compressed from: (\d+|unknown) to (\d+|unknown) tokens\)\.")
NEW_INFO = re.compile(r"Context compressed from (\d+)% to (\d+)%\.")
MASKED = "<tool_output_masked"  # toolOutputMaskingService.ts MASKING_INDICATOR_TAG
INFERRED_DROP = 0.5  # heuristic: a compression keeps ~30% of the history and a summary, so the input halves
UI_TYPES = ("info", "error", "warning")


def is_header(rec: Any) -> bool:
    """The metadata line (or a whole legacy record): a session id and a project hash."""
    return isinstance(rec, dict) and isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str)


@dataclass
class _Log:
    """The recording as the loader rebuilds it (``live``), and the history compbench keeps (``order``): the
    same, plus the messages a compression replaced."""

    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    live: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    recs: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)
    kept: dict[str, tuple[str, ...]] = field(default_factory=dict)  # snapshot id -> ids the compression kept
    replaced: set[str] = field(default_factory=set)
    original: dict[str, Any] = field(default_factory=dict)  # call id -> its first unmasked result
    evidence: list[tuple[int, int, str]] = field(default_factory=list)
    rewinds: int = 0
    warnings: list[str] = field(default_factory=list)

    def message(self, rec: dict[str, Any], line: int | None) -> None:
        rid = rec["id"]
        if rid not in self.order:  # new, or re-added after a rewind or a rollback dropped it
            self.order.append(rid)
        self.live[rid] = rec
        self.recs[rid] = rec
        self.lines[rid] = line
        for tc in _list(rec.get("toolCalls")):
            if isinstance(tc, dict) and isinstance(tc.get("id"), str) and tc.get("result") is not None \
                    and MASKED not in str(tc["result"]):
                self.original.setdefault(tc["id"], tc["result"])

    def rewind(self, target: Any, line: int) -> None:
        self.rewinds += 1
        ids = list(self.live)
        if isinstance(target, str) and target in self.live:
            gone = ids[ids.index(target):]
        else:
            gone = ids
            self.warnings.append(f"line {line}: $rewindTo names an unknown message {target!r}: everything dropped, "
                                 "as Gemini CLI's loader does")
        for rid in gone:
            del self.live[rid]
            self.order.remove(rid)

    def set_messages(self, msgs: list[Any], line: int) -> None:
        """A whole new list: a compression when it brings a new snapshot and its acknowledgement, else a sync
        (a rollback drops what is gone; content the tool masked stays as first recorded)."""
        self.evidence.append((44, 0, "$set messages (v0.44+)"))
        for m in msgs:
            if not (isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("type"), str)):
                raise TranscriptError(self.path, line, "message records with string 'id' and 'type' in $set messages")
        recs: list[dict[str, Any]] = msgs
        ids = [m["id"] for m in recs]
        snap = next((ids[k] for k in range(len(recs) - 1) if recs[k].get("type") == "user"
                     and recs[k + 1].get("type") == "gemini" and is_ack(recs[k + 1].get("content"))
                     and ids[k] not in self.kept), None)
        before = set(self.live)
        # the list is the model's history: the UI's records (info, error, warning) are never in it
        gone = [rid for rid, r in self.live.items() if rid not in set(ids) and r.get("type") not in UI_TYPES]
        if snap is not None:
            at = ids.index(snap)
            self.kept[snap] = tuple(i for i in ids[at + 2:] if i in before)
            self.replaced.update(gone)
        else:
            for rid in gone:
                self.order.remove(rid)
        self.live = {}
        for m in recs:
            self.message(m, line)


def read(path: Path, doc: Any = None) -> Transcript:
    """A recording; ``doc``: its JSON document, already parsed."""
    log = _Log(path)
    if doc is not None or is_document(path):
        doc = load_json(path) if doc is None else doc
        if not is_header(doc) or not isinstance(doc.get("messages"), list):
            raise TranscriptError(path, 1, "a Gemini CLI recording: {sessionId, projectHash, messages: [...]}")
        log.evidence.append((0, 38, "one JSON document (up to v0.38)"))
        _header(log, doc)
        for i, m in enumerate(doc["messages"]):
            _record(log, m, None, i)
    else:
        log.evidence.append((39, 0, "JSON lines (v0.39+)"))
        seen_header = False
        for lineno, rec in iter_jsonl(path):
            if "$rewindTo" in rec:
                log.rewind(rec["$rewindTo"], lineno)
            elif isinstance(rec.get("$set"), dict):
                upd = rec["$set"]
                if isinstance(upd.get("messages"), list):
                    log.set_messages(upd["messages"], lineno)
                _header(log, {k: v for k, v in upd.items() if k != "messages"})
            elif isinstance(rec.get("id"), str):
                _record(log, rec, lineno, lineno)
            elif is_header(rec):
                seen_header = True
                _header(log, rec)
                for i, m in enumerate(rec.get("messages") or []):
                    _record(log, m, lineno, i)
            else:
                raise TranscriptError(path, lineno, "a Gemini CLI record: metadata, a message with an 'id', "
                                                    "{\"$set\": {...}} or {\"$rewindTo\": id}")
        if not seen_header:
            raise TranscriptError(path, 1, "a Gemini CLI metadata line {sessionId, projectHash, ...} first")
    return _build(log)


def _header(log: _Log, rec: dict[str, Any]) -> None:
    if isinstance(rec.get("sessionId"), str):
        log.meta.setdefault("session_id", rec["sessionId"])  # a resumed session's later $set renames it
    for src, dst in (("projectHash", "project_hash"), ("startTime", "started_at"), ("lastUpdated", "last_updated"),
                     ("summary", "title"), ("kind", "kind")):
        if isinstance(rec.get(src), str):
            log.meta[dst] = rec[src]
    if isinstance(rec.get("directories"), list):
        log.meta["directories"] = [d for d in rec["directories"] if isinstance(d, str)]


def _record(log: _Log, m: Any, line: int | None, i: int) -> None:
    if not isinstance(m, dict) or not isinstance(m.get("id"), str) or not isinstance(m.get("type"), str):
        raise TranscriptError(log.path, line, f"a message record with string 'id' and 'type' (message {i})")
    log.message(m, line)


# --- the messages ------------------------------------------------------------------------------------------


@dataclass
class _Build:
    log: _Log
    c: Contents
    compactions: list[RecordedCompaction] = field(default_factory=list)
    ui: Counter[str] = field(default_factory=Counter)
    produced: dict[str, list[str]] = field(default_factory=dict)  # record id -> message ids
    last_input: int | None = None
    pending: RecordedCompaction | None = None  # a compression waiting for the next call's input
    masked: int = 0
    models: list[str] = field(default_factory=list)


def _build(log: _Log) -> Transcript:
    where: list[int | None] = []
    b = _Build(log, Contents(str(log.path), lambda i: where[i] if 0 <= i < len(where) else None))
    for rid in log.order:
        rec = log.recs[rid]
        where.append(log.lines.get(rid))
        i = len(where) - 1
        kind = rec["type"]
        if kind in UI_TYPES:
            b.ui[kind] += 1
            if kind == "info":
                _info(b, rec)
        elif kind == "user":
            _user(b, i, rid, rec)
        elif kind == "gemini":
            _gemini(b, i, rid, rec)
        else:
            b.c.skipped[f"record type {kind}"] += 1
    if b.pending is not None:
        _settle(b, None)
    if not b.ui and not any(c.trigger != "unknown" or c.summary for c in b.compactions):
        _infer(b)
    return _transcript(b)


def _user(b: _Build, i: int, rid: str, rec: dict[str, Any]) -> None:
    meta: dict[str, Any] = {"timestamp": rec.get("timestamp")} if isinstance(rec.get("timestamp"), str) else {}
    if any(isinstance(p, dict) and "functionResponse" in p for p in as_parts(b.c, i, rec.get("content"))):
        b.log.evidence.append((44, 0, "tool responses recorded as user messages (v0.44+)"))
    if rid in b.log.kept:
        text = content_text(rec.get("content"))
        meta.update(compaction="summary", gemini="state_snapshot")
        start = len(b.c.messages)
        made = b.c.add(i, rid, "user", rec.get("content"), meta)
        b.produced[rid] = [m.id for m in made]
        kept = tuple(mid for k in b.log.kept[rid] for mid in b.produced.get(k, ()))
        rc = RecordedCompaction(index=start, tool=NAME, trigger="unknown", tokens_before=b.last_input, summary=text,
                                summary_id=made[0].id if made else "", kept_ids=kept,
                                meta={"snapshot_xml": SNAPSHOT_TAG in text, "replaced": len(b.log.replaced)})
        b.compactions.append(rc)
        b.pending = rc
        return
    if b.log.replaced and rid in b.log.replaced:
        meta["compacted"] = True
    made = b.c.add(i, rid, "user", rec.get("content"), meta)
    b.produced[rid] = [m.id for m in made]


def _gemini(b: _Build, i: int, rid: str, rec: dict[str, Any]) -> None:
    meta: dict[str, Any] = {k: rec[k] for k in ("timestamp", "model") if isinstance(rec.get(k), str)}
    if isinstance(rec.get("model"), str):
        b.models.append(rec["model"])
    if is_ack(rec.get("content")) and b.compactions and b.compactions[-1].summary_id \
            and b.c.messages and b.c.messages[-1].id == b.compactions[-1].summary_id:
        made = b.c.add(i, rid, "model", rec.get("content"), {**meta, "compaction": "ack", "synthetic": True})
        b.produced[rid] = [m.id for m in made]
        return
    calls = [tc for tc in _list(rec.get("toolCalls")) if isinstance(tc, dict)]
    call_ids = {tc["id"] for tc in calls if isinstance(tc.get("id"), str)}
    parts: list[Part] = [_thought(t) for t in _list(rec.get("thoughts")) if isinstance(t, dict)]
    own = [p for p in as_parts(b.c, i, rec.get("content"))
           if not (isinstance(p.get("functionCall"), dict) and _str(p["functionCall"].get("id")) in call_ids)]
    parts += b.c.model_parts(i, rid, own)
    for k, tc in enumerate(calls):
        parts.append(b.c.call(i, {"id": tc.get("id"), "name": tc.get("name"), "args": tc.get("args")}, f"{rid}:c{k}"))
    usage = _usage(b, i, rec.get("tokens"))
    if rid in b.log.replaced:
        meta["compacted"] = True
    msg = b.c.append(rid, "assistant", tuple(parts), meta)
    if usage is not None:
        b.c.messages[-1] = msg = replace(msg, usage=usage)
        if b.pending is not None:
            _settle(b, usage.input)
        b.last_input = usage.input
    ids = [msg.id]
    for k, tc in enumerate(calls):
        result = tc.get("result")
        if result is None:
            continue
        if MASKED in str(result) and _str(tc.get("id")) in b.log.original:
            result = b.log.original[tc["id"]]
            b.masked += 1
        ids += [m.id for m in _result(b, i, f"{rid}:r{k}", result, tc, meta)]
    b.produced[rid] = ids


def _result(b: _Build, i: int, mid: str, result: Any, tc: dict[str, Any], meta: dict[str, Any]) -> list[Message]:
    """A tool call's recorded result: its functionResponse (the id and name of the call when the part lacks
    them), the other parts (media, extra text) beside it."""
    parts = as_parts(b.c, i, result)
    if not any("functionResponse" in p for p in parts):
        text = "".join(str(p.get("text", "")) for p in parts)
        parts = [{"functionResponse": {"id": tc.get("id"), "name": tc.get("name"), "response": {"output": text}}}]
    fixed = []
    for p in parts:
        fr = p.get("functionResponse")
        if isinstance(fr, dict):
            p = {"functionResponse": {**fr, "id": fr.get("id") or tc.get("id"),
                                      "name": fr.get("name") or tc.get("name")}}
        fixed.append(p)
    return b.c.add(i, mid, "user", fixed, {k: v for k, v in meta.items() if k == "timestamp"})


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def _str(x: Any) -> str:
    return x if isinstance(x, str) else ""


def _thought(t: dict[str, Any]) -> Reasoning:
    subject, desc = str(t.get("subject") or ""), str(t.get("description") or "")
    return Reasoning(f"**{subject}** {desc}".strip() if subject else desc)


def _usage(b: _Build, i: int, tokens: Any) -> Usage | None:
    if tokens is None:
        return None
    if not isinstance(tokens, dict):
        raise b.c.fail(i, "a 'tokens' object on a gemini message")
    vals: dict[str, int] = {}
    for key in ("input", "output", "cached", "thoughts", "tool"):
        v = tokens.get(key, 0)
        v = 0 if v is None else int(v) if isinstance(v, float) and v.is_integer() else v
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise b.c.fail(i, f"a non-negative integer tokens.{key}")
        vals[key] = v
    return Usage(input=vals["input"], output=vals["output"] + vals["thoughts"], cache_read=min(vals["cached"],
                 vals["input"]), reasoning=vals["thoughts"])


def _info(b: _Build, rec: dict[str, Any]) -> None:
    text = content_text(rec.get("content")).strip()
    old, new = OLD_INFO.fullmatch(text), NEW_INFO.fullmatch(text)
    if not (old or new or not text):
        return
    b.log.evidence.append((18, 32, "the v0.18-v0.32 compression notice") if old else
                          (33, 0, "the v0.33+ compression notice") if new else (18, 0, "a /compress record (v0.18+)"))
    trigger: Literal["auto", "manual"] = "manual" if not text else "auto"
    extra: dict[str, Any] = {"notice": text}
    if old:
        extra.update(notice_tokens=[None if x == "unknown" else int(x) for x in old.groups()])
    elif new:
        extra.update(notice_percent=[int(x) for x in new.groups()])
    last = b.compactions[-1] if b.compactions else None
    if last is not None and last is b.pending and last.summary_id:  # the snapshot just recorded: the same event
        merged = replace(last, trigger=trigger, meta={**last.meta, **extra})
        b.compactions[-1] = b.pending = merged
        return
    tokens = b.last_input if b.last_input else (old and old[1] != "unknown" and int(old[1])) or None
    rc = RecordedCompaction(index=len(b.c.messages), tool=NAME, trigger=trigger, tokens_before=tokens,
                            meta={**extra, "kept_unknown": True})
    b.compactions.append(rc)
    b.pending = rc


def _settle(b: _Build, after: int | None) -> None:
    """The next call's input confirms a compression: a /compress whose input did not drop did nothing."""
    rc = b.pending
    b.pending = None
    if rc is None:
        return
    meta = {**rc.meta, "tokens_after": after}
    if rc.trigger == "manual" and not rc.summary_id and after is not None and b.last_input and after >= b.last_input:
        b.compactions.remove(rc)
        b.log.warnings.append(f"a /compress record the next call's input ({after:,}, was {b.last_input:,}) shows "
                              "had no effect: not a compaction")
        return
    b.compactions[b.compactions.index(rc)] = replace(rc, meta=meta)


def _infer(b: _Build) -> None:
    """No UI record (v0.17 wrote none): a call whose recorded input fell below half the previous one's."""
    prev: tuple[int, int] | None = None  # (message index, input)
    found = []
    for k, m in enumerate(b.c.messages):
        if m.role != "assistant" or m.usage is None or not m.usage.input:
            continue
        if prev is not None and m.usage.input < INFERRED_DROP * prev[1]:
            start = next(j for j in range(prev[0] + 1, k + 1) if b.c.messages[j].role in ("user", "assistant"))
            found.append(RecordedCompaction(index=start, tool=NAME, trigger="unknown", tokens_before=prev[1],
                                            meta={"inferred": f"recorded input fell from {prev[1]:,} to "
                                                              f"{m.usage.input:,} (heuristic)",
                                                  "tokens_after": m.usage.input, "kept_unknown": True}))
        prev = (k, m.usage.input)
    if found:
        b.compactions = sorted([*b.compactions, *found], key=lambda c: c.index)
        b.log.warnings.append(f"{len(found)} compression(s) inferred from a drop in recorded input (no UI record)")


def _transcript(b: _Build) -> Transcript:
    log = b.log
    meta: dict[str, Any] = {"path": str(log.path), **log.meta}
    if b.models:
        meta["model"] = b.models[0]
    if b.ui:
        meta["ui_records"] = dict(sorted(b.ui.items()))
    for key, n in (("rewinds", log.rewinds), ("masked_by_tool", b.masked),
                   ("replaced_by_compression", len(log.replaced))):
        if n:
            meta[key] = n
    if log.evidence:
        meta.update(version_meta(log.evidence))
    tid = str(log.meta.get("session_id") or log.path.stem)
    return Transcript(tid, NAME, tuple(b.c.messages), meta, tuple(b.compactions), (*log.warnings, *b.c.finish()))

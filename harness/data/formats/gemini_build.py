"""``compbench.data.formats.gemini_build`` — A Gemini CLI chat recording's records (as :mod:`.gemini_recording` reads
them) as compbench messages, and the compressions they show.

Compressions (RecordedCompaction, ``tool="gemini-cli"``):

* an ``info`` record "IMPORTANT: This conversation exceeded the compress threshold. ... (compressed from: X
  to Y tokens)." (v0.18-v0.32) or "Context compressed from N% to M%." (v0.33+): ``auto``; an empty ``info``
  is ``/compress``'s (``manual``), kept only when the next call's recorded input dropped (a ``/compress``
  that failed writes the same record). ``tokens_before`` = the last recorded input before it, the count
  Gemini CLI compared (``lastPromptTokenCount``); ``meta["tokens_after"]`` the next call's input.
* from v0.44 the new history itself: the ``<state_snapshot>`` user record and the
  :data:`~.gemini_content.ACK` record, then a ``$set`` ``messages`` that starts with them: the summary and the
  kept messages are known, and the replaced ones stay in the transcript before the summary (flagged
  ``compaction``, as Claude Code's).
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
from typing import Any, Literal

from compbench.data.formats.child_sessions import gemini_child
from compbench.data.formats.gemini_content import SNAPSHOT_TAG, Contents, as_parts, content_text, is_ack
from compbench.data.formats.gemini_export import version_meta
from compbench.data.formats.gemini_log import MASKED, NAME, UI_TYPES, RecordingLog
from compbench.data.transcript import Message, Part, Reasoning, RecordedCompaction, Transcript, Usage

OLD_INFO = re.compile(r"IMPORTANT: This conversation exceeded the compress threshold\. A compressed context will be "
                      r"sent for future messages \(compressed from: (\d+|unknown) to (\d+|unknown) tokens\)\.")
NEW_INFO = re.compile(r"Context compressed from (\d+)% to (\d+)%\.")
INFERRED_DROP = 0.5  # heuristic: a compression keeps ~30% of the history and a summary, so the input halves


@dataclass
class _Build:
    log: RecordingLog
    c: Contents
    compactions: list[RecordedCompaction] = field(default_factory=list)
    ui: Counter[str] = field(default_factory=Counter)
    produced: dict[str, list[str]] = field(default_factory=dict)  # record id -> message ids
    last_input: int | None = None
    pending: RecordedCompaction | None = None  # a compression waiting for the next call's input
    masked: int = 0
    models: list[str] = field(default_factory=list)


def build(log: RecordingLog) -> Transcript:
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
    meta = gemini_child(meta, log.path)  # a sub-agent's recording: its parent session
    tid = str(log.meta.get("session_id") or log.path.stem)
    return Transcript(tid, NAME, tuple(b.c.messages), meta, tuple(b.compactions), (*log.warnings, *b.c.finish()))

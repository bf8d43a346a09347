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

The messages and the compressions the records make: :mod:`.gemini_build`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compbench.data.formats.gemini_build import build
from compbench.data.formats.gemini_log import RecordingLog
from compbench.data.formats.jsonio import is_document, iter_jsonl, load_json
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError


def is_header(rec: Any) -> bool:
    """The metadata line (or a whole legacy record): a session id and a project hash."""
    return isinstance(rec, dict) and isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str)




def read(path: Path, doc: Any = None) -> Transcript:
    """A recording; ``doc``: its JSON document, already parsed."""
    log = RecordingLog(path)
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
    return build(log)


def _header(log: RecordingLog, rec: dict[str, Any]) -> None:
    if isinstance(rec.get("sessionId"), str):
        log.meta.setdefault("session_id", rec["sessionId"])  # a resumed session's later $set renames it
    for src, dst in (("projectHash", "project_hash"), ("startTime", "started_at"), ("lastUpdated", "last_updated"),
                     ("summary", "title"), ("kind", "kind")):
        if isinstance(rec.get(src), str):
            log.meta[dst] = rec[src]
    if isinstance(rec.get("directories"), list):
        log.meta["directories"] = [d for d in rec["directories"] if isinstance(d, str)]


def _record(log: RecordingLog, m: Any, line: int | None, i: int) -> None:
    if not isinstance(m, dict) or not isinstance(m.get("id"), str) or not isinstance(m.get("type"), str):
        raise TranscriptError(log.path, line, f"a message record with string 'id' and 'type' (message {i})")
    log.message(m, line)

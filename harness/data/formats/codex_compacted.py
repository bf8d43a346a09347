"""``compbench.data.formats.codex_compacted`` — What a Codex ``compacted`` record says the new history is.

``CompactedItem`` (codex-rs/protocol) holds ``message`` (a local compaction's summary, empty for a remote one)
and ``replacement_history`` (the new history). Read in openai/codex: ``compact.rs`` (local: the kept user
messages, then one user message ``summary_prefix.md + "\\n" + summary``), ``compact_remote.rs`` (remote v1,
``/responses/compact``: the server's output, ending in one ``compaction`` item with ``encrypted_content``) and
``compact_remote_v2.rs`` at 009bd870 (0.147+: the ordinary Responses endpoint with a ``compaction_trigger``
input item appended to the prompt; exactly one ``compaction`` output item, no fallback; the retained user and
developer messages up to 64,000 tokens, then that item). Both remote paths then put the initial context back
(``process_compacted_history``), so the developer messages and AGENTS.md sit in the history too.

The shapes seen in real rollouts: a history ending in the ``compaction`` item (0.144); one ending in a user
message with no ``compaction`` item and an empty ``message`` (0.140-0.142: the remote summary is not in the log
at all); a local one ends in the summary-prefixed user message, which is the summary, never a kept message.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from compbench.data.formats.codex_builder import MANUAL_COMMAND, TOOL, Builder, is_blob
from compbench.data.transcript import RecordedCompaction

# templates/compact/summary_prefix.md: how a local compaction's summary message starts (every version)
SUMMARY_PREFIX_START = "Another language model started to solve this problem and produced a summary"
SummaryItem = Literal["text", "encrypted", "absent"]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


@dataclass(frozen=True)
class Replacement:
    """The new history a ``compacted`` record describes, as the importer needs it."""

    summary: str  # the summary text, where the log holds it
    summary_item: SummaryItem  # where the summary is: its text, an encrypted item, or nowhere in the log
    kept_texts: frozenset[str]  # the user messages kept verbatim
    added: tuple[tuple[str, str], ...]  # (role, text) of the messages it holds that were never imported
    replay: tuple[tuple[str, str], ...]  # (role, text) a rollout may re-emit after the record, to skip
    encrypted_chars: int | None  # the encrypted summary's length, as Codex sizes it (None: not in the log)
    items: int  # its length

    @property
    def encrypted(self) -> bool:
        """A remote compaction: the summary the model saw is not readable in the log."""
        return self.summary_item != "text"


def replacement(raw_history: Any, message: Any, imported_users: Collection[str]) -> Replacement:
    """Read ``replacement_history`` (``raw_history``) and ``message`` of a ``compacted`` record; ``imported_users``
    are the texts of the user messages already imported (a kept one is one of them)."""
    history = [x for x in raw_history if isinstance(x, dict)] if isinstance(raw_history, list) else []
    messages = [(str(x.get("role")), text_of(x.get("content"))) for x in history if x.get("type") == "message"]
    summary = message if isinstance(message, str) else ""
    blobs = [x.get("encrypted_content") for x in history if x.get("type") == "compaction"]
    prefixed = _summary_message(messages)
    kind: SummaryItem
    if summary:
        kind = "text"
    elif prefixed is not None:
        kind, summary = "text", prefixed.partition("\n")[2]  # a local one whose record left message empty
    elif blobs:
        kind = "encrypted"
    else:
        kind = "absent"  # remote (the message is empty) and its compaction item not in the log
    users = [t for r, t in messages if r == "user" and t != prefixed]
    added = tuple((r, t) for r, t in messages if t != prefixed
                  and (r in ("developer", "system") or (r == "user" and t not in imported_users)))
    # a placeholder where the blob was (REDACTED) is no size Codex estimated: unknown, as for reasoning
    chars = sum(len(b) for b in blobs if isinstance(b, str)) if blobs and all(
        isinstance(b, str) and is_blob(b) for b in blobs) else None
    replay = tuple((r, t) for r, t in messages if r in ("user", "developer", "system"))
    return Replacement(summary, kind, frozenset(users), added, replay, chars if kind == "encrypted" else None,
                       len(history))


def _summary_message(messages: Sequence[tuple[str, str]]) -> str | None:
    """A local compaction's summary message: the last user message, starting with the summary prefix."""
    last = next((t for r, t in reversed(messages) if r == "user"), None)
    return last if last is not None and last.lstrip().startswith(SUMMARY_PREFIX_START) else None


def compacted(b: Builder, line: int, p: dict[str, Any], v2: str = "") -> None:
    mid_turn = b.open is not None or (bool(b.messages) and b.messages[-1].role == "tool")
    b.close()
    imported = {m.text for m in b.messages if m.role == "user" and not m.meta.get("compaction")}
    r = replacement(p.get("replacement_history"), p.get("message"), imported)
    kept = tuple(m.id for m in b.messages if m.role == "user" and not m.meta.get("compaction")
                 and m.text in r.kept_texts)
    trigger: Literal["auto", "manual"]
    if mid_turn:
        trigger, evidence = "auto", "inside a turn (after a tool output or a model call)"
    elif b.last_input.strip().startswith(MANUAL_COMMAND):
        trigger, evidence = "manual", f"the user's last input was {MANUAL_COMMAND}"
    else:
        trigger, evidence = "auto", "between turns, no /compact input recorded (Codex's default path assumed)"
    b.replay = list(r.replay)
    if trigger == "auto" and not mid_turn and b.turn_start == len(b.messages):
        b.compact_only = len(b.compactions)  # nothing else in its turn yet: decided when the turn goes on or ends
        evidence = "at the start of a turn the log ends in (no user input or model call after it)"
    meta: dict[str, Any] = {"line": line, "encrypted": r.encrypted, "summary_item": r.summary_item,
                            "replacement_items": r.items, "trigger_evidence": evidence}
    if b.window is not None:
        meta["model_context_window"] = b.window  # the window in force when it compacted
    made = b.compactions[-1] if b.compactions else None
    if not v2 and made is not None and made.meta.get("recorded_as") and made.index == len(b.messages):
        b.compactions.pop()  # its compaction item came first: the record that follows is the same compaction
        b.unconfirmed = [n for n in b.unconfirmed if n < len(b.compactions)]
        b.v2_trigger = made.meta["line"]
    if b.v2_trigger is not None or v2:
        meta["remote"] = "v2"  # Responses compaction v2: a compaction_trigger item was sent (0.147+)
        b.v2_trigger = None
    if v2:
        meta["recorded_as"] = v2
    # the new history's messages that are no kept message (the developer instructions and the initial context
    # Codex puts back): the recorded row inserts them, as the tool sent them
    if r.added:
        meta["replacement"] = [list(x) for x in r.added]
    if r.encrypted_chars is not None:
        meta["encrypted_chars"] = r.encrypted_chars  # sized as Codex sizes it
    b.unconfirmed.append(len(b.compactions))
    b.compactions.append(RecordedCompaction(index=len(b.messages), tool=TOOL, trigger=trigger,
                                            tokens_before=b.last_total or None, summary=r.summary, kept_ids=kept,
                                            meta=meta))


def compaction_item(b: Builder, line: int, p: dict[str, Any], kind: str) -> None:
    """A compaction's own items in the history: remote v2's ``compaction_trigger`` (the request marker; its
    ``compacted`` record follows) and, should a rollout record the output item without that record, the
    ``compaction`` item itself: then the compaction is made from it (the user messages so far kept, as v2 keeps
    them, and the item)."""
    if kind == "compaction_trigger":
        b.v2_trigger = line
    elif kind == "compaction" and b.v2_trigger is not None:
        users = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": m.text}]}
                 for m in b.messages if m.role == "user" and not m.meta.get("session_prefix")]
        compacted(b, line, {"message": "", "replacement_history": [*users, p]}, v2="compaction item, no record")


def context_compacted(b: Builder, line: int) -> None:
    """Codex's event that a compaction's new history is in force: it follows its ``compacted`` record after the
    records written with it (``world_state``, ``turn_context``, the estimate of the new history), however many."""
    if not b.unconfirmed:
        b.stray_events += 1
        return
    n = b.unconfirmed.pop(0)
    c = b.compactions[n]
    b.compactions[n] = replace(c, meta={**c.meta, "event_line": line})


def estimate_after(b: Builder, p: dict[str, Any]) -> None:
    """The zero-input token count Codex writes right after a compaction: its estimate of the new history
    (base instructions + items, bytes / 4), the size it compares with its limit from then on."""
    info = p.get("info")
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not b.compactions or not isinstance(last, dict) or last.get("input_tokens") != 0:
        return
    total = last.get("total_tokens")
    c = b.compactions[-1]
    if isinstance(total, int) and c.index == len(b.messages) and "estimate_after" not in c.meta:
        b.compactions[-1] = replace(c, meta={**c.meta, "estimate_after": total})

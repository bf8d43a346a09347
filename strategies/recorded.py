"""``compbench.strategies.recorded`` — ``recorded``: each log's own compactions, replayed where its tool made them.

The user's baseline is what their tool did. A log records its tool's compactions
(:class:`compbench.data.transcript.RecordedCompaction`: where, the real summary, what was kept): this row
replays them *as it ran*, at the recorded steps, with the real summary text and the messages the tool kept,
so its tokens, dollars, cache, re-acquisition and effective savings are computed exactly as every other row's
and it is the line a user's verdict starts from. Its summaries are the real ones; other rows' come from the
run's summarizer (the comparison says so).

At the first model call after a recorded compaction (its ``index`` is the first message recorded after it)
the view becomes what :func:`compbench.data.recorded.segment` says the tool's context was: the messages the
tool kept (before the summary, or where the log put it: OpenHands' ``summary_offset``), the summary as a
user message, then what was recorded after the compaction. The summary's request is charged as the tool paid
for it: the context it summarized and the summary it wrote (:attr:`SummaryRequest.answer`). A compaction
without a summary (a truncation, OpenHands' forgetting) inserts what the log shows instead, its stand-in.
Codex's new history is the replacement history its rollout records: the user messages it kept, and the
developer instructions and initial context it put back (``meta["replacement"]``, inserted as the tool sent them).
A remote compaction's summary is encrypted: where the rollout holds its blob (0.77) a stand-in takes the size
Codex itself estimates for it (:func:`codex_estimate`); where it holds neither text nor blob (the 0.14x rollouts
of ../shared) the summary's size is unknown, and left out.

Where a log records no compaction but its recorded input falls (a tool whose logs carry no marker), a
compaction is inferred at the fall by TraceLab's rule: the prompt drops by at least 25% and 8,000 tokens from
at least 32,000, and stays down (the next prompt regains less than half the fall: :func:`inferred_falls`); what the tool kept is then unknown,
so the view keeps the recorded messages after the fall and a stand-in sized to the recorded prompt. A log
that records nothing and shows no fall is the ``none`` row.

Claude Code attaches files again after a compaction (the recent files, the invoked skills and the
plan file), and before 2.1.217 its log does not record them: the row attaches them as Claude Code does for the
compaction's version, as the ``claude-code`` strategy models it (:mod:`compbench.strategies.claude_code_restore`:
the files as the log last shows them, 5 of them, 5,000 tokens each, 50,000 together). What else the tool sends
then and its log lacks (a SessionStart hook's output, the todo list) is not modelled. Where the log records
what was attached (2.1.217's ``attachment`` records after the summary: ``meta["attached"]``), that is sent instead
of the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    Action,
    Compact,
    Insert,
    Keep,
    Message,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    ToolCall,
    Transcript,
    Usage,
    param,
    strategy,
    touches,
)
from compbench.sdk.kinds import INFERRED_META, RECORDED, RECORDED_META
from compbench.strategies.claude_code import NEWEST as CLAUDE_CODE_NEWEST
from compbench.strategies.claude_code import PRESETS as CLAUDE_CODE_PRESETS
from compbench.strategies.claude_code import version_preset
from compbench.strategies.claude_code_restore import preset_attachments, restored_files

PROMPT_STANDIN = "(the tool's own instruction to summarize: its text is not in the log)"
# TraceLab's rule for a compaction a log does not mark: a fall of the recorded prompt
FALL_SHARE = 0.25
FALL_TOKENS = 8_000
FALL_FROM = 32_000
ENCRYPTED_TITLE = "[Codex's encrypted summary: in the log as a blob, sized as Codex estimates it]\n"
# What a log lacks of the context its tool sent after a compaction, named beside each compaction the row replays
# (``recorded_lacks`` in the compactions table; the self-check says it, :mod:`compbench.decide.breakdown`)
LACKS_REATTACHED = ("Claude Code's re-attached files, skills and plan (not in its logs before 2.1.217): "
                    "modelled as the tool attaches them")
LACKS_CODEX_SUMMARY = "Codex's remote summary (neither its text nor its encrypted blob is in the rollout): left out"
LACKS_CODEX_BLOB = "Codex's encrypted summary: sized as Codex estimates its blob"
LACKS_INFERRED = "no marker: the compaction is inferred and sized to the recorded prompt (not a check)"
FILLER = "recorded context "  # a stand-in for content the log does not hold: 2 tokens per copy in o200k/cl100k


@dataclass(frozen=True)
class RecordedParams:
    infer: bool = param(True, "Infer a compaction where a log records none but its recorded prompt falls (TraceLab's "
                               "rule: -25% and -8,000 tokens from 32,000 or more, staying down).")


@dataclass(frozen=True)
class Planned:
    """A compaction to replay: at model call ``step`` (the first after it), its record, inferred or not."""

    step: int
    index: int
    trigger: str
    summary: str
    kept: tuple[str, ...]
    offset: int | None
    stand_in: str
    replacement: tuple[tuple[str, str], ...]
    recorded_next_input: int | None
    inferred: bool
    encrypted: bool
    encrypted_tokens: int = 0  # Codex's own estimate of its encrypted summary, where the rollout holds the blob
    attached: tuple[str, ...] = ()  # what the log recorded the tool attaching after it (Claude Code 2.1.217)
    restore: str = ""  # a tool whose re-attachments the log leaves out, modelled: "claude-code@VERSION"
    lacks: str = ""  # what the log lacks of the context the tool sent after it (LACKS_*)
    marked_inferred: bool = False  # a compaction the log records but its importer inferred (no marker in the log)


def _steps(t: Transcript) -> list[int]:
    """Per message index, the model calls (assistant messages the replay counts) before it."""
    out, n = [], 0
    for m in t.messages:
        out.append(n)
        if m.role == "assistant" and not m.meta.get("compaction"):
            n += 1
    out.append(n)
    return out


def _calls(s: SessionView) -> int:
    """The model calls of the transcript being replayed."""
    t = s.context.transcript
    return _steps(t)[-1] if t is not None else 0


def _next_input(t: Transcript, index: int) -> int | None:
    """The prompt the API recorded for the first call at or after message ``index``."""
    for m in t.messages[index:]:
        if m.role == "assistant" and not m.meta.get("compaction"):
            return m.usage.input if m.usage is not None and m.usage.input > 0 else None
    return None


def codex_estimate(chars: object) -> int:
    """Codex's own estimate of an encrypted item (a remote compaction's summary) from its base64 length: 3/4 of
    the length less 650 bytes of envelope, 4 bytes a token, rounded up (``estimate_reasoning_length`` and
    ``approx_tokens_from_byte_count`` in codex-rs ``context_manager/history.rs``); 0 without a blob."""
    if not isinstance(chars, int) or isinstance(chars, bool) or chars <= 0:
        return 0
    return -(-max(0, chars * 3 // 4 - 650) // 4)


def inferred_falls(t: Transcript) -> list[int]:
    """Message indices (the call after the fall) where the recorded prompt falls by TraceLab's rule and the
    next recorded prompt stays below the level it fell from."""
    calls = [(i, m.usage.input) for i, m in enumerate(t.messages)
             if m.role == "assistant" and m.usage is not None and m.usage.input > 0]
    out = []
    for k in range(1, len(calls)):
        (_, before), (i, after) = calls[k - 1], calls[k]
        drop = before - after
        stays = k + 1 >= len(calls) or calls[k + 1][1] < before - drop / 2  # it did not regain most of the fall
        if before >= FALL_FROM and drop >= FALL_TOKENS and drop >= FALL_SHARE * before and stays:
            out.append(i)
    return out


def plan(t: Transcript, infer: bool) -> tuple[Planned, ...]:
    """The compactions the recorded row replays on ``t``, in order."""
    steps = _steps(t)
    out = []
    for rc in t.compactions:
        offset = rc.meta.get("summary_offset")
        stand_in = rc.meta.get("stand_in")
        replacement = rc.meta.get("replacement") or ()
        version = rc.meta.get("tool_version") or t.meta.get("tool_version") or ""
        attached = rc.meta.get("attached")
        blob = codex_estimate(rc.meta.get("encrypted_chars"))
        lacks = (LACKS_REATTACHED if rc.tool == "claude-code" and attached is None
                 else LACKS_CODEX_BLOB if rc.tool == "codex" and not rc.summary and blob
                 else LACKS_CODEX_SUMMARY if rc.tool == "codex" and not rc.summary else "")
        out.append(Planned(steps[rc.index], rc.index, rc.trigger, rc.summary, rc.kept_ids,
                           offset if isinstance(offset, int) and not isinstance(offset, bool) else None,
                           stand_in if isinstance(stand_in, str) else "",
                           tuple((str(r), str(x)) for r, x in replacement), _next_input(t, rc.index), False,
                           bool(rc.meta.get("encrypted")), blob,
                           tuple(str(x) for x in attached) if isinstance(attached, list | tuple) else (),
                           f"claude-code@{version}" if rc.tool == "claude-code" and attached is None else "", lacks,
                           bool(rc.meta.get("inferred"))))
    if not out and infer:
        for i in inferred_falls(t):
            # the call after the fall: the compaction happened before it, after the messages recorded since
            # the previous call (a tool result, the user's turn) that the tool then sent with it
            start = max((j for j in range(i) if t.messages[j].role == "assistant"), default=-1) + 1
            out.append(Planned(steps[i], start, "inferred", "", (), None, "", (), _next_input(t, i), True, False,
                               lacks=LACKS_INFERRED))
    return tuple(out)


class Recorded:
    name = RECORDED

    def __init__(self, p: RecordedParams) -> None:
        self.p = p
        self.next = 0

    def _plan(self, s: SessionView) -> tuple[Planned, ...]:
        t = s.context.transcript
        if t is None:  # a replay outside a run (no transcript to read the record of): nothing was recorded
            return ()
        plans: tuple[Planned, ...] = s.context.derived(f"recorded.plan.{self.p.infer}", lambda: plan(t, self.p.infer))
        return plans

    def before_step(self, s: SessionView) -> Sequence[Action]:
        plans = self._plan(s)
        if self.next < len(plans) and plans[self.next].step <= s.step:
            p = plans[self.next]
            self.next += 1
            return (self._compact(s, p),)
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        """A compaction the log records after its last model call (a /compact the session ended on): made after
        that call, so the row pays for its summary as the tool did."""
        plans = self._plan(s)
        calls = s.context.derived("recorded.calls", lambda: _calls(s))
        if self.next < len(plans) and plans[self.next].step >= calls and s.step >= calls - 1:
            p = plans[self.next]
            self.next += 1
            return (self._compact(s, p),)
        return ()

    def _compact(self, s: SessionView, p: Planned) -> Compact:
        kept = set(p.kept)
        head: list[Slot] = [Keep(e.id) for e in s.entries if e.id in kept and 0 <= e.index < p.index]
        tail: list[Slot] = [Keep(e.id) for e in s.entries if e.index >= p.index]
        inserts: list[Slot] = [Insert("system" if role in ("developer", "system") else "user", text,
                                      origin="synthetic") for role, text in p.replacement]
        meta: dict[str, object] = {RECORDED_META: p.trigger,
                                   "recorded_next_input": p.recorded_next_input if p.recorded_next_input else -1}
        if p.lacks:
            meta["recorded_lacks"] = p.lacks
        request = None
        text = p.summary or p.stand_in
        if p.inferred:
            text = self._sized(s, p, head, tail)
        if p.inferred or p.marked_inferred:  # counted in the results' recorded_inferred
            meta[INFERRED_META] = True
        if p.summary:
            request = SummaryRequest("", (*s.rendered(), Message("recorded-prompt", "user", (Text(PROMPT_STANDIN),))),
                                     tuple(s.rendered()), None, answer=p.summary)
        summary: list[Slot] = []
        if p.summary:
            summary = [Insert("user", with_summary=True, origin="summary")]
        elif text:
            summary = [Insert("user", text, origin="summary")]
        if p.encrypted:
            meta["encrypted"] = True  # a remote compaction: its summary is not in the log
            if p.encrypted_tokens and not text:  # its blob is: a stand-in of the size Codex itself estimates
                summary = [Insert("user", self._filler(s, p.encrypted_tokens, ENCRYPTED_TITLE), origin="summary")]
        at = p.offset if p.offset is not None and p.offset <= len(head) else 0
        attached: list[Slot] = [Insert("user", text, origin="synthetic") for text in p.attached]
        if p.restore:
            attached = [Insert("user", text, origin="synthetic") for text in self._restored(s, p)]
            meta["reattached"] = len(attached)
        view = (*head[:at], *summary, *head[at:], *inserts, *attached, *tail)
        return Compact(f"recorded {p.trigger}", view, request, on_failure="apply", meta=meta)

    def _restored(self, s: SessionView, p: Planned) -> list[str]:
        """What Claude Code attached again after this compaction, where its log does not record it: the recent
        files, the invoked skills and the plan file, as its own strategy models them for the
        compaction's version (:mod:`compbench.strategies.claude_code_restore`)."""
        t = s.context.transcript
        if t is None:
            return []
        preset = CLAUDE_CODE_PRESETS[version_preset(p.restore.partition("@")[2]) or CLAUDE_CODE_NEWEST]
        history = [m for m in t.messages[:p.index] if not m.meta.get("compaction")]
        kept = set(p.kept)
        kept_reads = {x.key for m in history if m.id in kept for part in m.parts if isinstance(part, ToolCall)
                      for x in touches(part) if x.verb == "read"}
        out = [text for _, text in restored_files(history, exclude=kept_reads)]
        return out + preset_attachments(history, preset, [m for m in history if m.id in kept])

    def _sized(self, s: SessionView, p: Planned, head: list[Slot], tail: list[Slot]) -> str:
        """A stand-in for what an unmarked compaction left, as large as the recorded prompt says it was."""
        if not p.recorded_next_input:
            return ""
        ids = {slot.id for slot in (*head, *tail) if isinstance(slot, Keep)}
        held = sum(e.tokens for e in s.entries if e.id in ids) + s.system_tokens
        missing = p.recorded_next_input - held
        if missing <= 0:
            return ""
        return self._filler(s, missing, "[the tool's compacted context, not in the log]\n")

    @staticmethod
    def _filler(s: SessionView, tokens: int, title: str) -> str:
        """A stand-in of about ``tokens`` tokens under the view's counter."""
        n = max(0, (tokens - s.count(title)) // max(1, s.count(FILLER)))
        if n:  # a tokenizer counts repeats unevenly: one correction from the count of the whole
            n = max(0, round(n * (tokens - s.count(title)) / max(1, s.count(FILLER * n))))
        return title + FILLER * n


@strategy(RECORDED, params=RecordedParams, upstream="each log's own compactions (compbench.data.recorded)",
          summary="the tool as it ran: its recorded compactions at the recorded steps, with the real summaries "
                  "and what it kept")
def recorded(p: RecordedParams) -> Recorded:
    return Recorded(p)

"""``compbench.run.missing_usage`` — What real logs leave out of the figures a tool compared, and how a replay fills it
from the tool's own (fidelity and every run: the real tool decided on its own count).

A trigger can only be compared where the log holds what the tool counted. Two gaps are known:

* **Claude Code** writes each content block of a response as it arrives, with the usage of the stream's
  first event: ``output_tokens`` is 1–25 whatever the response was. 2.1 also loses the result of the
  tool call a compaction interrupts (9d7a9d52, fcdd6c6f, 1e0816ef: a ``tool_use`` with no result, then
  the compaction). What the tool counted there is recorded, though: ``compactMetadata.preTokens``. The
  last call before each auto compaction is given the output that makes the tool's count come out at
  preTokens (2.0: usage alone; 2.1: usage + the rough estimate of the recorded messages after it), when
  that is more than the log says. Only that call changes: every earlier step keeps its recorded usage,
  so "it did not compact before" is still tested on the log, and "it compacted here" on the tool's own
  count.
* **Codex 0.14x** rollouts record ``reasoning`` items without their ``encrypted_content`` (0.77's carry
  it), or with a placeholder a checkpoint tool wrote over it (``REDACTED``: the importer drops it, see
  ``formats.codex``), yet Codex counts the encrypted reasoning of earlier turns against its limit. Each call that
  reported reasoning tokens, or whose reasoning item the log shows redacted, gets a stand-in blob of the length a
  real one has: :data:`BLOB_CHARS` plus :data:`BLOB_CHARS_PER_TOKEN` per reported reasoning token. A blob carries a
  fixed envelope whatever the reasoning (the 81 blobs of zero-token calls in the two 0.77 rollouts of
  ../shared/transcripts/codex are 868-1,208 characters, median 996; the others add 6.37 characters a token,
  pooled over 140 calls), and Codex's estimate subtracts only 650 bytes of it: each item counts ~16 tokens
  before its reasoning, which a ratio to the reasoning tokens (1.30, the former stand-in) cannot carry for the
  0.144 sessions' many short items (38-75 tokens each). The envelope, 950, is set from the logs' own
  compactions (design: a session's rule is read off its compactions), inside the 0.77 span: with it the count
  reaches 90% of the window within two calls of 9 of the 10 automatic compactions of the 0.142 and 0.144
  rollouts (996 and 1,000: 8; the former ratio: 8), the tenth 10 calls late until cumulative items (below) were
  read; held out session by session, 7 to 9 of 10 as ties are broken (an inference: the models behind the blobs
  differ, gpt-5.2-codex to gpt-5.6-sol).
  A call whose response holds several reasoning items (gpt-5.6-sol reasons again after a preamble message) is
  stood in item by item, and Codex counts each item's blob (``estimate_item_token_count`` on every encrypted
  ``Reasoning`` before the last user boundary, history.rs). Where each later item's summary begins with the
  earlier one's (the 0.144 rollouts: ``[A, B]`` then ``[A, B, C]``), the items are cumulative: each carries the
  reasoning so far, not a slice of it, so each item gets the share of the call's reasoning tokens its summary
  has reached (its length over the last item's) — :func:`item_blobs`. Otherwise (no summaries, or summaries
  that do not repeat) the first item carries the call's reasoning and the others an envelope. On 019f5d29 the
  earlier turns hold three such calls (858, 130 and 822 reasoning tokens); giving their earlier items an
  envelope only leaves the count 874 tokens under 244,800 where Codex compacted (10 calls late); cumulative,
  it lands on the call. The other compactions move little or not at all (019f5ce9's first has eight such calls
  before it: +3,142 tokens, still on its call; 019f53c2 none; 019f5ccd one of 75 tokens with no summary): 11 of 11
  within two calls with ../shared/real-compactions/codex. The blobs themselves are redacted: that the encrypted
  content is cumulative as the summary is, is read from the summaries, not seen; if the earlier items carried
  under about half (44%) of their summary's share, 019f5d29 would be late again.

* **Crush and Goose** keep no per-call usage (only the session's latest and running totals), yet their
  triggers compare the last call's usage with the window. What the log does record is *where* the tool
  compacted: its count crossed the threshold at the last call before each compaction, and not at the calls
  before (or it would have compacted there). :func:`at_recorded_points` fills exactly that: the last call
  before each compaction reports the whole window, every other call none; the strategy then compacts where
  the tool did, and what it keeps and summarizes there is compared, never its trigger.

Every filled figure is named in the fidelity row's cause.
"""

from __future__ import annotations

from dataclasses import replace

from compbench.data.transcript import Message, Reasoning, RecordedCompaction, ToolCall, ToolResult, Transcript, Usage

BLOB_CHARS = 950  # a reasoning blob's envelope: what a call with no reasoning tokens carries (0.77: 868-1,208)
BLOB_CHARS_PER_TOKEN = 6.37  # blob characters per reported reasoning token (0.77 rollouts, 140 calls, pooled)


DATED_BUILDS = frozenset({"goose", "crush"})  # tools whose logs record no version, only when the session started


def compaction_version(t: Transcript, rc: RecordedCompaction) -> str:
    """The tool version that recorded a compaction: its own record's (a session can be resumed under a newer
    version), else the transcript's; for a tool whose logs record none (Goose, Crush), ``session of YYYY-MM-DD``: the
    build it ran was at most that recent; "" when nothing is known."""
    version = str(rc.meta.get("tool_version") or t.meta.get("tool_version") or "")
    started = t.meta.get("started_at")
    if not version and t.source in DATED_BUILDS and isinstance(started, str) and len(started) >= 10:
        return f"session of {started[:10]}"
    return version


def complete(t: Transcript) -> tuple[Transcript, dict[int, str]]:
    """``t`` with the gaps above filled, and per recorded compaction (by position) what was filled."""
    if t.source == "claude-code":
        return _claude_code(t)
    if t.source == "codex":
        return _codex(t)
    return t, {}


def _claude_code(t: Transcript) -> tuple[Transcript, dict[int, str]]:
    from compbench.strategies.claude_code import rough_tokens, version_preset

    messages = list(t.messages)
    notes: dict[int, str] = {}
    for n, rc in enumerate(t.compactions):
        if rc.trigger != "auto" or not rc.tokens_before:
            continue
        # 2.1 counts the messages after the last call; the version is the one that recorded this compaction
        trailing_counted = version_preset(str(compaction_version(t, rc))) != "2.0"
        j = next((i for i in range(rc.index - 1, -1, -1) if messages[i].role == "assistant"
                  and messages[i].usage is not None and not messages[i].meta.get("compaction")), None)
        if j is None:
            continue
        m = messages[j]
        u = m.usage
        if u is None:
            continue
        after = [x for x in messages[j + 1: rc.index] if not x.meta.get("compaction")]
        estimate = sum(rough_tokens(x) for x in after) if trailing_counted else 0
        output = rc.tokens_before - u.input - estimate
        if output <= u.output:
            continue
        messages[j] = replace(m, usage=replace(u, output=output))
        answered = {p.call_id for x in after for p in x.parts if isinstance(p, ToolResult)}
        lost = any(isinstance(p, ToolCall) and p.id not in answered for p in m.parts)
        why = "the log lacks the interrupted tool call's result" if lost else "output_tokens logged at the first event"
        counted = f"{u.input:,} in + {u.output:,} out" + (f" + {estimate:,} estimated" if estimate else "")
        notes[n] = (f"log's count before it ({counted}) {output - u.output:,} short of preTokens "
                    f"{rc.tokens_before:,} ({why}): added to the last call's output")
    return replace(t, messages=tuple(messages)), notes


def per_call_usage(t: Transcript) -> bool:
    """Does the log record usage per model call? (Crush and Goose keep only session totals.)"""
    return any(m.role == "assistant" and m.usage is not None for m in t.messages)


def at_recorded_points(t: Transcript, window: int) -> Transcript:
    """``t`` with a stand-in usage on every call (see the module docstring): the whole ``window`` at the last
    call before each compaction, zero elsewhere. Only for fidelity's replays: never an overhead's source."""
    last = set()
    for rc in t.compactions:
        j = next((i for i in range(rc.index - 1, -1, -1) if t.messages[i].role == "assistant"
                  and not t.messages[i].meta.get("compaction")), None)
        if j is not None:
            last.add(j)
    messages = tuple(replace(m, usage=Usage(input=window) if i in last else Usage())
                     if m.role == "assistant" and not m.meta.get("compaction") else m
                     for i, m in enumerate(t.messages))
    return replace(t, messages=messages)


def blob_chars(reasoning_tokens: int) -> int:
    """The length of a real encrypted-reasoning blob for a call that reported ``reasoning_tokens``."""
    return round(BLOB_CHARS + BLOB_CHARS_PER_TOKEN * reasoning_tokens)


def item_blobs(m: Message, reasoning_tokens: int) -> list[int]:
    """Stand-in blob lengths for the encrypted reasoning items of one call that reported ``reasoning_tokens``
    (at least one): cumulative items (each summary begins with the one before) by their summary's share, else
    the first item the whole and the others an envelope (see the module docstring)."""
    summaries: list[str] = []
    last = ""
    for p in m.parts:
        if isinstance(p, Reasoning):
            if p.encrypted:
                summaries.append(last)
                last = ""
            else:
                last = p.text  # the item's summary, imported just before its blob
    full = summaries[-1] if summaries else ""
    if len(summaries) > 1 and full and all(s and full.startswith(s) for s in summaries):
        return [blob_chars(round(reasoning_tokens * len(s) / len(full))) for s in summaries]
    return [blob_chars(reasoning_tokens)] + [blob_chars(0)] * (max(len(summaries), 1) - 1)


def _codex(t: Transcript) -> tuple[Transcript, dict[int, str]]:
    if any(isinstance(p, Reasoning) and p.encrypted and p.text for m in t.messages for p in m.parts):
        return t, {}
    messages: list[Message] = []
    filled = 0
    for m in t.messages:
        u: Usage | None = m.usage
        items = sum(1 for p in m.parts if isinstance(p, Reasoning) and p.encrypted)  # redacted: there, emptied
        if m.role == "assistant" and u is not None and (u.reasoning > 0 or items):
            blobs = item_blobs(m, u.reasoning)  # one blob an item
            m = replace(m, parts=(*(Reasoning("A" * n, encrypted=True) for n in blobs), *m.parts))
            filled += 1
        messages.append(m)
    if not filled:
        return t, {}
    how = "redacted" if t.meta.get("reasoning_redacted") else "not recorded"
    note = (f"the rollout records no encrypted reasoning ({how}): {filled} calls' blobs stood in at {BLOB_CHARS} + "
            f"{BLOB_CHARS_PER_TOKEN} characters a reported reasoning token")
    return replace(t, messages=tuple(messages)), dict.fromkeys(range(len(t.compactions)), note)

"""``compbench.strategies.codex`` — ``codex``: Codex CLI's compaction (seed 002 + openai/codex ``codex-rs/core``).

Read in openai/codex: ``compact.rs`` at 0100b103 (``run_compact_task_inner``, ``collect_user_messages``,
``build_compacted_history_with_limit``), ``truncate.rs`` of the same era (``TruncationPolicy::Tokens``),
``templates/compact/{prompt,summary_prefix}.md``, ``openai_model_info.rs`` (``new(window)``: limit =
window * 9 / 10); for today's Codex (the 0.140 / 0.142 rollouts of ../shared/real-compactions are of
it): ``session/turn.rs`` at 000c857e (``run_turn``, ``auto_compact_token_status``,
``run_pre_sampling_compact``), ``context_manager/history.rs`` at 023fad26 (``get_total_token_usage``,
``estimate_item_token_count``), ``compact_remote_v2.rs`` at 009bd870 and ``ModelInfo::
auto_compact_token_limit`` (min(configured, window * 9 / 10)).

Read again for 0.144-0.153: ``context_manager/history.rs`` at a20bf059 (pre code mode: any user message ends the
reasoning estimate) and 023fad26 (0.147+: a non-contextual user or inter-agent message ends it), the same count
either side of 0.144: the last ``total_tokens`` + each encrypted reasoning item before that boundary by its blob +
the items after the last model output, in code mode the ``exec`` outputs (no world_state, no pending input), ``compact_remote_v2.rs`` at 009bd870 (0.147+: the retained user and developer
messages up to 64,000 tokens, preset ``0.147``), ``code-mode/src/description.rs`` at 01e102ef; the window is the
one Codex records (:func:`compbench.measure.models.effective_limits`: 272,000 for gpt-5.6-sol too).

Trigger: Codex compares ``get_total_token_usage`` (the last call's ``total_tokens`` = input incl. cached
+ output) with ``auto_compact_token_limit`` (``>=``) after a sampling request *and its tool calls* ran,
then compacts before sampling again. So the trigger is decided in ``after_step`` from the step's usage
and the compaction is applied in the next ``before_step``, when the turn's tool outputs are in the view
(they are summarized, as in Codex). ``preset=current`` decides in ``before_step`` as today's Codex does:
it adds the items recorded after the last model output (tool outputs), each at its serialized JSON size
/ 4 rounded up (``estimate_item_token_count``); a user message after them is not counted: Codex records
it only after the check (pre-turn compaction "runs before context updates and the new user message are
recorded", turn.rs; a steer waits for the next sampling request).

Encrypted reasoning: the usage a reasoning model reports leaves out the reasoning of earlier turns, which
Codex still sends, so Codex adds an estimate of it (``ContextManager::get_total_token_usage`` +
``get_non_last_reasoning_items_tokens``): each ``reasoning`` item with ``encrypted_content`` before the
last user message counts ``len * 3 / 4 - 650`` bytes (saturating), at 4 bytes per token rounded up.
``reasoning_items="sum"`` is the rule of Codex 0.77 (every user-role message is a boundary; the bytes
are summed, then rounded), ``"per-item"`` today's (contextual user messages such as AGENTS.md and
``<environment_context>`` are no boundary; each item is rounded), used unless the server answers with
``x-reasoning-included`` (then set ``reasoning_items=off``). The 0.77 rollout in ../shared/transcripts
compacted at a reported 210,652 of a 244,800 limit: 210,652 + 39,108 estimated reasoning tokens = 249,760.

Limit: the ``auto_compact_token_limit`` param, else seed 002's per-model values — 180,000 for 200k
models (o3, o4-mini, codex-mini-latest) and "244k" for the 272k GPT-5 family (272,000 * 9 / 10 =
244,800) — else, like ``preset=current`` always, 90% of the window. A set limit is capped: at the
effective window in the seed (``effective_window_percent`` of it, 95: the 258,400 ``model_context_window``
real rollouts report), at ``min(configured, window * 9 / 10)`` today (``limit_cap_percent=90``).

New history: the initial context (system/developer messages and the session-prefix user messages:
AGENTS.md, ``<environment_context>``, ``<user_instructions>``), the most recent real user messages whose
``approx_token_count`` (UTF-8 bytes / 4, rounded up) fits 20,000 tokens — the one that straddles the
budget middle-truncated to the remainder, as ``truncate_text`` does — then one user message:
``SUMMARY_PREFIX + "\\n" + summary``. Earlier summaries (text starting with that prefix) are not user
messages. Today's order (``initial_context_at="last-user"``, ``InitialContextInjection`` in turn.rs): a
mid-turn compaction puts the initial context just before the last real user message (the summary stays
last); a pre-turn one leaves it out, and Codex reinjects it in full before the new prompt, which is
recorded after the compaction and is neither summarized nor among the kept user messages. The real
0.142 replacement histories have that order (user messages, developer, AGENTS.md, the last user
message). A failed summary leaves the history unchanged (Codex retries with backoff first: that is the
summarizer backend's job here). Ghost snapshots and remote compaction (encrypted summary; the server
picks what it keeps) are not modelled: the local rebuild stands in for it.
"""

from __future__ import annotations

import bisect
import json
import math
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from compbench.sdk import (
    NEVER,
    NEXT_QUESTION,
    Accepts,
    Action,
    Compact,
    Entry,
    Insert,
    Keep,
    Message,
    Reasoning,
    SessionView,
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.codex_truncate import APPROX_BYTES_PER_TOKEN, approx_token_count, truncate_text

COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000  # compact.rs
RETAINED_MESSAGE_TOKEN_BUDGET = 64_000  # compact_remote_v2.rs at 009bd870 (remote compaction v2, 0.147+)
REMOTE_V2_SINCE = (0, 147)  # the first version compacting remotely through the Responses endpoint (v2)
NEWEST_READ = (0, 153)  # the newest version whose package (catalogue) and compaction source were read
EFFECTIVE_CONTEXT_WINDOW_PERCENT = 95  # seed 002 (model_family.rs effective_context_window_percent)
AUTO_COMPACT_PERCENT = 90  # openai_model_info.rs default_auto_compact_limit: window * 9 / 10
ReasoningRule = Literal["off", "sum", "per-item"]
ContextAt = Literal["start", "last-user"]
REASONING_RULES: tuple[str, ...] = typing.get_args(ReasoningRule)
SEED_LIMITS = {200_000: 180_000, 272_000: 244_800}  # seed 002: "180k for some models, 244k for others"
SESSION_PREFIX_MARKS = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>")  # initial context
# contextual user messages (event_mapping.rs is_contextual_user_message_content): neither requests nor turn
# boundaries; the interruption marker is not initial context either, so a rebuilt history drops it
CONTEXTUAL_MARKS = (*SESSION_PREFIX_MARKS, "<turn_aborted>")
COMPACT_PROMPT = """You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.

Include:
- Current progress and key decisions made
- Important context, constraints, or user preferences
- What remains to be done (clear next steps)
- Any critical data, examples, or references needed to continue

Be concise, structured, and focused on helping the next LLM seamlessly continue the work."""  # seed 002
SUMMARY_PREFIX = ("Another language model started to solve this problem and produced a summary of its thinking "
                  "process. You also have access to the state of the tools that were used by that language model. "
                  "Use this to build on the work that has already been done and avoid duplicating work. Here is the "
                  "summary produced by the other language model, use the information in this summary to assist with "
                  "your own analysis:")  # seed 002
# Today's templates (openai/codex templates/compact/prompt.md 11baefb5, summary_prefix.md 50a53333): the
# prompt gained "- Goal / user objective" and a final newline; the prefix file has "to  assist" (two spaces).
CURRENT_COMPACT_PROMPT = COMPACT_PROMPT.replace("Include:\n", "Include:\n- Goal / user objective\n") + "\n"
CURRENT_SUMMARY_PREFIX = SUMMARY_PREFIX.replace("to assist", "to  assist")


@dataclass(frozen=True)
class CodexParams:
    """Defaults are seed 002's; ``auto_compact_token_limit`` None derives it from the window."""

    auto_compact_token_limit: int | None = param(
        None, "Compact when a turn's tokens reach this many (None: from the model's window).")
    per_model_limits: bool = param(
        True, "Use seed 002's per-model limits first (off: always the window times the effective percent).")
    effective_window_percent: int = param(
        EFFECTIVE_CONTEXT_WINDOW_PERCENT, "Share of the window Codex treats as usable, in percent (95).", hi=100)
    limit_cap_percent: int | None = param(
        None, "Cap of a configured limit, in percent of the window (None: the effective percent; today 90).", hi=100)
    user_message_max_tokens: int = param(
        COMPACT_USER_MESSAGE_MAX_TOKENS, "Token budget of the recent user messages kept after a compaction (20k).")
    count_pending_items: bool = param(
        False, "Also count the items recorded since the last model output (today's Codex).")
    reasoning_items: ReasoningRule = param(
        "off", "Add earlier turns' encrypted reasoning to the count: 'off', 'sum' (0.77) or 'per-item' (today).")
    initial_context_at: ContextAt = param(
        "start",
        "Where the initial context goes in the rebuilt history: 'start' or before the last real "
        "user message ('last-user', today).")
    compact_prompt: str = param(COMPACT_PROMPT, "The summarization prompt sent with the history.")
    summary_prefix: str = param(SUMMARY_PREFIX, "The text that introduces the summary in the rebuilt history.")


def _serialized_tokens(item: dict[str, object]) -> int:
    return math.ceil(len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()) / APPROX_BYTES_PER_TOKEN)


def reasoning_item_tokens(blob: str) -> int:
    """``estimate_reasoning_length``: an encrypted reasoning blob's decoded bytes less 650, in tokens."""
    return math.ceil(max(0, len(blob.encode()) * 3 // 4 - 650) / APPROX_BYTES_PER_TOKEN)


def item_tokens(m: Message, as_recorded: bool = True) -> int:
    """``estimate_item_token_count``: each response item's serialized JSON / 4, rounded up (a recorded, unchanged
    tool output at its item's recorded size, ``wire_bytes``: code mode's ``input_text`` list and metadata are
    ~40 tokens more than the text); an encrypted reasoning blob by its decoded length."""
    wire = m.meta.get("wire_bytes")
    if as_recorded and m.role == "tool" and isinstance(wire, int):
        return math.ceil(wire / APPROX_BYTES_PER_TOKEN)
    total = 0
    texts = [p.text for p in m.parts if isinstance(p, Text)]
    if texts:
        kind = "output_text" if m.role == "assistant" else "input_text"
        role = {"system": "developer"}.get(m.role, m.role)
        total += _serialized_tokens({"type": "message", "role": role,
                                     "content": [{"type": kind, "text": t} for t in texts]})
    for p in m.parts:
        if isinstance(p, ToolResult):
            total += _serialized_tokens({"type": "function_call_output", "call_id": p.call_id, "output": p.output})
        elif isinstance(p, ToolCall):
            total += _serialized_tokens({"type": "function_call", "name": p.name, "arguments": p.args,
                                         "call_id": p.id})
        elif isinstance(p, Reasoning) and p.encrypted:
            total += reasoning_item_tokens(p.text)
    return total


def is_session_prefix(e: Entry) -> bool:
    """Codex's initial context injected as user messages (AGENTS.md, environment context)."""
    return bool(e.message.meta.get("session_prefix")) or (
        e.role == "user" and e.message.text.lstrip().startswith(SESSION_PREFIX_MARKS))


def is_contextual(e: Entry) -> bool:
    """A user-role message that is no request: initial context, an interruption marker, or a summary the
    tool recorded (``recorded_summary``: where fidelity restarts from the tool's state)."""
    return is_session_prefix(e) or bool(e.message.meta.get("recorded_summary")) or (
        e.role == "user" and e.message.text.lstrip().startswith(CONTEXTUAL_MARKS))


class Codex:
    name = "codex"

    def __init__(self, p: CodexParams) -> None:
        if p.reasoning_items not in REASONING_RULES:
            raise ValueError(f"reasoning_items must be one of {', '.join(REASONING_RULES)}, not {p.reasoning_items!r}")
        if p.initial_context_at not in typing.get_args(ContextAt):
            raise ValueError(f"initial_context_at must be start or last-user, not {p.initial_context_at!r}")
        self.p = p
        self.pending = False
        # incremental state of the reasoning estimate: the view only grows while its revision is unchanged
        self._seen = 0
        self._at: tuple[SessionView, int] | None = None  # the view and revision the estimate is of
        self._cum: list[int] = [0]  # _cum[i]: estimate (bytes for "sum", tokens for "per-item") of entries[:i]
        self._users: list[int] = []  # indices of the user messages that are turn boundaries

    def reasoning_tokens(self, s: SessionView, upto: int | None = None) -> int:
        """Codex's estimate of the encrypted reasoning before the last user message among the first
        ``upto`` entries (all by default; a pre-turn check does not see the new prompt yet). 0 when off."""
        rule = self.p.reasoning_items
        if rule == "off":
            return 0
        entries = s.entries
        if self._at is None or self._at[0] is not s or self._at[1] != s.revision:
            self._seen, self._at, self._cum, self._users = 0, (s, s.revision), [0], []
        for i in range(self._seen, len(entries)):
            e = entries[i]
            est = 0
            for part in e.message.parts:
                if isinstance(part, Reasoning) and part.encrypted and part.text:
                    b = max(0, len(part.text.encode()) * 3 // 4 - 650)
                    est += b if rule == "sum" else math.ceil(b / APPROX_BYTES_PER_TOKEN)
            self._cum.append(self._cum[-1] + est)
            if e.role == "user" and (rule == "sum" or not is_contextual(e)):
                self._users.append(i)
        self._seen = len(entries)
        k = bisect.bisect_left(self._users, len(entries) if upto is None else upto)
        if k == 0:
            return 0
        before = self._cum[self._users[k - 1]]
        return math.ceil(before / APPROX_BYTES_PER_TOKEN) if rule == "sum" else before

    def limit(self, s: SessionView) -> int:
        """``auto_compact_token_limit``, capped at the effective window.

        Codex's ``context_window`` is the model's input limit (272,000 for the GPT-5 family, whose
        litellm entry has 272k in and 128k out of a 400k total), so the input limit is used."""
        window = s.limits.input_limit
        if self.p.auto_compact_token_limit is not None:
            limit = self.p.auto_compact_token_limit
        elif self.p.per_model_limits and window in SEED_LIMITS:
            limit = SEED_LIMITS[window]
        else:
            limit = window * AUTO_COMPACT_PERCENT // 100
        cap = self.p.effective_window_percent if self.p.limit_cap_percent is None else self.p.limit_cap_percent
        return min(limit, window * cap // 100)

    def held_from(self, s: SessionView) -> int:
        """Where the user and developer messages after the last model output and its tool outputs begin:
        today's Codex records them after its check and after a compaction (all of the view when
        ``initial_context_at`` is "start", the older rule, which keeps them in the rebuilt history)."""
        n = len(s.entries)
        if self.p.initial_context_at == "start":
            return n
        i = n
        while i > 0 and s.entries[i - 1].role in ("user", "system"):
            i -= 1
        return i if i == 0 or s.entries[i - 1].role in ("assistant", "tool") else n

    def pending_tokens(self, s: SessionView, upto: int | None = None) -> int:
        """Items after the last model output (among the first ``upto`` entries), as Codex estimates them."""
        entries = s.entries[: len(s.entries) if upto is None else upto]
        total = 0
        for e in reversed(entries):
            if e.role == "assistant":
                break
            total += item_tokens(e.rendered(), as_recorded=not e.pruned)
        return total

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        if self.p.count_pending_items:
            return ()  # decided before the next call, with the items recorded since
        if s.limits.context_window and u.input + u.output + self.reasoning_tokens(s) >= self.limit(s):
            self.pending = True
        return ()

    def wake(self, s: SessionView) -> Wake:
        """A queued compaction runs at the next question; else the seed's check only fires after a step
        whose usage reached the limit. Today's count (pending items, earlier reasoning) grows with
        estimates of the view that are no token count: asked every question."""
        if self.pending or self.p.count_pending_items or self.p.reasoning_items != "off":
            return NEXT_QUESTION
        return Wake(usage=self.limit(s)) if s.limits.context_window else NEVER

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if self.p.count_pending_items and s.last_usage is not None and s.limits.context_window:
            u, upto = s.last_usage, self.held_from(s)
            total = u.input + u.output + self.reasoning_tokens(s, upto) + self.pending_tokens(s, upto)
            self.pending = total >= self.limit(s)
        if not self.pending:
            return ()
        self.pending = False
        return [self.compact(s, "auto compact token limit")]

    def manual(self, s: SessionView) -> Compact:
        """``/compact``: the same rebuilt history, asked by the user."""
        return self.compact(s, "manual")

    def user_messages(self, entries: Sequence[Entry]) -> list[Entry]:
        """``collect_user_messages``: real user text, neither session prefix nor an earlier summary."""
        return [e for e in entries if e.role == "user" and e.message.text and not is_contextual(e)
                and not e.message.text.startswith(self.p.summary_prefix + "\n")]

    def compact(self, s: SessionView, reason: str) -> Compact:
        held_at = self.held_from(s)
        body, held = s.entries[:held_at], s.entries[held_at:]
        initial = [e for e in body if e.role == "system" or is_session_prefix(e)]
        selected: list[Slot] = []
        remaining = self.p.user_message_max_tokens
        for e in reversed(self.user_messages(body)):
            if remaining <= 0:
                break
            text = e.message.text
            tokens = approx_token_count(text)
            if tokens <= remaining:
                # Codex pushes a text-only copy; a text-only recorded message is kept as itself
                plain = all(isinstance(p, Text) for p in e.message.parts)
                selected.append(Keep(e.id) if plain else Insert("user", text, origin="synthetic"))
                remaining -= tokens
            else:
                selected.append(Insert("user", truncate_text(text, remaining), origin="synthetic"))
                break
        selected.reverse()
        prompt = (*(e.rendered() for e in body), Message("codex-compact", "user", (Text(self.p.compact_prompt),)))
        head = {e.id for e in initial}
        source = tuple(e.rendered() for e in body if e.id not in head)
        summary = Insert("user", self.p.summary_prefix + "\n", with_summary=True, origin="summary")
        context = [Keep(e.id) for e in initial]
        later = [Keep(e.id) for e in held]
        view: tuple[Slot, ...]
        if self.p.initial_context_at == "start":
            view = (*context, *selected, summary)
        elif held and body and body[-1].role == "assistant":  # pre-turn: the prompt comes after, context reinjected
            view = (*selected, summary, *context, *later)
        else:  # mid-turn: the context just before the last real user message, the summary last
            view = (*selected[:-1], *context, *selected[-1:], summary, *later)
        return Compact(reason, view, SummaryRequest("", prompt, source),
                       on_failure="unchanged", meta={"limit": self.limit(s)})


def version_preset(version: str) -> str | None:
    """The preset of a Codex version: ``0.77`` up to 0.77 (the rollout it was built on), ``current`` for 0.78-0.146
    (built on 0.140 and 0.142.4 rollouts; on held-out public ones 0.136 and 0.140-0.142.5 compact within one call
    of it, 0.118's mostly 0-2 calls early but twice 19 and 27; on the 0.144 code-mode rollouts of
    ../shared/incoming five of five within two calls; 0.78-0.117 unverified), ``0.147`` from remote compaction v2
    to the newest version read (0.153: the source at the commits above, the bundled catalogue of 0.153.4). A newer
    version gets the newest preset, and the row says no preset models it."""
    try:
        parts = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        return None
    if parts <= (0, 77):
        return "0.77"
    if parts < REMOTE_V2_SINCE:
        return "current"
    return "0.147" if parts <= NEWEST_READ else None


# What Codex's users set (~/.codex/config.toml; openai/codex codex-rs/protocol/src/openai_models.rs, PR #11516):
# since 0.100 the limit is min(the value, 90% of the window); 0 compacts every turn, nothing turns it off.
TOOL = Tool(
    "Codex", ("codex",), newest="0.147", version_preset=version_preset,
    preset_versions={"0.147": "0.147-0.153 (remote compaction v2: retained messages up to 64k tokens)",
                     "current": "0.78-0.146 (built on 0.140 and 0.142 rollouts; 0.144 code mode checked)",
                     "0.77": "up to 0.77"},
    settings=(Setting("auto_compact_token_limit", "model_auto_compact_token_limit", "~/.codex/config.toml (a "
                      "top-level key, or under a [profiles.NAME] you use)",
                      "unset: 90% of the window (244,800 of 272,000)", "model_auto_compact_token_limit = {value}",
                      sweep=(150_000, 200_000), note="clamped to 90% of the window since 0.100; 0 compacts every "
                      "turn", unset_at=244_800.0,
                      accepts=Accepts(0, 244_800, refuse=False, outside="Codex clamps the limit to 90% of the window "
                                      "since 0.100; 0 compacts every turn")),))
CURRENT = {"per_model_limits": False, "count_pending_items": True, "reasoning_items": "per-item",
           "limit_cap_percent": AUTO_COMPACT_PERCENT, "initial_context_at": "last-user",
           "compact_prompt": CURRENT_COMPACT_PROMPT, "summary_prefix": CURRENT_SUMMARY_PREFIX}


@strategy("codex", params=CodexParams, upstream="seed 002 + openai/codex codex-rs/core/src/compact.rs",
          summary="token-limit trigger; initial context + recent user messages <= 20k tokens + prefixed summary",
          presets={"current": CURRENT,
                   # remote compaction v2 (0.147+): the retained user and developer messages up to 64,000 tokens
                   # (compact_remote_v2.rs RETAINED_MESSAGE_TOKEN_BUDGET), then the one compaction item
                   "0.147": {**CURRENT, "user_message_max_tokens": RETAINED_MESSAGE_TOKEN_BUDGET},
                   # Codex 0.77 (Dec 2025): last total + earlier reasoning, summed; no pending items. Its
                   # templates are not pinned here (a ChatGPT login compacts remotely, the prompt unseen):
                   # today's are used.
                   "0.77": {"per_model_limits": False, "reasoning_items": "sum",
                            "compact_prompt": CURRENT_COMPACT_PROMPT, "summary_prefix": CURRENT_SUMMARY_PREFIX}}, tool=TOOL)
def codex(p: CodexParams) -> Codex:
    return Codex(p)

"""``compbench.strategies.openhands_condensers`` — OpenHands' condensers that forget or mask events without a model
(All-Hands-AI/OpenHands @ 156d068).

Read: ``openhands/memory/condenser/impl/{recent_events,amortized_forgetting,conversation_window,
observation_masking,browser_output,llm_attention,pipeline}_condenser.py``, ``core/config/condenser_config.py``
(defaults are the config's: what ``Condenser.from_config`` builds), ``memory/view.py``,
``memory/conversation_memory.py``. Events and what OpenHands renders of them: :mod:`.openhands_events`.

Every condenser runs before the agent's LLM call (``CodeActAgent.step`` → ``condensed_history``; a
``Condensation`` is answered first and the call follows on the condensed view). ``recent-events`` and the
two masking condensers rebuild their view at every step; forgetting is monotone as long as the view only
grows, so compbench applies each as it happens: forgetting as a compaction without summary, masking as a
prune. A masked observation becomes an ``AgentCondensationObservation``: OpenHands renders it as a user
message, and the assistant message whose call it answered can no longer be completed, so that message (and
its other results) disappears too; here its parts are emptied by the same prune (a few tokens of message
overhead remain). The condensation request (a provider's context-window error, ``enable_history_truncation``)
is taken before the call, as a prompt over the input limit: compbench condenses and the call goes through.

Not modelled: ``RecentEventsCondenser`` repeats its head events when the view is shorter than
``max_events`` (``head + view[-tail:]`` overlap); a masked recall observation (no message here); V0's
double newline before consecutive user messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from compbench.errors import UsageError
from compbench.sdk import (
    NEXT_QUESTION,
    Action,
    Compact,
    Prune,
    Reasoning,
    SessionView,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.openhands_events import (
    BROWSER_MASK,
    BROWSER_TOOLS,
    MASKED,
    MAX_MESSAGE_CHARS,
    RECALL_ACTION,
    RECALL_OBS,
    USER_SLOT,
    Event,
    EventState,
    Key,
    cut_tokens,
    event_bound,
    message_char_cuts,
    no_events,
    overflowing,
    rebuild,
    tool_results_of,
    untouched,
    with_long_outputs,
)

SOURCE = "All-Hands-AI/OpenHands openhands/memory/condenser/impl @ 156d068"
URL = re.compile(r"https?://[^\s\"'<>)]+")


class Forgetting:
    """A condenser that forgets events (no summary): ``forget`` picks them, the view follows."""

    name = "openhands"
    reason = "forget"

    def __init__(self, recall: bool = True, max_message_chars: int = MAX_MESSAGE_CHARS) -> None:
        self.state = EventState(recall)
        self.max_message_chars = max_message_chars
        self.less = 0  # tokens this step's observation cuts take out of the prompt

    def forget(self, s: SessionView, evs: list[Event]) -> set[Key]:
        raise NotImplementedError

    def before_step(self, s: SessionView) -> Sequence[Action]:
        evs = self.state.of_view(s)
        cut = message_char_cuts(s, evs, self.max_message_chars)
        cuts: tuple[Action, ...] = (cut,) if cut is not None else ()
        self.less = cut_tokens(s, cut)
        gone = self.forget(s, evs)
        if not gone:
            return cuts
        view = rebuild(s, evs, {ev.key for ev in evs} - gone, None, True, self.state)
        if tuple(getattr(x, "id", "") for x in view) == tuple(e.id for e in s.entries):
            return cuts
        return (*cuts, Compact(self.reason, view, None, meta={"events": len(evs), "forgotten": len(gone)}))

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Each condenser below says when it can next forget; by default, at every question."""
        return NEXT_QUESTION


# --- recent events -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecentEventsParams:
    keep_first: int = param(1, "The first events always kept (RecentEventsCondenserConfig.keep_first).")
    max_events: int = param(100, "Events kept: the first keep_first and the newest (max_events - keep_first).")
    recall_events: bool = param(True, "Count the RecallAction (and first RecallObservation) OpenHands adds per user message.")
    max_message_chars: int = param(MAX_MESSAGE_CHARS, "Each observation is cut to this many characters in the middle before the model sees it (LLMConfig.max_message_chars; negative: never).", lo=None)


class RecentEvents(Forgetting):
    name = "openhands-recent-events"
    reason = "recent events"

    def __init__(self, p: RecentEventsParams) -> None:
        super().__init__(p.recall_events, p.max_message_chars)
        self.p = p

    def forget(self, s: SessionView, evs: list[Event]) -> set[Key]:
        head = evs[: self.p.keep_first]
        tail_length = max(0, self.p.max_events - len(head))
        tail = evs[-tail_length:] if tail_length else evs  # view[-0:] is the whole view
        keep = {ev.key for ev in head} | {ev.key for ev in tail}
        return {ev.key for ev in evs} - keep

    def wake(self, s: SessionView) -> Wake:
        """Events are forgotten once there are more than ``max_events``."""
        if self.p.max_events - self.p.keep_first <= 0:
            return NEXT_QUESTION
        return Wake(grown=(with_long_outputs(event_bound, self.max_message_chars),
                           self.p.max_events + 1 - self.state.count(s)))


# --- amortized forgetting ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AmortizedParams:
    max_size: int = param(100, "Forget when the view has more events than this (AmortizedForgettingCondenserConfig).")
    keep_first: int = param(1, "The first events always kept.")
    recall_events: bool = param(True, "Count the RecallAction (and first RecallObservation) OpenHands adds per user message.")
    max_message_chars: int = param(MAX_MESSAGE_CHARS, "Each observation is cut to this many characters in the middle before the model sees it (LLMConfig.max_message_chars; negative: never).", lo=None)


class AmortizedForgetting(Forgetting):
    name = "openhands-amortized-forgetting"
    reason = "amortized forgetting"

    def __init__(self, p: AmortizedParams) -> None:
        if p.keep_first >= p.max_size // 2 or p.keep_first < 0 or p.max_size < 1:
            raise UsageError(f"openhands-amortized-forgetting: keep_first ({p.keep_first}) must be less than half "
                             f"of max_size ({p.max_size})")
        super().__init__(p.recall_events, p.max_message_chars)
        self.p = p

    def forget(self, s: SessionView, evs: list[Event]) -> set[Key]:
        if not (len(evs) > self.p.max_size or overflowing(s, self.less)):
            return set()
        head = evs[: self.p.keep_first]
        tail = evs[-(self.p.max_size // 2 - len(head)):]
        return {ev.key for ev in evs} - {ev.key for ev in head} - {ev.key for ev in tail}

    def wake(self, s: SessionView) -> Wake:
        """Over ``max_size`` events, or a prompt over the input limit."""
        return Wake(tokens=s.limits.input_limit + 1, grown=(with_long_outputs(event_bound, self.max_message_chars),
                                                            self.p.max_size + 1 - self.state.count(s)))


# --- conversation window -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationWindowParams:
    recall_events: bool = param(True, "Count the RecallAction (and first RecallObservation) OpenHands adds per user message.")
    max_message_chars: int = param(MAX_MESSAGE_CHARS, "Each observation is cut to this many characters in the middle before the model sees it (LLMConfig.max_message_chars; negative: never).", lo=None)


class ConversationWindow(Forgetting):
    """Acts only on a condensation request (the prompt over the input limit): keeps the essential first
    events and about half of the rest, never starting on an observation."""

    name = "openhands-conversation-window"
    reason = "condensation request: conversation window"

    def __init__(self, p: ConversationWindowParams) -> None:
        super().__init__(p.recall_events, p.max_message_chars)
        self.p = p

    def forget(self, s: SessionView, evs: list[Event]) -> set[Key]:
        if not overflowing(s, self.less):
            return set()
        first = next((ev for ev in evs if ev.kind == "user"), None)
        if first is None:
            return set()  # 'No first user message found': an empty condensation
        essential = {ev.key for ev in evs if ev.kind == "system"}
        essential |= {first.key, (first.key[0], RECALL_ACTION), (first.key[0], RECALL_OBS)}
        essential &= {ev.key for ev in evs}
        recent = max(1, (len(evs) - len(essential)) // 2)
        start = max(0, len(evs) - recent)
        while start < len(evs) and (evs[start].kind in ("observation", "condensation")
                                    or evs[start].key[1] == RECALL_OBS):
            start += 1  # dangling observations at the start of the slice
        keep = essential | {ev.key for ev in evs[start:]}
        return {ev.key for ev in evs} - keep

    def wake(self, s: SessionView) -> Wake:
        """Only on a condensation request (a prompt over the input limit), or a long observation to cut."""
        long = with_long_outputs(no_events, self.max_message_chars)
        return Wake(tokens=s.limits.input_limit + 1, grown=(long, 1) if long is not no_events else None)


# --- masking ------------------------------------------------------------------------------------------------


class Masking:
    """Replaces observations with condensation observations: a prune, with the turn each one ends emptied
    (the assistant message that made the call can no longer be completed, and that message's other results
    would never be sent)."""

    name = "openhands-masking"

    def __init__(self, recall: bool, max_message_chars: int = MAX_MESSAGE_CHARS) -> None:
        self.state = EventState(recall)
        self.max_message_chars = max_message_chars

    def masks(self, s: SessionView, evs: list[Event]) -> dict[Key, str]:
        raise NotImplementedError

    def before_step(self, s: SessionView) -> Sequence[Action]:
        evs = self.state.of_view(s)
        cut = message_char_cuts(s, evs, self.max_message_chars)
        masks = self.masks(s, evs)
        if cut is not None:
            masked = {(k[0], max(k[1], 0)) for k in masks}
            cut = Prune(tuple(t for t in cut.targets if (t[0], t[1]) not in masked), cut.reason)
        cuts: tuple[Action, ...] = (cut,) if cut is not None and cut.targets else ()
        if not masks:
            return cuts
        owner = {ev.call_id: ev.pos for ev in evs if ev.kind == "action"}
        results: dict[int, list[Event]] = {}  # assistant position -> the observations of its calls
        for ev in evs:
            if ev.kind == "observation" and ev.call_id in owner:
                results.setdefault(owner[ev.call_id], []).append(ev)
        by_key = {ev.key: ev for ev in evs}
        targets: dict[tuple[str, int], str] = {}
        for key, text in masks.items():
            targets.setdefault((key[0], max(key[1], 0)), text)
            ev = by_key[key]
            pos = owner.get(ev.call_id) if ev.kind == "observation" else None
            if pos is None:
                continue
            e = s.entries[pos]
            for j, part in enumerate(e.message.parts):
                if isinstance(part, Text | ToolCall | Reasoning) and j not in e.pruned:
                    targets.setdefault((e.id, j), "")
            for ev in results.get(pos, ()):
                if ev.key not in masks and untouched(s.entries[ev.pos], ev.key[1]):
                    targets.setdefault(ev.key, "")
        mask = Prune(tuple((i, j, t) for (i, j), t in targets.items()), self.name.removeprefix("openhands-"),
                     replace=True)  # an observation only cut to max_message_chars is masked all the same
        return (*cuts, mask)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        return NEXT_QUESTION


@dataclass(frozen=True)
class ObservationMaskingParams:
    attention_window: int = param(100, "The most recent events whose observations are not masked (ObservationMaskingCondenserConfig).")
    recall_events: bool = param(True, "Count the RecallAction (and first RecallObservation) OpenHands adds per user message.")
    max_message_chars: int = param(MAX_MESSAGE_CHARS, "Each observation is cut to this many characters in the middle before the model sees it (LLMConfig.max_message_chars; negative: never).", lo=None)


class ObservationMasking(Masking):
    name = "openhands-observation-masking"

    def __init__(self, p: ObservationMaskingParams) -> None:
        if p.attention_window < 1:
            raise UsageError("openhands-observation-masking: attention_window must be >= 1")
        super().__init__(p.recall_events, p.max_message_chars)
        self.p = p
        # the last wake's search: the view, its revision, events forgotten, the first maskable event, and the
        # view positions the events before it lie below
        self._first: tuple[SessionView, int, int, int, int] | None = None

    def masks(self, s: SessionView, evs: list[Event]) -> dict[Key, str]:
        out: dict[Key, str] = {}
        for ev in evs[: max(0, len(evs) - self.p.attention_window)]:
            e = s.entries[ev.pos]
            if ev.kind == "observation" and untouched(e, max(ev.key[1], 0)):
                out[ev.key] = MASKED
            elif ev.kind == "condensation" and ev.key[1] == USER_SLOT and 0 not in e.pruned:
                out[ev.key] = MASKED  # an AgentCondensationObservation (a summary) is an observation too
        return out

    def wake(self, s: SessionView) -> Wake:
        """The next observation to mask is the oldest unmasked one: it is outside the window once enough
        events follow it (events keep their places while the view only grows)."""
        evs = self.state.view_events(s)
        n = len(evs)
        # the events before the last wake's first maskable one stay unmaskable while their entries are unchanged
        # (the view diff) and nothing more was forgotten: the search goes on from there
        c, start = self._first, 0
        if c is not None and c[0] is s and c[2] == len(self.state.forgotten) and c[3] <= n \
                and s.unchanged_below(c[1]) >= c[4]:
            start = c[3]
        first = next((k for k in range(start, n) if self._maskable(s, evs[k])), n)  # outside the window: now
        self._first = (s, s.revision, len(self.state.forgotten), first, evs[first - 1].pos + 1 if first else 0)
        return Wake(grown=(with_long_outputs(event_bound, self.max_message_chars),
                           first + self.p.attention_window + 1 - n))

    @staticmethod
    def _maskable(s: SessionView, ev: Event) -> bool:
        e = s.entries[ev.pos]  # an observation only cut to max_message_chars is still to be masked
        return (ev.kind == "observation" and untouched(e, ev.key[1])) or (
            ev.kind == "condensation" and ev.key[1] == USER_SLOT and 0 not in e.pruned)


@dataclass(frozen=True)
class BrowserOutputParams:
    attention_window: int = param(1, "The most recent browser outputs not masked (BrowserOutputCondenserConfig; the server uses 2).")
    browser_tools: tuple[str, ...] = param(BROWSER_TOOLS, "Tools whose outputs are OpenHands browser observations (BrowserOutputObservation).")
    recall_events: bool = param(True, "Count the RecallAction (and first RecallObservation) OpenHands adds per user message.")
    max_message_chars: int = param(MAX_MESSAGE_CHARS, "Each observation is cut to this many characters in the middle before the model sees it (LLMConfig.max_message_chars; negative: never).", lo=None)


class BrowserOutput(Masking):
    name = "openhands-browser-output"

    def __init__(self, p: BrowserOutputParams) -> None:
        if p.attention_window < 1:
            raise UsageError("openhands-browser-output: attention_window must be >= 1")
        super().__init__(p.recall_events, p.max_message_chars)
        self.p = p

    def masks(self, s: SessionView, evs: list[Event]) -> dict[Key, str]:
        out: dict[Key, str] = {}
        count = 0
        for ev in reversed(evs):
            if ev.kind != "observation" or ev.name not in self.p.browser_tools:
                continue
            if count >= self.p.attention_window:
                if untouched(s.entries[ev.pos], ev.key[1]):
                    out[ev.key] = BROWSER_MASK.format(url=self.url(s, evs, ev))
            else:
                count += 1
        return out

    def wake(self, s: SessionView) -> Wake:
        """The oldest unmasked browser output is masked once ``attention_window`` browser outputs follow it."""
        tools = self.p.browser_tools
        outputs = [ev for ev in self.state.view_events(s) if ev.kind == "observation" and ev.name in tools]
        first = next((k for k, ev in enumerate(outputs) if untouched(s.entries[ev.pos], ev.key[1])),
                     len(outputs))
        return Wake(grown=(with_long_outputs(tool_results_of(tools), self.max_message_chars),
                           first + self.p.attention_window + 1 - len(outputs)))

    @staticmethod
    def url(s: SessionView, evs: list[Event], ev: Event) -> str:
        """The page's URL: the call's ``url`` argument, else the first URL in its arguments or output."""
        owner = next((x for x in evs if x.kind == "action" and x.call_id == ev.call_id), None)
        call = next((p for p in s.entries[owner.pos].message.parts
                     if isinstance(p, ToolCall) and p.id == ev.call_id), None) if owner else None
        if call is not None:
            try:
                args = json.loads(call.args)
            except ValueError:
                args = None
            if isinstance(args, dict) and isinstance(args.get("url"), str):
                return str(args["url"])
            found = URL.search(call.args)
            if found:
                return found.group(0)
        part = s.entries[ev.pos].message.parts[ev.key[1]]
        found = URL.search(part.output) if isinstance(part, ToolResult) else None
        return found.group(0) if found else ""


# --- LLM attention: a model ranks the events ---------------------------------------------------------------


@dataclass(frozen=True)
class LLMAttentionParams:
    max_size: int = param(100, "Condense when the view has more events than this (LLMAttentionCondenserConfig).")
    keep_first: int = param(1, "The first events always kept.")


@strategy("openhands-recent-events", params=RecentEventsParams, upstream=SOURCE,
          summary="keep the first event and the newest 99 events (a sliding window, every step)")
def recent_events(p: RecentEventsParams) -> RecentEvents:
    return RecentEvents(p)


@strategy("openhands-amortized-forgetting", params=AmortizedParams, upstream=SOURCE,
          summary="over 100 events, forget all but the first and the newest 49 (no summary)")
def amortized_forgetting(p: AmortizedParams) -> AmortizedForgetting:
    return AmortizedForgetting(p)


@strategy("openhands-conversation-window", params=ConversationWindowParams, upstream=SOURCE,
          summary="on a context-window error only: keep system, first user message, recall and the newer half")
def conversation_window(p: ConversationWindowParams) -> ConversationWindow:
    return ConversationWindow(p)


@strategy("openhands-observation-masking", params=ObservationMaskingParams, upstream=SOURCE,
          summary="observations outside the newest 100 events become <MASKED> (their turn's call disappears)")
def observation_masking(p: ObservationMaskingParams) -> ObservationMasking:
    return ObservationMasking(p)


@strategy("openhands-browser-output", params=BrowserOutputParams, upstream=SOURCE,
          summary="browser outputs but the newest one become 'Visited URL ... Content omitted'",
          presets={"server": {"attention_window": 2}})
def browser_output(p: BrowserOutputParams) -> BrowserOutput:
    return BrowserOutput(p)


ATTENTION_REFUSAL = ("openhands-llm-attention needs a real model to rank the events it keeps "
                     "(LLMAttentionCondenser); it is not supported offline")


@strategy("openhands-llm-attention", params=LLMAttentionParams, upstream=SOURCE,
          summary="a model ranks which events to keep: needs a real model, refused offline",
          needs_model=ATTENTION_REFUSAL)
def llm_attention(p: LLMAttentionParams) -> NoReturn:
    raise UsageError(ATTENTION_REFUSAL)

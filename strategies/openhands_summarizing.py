"""``compbench.strategies.openhands_summarizing`` — ``openhands-llm-summarizing``: OpenHands' rolling summary of
forgotten events (V0, and the V1 SDK as presets).

V0, All-Hands-AI/OpenHands @ 156d068: ``openhands/memory/condenser/impl/llm_summarizing_condenser.py``,
``core/config/condenser_config.py`` (``LLMSummarizingCondenserConfig``: ``keep_first`` 1, ``max_size`` 100,
``max_event_length`` 10,000), ``memory/view.py``, ``server/session/session.py`` (the server's pipeline). Before
the LLM call, when the view has more than ``max_size`` events or a condensation was requested (a
context-window error): the first ``keep_first`` events stay, so do the newest ``max_size // 2 - keep_first - 1``;
the events between (an earlier summary at ``keep_first`` excluded: its text is the ``<PREVIOUS SUMMARY>``,
else "No events summarized") go to the summarizer as ``<EVENT id=N>`` blocks, each ``str(event)`` cut in the
middle past ``max_event_length`` characters, in one user message (no system prompt; prompt caching off).
Everything from the first to the last of them is forgotten (an id range) and the summary is inserted at
``keep_first`` as an ``AgentCondensationObservation``: a user message. Every observation the model is sent is
cut to ``max_message_chars`` (30,000) in the middle (``conversation_memory.py``, at every call): a prune the
first time it is in the view; an overflow is judged on the cut prompt. Events, rendering and the V0 messages
put back: :mod:`.openhands_events`. Not modelled: V0 raises (and the agent stops) when no event is left to
forget or the summarizer fails; here nothing happens and the next call tries again.

V1, OpenHands/software-agent-sdk @ 611629e: ``openhands-sdk/.../context/condenser/llm_summarizing_condenser.py``,
``base.py``, ``utils.py``, ``prompts/summarizing_prompt.j2``, ``context/view/*`` (manipulation indices),
``event/*`` (``str()``), ``agent/agent.py`` (the request), ``openhands-tools/.../preset/{default,gpt5,gemini}.py``.
Reasons: tokens (the view's, over min(``max_tokens``, the agent LLM's input limit), checked before every call),
events (over ``max_size``: 240, ``keep_first`` 2), and a request: a ``CondensationRequest`` the agent emits only
after the provider refused a call as too long, which the token check prevents while it knows the window
(``model_limit``). Kept from the tail: the fewest the reasons ask (half the view for a
request, ``max_size // 2 - keep_first - 1`` for events, what brings the tokens under half the limit); the cut
moves forward to the next index that splits no batch of calls, no call from its result and no thinking tool
loop. Fewer than ``minimum_progress`` (10%) of the events forgotten, or none: no condensation — unless the
reason was tokens or a request, then a hard reset summarizes every event (summary first, nothing kept; its
five retries on a failing summarizer are not modelled). The summarizer sees each event as its 500-character
``str()`` preview (an action: its thought and its class), a previous summary among them. ``preset=v1``: the
class defaults; ``preset=v1-agent``: ``default_condenser`` (``max_size`` 80, ``keep_first`` 4) that the default,
GPT-5 and Gemini agent presets build. ``preset=server``: V0 as the server's pipeline configures it (after
ConversationWindow and BrowserOutput(2)): ``keep_first`` 4, ``max_size`` 120.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from compbench.errors import UsageError
from compbench.sdk import (
    NEXT_QUESTION,
    Accepts,
    Action,
    Compact,
    Message,
    Role,
    SessionView,
    Setting,
    SummaryRequest,
    Text,
    Tool,
    Transcript,
    Usage,
    Wake,
    joined_text,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies import openhands_prompts as prompts
from compbench.strategies.openhands_events import (
    MAX_MESSAGE_CHARS,
    NO_SUMMARY,
    Event,
    EventState,
    cut_tokens,
    event_bound,
    message_char_cuts,
    overflowing,
    rebuild,
    str_v0,
    str_v1,
    truncate_content,
    with_long_outputs,
)

MAX_SIZE_V0 = 100  # condenser_config.py LLMSummarizingCondenserConfig.max_size
KEEP_FIRST_V0 = 1  # condenser_config.py LLMSummarizingCondenserConfig.keep_first
MAX_EVENT_LENGTH = 10_000  # condenser_config.py LLMSummarizingCondenserConfig.max_event_length
MAX_SIZE_V1 = 240  # llm_summarizing_condenser.py (sdk) max_size
KEEP_FIRST_V1 = 2  # llm_summarizing_condenser.py (sdk) keep_first
MINIMUM_PROGRESS = 0.1  # llm_summarizing_condenser.py (sdk) minimum_progress
ROLES: dict[str, Role] = {"system": "system", "user": "user", "recall": "user", "message": "assistant",
                          "action": "assistant", "observation": "tool", "condensation": "user"}


@dataclass(frozen=True)
class LLMSummarizingParams:
    version: Literal["v0", "v1"] = param("v0", "'v0': OpenHands' condenser; 'v1': the software-agent-sdk's (token trigger, atomic cuts, minimum progress).")
    max_size: int = param(MAX_SIZE_V0, "Condense when the view has more events than this.")
    keep_first: int = param(KEEP_FIRST_V0, "The first events never condensed.")
    max_event_length: int = param(MAX_EVENT_LENGTH, "V0: each event's text is cut in the middle past this many characters for the summarizer.")
    max_tokens: int = param(0, "V1: condense when the view's tokens exceed this (0: only the model's input limit, always applied).")
    minimum_progress: float = param(MINIMUM_PROGRESS, "V1: no condensation forgets fewer than this share of the events (unless a hard reset is due).", hi=1)
    condense_on_overflow: bool = param(True, "Condense before a prompt the provider would refuse (the condensation request after a context-window error).")
    model_limit: bool = param(True, "V1: the agent LLM's input limit is known (litellm's model info, or max_input_tokens) and caps the token trigger; false: only max_tokens does, and a prompt over the window is a context-window error answered by a condensation request.")
    max_message_chars: int = param(MAX_MESSAGE_CHARS, "V0: each observation is cut to this many characters in the middle before the model sees it (LLMConfig.max_message_chars; negative: never).", lo=None)
    recall_events: bool = param(True, "V0: count the RecallAction (and first RecallObservation) OpenHands adds per user message.")


V1 = {"version": "v1", "max_size": MAX_SIZE_V1, "keep_first": KEEP_FIRST_V1, "recall_events": False,
      "max_message_chars": -1}
V1_AGENT = {**V1, "max_size": 80, "keep_first": 4}  # openhands-tools preset default_condenser


def v0_prompt(s: SessionView, head: str, blocks: Sequence[str]) -> Text:
    """V0's one prompt text: ``head`` (the instructions and the previous summary), the event blocks, the last
    line. Its count is the sum of its sections' (:func:`~compbench.sdk.joined_text`:
    each section ends with a newline, and the next begins with ``<EVENT`` or the last line's ``Now``), each
    counted once by text: the presets and forks that summarize the same events send the same blocks again,
    which then cost lookups, not a tokenizer pass per request."""
    return joined_text(s.counter, (head, *blocks, prompts.END))


class LLMSummarizing:
    name = "openhands-llm-summarizing"

    def __init__(self, p: LLMSummarizingParams) -> None:
        if p.version == "v0" and (p.keep_first >= p.max_size // 2 or p.keep_first < 0):
            raise UsageError(f"openhands-llm-summarizing: keep_first ({p.keep_first}) must be less than half of "
                             f"max_size ({p.max_size})")
        if p.version == "v1" and p.max_size // 2 - p.keep_first - 1 <= 0:
            raise UsageError("openhands-llm-summarizing: keep_first must be less than max_size // 2 to leave room "
                             "for condensation")
        self.p = p
        self.state = EventState(p.recall_events and p.version == "v0")

    def before_step(self, s: SessionView) -> Sequence[Action]:
        evs = self.state.of_view(s)
        if self.p.version == "v1":
            act = self.v1(s, evs)
            return (act,) if act is not None else ()
        cut = message_char_cuts(s, evs, self.p.max_message_chars)
        act = self.v0(s, evs, cut_tokens(s, cut))
        return tuple(a for a in (cut, act) if a is not None)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Over ``max_size`` events, or (V1) over its token limit, or a prompt over the input limit. V0 is asked
        every question: its summary prompt names events by the ids its state gives them as it sees them (with
        the observation cuts merged in, a sleeping V0 wrote a prompt 11 tokens off on the samples)."""
        if self.p.version == "v0":
            return NEXT_QUESTION
        limit = s.limits.input_limit
        if self.p.version == "v1" and self.p.max_tokens:
            limit = min(self.p.max_tokens, limit)
        tokens = limit + 1 if self.p.version == "v1" or self.p.condense_on_overflow else None
        weight = event_bound if self.p.version == "v1" else with_long_outputs(event_bound, self.p.max_message_chars)
        return Wake(tokens=tokens, grown=(weight, self.p.max_size + 1 - self.state.count(s)))

    # --- V0 -------------------------------------------------------------------------------------------
    def v0(self, s: SessionView, evs: list[Event], less: int = 0) -> Compact | None:
        n, kf = len(evs), self.p.keep_first
        request = self.p.condense_on_overflow and overflowing(s, less)
        if not (n > self.p.max_size or request):
            return None
        tail = self.p.max_size // 2 - len(evs[:kf]) - 1
        previous = evs[kf] if kf < n and evs[kf].kind == "condensation" else None
        span = evs[kf:-tail] if tail > 0 else []
        forgotten = [ev for ev in span if ev.kind != "condensation"]
        if not forgotten:
            return None  # OpenHands: min() of no ids raises
        first, last = evs.index(forgotten[0]), evs.index(forgotten[-1])
        gone = {ev.key for ev in evs[first:last + 1]}
        gone |= {ev.key for ev in evs if ev.kind == "condensation" and s.entries[ev.pos].origin == "summary"}
        prev = s.entries[previous.pos].rendered().text if previous is not None else NO_SUMMARY
        blocks, source = [], []
        for ev in forgotten:
            text = truncate_content(str_v0(ev, s.entries[ev.pos]), self.p.max_event_length)
            blocks.append(prompts.EVENT_V0.format(id=self.state.ids[ev.key], event=text))
            source.append(Message(f"openhands-event-{self.state.ids[ev.key]}", ROLES[ev.kind], (Text(text),)))
        head = (prompts.PROMPT_V0 + "\n\n" + prompts.PREVIOUS_SUMMARY.format(
            summary=truncate_content(prev, self.p.max_event_length)) + "\n\n")
        request_ = SummaryRequest("", (Message("openhands-condenser", "user", (v0_prompt(s, head, blocks),)),),
                                  tuple(source), None, prev if previous is not None else None)
        view = rebuild(s, evs, {ev.key for ev in evs} - gone, kf, True, self.state)
        reason = "condensation request" if request and n <= self.p.max_size else f"more than {self.p.max_size} events"
        return Compact(reason, view, request_, on_failure="unchanged",
                       meta={"events": n, "forgotten": len(forgotten)})

    # --- V1 -------------------------------------------------------------------------------------------
    def v1(self, s: SessionView, evs: list[Event]) -> Compact | None:
        n, kf = len(evs), self.p.keep_first
        limits = [x for x in (self.p.max_tokens, s.limits.input_limit if self.p.model_limit else 0) if x]
        limit = min(limits) if limits else 0  # _effective_max_tokens
        total = s.context_tokens
        tokens = bool(limit) and total > limit
        # a CondensationRequest follows a real context-window error only: the call was sent and refused,
        # which the token check (before every call) prevents whenever it can see the window
        request = self.p.condense_on_overflow and not tokens and overflowing(s)
        events = n > self.p.max_size
        if not (request or tokens or events):
            return None
        suffix: list[int] = []
        if request:
            suffix.append(n // 2 - kf - 1)
        if events:
            suffix.append(self.p.max_size // 2 - kf - 1)
        if tokens:
            suffix.append(self.suffix_for(s, evs[kf:], total - limit // 2))
        indices = manipulation_indices(evs)
        start = next((i for i in indices if i >= kf), None)
        end = next((i for i in indices if i >= n - min(suffix)), None)
        forgotten = evs[start:end] if start is not None and end is not None else []
        if not forgotten or len(forgotten) < n * self.p.minimum_progress:
            if not (tokens or request):
                return None  # a soft requirement waits
            forgotten, start = evs, 0  # hard context reset: everything summarized, the summary first
        assert start is not None
        blocks, source, previous = [], [], None
        for ev in forgotten:
            text = str_v1(ev, s.entries[ev.pos])
            blocks.append(prompts.EVENT_V1.format(event=text))
            source.append(Message(f"openhands-event-{self.state.ids[ev.key]}", ROLES[ev.kind], (Text(text),)))
            if ev.kind == "condensation":
                previous = s.entries[ev.pos].rendered().text
        text = prompts.PROMPT_V1 + "".join(blocks) + "\n\n" + prompts.END
        request_ = SummaryRequest("", (Message("openhands-condenser", "user", (Text(text),)),), tuple(source),
                                  None, previous)
        gone = {ev.key for ev in forgotten}
        view = rebuild(s, evs, {ev.key for ev in evs} - gone, start, False, self.state)
        why = [w for w, on in (("request", request), ("tokens", tokens), ("events", events)) if on]
        return Compact("condensation: " + "+".join(why), view, request_, on_failure="unchanged",
                       meta={"events": n, "forgotten": len(forgotten), "hard_reset": forgotten is evs})

    @staticmethod
    def suffix_for(s: SessionView, evs: Sequence[Event], reduce: int) -> int:
        """``get_suffix_length_for_token_reduction``: how many events of ``evs`` (the view after
        ``keep_first``) stay once the shortest prefix over ``reduce`` tokens is gone; a message's tokens are
        shared equally by its events."""
        if not evs:
            return 0
        if reduce <= 0:
            return len(evs)
        share: dict[int, int] = {}
        for ev in evs:
            share[ev.pos] = share.get(ev.pos, 0) + 1
        total = 0.0
        for k, ev in enumerate(evs):
            total += s.entries[ev.pos].tokens / share[ev.pos]
            if total > reduce:
                return len(evs) - (k + 1)
        return 0


def manipulation_indices(evs: Sequence[Event]) -> list[int]:
    """V1 ``View.manipulation_indices``: where events may be cut — not inside a batch of calls from one
    response, not between a call and its result, not inside a tool loop that starts with thinking."""
    allowed = set(range(len(evs) + 1))
    pending: set[str] = set()
    in_loop = False
    for i, ev in enumerate(evs):
        if i > 0 and ev.kind == "action" and evs[i - 1].kind == "action" and evs[i - 1].pos == ev.pos:
            allowed.discard(i)  # batch atomicity
        if ev.kind == "action":
            pending.add(ev.call_id)
        elif ev.kind == "observation":
            pending.discard(ev.call_id)
        if pending:
            allowed.discard(i + 1)  # tool-call matching
        if ev.kind == "action" and ev.thinking:
            in_loop = True
        elif ev.kind in ("action", "observation"):
            if in_loop:
                allowed.discard(i)  # tool-loop atomicity
        else:
            in_loop = False
    return sorted(allowed)


def _openhands_log(t: Transcript) -> tuple[str | None, str] | None:
    """The condenser an OpenHands log records: V1's LLMSummarizingCondenser at a preset it equals."""
    specs = fidelity_specs(t)
    if len(specs) == 1 and specs[0][1].startswith("openhands-llm-summarizing:preset="):
        preset = specs[0][1].partition("=")[2]
        if "," not in preset:
            return preset, f"the log records OpenHands' {preset} condenser"
    if t.meta.get("format_version") == "v1":
        return "v1-agent", "an OpenHands V1 log: the CLI's default condenser (max_size 80, keep_first 4)"
    return None


def _condenser_line(key: str, source: str) -> tuple[str, str] | None:
    """The condenser's line as the OpenHands that wrote the log reads it: V1 (its conversations, source
    ``openhands``) keeps the agent's condenser in ~/.openhands/agent_settings.json; V0 (sessions, trajectories,
    evaluation output) reads the [condenser] section of config.toml, whose summarizing condenser is type "llm"."""
    if source == "openhands":
        return ('"condenser": {"kind": "LLMSummarizingCondenser", "' + key + '": {value}}',
                "~/.openhands/agent_settings.json (the agent's \"condenser\" object: keep its \"llm\", set the key)")
    return f'[condenser]\ntype = "llm"\n{key} = {{value}}', "config.toml (OpenHands V0)"


# What OpenHands' users set: [condenser] in config.toml (V0) or the condenser of ~/.openhands/agent_settings.json
# (V1 CLI); the app's UI sets condenser_max_size (at least 20).
TOOL = Tool(
    "OpenHands", ("openhands", "openhands-v0", "openhands-eval"), log_preset=_openhands_log,
    fidelity_specs=lambda t: fidelity_specs(t),
    preset_versions={"v1-agent": "V1 CLI default", "v1": "V1 SDK class default", "server": "V0 app"},
    settings=(Setting("max_size", "max_size", "[condenser] in config.toml (V0) or agent_settings.json's condenser "
                      "(V1)", "100 (V0 CLI), 120 (app), 80 (V1 CLI)", "[condenser]\nmax_size = {value}",
                      sweep=(60, 200), note="events kept before a condensation; the app refuses under 20",
                      accepts=Accepts(20, refuse=False, outside="the OpenHands app refuses a value under 20"),
                      line_for=lambda source, version: _condenser_line("max_size", source)),
              Setting("keep_first", "keep_first", "[condenser] in config.toml or agent_settings.json", "1 (V0), 4 (V1)",
                      "[condenser]\nkeep_first = {value}",
                      line_for=lambda source, version: _condenser_line("keep_first", source))))


@strategy("openhands-llm-summarizing", params=LLMSummarizingParams,
          upstream="All-Hands-AI/OpenHands llm_summarizing_condenser.py @ 156d068; V1: OpenHands/software-agent-sdk @ 611629e",
          summary="over 100 events: keep the first and the newest 48, the events between into one rolling summary",
          presets={"server": {"keep_first": 4, "max_size": 120}, "v1": V1,
                   "v1-agent": V1_AGENT}, tool=TOOL)
def llm_summarizing(p: LLMSummarizingParams) -> LLMSummarizing:
    return LLMSummarizing(p)



V0_CONDENSERS = {  # condenser_config.py `type` -> the strategy and the recorded fields it takes
    "llm": ("openhands-llm-summarizing", ("keep_first", "max_size", "max_event_length")),
    "recent": ("openhands-recent-events", ("keep_first", "max_events")),
    "amortized": ("openhands-amortized-forgetting", ("keep_first", "max_size")),
    "observation_masking": ("openhands-observation-masking", ("attention_window",)),
    "browser_output_masking": ("openhands-browser-output", ("attention_window",)),
    "conversation_window": ("openhands-conversation-window", ()),
}


def fidelity_specs(t: Transcript) -> list[tuple[str, str]]:
    """The configurations a recorded OpenHands log ran with, as (label, spec) for ``compbench fidelity``. V1: the
    ``LLMSummarizingCondenser`` the base state records (the preset it equals, else ``v1`` with its values); V0:
    the condenser an evaluation records, else both defaults: the app's pipeline and the CLI's condenser."""
    cond = t.meta.get("condenser")
    cond = cond if isinstance(cond, dict) else {}
    name = "openhands-llm-summarizing"
    if t.meta.get("format_version") == "v1":
        if cond.get("kind") != "LLMSummarizingCondenser":
            return [("v1", f"{name}:preset=v1"), ("v1-agent", f"{name}:preset=v1-agent")]
        recorded = {"max_size": cond.get("max_size", MAX_SIZE_V1), "keep_first": cond.get("keep_first", KEEP_FIRST_V1),
                    "max_tokens": cond.get("max_tokens") or 0,
                    "minimum_progress": cond.get("minimum_progress", MINIMUM_PROGRESS)}
        base = {"max_tokens": 0, "minimum_progress": MINIMUM_PROGRESS}
        for preset, fixed in (("v1-agent", V1_AGENT), ("v1", V1)):
            if all({**base, **fixed}.get(k) == v for k, v in recorded.items()):
                return [(preset, f"{name}:preset={preset}")]
        changed = ",".join(f"{k}={v}" for k, v in recorded.items() if {**base, **V1}.get(k) != v)
        return [("recorded condenser", f"{name}:preset=v1,{changed}")]
    kind = cond.get("type")
    if isinstance(kind, str) and kind in V0_CONDENSERS:
        strategy, fields = V0_CONDENSERS[kind]
        sets = [f"{k}={cond[k]}" for k in fields if isinstance(cond.get(k), int) and not isinstance(cond.get(k), bool)]
        chars = t.meta.get("max_message_chars")
        if isinstance(chars, int) and chars != MAX_MESSAGE_CHARS:
            sets.append(f"max_message_chars={chars}")
        return [("recorded condenser", strategy + (":" + ",".join(sets) if sets else ""))]
    return [("app pipeline", "openhands"), ("cli default", name)]

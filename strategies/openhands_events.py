"""``compbench.strategies.openhands_events`` — OpenHands counts and cuts *events*, not messages: the mapping every
``openhands-*`` strategy shares.

Read in All-Hands-AI/OpenHands @ 156d068 (2025-11-28): ``openhands/memory/view.py``,
``memory/conversation_memory.py``, ``memory/memory.py``, ``controller/agent_controller.py``; and in
OpenHands/software-agent-sdk @ 611629e (V1): ``sdk/event/*``, ``sdk/context/view/*``.

A compbench message becomes the events OpenHands would have stored for it:

* a system message: ``SystemMessageAction``; an inserted summary: ``AgentCondensationObservation``
  (V1: ``CondensationSummaryEvent``);
* a user message: ``MessageAction``, then (V0) the ``RecallAction`` the controller adds for every user
  message and, for the first one, the workspace-context ``RecallObservation`` (later recalls answer with a
  ``NullObservation``, which the history leaves out). These recall events have no text here: they count,
  and are forgotten with, their user message;
* an assistant message with k tool calls: k action events (one LLM response: the text is the first one's
  thought); without calls: one agent ``MessageAction``;
* a tool message: one observation per result; a result a masking condenser replaced (``<MASKED>``,
  ``Visited URL ...``) is an ``AgentCondensationObservation``.

OpenHands sends the LLM what ``ConversationMemory`` makes of the view, in function-calling mode: an
assistant message appears only when every one of its tool calls has its observation in the view (else it
waits, and is dropped), and its observations only with it; a condensation observation is a user message;
a view without the system message gets it back, and (V0) one whose second event is not a user message
gets the first user message inserted there. A condenser here decides on events and then keeps the
messages OpenHands would render; events OpenHands still counts but does not render (an observation whose
action was forgotten) are dropped from later counts, and a message kept only for rendering (the system or
first user message put back, an assistant message whose other actions were forgotten) has its forgotten
events remembered, per strategy instance, so they are not counted again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from compbench.sdk import Entry, Insert, Keep, Message, Prune, Reasoning, SessionView, Slot, Text, ToolCall, ToolResult

MASKED = "<MASKED>"  # observation_masking_condenser.py
BROWSER_MASK = "Visited URL {url}\nContent omitted"  # browser_output_condenser.py
NO_SUMMARY = "No events summarized"  # llm_summarizing_condenser.py
SHELL_TOOLS = ("execute_bash", "bash", "Bash", "shell", "run_shell_command", "exec_command", "terminal")
CMD_METADATA = json.dumps({"exit_code": -1, "pid": -1, "username": None, "hostname": None, "working_dir": None,
                           "py_interpreter_path": None, "prefix": "", "suffix": ""}, indent=2)  # CmdOutputMetadata()
N_CHAR_PREVIEW = 500  # software-agent-sdk event/base.py
MAX_MESSAGE_CHARS = 30_000  # core/config/llm_config.py LLMConfig.max_message_chars (V0)
BROWSER_TOOLS = ("browser", "web_read", "WebFetch", "webfetch", "web_fetch")  # OpenHands' own + other agents'
EDITOR = "str_replace_editor"  # its `view` is a FileReadObservation, cut by openhands-aci instead
TRUNCATED = "\n[... Observation truncated due to length ...]\n"  # events/serialization/event.py truncate_content
USER_SLOT, RECALL_ACTION, RECALL_OBS = -1, -2, -3  # event keys of the whole-message events

Key = tuple[str, int]  # (message id, part index, or one of the slots above)


class Event(NamedTuple):
    """One OpenHands event: its kind, the view position of the message it comes from, its key. (A named
    tuple: a view's events are made again at their new places after every forgetting, and a tuple is made
    several times faster than a frozen dataclass.)"""

    kind: str  # system | user | recall | message | action | observation | condensation
    pos: int
    key: Key
    call_id: str = ""
    name: str = ""
    thinking: bool = False


def is_condensation(text: str) -> bool:
    """A result a masking condenser replaced (it became an ``AgentCondensationObservation``)."""
    return text == MASKED or (text.startswith("Visited URL ") and text.endswith("\nContent omitted"))


def untouched(e: Entry, j: int) -> bool:
    """Part ``j`` is what was recorded, or only cut to ``max_message_chars`` (a mask or an emptied part is not)."""
    text = e.pruned.get(j)
    return text is None or TRUNCATED in text


class EventState:
    """What one strategy instance remembers: the first user message (``initial_user_action``), the events
    it forgot whose messages stay visible, and stable event ids (the event stream's, for V0's prompt).

    A view's events are built incrementally, as OpenHands appends events to its stream: while the view has
    only grown by recorded messages (the same view, its ``revision`` unchanged, nothing forgotten since), the
    events of the new entries are appended to the last list; after an action, from the first position the
    view diff names (:meth:`SessionView.unchanged_below`); once more was forgotten, from the start. Each
    entry's events are made once (at another place, copied there)."""

    def __init__(self, recall: bool) -> None:
        self.recall = recall
        self.first_user = ""
        self.forgotten: set[Key] = set()  # only ever grows (rebuild adds to it)
        self.ids: dict[Key, int] = {}
        # the last view's events: the view, its revision, how many were forgotten then; where each entry's
        # events begin in the list
        self._grown: tuple[SessionView, int, int] | None = None
        self._events: list[Event] = []
        self._starts: list[int] = []
        # each entry's events at the place they were made (an entry is immutable; the first user message,
        # which alone has a recall observation, is fixed once seen)
        self._of_entry: dict[int, tuple[Entry, int, tuple[Event, ...]]] = {}

    def of_view(self, s: SessionView) -> list[Event]:
        """The view's events (a new list: the caller may keep it)."""
        return list(self.view_events(s))

    def count(self, s: SessionView) -> int:
        """How many events the view holds (a condenser's wake)."""
        return len(self.view_events(s))

    def view_events(self, s: SessionView) -> list[Event]:
        """The view's events, the state's own list (read it, do not keep or change it)."""
        entries = s.entries
        c = self._grown
        starts = self._starts
        if c is not None and c[0] is s and c[2] == len(self.forgotten):
            start = min(s.unchanged_below(c[1]), len(starts), len(entries))
        else:
            start = 0
        if start < len(starts):
            del self._events[starts[start]:]
            del starts[start:]
        if start < len(entries):
            self._extend(entries, start, self._events, starts)
        self._grown = (s, s.revision, len(self.forgotten))
        return self._events

    def events(self, entries: Sequence[Entry]) -> list[Event]:
        """The events of ``entries`` (a view's, or any list of entries), built from the start."""
        out: list[Event] = []
        self._extend(entries, 0, out, [])
        return out

    def _extend(self, entries: Sequence[Entry], start: int, out: list[Event], starts: list[int]) -> None:
        cache, forgotten, ids = self._of_entry, self.forgotten, self.ids
        for pos in range(start, len(entries)):
            e = entries[pos]
            starts.append(len(out))
            hit = cache.get(id(e))
            if hit is None or hit[0] is not e:  # an entry's events, made once
                hit = cache[id(e)] = (e, pos, tuple(self._of(pos, e)))
            elif hit[1] != pos:  # the entry moved (a forgetting before it): its events, at their new place
                hit = cache[id(e)] = (e, pos, tuple(Event(ev[0], pos, *ev[2:]) for ev in hit[2]))
            for ev in hit[2]:
                key = ev.key
                if key not in forgotten:
                    if key not in ids:
                        ids[key] = len(ids)
                    out.append(ev)

    def _of(self, pos: int, e: Entry) -> Iterable[Event]:
        m = e.message
        if e.origin != "recorded":
            if e.role == "system":
                yield Event("system", pos, (e.id, USER_SLOT))
            elif e.origin == "summary" or e.role == "user":
                yield Event("condensation", pos, (e.id, USER_SLOT))
            else:
                yield Event("message", pos, (e.id, USER_SLOT))
            return
        if e.role == "system":
            yield Event("system", pos, (e.id, USER_SLOT))
        elif e.role == "user" and m.meta.get("recorded_summary"):
            yield Event("condensation", pos, (e.id, USER_SLOT))  # a recorded log's summary, replayed from
        elif e.role == "user" and m.meta.get("uncalled_observation"):
            yield Event("observation", pos, (e.id, USER_SLOT))  # an observation no call asked for (V0)
        elif e.role == "user":
            if not self.first_user:
                self.first_user = e.id
            yield Event("user", pos, (e.id, USER_SLOT))
            if self.recall:
                yield Event("recall", pos, (e.id, RECALL_ACTION))
                if e.id == self.first_user:
                    yield Event("recall", pos, (e.id, RECALL_OBS))
        elif e.role == "assistant":
            calls = [(j, p) for j, p in enumerate(m.parts) if isinstance(p, ToolCall)]
            thinking = any(isinstance(p, Reasoning) and p.text and not p.encrypted for p in m.parts)
            if not calls:
                yield Event("message", pos, (e.id, USER_SLOT))
            for k, (j, call) in enumerate(calls):
                yield Event("action", pos, (e.id, j), call.id, call.name, thinking and k == 0)
        else:
            for j, part in enumerate(m.parts):
                if isinstance(part, ToolResult):
                    kind = "condensation" if is_condensation(e.pruned.get(j, "")) else "observation"
                    yield Event(kind, pos, (e.id, j), part.call_id, part.name)


def visible(s: SessionView, events: Sequence[Event], kept: set[Key], v0: bool, first_user: str,
            summary_at: int | None = None) -> tuple[list[int], set[Key]]:
    """The view positions OpenHands would render once only ``kept`` events remain (and a summary at
    ``summary_at`` among them), and the keys of forgotten events whose messages are put back (V0: the
    system message, and the first user message when the second event is not a user message)."""
    entries = s.entries
    by_pos: dict[int, list[Event]] = {}
    for ev in events:
        by_pos.setdefault(ev.pos, []).append(ev)
    observed = {ev.call_id for ev in events if ev.kind == "observation" and ev.key in kept}
    shown: set[int] = set()
    owner: dict[str, int] = {}  # call id -> position of the assistant message calling it
    for pos, evs in by_pos.items():
        acts = [ev for ev in evs if ev.kind == "action"]
        for ev in acts:
            owner[ev.call_id] = pos
        if acts:
            if any(ev.key in kept for ev in acts) and all(ev.call_id in observed for ev in acts):
                shown.add(pos)
        elif entries[pos].role != "tool" and any(ev.key in kept for ev in evs if ev.kind != "recall"):
            shown.add(pos)
    for pos, evs in by_pos.items():
        if entries[pos].role != "tool":
            continue
        owners = {owner[ev.call_id] for ev in evs if ev.call_id in owner}
        if any(ev.kind == "condensation" and ev.key in kept for ev in evs) or (owners & shown) or \
                (not owners and any(ev.key in kept for ev in evs)):
            shown.add(pos)
    put_back: set[Key] = set()
    if v0:
        seq: list[Event | None] = [ev for ev in events if ev.key in kept]
        if summary_at is not None:
            seq.insert(min(summary_at, len(seq)), None)
        if not any(ev is not None and ev.kind == "system" for ev in seq):  # _ensure_system_message
            systems = [pos for pos, e in enumerate(entries) if e.role == "system" and e.origin == "recorded"]
            shown |= set(systems)
            put_back |= {(entries[pos].id, USER_SLOT) for pos in systems}
            seq.insert(0, None)
        second = seq[1] if len(seq) > 1 else None
        if first_user and (second is None or second.kind != "user"):  # _ensure_initial_user_message
            first = next((pos for pos, e in enumerate(entries) if e.id == first_user), None)
            if first is not None and (first_user, USER_SLOT) not in kept:
                shown.add(first)
                put_back.add((first_user, USER_SLOT))
    return sorted(shown), put_back


def rebuild(s: SessionView, events: Sequence[Event], kept: set[Key], summary_at: int | None,
            v0: bool, state: EventState) -> tuple[Slot, ...]:
    """The new view: the visible messages in order, the summary before the ``summary_at``-th kept event."""
    shown, put_back = visible(s, events, kept, v0, state.first_user, summary_at)
    on_view = set(shown)
    state.forgotten |= {ev.key for ev in events if ev.key not in kept and ev.pos in on_view} | put_back
    kept_events = [ev for ev in events if ev.key in kept]
    at = kept_events[summary_at].pos if summary_at is not None and summary_at < len(kept_events) else None
    slots: list[Slot] = []
    summary = Insert("user", with_summary=True, origin="summary", meta={"openhands": "condensation"})
    placed = summary_at is None
    for pos in shown:
        if not placed and at is not None and pos >= at:
            slots.append(summary)
            placed = True
        slots.append(Keep(s.entries[pos].id))
    if not placed:
        slots.append(summary)
    return tuple(slots)


def event_bound(m: Message) -> int:
    """The most events a recorded message adds to a view (a user message with its recall action and the
    first recall observation; an assistant message's calls; a tool message's results): the weight of the
    condensers' wake on the number of events."""
    if m.role == "user":
        return 3
    if m.role == "assistant":
        return max(1, sum(isinstance(p, ToolCall) for p in m.parts))
    if m.role == "system":
        return 1
    return sum(isinstance(p, ToolResult) for p in m.parts)


def no_events(m: Message) -> int:
    """The zero weight: a wake on long observations alone."""
    return 0


LONG = 10**9  # a long observation's weight: past any count a wake waits for
_WITH_LONG: dict[tuple[Callable[[Message], int], int], Callable[[Message], int]] = {}


def with_long_outputs(weight: Callable[[Message], int], max_chars: int) -> Callable[[Message], int]:
    """``weight``, plus more than any wake waits for on a message holding an observation over ``max_chars``:
    V0 cuts such an observation the first time it is in the view (:func:`message_char_cuts`), so a condenser
    must be asked then. A negative ``max_chars`` never cuts: ``weight`` itself. One function per pair (the
    loop keeps the prefix sums of a weight per function)."""
    if max_chars < 0:
        return weight
    fn = _WITH_LONG.get((weight, max_chars))
    if fn is None:
        def fn(m: Message) -> int:
            w = weight(m)
            if m.role in ("assistant", "system"):
                return w
            return w + LONG * sum((isinstance(p, ToolResult) and len(p.output) > max_chars)
                                  or (isinstance(p, Text) and len(p.text) > max_chars) for p in m.parts)

        fn = _WITH_LONG[(weight, max_chars)] = fn
    return fn


_TOOL_RESULTS: dict[tuple[str, ...], Callable[[Message], int]] = {}


def tool_results_of(tools: tuple[str, ...]) -> Callable[[Message], int]:
    """The weight counting a recorded tool message's results of ``tools`` (one function per tuple: the loop
    keeps the prefix sums of a weight per function)."""
    fn = _TOOL_RESULTS.get(tools)
    if fn is None:
        names = frozenset(tools)

        def fn(m: Message) -> int:
            if m.role in ("user", "assistant", "system"):
                return 0
            return sum(isinstance(p, ToolResult) and p.name in names for p in m.parts)

        fn = _TOOL_RESULTS[tools] = fn
    return fn


def message_char_cuts(s: SessionView, events: Sequence[Event], max_chars: int) -> Prune | None:
    """V0's ``ConversationMemory`` cuts each observation's text to ``max_message_chars`` in the middle
    (``truncate_content``) every time it renders the history for the model; browser outputs and file views are
    not cut (their own tools bound them). The cut is the same at every call, so it is a prune made the first
    time the observation is in the view, before any call sends it. A negative ``max_chars`` never cuts."""
    if max_chars < 0:
        return None
    targets: list[tuple[str, int, str]] = []
    calls: dict[str, ToolCall] | None = None
    for ev in events:
        if ev.kind != "observation" or ev.name in BROWSER_TOOLS:
            continue
        e = s.entries[ev.pos]
        j = max(ev.key[1], 0)
        part = e.message.parts[j] if j < len(e.message.parts) else None
        text = part.output if isinstance(part, ToolResult) else part.text if isinstance(part, Text) else ""
        if len(text) <= max_chars or j in e.pruned:
            continue
        if ev.name == EDITOR:
            if calls is None:
                calls = {p.id: p for x in s.entries if x.role == "assistant" for p in x.message.parts
                         if isinstance(p, ToolCall)}
            args = _args(calls[ev.call_id].args) if ev.call_id in calls else {}
            if isinstance(args, dict) and args.get("command") == "view":
                continue
        targets.append((e.id, j, truncate_content(text, max_chars)))
    return Prune(tuple(targets), "max_message_chars") if targets else None


def cut_tokens(s: SessionView, cut: Prune | None) -> int:
    """Tokens the cuts take out of the prompt."""
    if cut is None:
        return 0
    by_id = {e.id: e for e in s.entries}
    return sum(s.counter.part(by_id[m].message.parts[j]) - s.count(text) for m, j, text in cut.targets)


def overflowing(s: SessionView, less: int = 0) -> bool:
    """A call OpenHands would send and the provider refuse (``less``: tokens the observation cuts take out of
    it): the controller then adds a ``CondensationRequestAction`` (V0, ``enable_history_truncation``; V1 a
    ``CondensationRequest``) and condenses before retrying, which compbench does before the call."""
    return s.context_tokens - less > s.limits.input_limit


# --- events as text: str(event), for the summarizer's prompt --------------------------------------------------


def _args(raw: str) -> object:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return raw


def _call(e: Entry, call_id: str) -> ToolCall | None:
    return next((p for p in e.message.parts if isinstance(p, ToolCall) and p.id == call_id), None)


def _thought(e: Entry) -> str:
    return "\n".join(p.text for p in e.rendered().parts if isinstance(p, Text) and p.text)


def str_v0(ev: Event, e: Entry) -> str:
    """OpenHands V0 ``str(event)``: CmdRunAction / CmdOutputObservation for shell tools, MCPAction /
    MCPObservation (a dataclass repr) for the others, MessageAction for messages."""
    if ev.kind == "system":
        return f"**SystemMessageAction** (source=EventSource.AGENT)\nCONTENT: {e.message.text}"
    if ev.kind == "user":
        return f"**MessageAction** (source=EventSource.USER)\nCONTENT: {e.rendered().text}"
    if ev.kind == "message":
        return f"**MessageAction** (source=EventSource.AGENT)\nCONTENT: {_thought(e)}"
    if ev.kind == "recall":
        if ev.key[1] == RECALL_ACTION:
            return f"**RecallAction**\nQUERY: {e.message.text[:50]}"
        return "**RecallObservation**\nrecall_type=RecallType.WORKSPACE_CONTEXT"
    if ev.kind == "action":
        call = _call(e, ev.call_id)
        args = _args(call.args) if call else {}
        first = next(p for p in e.message.parts if isinstance(p, ToolCall)).id == ev.call_id
        thought = _thought(e) if first else ""
        if ev.name in SHELL_TOOLS:
            command = args.get("command", args.get("cmd", "")) if isinstance(args, dict) else args
            if isinstance(command, list):
                command = " ".join(map(str, command))
            head = "**CmdRunAction (source=EventSource.AGENT, is_input=False)**\n"
            return head + (f"THOUGHT: {thought}\n" if thought else "") + f"COMMAND:\n{command}"
        return "**MCPAction**\n" + (f"THOUGHT: {thought}\n" if thought else "") + f"NAME: {ev.name}\nARGUMENTS: {args}"
    output = e.rendered().parts[ev.key[1]]
    text = output.output if isinstance(output, ToolResult) else ""
    if ev.name in SHELL_TOOLS:
        return (f"**CmdOutputObservation (source=EventSource.AGENT, exit code=-1, metadata={CMD_METADATA})**\n"
                f"--BEGIN AGENT OBSERVATION--\n{text}\n--END AGENT OBSERVATION--")
    return (f"MCPObservation(content={text!r}, observation=<ObservationType.MCP: 'mcp'>, name={ev.name!r}, "
            f"arguments={{}})")


def _preview(text: str) -> str:
    return text[:N_CHAR_PREVIEW] + "..." if len(text) > N_CHAR_PREVIEW else text


def _message_preview(text: str) -> str:
    return text[: N_CHAR_PREVIEW - 3] + "..." if len(text) > N_CHAR_PREVIEW else text


def _action_class(name: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", name) if w) + "Action"


def str_v1(ev: Event, e: Entry) -> str:
    """software-agent-sdk ``str(event)``: 500-character previews (an action shows its thought and class)."""
    if ev.kind == "system":
        return f"SystemPromptEvent (agent)\n  System: {_preview(e.message.text)}\n  Tools: 0 available"
    if ev.kind == "user":
        return f"MessageEvent (user)\n  user: {_message_preview(e.rendered().text) or '[no text content]'}"
    if ev.kind == "message":
        return f"MessageEvent (agent)\n  assistant: {_message_preview(_thought(e)) or '[no text content]'}"
    if ev.kind == "condensation":
        return f"CondensationSummaryEvent (environment)\n  user: {_message_preview(e.rendered().text)}"
    if ev.kind == "action":
        first = next(p for p in e.message.parts if isinstance(p, ToolCall)).id == ev.call_id
        thought = _thought(e) if first else ""
        return f"ActionEvent (agent)\n  Thought: {_preview(thought)}\n  Action: {_action_class(ev.name)}"
    output = e.rendered().parts[ev.key[1]]
    text = output.output if isinstance(output, ToolResult) else ""
    return f"ObservationEvent (environment)\n  Tool: {ev.name}\n  Result: {_preview(text)}"


def truncate_content(text: str, max_chars: int | None) -> str:
    """``truncate_content``: the middle cut out past ``max_chars``."""
    if max_chars is None or len(text) <= max_chars or max_chars < 0:
        return text
    half = max_chars // 2
    return text[:half] + TRUNCATED + text[-half:]

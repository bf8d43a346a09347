"""``compbench.strategies.gemini_cli_context`` — ``gemini-cli-context``: Gemini CLI's opt-in context management
(``ContextManager`` with the generalist profile), off by default as the tool ships it.

Read at 5411f113ca (2026-08-21, the newest commit in the mirror; v0.56/v0.57 previews): ``packages/core/src/context/``
``contextManager.ts`` (``renderHistory``, ``evaluateTriggers``), ``config/profiles.ts`` (``generalistProfile``),
``config/configLoader.ts``, ``initializer.ts``, ``pipeline/orchestrator.ts``, ``graph/render.ts``, ``graph/toGraph.ts``,
``processors/{toolMasking,blobDegradation,nodeDistillation,stateSnapshot,stateSnapshotAsync}Processor.ts``,
``utils/{contextTokenCalculator,adaptiveTokenCalculator,snapshotGenerator}.ts``; ``core/client.ts`` ``processTurn``;
``cli/src/config/config.ts`` (the profile selector). First shipped wired into ``processTurn`` in v0.41.0-preview.0
(71f313b51a, "wire up the new ContextManager"); the pipeline changed much since (71 files to 5411f11: NodeTruncation
2,000 a node there, 4,000 now; ``retained_exceeded`` reached by the orchestrator there): only 5411f11 is modelled.

On: ``experimental.contextManagement: true`` in ``~/.gemini/settings.json`` (or ``experimental.generalistProfile``;
``powerUserProfile`` / ``stressTestProfile`` pick other profiles). Off by default since the flag came in
(v0.37.0-preview.0, dfba0e91e2; up to v0.40 it drove the older ``AgentHistoryProvider``, not modelled): then the
compression service runs (:mod:`.gemini_cli`). On, ``processTurn`` skips ``tryCompressChat``; tool-output masking
still runs after this, which the ``gemini-cli:preset=context`` composition adds. The budgets are the profile's and
the executor's limits ``config.ts``'s defaults: the ``contextManagement`` object of ``settings.json``
(``historyWindow``, ``messageLimits``, ``tools.distillation``) is in its schema, but the CLI passes only
``{enabled}`` to the core at 5411f11 (v0.37.0 spread the object in); the parameters keep the tool's own names.

Before every model call (``renderHistory(pendingRequest)``), over the nodes of :mod:`.gemini_cli_nodes`:

1. The request being sent (the messages since the last model turn) is sanitized once. A tool result was already
   cut as it was executed (:mod:`.gemini_cli_tool_distill`: past 40,000 characters, with a model's extraction of
   its facts past 80,000); then (``new_message``) a string of a function response longer than
   ``tokensToChars(8,000)`` = 24,000 / weight characters becomes the ``<tool_output_masked>`` line with the file's
   path (activate_skill, ask_user, enter/exit_plan_mode exempt); then a user text or a function response whose JSON
   is longer than ``tokensToChars(15,000)`` is distilled by a model (the summary replaces it only when its estimate
   is smaller). The sanitized request is what the history keeps (``request = finalPendingContent.parts``).
2. ``evaluateTriggers``: when the nodes weigh more than ``retainedTokens`` (65,000), every node (not of the
   environment turn nor of the request's turn) whose newer nodes weigh more than 65,000 has aged out; when the
   deficit over 65,000 grew by more than ``coalescingThresholdTokens`` (5,000) since the last trigger, a background
   ``StateSnapshotAsync`` (``accumulate``) summarizes them into a draft Master State. The next call's render waits
   for it (the pressure barrier), so a draft started at call N exists from call N+1.
3. ``render``: when the nodes weigh more than ``maxTokens`` (150,000), the aged-out nodes are replaced by one
   ``SNAPSHOT`` user turn (``StateSnapshotSync``, ``target: 'max'``): the draft's nodes when all of them are still
   aged out (the fast path), else all of them, folding the newest earlier snapshot (the slow path, at least two).

Synchronous equivalents and limits: the background drafts are not charged (the summarizer is asked once, at the
snapshot that uses them; ``meta.background`` counts the drafts the tool paid for); a draft built on an earlier
snapshot names nodes no longer in the graph, so after the first snapshot every later one takes the slow path, as in
the tool. The snapshot is the summarizer's answer (the tool asks for a JSON patch of its Master State). The view
replaces whole messages: a message is summarized when all its nodes aged out, a run never starts with tool results
or ends with calls whose results are kept (the tool splits Contents and repairs pairs in ``hardenHistory``).
``Normalization`` (distillation past 3,000, truncation to 4,000 a node) is bound to ``retained_exceeded``, a trigger
nothing fires at 5411f11: it never runs, and is not modelled. ``BlobDegradation`` turns every image, PDF or file of
the request into a line naming its file (it saves tokens by the estimate, 3,000 an image), so the model never sees
one (a reference without bytes becomes its URI line).

The weight (``AdaptiveTokenCalculator``, from 1.0) learns after each call from the prompt tokens the API reported,
less the system instruction and tools (here: what the view holds outside the history), over the base units of the
history it rendered (rate 0.2, at most 0.15 a call, the target within 0.5-2x of the weight, the weight in 0.5-2).
It learns once before the first call too (``performHotStartCalibration``: ``countTokens`` of the history, here
compbench's count, less the same overhead, which it does not hold: usually nothing, so 0.9). The environment
context turn every session starts with (``<session_context>``, pinned) is not in the logs; a log's first text
that holds it is pinned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    Action,
    Compact,
    CompactionEvent,
    Insert,
    Keep,
    Media,
    Message,
    Prune,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    ToolResult,
    Usage,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies import gemini_cli_prompts as prompts
from compbench.strategies import gemini_cli_tool_distill as tool_distill
from compbench.strategies.gemini_cli_history import SESSION_ID, history_bounds, js_len, stringify
from compbench.strategies.gemini_cli_nodes import (
    CHARS_PER_TOKEN,
    MASK_TAG,
    UNMASKABLE_TOOLS,
    Graph,
    Key,
    Node,
    aged_out,
    degraded_text,
    env_turns,
    estimate3,
    js_round,
    list_tokens,
    masked_text,
    raw_units,
)

GONE = ("", -1)  # a draft node no longer in the graph (an earlier snapshot's abstracted nodes)
PROVISIONAL = "[distilling]"


@dataclass(frozen=True)
class GeminiCliContextParams:
    retained_tokens: int = param(65_000, "budget.retainedTokens: the newest weighted tokens never aged out (generalistProfile).", lo=1)
    max_tokens: int = param(150_000, "budget.maxTokens: above this the aged-out nodes become one state snapshot.", lo=1)
    coalescing_tokens: int = param(5_000, "budget.coalescingThresholdTokens: the deficit growth that starts a background snapshot.")
    mask_tokens: int = param(8_000, "ToolMasking stringLengthThresholdTokens: a function response string longer than this (in characters: x3) is masked.", lo=1)
    distill_tokens: int = param(15_000, "ImmediateNodeDistillation nodeThresholdTokens: a new user text or response longer than this (x3 characters) is distilled by a model.", lo=1)
    max_state_tokens: int = param(4_000, "StateSnapshot maxStateTokens: past 80% of it the snapshot prompt warns the model to prune.", lo=1)
    tool_max_output_tokens: int = param(10_000, "tools.distillation.maxOutputTokens: a tool output (not read_file, read_many_files) longer than this x 4 characters is cut as it is executed (0: never).")
    tool_summary_tokens: int = param(20_000, "tools.distillation.summarizationThresholdTokens: a cut output longer than this x 4 characters also gets a model's extraction of its facts.")
    calibrate: bool = param(True, "Learn the token weight from the reported prompt tokens (AdaptiveTokenCalculator); off: 1.0.")


class GeminiCliContext:
    name = "gemini-cli-context"

    def __init__(self, p: GeminiCliContextParams) -> None:
        self.p = p
        self.weight = 1.0
        self.hot = False  # performHotStartCalibration done
        self.sanitized: set[str] = set()  # message ids of requests already taken in
        self.tasks: list[Key] = []  # parts of the request still to process
        self.stages: dict[Key, int] = {}  # how far each part got: 0 executor, 1 masking, 2 node distillation
        self.prompts = 0  # user prompts so far (the promptId of the executor's files)
        self.overlay: dict[Key, str] = {}  # placeholders returned, perhaps not applied yet
        self.last_deficit = 0
        self.job: frozenset[Key] | None = None  # a background snapshot started at this call
        self.draft: frozenset[Key] | None = None  # the accumulated draft's consumed nodes
        self.background = 0
        self.units = 0  # base units of the last render
        self.outside = 0  # the view's tokens outside the history at the last render
        self.graph = Graph()

    # --- the hooks ----------------------------------------------------------------------------------------
    def before_step(self, s: SessionView) -> Sequence[Action]:
        self.overlay = {}
        stop = history_bounds(s.entries)[1]
        for e in s.entries[stop:]:
            if e.id in self.sanitized or e.role == "assistant":
                continue
            self.sanitized.add(e.id)
            if e.role == "user":
                self.prompts += 1
            self.tasks += [(e.id, j) for j, part in enumerate(e.message.parts)
                           if isinstance(part, ToolResult | Text | Media)]
        return self.next(s, [])

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        """``emitTokenGroundTruth`` after the call: the reported prompt less the system instruction and tools."""
        if self.p.calibrate and self.units > 0:
            self.learn(max(0, u.input - self.outside), self.units)
        return ()

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]:
        kind = event.meta.get("kind")
        out: list[Action] = []
        key = (str(event.meta.get("message")), int(event.meta.get("part", -1)))
        if kind == "intent" and event.applied:  # the extraction appended (none when the model failed)
            text = str(event.meta["cut"]) + (prompts.INTENT_SECTION + event.summary if event.summary else "")
            self.show(out, key, text, "ToolOutputDistillation")
        if kind == "distill" and event.ok:
            self.show(out, key, event.summary, "ImmediateNodeDistillation")
        if kind == "snapshot":
            if event.ok and event.meta.get("fast"):
                self.draft = None  # inbox.consume(proposed.id)
            self.measure(s, history_bounds(s.entries)[0])
            return out
        return self.next(s, out)

    def accept(self, a: Compact, summary: str) -> str | None:
        """A distillation replaces its node only when the summary's estimate is smaller (``newTokens < oldTokens``)."""
        if a.meta.get("kind") != "distill":
            return None
        text = summary or str(a.meta["original"])  # getResponseText(response) || text
        part = ({"functionResponse": {"name": a.meta["info"], "response": {"summary": text}}}
                if a.meta["tool"] else {"text": text})
        new = js_round(estimate3(part) * self.weight)
        return None if new < int(a.meta["old"]) else f"distillation not smaller ({new} >= {a.meta['old']})"

    # --- each part of the request: the executor's distillation, then masking, then node distillation --------
    def show(self, out: list[Action], key: Key, text: str, reason: str) -> None:
        """The part ``key`` shown as ``text`` from now on (a prune, and in the overlay until the loop applies it)."""
        self.overlay[key] = text
        out.append(Prune(((key[0], key[1], text),), reason, replace=True))

    def text(self, s: SessionView, key: Key) -> tuple[ToolResult | Text, str]:
        e = s.entries[s.position(key[0])]
        part = e.message.parts[key[1]]
        assert isinstance(part, ToolResult | Text)
        shown = self.overlay.get(key, e.pruned.get(key[1]))
        return part, shown if shown is not None else part.output if isinstance(part, ToolResult) else part.text

    def next(self, s: SessionView, out: list[Action]) -> list[Action]:
        """Work through the request's parts; a model request ends the answer (its follow-up continues here)."""
        while self.tasks:
            key = self.tasks[0]
            e = s.entries[s.position(key[0])]
            media = e.message.parts[key[1]]
            if isinstance(media, Media):  # BlobDegradation: the line always costs less than the blob's estimate
                self.tasks.pop(0)
                if key[1] not in e.pruned and key not in self.overlay:
                    self.show(out, key, degraded_text(media, key[0], key[1]), "BlobDegradation")
                continue
            part, text = self.text(s, key)
            stage = self.stages.get(key, 0)
            self.stages[key] = stage + 1
            if stage == 0 and isinstance(part, ToolResult) and not part.is_error \
                    and tool_distill.needs_cut(part.name, text, self.p.tool_max_output_tokens):
                cut = tool_distill.cut(text, part.name, part.call_id, f"{SESSION_ID}########{self.prompts}",
                                       self.p.tool_max_output_tokens)
                if tool_distill.needs_summary(text, self.p.tool_summary_tokens):
                    return [*out, self.intent(s, key, part.name, text, cut)]
                self.show(out, key, cut, "ToolOutputDistillation")
            elif stage == 1 and isinstance(part, ToolResult) and part.name not in UNMASKABLE_TOOLS \
                    and js_len(text) > self.p.mask_tokens / self.weight * CHARS_PER_TOKEN and MASK_TAG not in text:
                self.show(out, key, masked_text(text, part.name or "unknown", part.call_id or "unknown"), "ToolMasking")
            elif stage == 2:
                self.tasks.pop(0)
                act = self.distillation(s, key, part, text)
                if act is not None:
                    return [*out, act]
        return [*out, *self.budget(s)]

    def intent(self, s: SessionView, key: Key, tool: str, text: str, cut: str) -> Compact:
        """``generateIntentSummary``: the cut output applies whatever the model answers."""
        prompt = prompts.INTENT_PROMPT.format(tool=tool, output=text[:tool_distill.MAX_DISTILLATION_SIZE])
        request = SummaryRequest("", (Message("gemini-cli-intent", "user", (Text(prompt),)),),
                                 (s.entries[s.position(key[0])].rendered(),))
        self.overlay[key] = cut
        return Compact("ToolOutputDistillation", tuple(Keep(x.id) for x in s.entries), request, on_failure="apply",
                       meta={"kind": "intent", "message": key[0], "part": key[1], "cut": cut},
                       prune=((key[0], key[1], cut),))

    def distillation(self, s: SessionView, key: Key, part: ToolResult | Text, text: str) -> Compact | None:
        """``ImmediateNodeDistillation`` of a user text or a function response past ``distill_tokens``."""
        threshold = self.p.distill_tokens / self.weight * CHARS_PER_TOKEN  # tokensToChars
        tool = isinstance(part, ToolResult)
        if isinstance(part, ToolResult):
            response = {"error" if part.is_error else "output": text}
            body = stringify(response)
            old = js_round(estimate3({"functionResponse": {"name": part.name, "response": response}}) * self.weight)
            info = part.name or "unknown"
        else:
            body, info = text, "USER_PROMPT"
            old = js_round(estimate3({"text": text}) * self.weight)
        if js_len(body) <= threshold:
            return None
        request = SummaryRequest(prompts.DISTILL_SYSTEM.format(info=info),
                                 (Message("gemini-cli-distill", "user", (Text(body),)),),
                                 (s.entries[s.position(key[0])].rendered(),))
        return Compact("ImmediateNodeDistillation", tuple(Keep(x.id) for x in s.entries), request,
                       meta={"kind": "distill", "message": key[0], "part": key[1], "info": info, "tool": tool,
                             "old": old, "original": body},
                       prune=((key[0], key[1], PROVISIONAL),))

    # --- the rest of renderHistory --------------------------------------------------------------------------
    def budget(self, s: SessionView) -> Sequence[Action]:
        head = history_bounds(s.entries)[0]
        nodes = self.graph.nodes(s.entries, head, self.overlay, (s, s.revision))
        if not nodes:
            return ()
        last = nodes[-1].turn
        if not self.hot:  # performHotStartCalibration: countTokens(contents) less the system and tools; the
            self.hot = True  # buffer always holds the environment context (getInitialChatHistory), logs do not
            if self.p.calibrate:
                history = sum(e.tokens for e in s.entries[head:])
                outside = s.context_tokens - history
                self.learn(max(0, history - outside), raw_units(nodes))
        if self.job is not None:  # the pressure barrier: the draft started at the last call is published
            self.draft, self.job = self.job, None
        protected = env_turns(nodes) | {last}
        current = list_tokens(nodes, self.weight)
        targets: list[Node] = []
        if current > self.p.retained_tokens:
            targets = aged_out(nodes, self.weight, self.p.retained_tokens, protected)
            if targets:
                deficit = current - self.p.retained_tokens
                self.last_deficit = min(self.last_deficit, deficit)
                if deficit > self.last_deficit + self.p.coalescing_tokens:
                    self.last_deficit = deficit
                    self.start(targets)
            else:
                self.last_deficit = 0
        if current > self.p.max_tokens and targets:
            act = self.snapshot(s, head, nodes, targets, current)
            if act is not None:
                return (act,)
        self.measure(s, head)
        return ()

    def start(self, targets: Sequence[Node]) -> None:
        """``StateSnapshotAsyncProcessor`` (accumulate), started in the background: before this call's own
        snapshot can look, it takes the draft off the shelf (``inbox.drainConsumed``) to fold it, or else folds
        the newest snapshot among its targets (whose abstracted nodes are gone); its draft names what it consumed
        and is published when the next call's render waits for it."""
        self.background += 1
        if self.draft is not None:
            previous, self.draft = self.draft, None
        elif any(n.kind == "snapshot" for n in targets):
            previous = frozenset({GONE})
        else:
            previous = frozenset()
        self.job = previous | {n.key for n in targets}

    def snapshot(self, s: SessionView, head: int, nodes: Sequence[Node], targets: Sequence[Node],
                 current: int) -> Compact | None:
        keys = {n.key for n in targets}
        fast = self.draft is not None and self.draft <= keys
        chosen = set(self.draft) if fast and self.draft is not None else keys
        if not fast and len(targets) < 2:
            return None  # "Not enough context"
        span = self.span(s, head, nodes, chosen)
        if span is None:
            return None
        a, b = span
        previous = next((e.message.text for e in reversed(s.entries[a:b]) if e.origin == "summary"), None)
        state = previous or prompts.EMPTY_STATE
        tokens = js_round(-(-js_len(state) // CHARS_PER_TOKEN) * self.weight)  # estimateTokensForString
        warning = ""
        if tokens > self.p.max_state_tokens * 0.8:
            warning = prompts.SNAPSHOT_WARNING.format(pct=f"{tokens / self.p.max_state_tokens * 100:.0f}")
        source = tuple(e.rendered() for e in s.entries[a:b] if e.origin != "summary")
        request = SummaryRequest(prompts.SNAPSHOT_SYSTEM.format(warning=warning),
                                 (Message("gemini-cli-master-state", "user",
                                          (Text(prompts.SNAPSHOT_USER.format(state=state)),)), *source),
                                 source, None, previous)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in s.entries[:a]),
                                  Insert("user", with_summary=True, origin="summary"),
                                  *(Keep(e.id) for e in s.entries[b:]))
        reason = "weighted tokens > maxTokens: StateSnapshotSync"
        return Compact(reason, view, request, on_failure="unchanged",
                       meta={"kind": "snapshot", "fast": fast, "tokens": current, "weight": round(self.weight, 4),
                             "background": self.background, "aged_out": len(targets)})

    @staticmethod
    def span(s: SessionView, head: int, nodes: Sequence[Node], chosen: set[Key]) -> tuple[int, int] | None:
        """The messages a snapshot of the nodes ``chosen`` replaces: the first run of messages whose nodes are
        all chosen, without leading tool results or trailing calls whose results stay."""
        full: dict[int, bool] = {}
        for n in nodes:
            full[n.position] = full.get(n.position, True) and n.key in chosen
        a = next((k for k in range(head, len(s.entries)) if full.get(k)), None)
        if a is None:
            return None
        b = a
        while b < len(s.entries) and full.get(b, s.entries[b].role != "tool" and b not in full):
            b += 1
        while a < b and s.entries[a].role == "tool":
            a += 1
        while b > a and b < len(s.entries) and s.entries[b].role == "tool":
            b -= 1  # the calls of the kept results stay with them
        return (a, b) if b > a else None

    def measure(self, s: SessionView, head: int) -> None:
        nodes = self.graph.nodes(s.entries, head, self.overlay, (s, s.revision))
        self.units = raw_units(nodes)
        self.outside = s.context_tokens - sum(e.tokens for e in s.entries[head:])

    def learn(self, actual: int, units: int) -> None:
        """``AdaptiveTokenCalculator.handleGroundTruth``."""
        if units <= 0:
            return
        old = self.weight
        target = max(old * 0.5, min(actual / units, old * 2.0))
        new = old * 0.8 + target * 0.2
        new = min(max(new, old - 0.15), old + 0.15)
        self.weight = max(0.5, min(new, 2.0))


@strategy("gemini-cli-context", params=GeminiCliContextParams,
          upstream="google-gemini/gemini-cli context/contextManager.ts + config/profiles.ts generalistProfile @ 5411f11 "
                 "(opt-in: experimental.contextManagement, default false)",
          summary="Gemini CLI's opt-in context management: each new tool output cut past 40,000 characters, then "
                  "masked past 8k and distilled past 15k estimated tokens; past 150k the nodes older than the "
                  "newest 65k become one state snapshot",
          # experimental.stressTestProfile (profiles.ts): no coalescing threshold (0); its NodeTruncation and
          # NodeDistillation overrides are Normalization's, which never runs. powerUserProfile is not modelled.
          presets={"stress-test": {"retained_tokens": 1_500, "max_tokens": 5_000, "coalescing_tokens": 0,
                                   "mask_tokens": 500}},
          version="1")
def gemini_cli_context(p: GeminiCliContextParams) -> GeminiCliContext:
    return GeminiCliContext(p)

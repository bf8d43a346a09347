"""``compbench.sdk`` — The strategy SDK: everything a strategy author needs, in one module.

A strategy decides what the model sees. It is a small object, one per replay (so it may keep private
state), whose parameters are a frozen dataclass with its source's defaults. The loop shows it the session
through a read-only :class:`SessionView` and it answers with actions; it never edits a message. The
complete example is ``compbench.strategies.example_keep_last`` (``strategies show example-keep-last``);
``docs/writing-a-strategy.md`` walks from nothing to a checked plug-in. In short::

    from collections.abc import Sequence
    from dataclasses import dataclass
    from compbench.sdk import (Action, Compact, Insert, Keep, SessionView, SummaryRequest, Usage, Wake, param,
                               strategy)

    @dataclass(frozen=True)
    class KeepLastParams:
        keep: int = param(6, "Messages kept verbatim, newest first.", lo=1)
        trigger: int = param(30_000, "Context tokens at which it compacts.", lo=1)

    class KeepLast:
        name = "keep-last"

        def __init__(self, p: KeepLastParams) -> None:
            self.p = p

        def before_step(self, s: SessionView) -> Sequence[Action]:   # before a model call (pre-turn trigger)
            if s.context_tokens < self.p.trigger or len(s.entries) <= self.p.keep:
                return ()
            cut = len(s.entries) - self.p.keep
            request = SummaryRequest("Summarize.", s.rendered(), s.rendered(0, cut), 500)
            return (Compact("over trigger", (Insert("user", "Summary: ", with_summary=True, origin="summary"),
                                             *(Keep(e.id) for e in s.entries[cut:])), request),)

        def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:  # after it (post-step trigger)
            return ()

        def wake(self, s: SessionView) -> Wake:          # optional: when it could next act
            return Wake(tokens=self.p.trigger)

    @strategy("keep-last", params=KeepLastParams, upstream="my tool 1.2", summary="summarize all but the last 6")
    def keep_last(p: KeepLastParams) -> KeepLast:
        return KeepLast(p)

Another package registers it through the entry point group ``compbench.strategies`` (pyproject:
``[project.entry-points."compbench.strategies"] keep-last = "mypkg.keep_last"``); ``compbench strategies
list|show``, ``run --strategy keep-last:keep=4`` and ``tune --strategy keep-last --grid keep=4,8`` then
know it, and ``compbench strategies check keep-last`` checks it on the bundled samples (its imports, its
parameters' docs and bounds, its presets, that it acts, that its wake is exact, that it answers with actions
only, its Tool). ``param(default, doc, lo=, hi=)`` documents and bounds a parameter; ``presets={...}`` names
sets of values (``keep-last:preset=NAME``; ``seed`` is always the defaults).

**The view** (:class:`SessionView`): ``entries`` (each an :class:`Entry`: ``message``, ``tokens``,
``origin``, ``pruned`` parts), ``limits`` (:class:`ModelLimits`), ``context_tokens`` (the next call's
input), ``last_usage``, ``step``, ``counter`` (:class:`Counter`: ``s.count(text)``); ``revision`` (view
changes made by actions: unchanged means the view only grew at its end, so incremental state may be
extended) and ``last_event`` (the :class:`CompactionEvent` / :class:`PruneEvent` of this strategy's own last
action: was it applied?); ``meta`` (what the log recorded: its model, its tool version); ``per_round(key,
compute)`` and ``memo(name)`` share work with the other replays of the transcript (a tuning grid's
configurations), through the run's replay context. The messages are the data model's (:class:`Message`
of :class:`Text`, :class:`Reasoning`, :class:`ToolCall`, :class:`ToolResult`, :class:`Media` parts), and
:func:`touches` says what a tool call reads, writes or runs.

**Actions**: :class:`Compact` (a new view of :class:`Keep` and :class:`Insert` slots, a
:class:`SummaryRequest` and :class:`Followup` requests, a failure path), :class:`Prune` (hide parts
behind placeholders). Only the loop applies them; a hook that changes the view or a message instead is
caught by ``strategies check``.

**Optional capabilities**, each a method (the class declares it by having it; :func:`capabilities`
reads them, for the loop and for ``strategies show``; the protocols type them):

- ``manual`` (:class:`ManualCompaction`): the tool's user-issued ``/compact``;
- ``accept`` (:class:`CompactionCheck`): looks at a summary before using it;
- ``after_compaction`` (:class:`CompactionFollowup`): acts on what its compaction produced;
- ``stages`` (:class:`Composed`): composed strategies asked stage by stage (``pipeline``);
- ``wake`` (:class:`Wakeful`): having answered a question with nothing, says when it could next act (a
  :class:`Wake`: the context reaches N tokens, the last usage reaches N, a new user message, N entries,
  step N, its own per-message weight reaching N; ``Wake.never()``: not while the view only grows;
  ``Wake.next_question()``: ask me next time); the loop asks it nothing until then. Most strategies wait
  for a threshold: without ``wake`` they are asked before and after every step of every transcript, with
  it a replay costs what the strategy does. It must be exact: skipping the questions in between changes
  nothing (the strategy would have answered nothing, and keeps no state it would have updated there).
  :func:`asking_every_question` replays as if no strategy had one; :mod:`compbench.testing`'s
  ``wake_differences`` compares the tables of the two::

      def wake(self, s: SessionView) -> Wake:             # after a question answered with nothing
          return Wake(tokens=self.p.trigger)               # before_step acts only from the trigger on

**Optional declarations** (attributes): ``read_before_edit = True`` says the tool refuses to edit a file
not read since its compaction, as Claude Code does: predicted re-acquisition then counts such an edit even
where the summary quoted the file (:func:`reads_before_edit`). ``until_first = True`` on a composition ends a
round at the first stage that compacted (OpenHands' condenser pipeline). A tool that re-attaches content
after its compaction does so in its own :class:`Compact` (an :class:`Insert` holding the content): the view
holds it and pays its tokens.

**The real tool it reproduces** (``@strategy(..., tool=Tool(...))``, :mod:`compbench.sdk.tools`): which logs
are the tool's (``formats``, the ``Transcript.source`` values) and whether this strategy is the one a default
run sets beside them (``own``); the preset each log replays at (``version_preset`` from the version it
recorded, ``newest`` past the last, ``log_preset`` from what else the log shows; ``preset_versions`` in
words); the settings its users write (:class:`Setting`: the environment variable or config key, the exact
line to paste, how the tool treats a value, the values a run's settings sweep tries); and what ``compbench
fidelity`` reads (``manual_compaction``, ``recorded_preset``, ``fidelity_specs``, ``own_count``,
``designed``, ``manual_name``/``auto_name``).

**Testing one**: :mod:`compbench.testing` (imported by tests, never by a strategy: it stands above the
engine) builds views from messages, replays a strategy on a sample or hand-made transcript and returns its
trace, and runs the wake and actions-only checks.
"""

from __future__ import annotations

from compbench.data.calls import Touch, call_args, path_key, touches
from compbench.data.transcript import (
    Media,
    Message,
    Part,
    Reasoning,
    Role,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)
from compbench.sdk.context import IdentityMemo, ReplayContext
from compbench.sdk.counting import Counter, chars4, chars4_round, framed_text, joined_text, joins_add_up
from compbench.sdk.events import CompactionEvent, Event, Phase, PruneEvent
from compbench.sdk.protocols import (
    CAPABILITIES,
    Capability,
    CompactionCheck,
    CompactionFollowup,
    Composed,
    ManualCompaction,
    Strategy,
    Wakeful,
    asking_every_question,
    capabilities,
    optional,
    reads_before_edit,
    stages_of,
    wake_of,
)
from compbench.sdk.registry import Configured, StrategyInfo, configure, param, resolve, strategy
from compbench.sdk.session import (
    NEVER,
    NEXT_QUESTION,
    PREVIOUS_ANSWER,
    Action,
    Compact,
    Entry,
    Followup,
    Insert,
    Keep,
    ModelLimits,
    Origin,
    Prune,
    SessionView,
    Slot,
    SummaryRequest,
    Wake,
)
from compbench.sdk.tools import Accepts, Setting, Tool, version_tuple

__all__ = [
    "CAPABILITIES",
    "NEVER",
    "NEXT_QUESTION",
    "PREVIOUS_ANSWER",
    "Accepts",
    "Action",
    "Capability",
    "Compact",
    "CompactionCheck",
    "CompactionEvent",
    "CompactionFollowup",
    "Composed",
    "Configured",
    "Counter",
    "Entry",
    "Event",
    "Followup",
    "IdentityMemo",
    "Insert",
    "Keep",
    "ManualCompaction",
    "Media",
    "Message",
    "ModelLimits",
    "Origin",
    "Part",
    "Phase",
    "Prune",
    "PruneEvent",
    "Reasoning",
    "ReplayContext",
    "Role",
    "SessionView",
    "Setting",
    "Slot",
    "Strategy",
    "StrategyInfo",
    "SummaryRequest",
    "Text",
    "Tool",
    "ToolCall",
    "ToolResult",
    "Touch",
    "Transcript",
    "Usage",
    "Wake",
    "Wakeful",
    "asking_every_question",
    "call_args",
    "capabilities",
    "chars4",
    "chars4_round",
    "configure",
    "framed_text",
    "joined_text",
    "joins_add_up",
    "optional",
    "param",
    "path_key",
    "reads_before_edit",
    "resolve",
    "stages_of",
    "strategy",
    "touches",
    "version_tuple",
    "wake_of",
]

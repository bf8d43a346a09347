"""``compbench.strategies.example_keep_last`` — ``example-keep-last``: an example for strategy authors, not a real tool.

The smallest complete strategy, to copy (docs/writing-a-strategy.md walks through it): from a token trigger (or
sooner, where the model's window would leave the reply no room), everything but the last few messages becomes one
summary. It shows each part a plug-in has — a frozen params
dataclass whose fields are documented and bounded with :func:`~compbench.sdk.param`, ``before_step`` and
``after_step`` answering with actions (a :class:`~compbench.sdk.Compact` of :class:`~compbench.sdk.Keep` and
:class:`~compbench.sdk.Insert` slots and a :class:`~compbench.sdk.SummaryRequest`), a ``wake`` (it can say
when it could next act), and a :class:`~compbench.sdk.Tool` declaration: presets by the version a log
recorded and the setting its users write, with the values a run's settings sweep tries.

"my tool" is made up: its logs are compbench's own format (``compbench``, what an author converts a tool's
logs to when no importer reads them), versions before 2.0 keep 6 messages and 2.0 on keeps 4 and compacts
later. Registered with ``example=True``: ``strategies list`` shows it, ``run --strategy example-keep-last``
replays it, and a run of every strategy leaves it out (the demo's figures do not move).
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
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolResult,
    Usage,
    Wake,
    param,
    strategy,
    version_tuple,
)

NAME = "example-keep-last"
PROMPT = "Summarize the conversation so far: the task, what was done, what remains, the files and decisions."
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


@dataclass(frozen=True)
class KeepLastParams:
    """The defaults are "my tool" 1.2's (the ``1.2`` preset)."""

    keep: int = param(6, "Messages kept verbatim after a compaction, newest first.", lo=1)
    trigger: int = param(30_000, "Context tokens (the next call's input) at which it compacts (sooner where the "
                                 "window leaves the reply no room).", lo=1)
    summary_tokens: int = param(500, "Output budget of the summary request.", lo=1)


class KeepLast:
    """One instance per replay; it keeps no state (everything it decides on is in the view)."""

    name = NAME

    def __init__(self, p: KeepLastParams) -> None:
        self.p = p

    def threshold(self, s: SessionView) -> int:
        """The context it compacts at: its trigger, or sooner where the window would leave the reply no room (the
        largest prompt the API accepts, less the reply's budget): a call over the window is refused."""
        return min(self.p.trigger, s.limits.input_limit - s.limits.max_output)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        """Before a model call (a pre-turn trigger): from the threshold on, the head becomes one summary."""
        if s.context_tokens < self.threshold(s):
            return ()
        entries = s.entries
        head = 1 if entries and entries[0].role == "system" else 0  # the system prompt stays first
        cut = len(entries) - self.p.keep
        while cut > head and any(isinstance(p, ToolResult) for p in entries[cut].message.parts):
            cut -= 1  # never keep a tool result whose call is summarized away
        if cut <= head:
            return ()  # nothing old enough to summarize
        instruction = Message(f"{NAME}-prompt", "user", (Text(PROMPT),))
        request = SummaryRequest("You summarize coding sessions.", (*s.rendered(head, cut), instruction),
                                 s.rendered(head, cut), self.p.summary_tokens)
        new_view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]),  # a slot per entry of the new view
                                      Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"),
                                      *(Keep(e.id) for e in entries[cut:]))
        return (Compact("over trigger", new_view, request),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        """After a model call, with its usage (a post-step trigger): this strategy decides before the call."""
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Having answered nothing, when it could next act. Under the threshold: when the context reaches it.
        Over it (too few messages to cut): the context only grows until an action changes the view, so the
        condition left is the number of messages. Both are necessary conditions for ``before_step`` to act:
        waking early costs a question, waking late would change the replay (checked with and without it)."""
        if s.context_tokens < self.threshold(s):
            return Wake(tokens=self.threshold(s))
        return Wake(entries=len(s.entries) + 1)


def version_preset(version: str) -> str | None:
    """The preset of a "my tool" version: ``2.0`` from 2.0 on, ``1.2`` before (None: no version in the text)."""
    v = version_tuple(version)
    if v is None:
        return None
    return "2.0" if v >= (2, 0, 0) else "1.2"


TOOL = Tool(
    "my tool", ("compbench",), newest="2.0", version_preset=version_preset,
    preset_versions={"1.2": "before 2.0: keeps 6 messages from 30k tokens", "2.0": "2.0 on: keeps 4 from 40k"},
    settings=(Setting("trigger", "MYTOOL_COMPACT_AT", "environment", "30000 (40000 from 2.0)",
                      "export MYTOOL_COMPACT_AT={value}", sweep=(20_000, 60_000),
                      note="a made-up setting: the example's way to show one"),))


@strategy(NAME, params=KeepLastParams, upstream="an example for strategy authors (not a real tool)",
          summary="example: over a trigger, all but the last messages become one summary",
          presets={"1.2": {}, "2.0": {"keep": 4, "trigger": 40_000}}, tool=TOOL, example=True, version="2")
def keep_last(p: KeepLastParams) -> KeepLast:
    """The example every strategy author starts from: copy strategies/example_keep_last.py and
    docs/writing-a-strategy.md."""
    return KeepLast(p)

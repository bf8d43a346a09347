"""``compbench.strategies.opencode_prune`` — OpenCode's tool-output prune (seed 001 ``SessionCompaction.prune``), over a
compbench view.

Kept apart from :mod:`compbench.strategies.opencode` because it is a self-contained algorithm with its
own constants, and because tests pin it on hand-built views without any compaction machinery.

Read against sst/opencode ``packages/opencode/src/session/compaction.ts`` (commit fd78ec63, and the
current ``dev`` text, which is unchanged apart from its ``if (!cfg.compaction?.prune) return`` default):
the walk is ``loop: for`` over messages newest first, and an already compacted output ``break loop``\\ s
out of *both* loops (seed 001's pseudocode shows a bare ``break``; the source is the labelled one).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from compbench.sdk import Entry, Message, Prune, ToolResult, chars4_round

PRUNE_MINIMUM = 20_000  # seed 001: don't prune unless at least 20K tokens are saved
PRUNE_PROTECT = 40_000  # seed 001: the newest 40K tokens of tool output stay
PRUNE_PROTECTED_TOOLS = ("skill",)  # seed 001: outputs that act as instructions are never pruned
PLACEHOLDER = "[Old tool result content cleared]"  # seed 000 §5.2, message-v2.ts toModelMessages


Outputs = tuple[tuple[int, int], ...]  # (part index, Token.estimate) of a message's prunable outputs, newest first


def outputs(m: Message, protected_tools: Sequence[str] = PRUNE_PROTECTED_TOOLS) -> Outputs:
    """The outputs the walk may count: completed (not errored) tool results of unprotected tools."""
    out = []
    for j in range(len(m.parts) - 1, -1, -1):
        part = m.parts[j]
        if isinstance(part, ToolResult) and not part.is_error and part.name not in protected_tools:
            out.append((j, chars4_round(part.output)))
    return tuple(out)


class Walk:
    """The config-independent part of the prune walk over one view: the outputs it passes, newest first,
    and their running estimate. Which of them a ``(protect, minimum)`` pair prunes is then arithmetic
    (``choose``), so a tuning grid's configurations share one walk per prompt."""

    __slots__ = ("_chosen", "cum", "parts")

    def __init__(self, parts: list[tuple[str, int]], cum: list[int]) -> None:
        self.parts = parts
        self.cum = cum
        self._chosen: dict[tuple[int, str], Prune] = {}

    def choose(self, protect: int, minimum: int, placeholder: str = PLACEHOLDER) -> Prune | None:
        """Seed 001's selection: once the running sum passes ``protect`` every further output is
        selected (estimates are never negative, so that is a suffix); applied if it saves > ``minimum``."""
        k = bisect_right(self.cum, protect)
        pruned = (self.cum[-1] - (self.cum[k - 1] if k else 0)) if k < len(self.cum) else 0
        if not pruned > minimum:
            return None
        hit = self._chosen.get((k, placeholder))
        if hit is None:  # one Prune per suffix: configurations that agree hold the same object
            hit = self._chosen[(k, placeholder)] = Prune(
                tuple((msg_id, j, placeholder) for msg_id, j in self.parts[k:]), "prune")
        return hit


def walk(entries: Sequence[Entry], protected_tools: Sequence[str] = PRUNE_PROTECTED_TOOLS,
         cache: dict[int, tuple[Message, Outputs]] | None = None) -> Walk:
    """Seed 001 ``prune``'s walk: backwards counting user messages; skip while fewer than two have been
    seen (the current and previous turns stay whole); stop at a summary message (the pivot) or at an
    output already pruned (everything older was handled by an earlier prune — ``break loop``). It
    passes completed (not errored), unprotected outputs, each at ``Token.estimate`` = round(chars/4).

    The walk runs at every new prompt over the whole unpruned history, as OpenCode's does; ``cache``
    (one per replay, keyed by message identity and holding the message) keeps each message's outputs
    and estimates so that repeated walks cost a lookup per message.
    """
    total = turns = 0
    parts: list[tuple[str, int]] = []
    cum: list[int] = []
    for e in reversed(entries):
        m = e.message
        if m.role == "user":
            turns += 1
        if turns < 2:
            continue
        if m.role == "assistant" and e.origin == "summary":
            break
        if cache is None:
            found = outputs(m, protected_tools)
        else:
            hit = cache.get(id(m))
            if hit is None or hit[0] is not m:
                hit = cache[id(m)] = (m, outputs(m, protected_tools))
            found = hit[1]
        for j, estimate in found:
            if j in e.pruned:
                return Walk(parts, cum)  # `break loop`: leave both loops
            total += estimate
            parts.append((e.id, j))
            cum.append(total)
    return Walk(parts, cum)


def select(entries: Sequence[Entry], protect: int = PRUNE_PROTECT, minimum: int = PRUNE_MINIMUM,
           protected_tools: Sequence[str] = PRUNE_PROTECTED_TOOLS, placeholder: str = PLACEHOLDER,
           cache: dict[int, tuple[Message, Outputs]] | None = None) -> Prune | None:
    """Seed 001 ``prune``: the outputs to hide, newest first, or None when the saving is too small
    (over the completed outputs the walk passes, once their estimate passes ``protect`` every further
    output is selected; applied only if the selected estimate exceeds ``minimum``)."""
    return walk(entries, protected_tools, cache).choose(protect, minimum, placeholder)

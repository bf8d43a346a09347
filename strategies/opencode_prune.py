"""OpenCode's tool-output prune (seed 001 ``SessionCompaction.prune``), over a compbench view.

Kept apart from :mod:`compbench.strategies.opencode` because it is a self-contained algorithm with its
own constants, and because tests pin it on hand-built views without any compaction machinery.

Read against sst/opencode ``packages/opencode/src/session/compaction.ts`` (commit fd78ec63, and the
current ``dev`` text, which is unchanged apart from its ``if (!cfg.compaction?.prune) return`` default):
the walk is ``loop: for`` over messages newest first, and an already compacted output ``break loop``\\ s
out of *both* loops (seed 001's pseudocode shows a bare ``break``; the source is the labelled one).
"""

from __future__ import annotations

from collections.abc import Sequence

from compbench.session import Entry, Prune
from compbench.tokens import chars4_round
from compbench.transcript import Message, ToolResult

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


def select(entries: Sequence[Entry], protect: int = PRUNE_PROTECT, minimum: int = PRUNE_MINIMUM,
           protected_tools: Sequence[str] = PRUNE_PROTECTED_TOOLS, placeholder: str = PLACEHOLDER,
           cache: dict[int, tuple[Message, Outputs]] | None = None) -> Prune | None:
    """Seed 001 ``prune``: the outputs to hide, newest first, or None when the saving is too small.

    Walk backwards counting user messages; skip while fewer than two have been seen (the current and
    previous turns stay whole); stop at a summary message (the pivot) or at an output already pruned
    (everything older was handled by an earlier prune). Over completed (not errored), unprotected
    outputs, sum ``Token.estimate`` = round(chars/4); once the sum passes ``protect`` every further
    output is selected. Applied only if the selected estimate exceeds ``minimum``.

    The walk runs at every new prompt over the whole unpruned history, as OpenCode's does; ``cache``
    (one per replay, keyed by message identity and holding the message) keeps each message's outputs
    and estimates so that repeated walks cost a lookup per message.
    """
    total = pruned = turns = 0
    targets: list[tuple[str, int, str]] = []
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
                return _decide(targets, pruned, minimum)  # `break loop`: leave both loops
            total += estimate
            if total > protect:
                pruned += estimate
                targets.append((e.id, j, placeholder))
    return _decide(targets, pruned, minimum)


def _decide(targets: list[tuple[str, int, str]], pruned: int, minimum: int) -> Prune | None:
    return Prune(tuple(targets), "prune") if pruned > minimum else None

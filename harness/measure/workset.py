"""``compbench.measure.workset`` — The working set as content: what each tool output delivered to the agent, and
where the recorded agent needs that content again.

After a real compaction agents do not pay for lost *names*: they pay for lost *content*, by reading files
again, re-listing, re-searching. A path in a summary is not the file's body. This module describes a
transcript's content once (per transcript, shared by every strategy's replay):

* a **delivery** is one tool result that gave the agent content, under a *key* saying what it is about:
  ``file:<path>`` (a read tool, or a shell read: ``cat``/``sed -n``/``head``/``tail``/``nl``/``less`` of
  one file), ``search:<call>`` (grep/glob/find/ls tools, ``rg``/``grep``/``find``/``ls``/``git grep`` in a
  shell) or ``inspect:<command>`` (read-only inspection: ``git show``/``git log``/``git blame``, ``--help``,
  ``man``). Any other command (tests, builds, linters, ``git status``/``diff``, scripts) is a *state probe*:
  an agent re-runs it to see what changed, not to get back what it had, so it delivers no content item.
  File paths are keyed by their last two components, as facts are: one file named several ways is one item.
  A call that runs other calls (Codex code mode's ``exec`` script, whose importer lists them in the message's
  ``meta["inner_calls"]``) is read as the calls it made, so a read inside a script is a read.
* a **use** is an assistant message that needs a key's content: it edits or writes the file (an edit needs
  the text it replaces; Claude Code even refuses one on a file not read since its compaction), or it names
  the file other than by reading it (a test run on it, a path in its reasoning), or, for a search or an
  inspection, it repeats a distinctive line of that output (a path:line it found, a signature it read).

How often and how much of each an agent reads back after a compaction is :mod:`compbench.measure.reacquire_rules`'
(fitted on real compactions, :mod:`compbench.validation.reacquisition`): before an edit nearly always, for a
file it only names rarely; reads themselves are never uses (a read re-delivers). :meth:`WorkingSet.had` is what
the agent had of an item: what it reads back.
Lines are compared normalized (whitespace folded, a read tool's line-number gutter removed), and only
lines of at least :data:`MIN_LINE` characters: a brace or an ``import os`` is no evidence of anything.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, TypeAlias

from compbench.data.calls import (
    PATH_KEY_COMPONENTS,
    WRITE_TOOLS,
    Kind,
    Touch,
    call_args,
    call_text,
    touches,
    url_like,
)
from compbench.data.facts import normalize
from compbench.data.transcript import Message, Text, ToolCall, ToolResult, Transcript
from compbench.measure.facts.derive import PATH_SHAPE

How: TypeAlias = Literal["edit", "mention", "lines"]

MIN_LINE = 16  # characters of a normalized line that count as content
GUTTER = re.compile(r"^\s*\d+(?:→|\t|: |:|\|)\s?")  # a read tool's line numbers: "  12→", "12\t", "12: "


def distinct_lines(text: str) -> Iterator[str]:
    """The output's lines that count as content, normalized (whitespace folded, a gutter removed), lazily: a
    line shorter than :data:`MIN_LINE` is shorter once normalized and is skipped unread, and only a line that
    starts with a space or a digit can carry a gutter."""
    gutter = GUTTER.sub
    for line in text.splitlines():
        if len(line) < MIN_LINE:
            continue
        first = line[0]
        if first.isspace() or first.isdigit():
            line = gutter("", line, count=1)
        line = " ".join(line.split())
        if len(line) >= MIN_LINE:
            yield line


def content_lines(text: str) -> frozenset[int]:
    """The output's distinctive lines, hashed (compared within one process only)."""
    return frozenset(hash(line) for line in distinct_lines(text))


def has_content(text: str) -> bool:
    """Whether :func:`content_lines` of ``text`` is not empty, stopping at the first distinctive line."""
    return next(distinct_lines(text), None) is not None








@dataclass(frozen=True)
class Delivery:
    """One tool result that delivered ``key``'s content: at ``message``/``part``, ``tokens`` as counted.

    Its ``lines`` are hashed when first asked for: a file's are needed only where a compaction asks what a
    message still holds of it, so a replay that never compacts never hashes a file body."""

    key: str
    kind: Kind
    message: int
    part: int
    tokens: int
    text: str = field(default="", compare=False, repr=False)  # the output (or written body) it delivered

    @cached_property
    def lines(self) -> frozenset[int]:
        return content_lines(self.text)


@dataclass(frozen=True, slots=True)
class Use:
    key: str
    how: How


@dataclass(frozen=True)
class WorkingSet:
    """A transcript's deliveries and uses, by message index."""

    deliveries: tuple[Delivery, ...]
    at_part: Mapping[tuple[int, int], Delivery]  # (message, part) -> what that tool result delivered
    uses: Mapping[int, tuple[Use, ...]]  # assistant message index -> the keys it needs
    latest: Mapping[str, tuple[Delivery, ...]] = field(default_factory=dict)  # key -> its deliveries, in order

    @classmethod
    def build(cls, t: Transcript, part_tokens: Sequence[Sequence[int]]) -> WorkingSet:
        calls: dict[str, list[Touch]] = {}
        deliveries: list[Delivery] = []
        uses: dict[int, tuple[Use, ...]] = {}
        known = _Known()
        for i, m in enumerate(t.messages):
            if m.meta.get("compaction"):
                continue
            if m.role == "assistant":
                for p in m.parts:
                    if isinstance(p, ToolCall):
                        calls[p.id] = [x for c in made(m, p) for x in touches(c)]
                found = _uses(m, known, calls)
                if found:
                    uses[i] = found
            for j, p in enumerate(m.parts):
                if isinstance(p, ToolCall):
                    if m.role != "assistant":  # an assistant's calls were read above, for its uses
                        calls[p.id] = [x for c in made(m, p) for x in touches(c)]
                    found_touches = calls[p.id]
                    written = next((w for c in made(m, p) if (w := _written(c))), "") if any(
                        x.verb == "write" for x in found_touches) else ""
                    if written:  # a file the agent wrote: its body is in the call, and is content to lose
                        key = next(x.key for x in found_touches if x.verb == "write")
                        if has_content(written):
                            d = Delivery(key, "file", i, j, part_tokens[i][j], written)
                            deliveries.append(d)
                            known.add(d)
                elif isinstance(p, ToolResult) and not p.is_error:
                    for touch in calls.get(p.call_id, ()):
                        if touch.verb != "read":
                            continue
                        if not has_content(p.output):
                            continue
                        d = Delivery(touch.key, touch.kind, i, j, part_tokens[i][j], p.output)
                        deliveries.append(d)
                        known.add(d)
                        break
        return cls(tuple(deliveries), {(d.message, d.part): d for d in deliveries}, uses,
                   {k: tuple(v) for k, v in known.by_key.items()})

    @cached_property
    def delivered(self) -> dict[int, tuple[tuple[int, str], ...]]:
        """Per message, its (part, key) deliveries: what a view that receives the message holds."""
        parts: dict[int, list[tuple[int, str]]] = {}
        for d in self.deliveries:
            parts.setdefault(d.message, []).append((d.part, d.key))
        return {i: tuple(v) for i, v in parts.items()}

    _had: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = field(default_factory=dict, compare=False, repr=False)
    _used: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)
    _edits: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)

    def before(self, key: str, message: int) -> Delivery | None:
        """``key``'s latest delivery before ``message`` (the content an agent would re-acquire there)."""
        found = None
        for d in self.latest.get(key, ()):
            if d.message >= message:
                break
            found = d
        return found

    def had(self, key: str, message: int) -> int:
        """What the agent had of ``key`` before ``message``, in tokens: the distinct content of all its
        deliveries (each one's tokens times the share of its lines no earlier delivery brought). What an agent
        reads back after losing it: the whole file where it had read it whole, the slices it had read where
        it searched and sliced, not only its latest delivery (:mod:`compbench.measure.reacquire_rules`)."""
        found = self._had.get(key)
        if found is None:
            at: list[int] = []
            total: list[float] = []
            seen: set[int] = set()
            running = 0.0
            for d in self.latest.get(key, ()):
                lines = d.lines
                if lines:
                    new = len(lines - seen)
                    seen |= lines
                    running += d.tokens * new / len(lines)
                at.append(d.message)
                total.append(running)
            found = self._had[key] = (tuple(at), tuple(total))
        k = bisect_left(found[0], message)
        return round(found[1][k - 1]) if k else 0

    def changed(self, key: str, message: int) -> bool:
        """Whether the agent edited ``key`` after its latest delivery before ``message`` (and before ``message``):
        what it had of it is partly its own change, and it goes back to where it was editing
        (:mod:`compbench.measure.reacquire_rules`)."""
        d = self.before(key, message)
        if d is None:
            return False
        found = self._edits.get(key)
        if found is None:
            if not self._edits:  # one pass over the uses indexes every key's edits
                by_key: dict[str, list[int]] = {}
                for i in sorted(self.uses):
                    for u in self.uses[i]:
                        if u.how == "edit":
                            by_key.setdefault(u.key, []).append(i)
                self._edits.update({k: tuple(v) for k, v in by_key.items()})
            found = self._edits.setdefault(key, ())
        k = bisect_left(found, d.message)
        return k < len(found) and found[k] < message

    def used_between(self, key: str, start: int, end: int) -> bool:
        """Whether an assistant message in [``start``, ``end``) needs ``key``."""
        found = self._used.get(key)
        if found is None:
            if not self._used:  # one pass over the uses indexes every key
                by_key: dict[str, list[int]] = {}
                for i in sorted(self.uses):
                    for u in self.uses[i]:
                        by_key.setdefault(u.key, []).append(i)
                self._used.update({k: tuple(v) for k, v in by_key.items()})
            found = self._used.setdefault(key, ())
        k = bisect_left(found, start)
        return k < len(found) and found[k] < end

    def next_delivery(self, key: str, message: int) -> int | None:
        """The message of ``key``'s first delivery at or after ``message``, if any."""
        for d in self.latest.get(key, ()):
            if d.message >= message:
                return d.message
        return None


def later(t: Transcript, part_tokens: Sequence[Sequence[int]]) -> Callable[[], WorkingSet]:
    """``WorkingSet.build(t, part_tokens)`` when first called, then the same working set: every replay of ``t``
    shares one, and none is built unless a replay needs it (:class:`compbench.measure.reacquire.ContentTracker`)."""
    built: list[WorkingSet] = []

    def get() -> WorkingSet:
        if not built:
            built.append(WorkingSet.build(t, part_tokens))
        return built[0]

    return get


WRITTEN_KEYS = ("content", "file_text", "contents", "text")
UNQUOTED_TOOLS = WRITE_TOOLS | {"write"}  # their arguments are file bodies: the paths inside are no mention


def _written(call: ToolCall) -> str:
    args = call_args(call)
    return next((v for k in WRITTEN_KEYS if isinstance(v := args.get(k), str)), "")


# Message meta an importer sets where a recorded call runs other calls (Codex code mode: an ``exec`` script calling
# ``tools.exec_command``, ``tools.apply_patch``; compbench.data.formats.codex_exec): call id -> [[name, args], ...].
INNER_CALLS = "inner_calls"


def made(m: Message, call: ToolCall) -> tuple[ToolCall, ...]:
    """The calls ``call`` made, each as the plain call it stands for (so a read inside a script is a read), or
    ``call`` itself when it runs no other."""
    inner = m.meta.get(INNER_CALLS)
    listed = inner.get(call.id) if isinstance(inner, Mapping) else None
    calls = tuple(ToolCall(call.id, str(x[0]), str(x[1])) for x in listed if isinstance(x, list | tuple)
                  and len(x) == 2) if isinstance(listed, list) else ()
    return calls or (call,)


def _texts(m: Message) -> Iterator[tuple[str, ToolCall | None]]:
    for p in m.parts:
        if isinstance(p, Text):
            yield p.text, None
        elif isinstance(p, ToolCall):
            for c in made(m, p):
                yield call_text(c), c


class _Known:
    """The content delivered so far, indexed for :func:`_uses`: deliveries by key, file keys by their last
    component, and the latest delivery's lines of each search or inspection (a line -> the keys whose
    latest output holds it), so a message's lines find their keys without a pass over every key."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[Delivery]] = {}
        self.by_tail: dict[str, set[str]] = {}  # a file's last component -> its keys (a bare name is a mention)
        self.by_line: dict[int, set[str]] = {}
        self.rank: dict[str, int] = {}  # key -> order of its first delivery

    def add(self, d: Delivery) -> None:
        ds = self.by_key.get(d.key)
        if ds is None:
            ds = self.by_key[d.key] = []
            self.rank[d.key] = len(self.rank)
        if d.kind == "file":
            self.by_tail.setdefault(d.key.rsplit("/", 1)[-1], set()).add(d.key)
        else:
            if ds:
                for h in ds[-1].lines:
                    self.by_line[h].discard(d.key)
            for h in d.lines:
                self.by_line.setdefault(h, set()).add(d.key)
        ds.append(d)


def _uses(m: Message, known: _Known, calls: Mapping[str, Sequence[Touch]]) -> tuple[Use, ...]:
    """The keys delivered before ``m`` that ``m`` needs: edits, mentions, repeated lines (in that order of
    precedence; one use per key)."""
    by_key = known.by_key
    if not by_key:
        return ()
    found: dict[str, How] = {}
    reads: set[str] = set()
    for p in m.parts:
        if isinstance(p, ToolCall):
            for touch in calls[p.id]:
                if touch.verb == "edit" and touch.key in by_key:
                    found.setdefault(touch.key, "edit")
                elif touch.verb == "read":
                    reads.add(touch.key)
    lines: set[int] = set()
    for text, call in _texts(m):
        if call is None or call.name.lower() not in UNQUOTED_TOOLS:
            for match in PATH_SHAPE.finditer(text):
                if url_like(text, match.start(), match.group(0)):
                    continue
                for key in _mentioned(match.group(0), known.by_tail):
                    if key in by_key and key not in reads:
                        found.setdefault(key, "mention")
        if "\n" in text or len(text) >= MIN_LINE:
            lines |= content_lines(text)
    if lines and known.by_line:
        hit: set[str] = set()
        for h in lines:
            keys = known.by_line.get(h)
            if keys:
                hit |= keys
        for key in sorted(hit - found.keys() - reads, key=known.rank.__getitem__):
            found[key] = "lines"
    return tuple(Use(k, h) for k, h in found.items())


def _mentioned(shape: str, by_tail: Mapping[str, set[str]]) -> Iterator[str]:
    """The file keys a path-shaped string names: its last two components, or a bare file name that only
    one known file has."""
    parts = [x for x in normalize(shape).strip("/").split("/") if x and x != "."]
    if not parts:
        return
    if len(parts) >= PATH_KEY_COMPONENTS:
        yield "file:" + "/".join(parts[-PATH_KEY_COMPONENTS:])
    else:
        keys = by_tail.get(parts[0], set())
        if len(keys) == 1:
            yield from keys

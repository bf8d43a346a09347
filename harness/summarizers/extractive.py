"""``compbench.summarizers.extractive`` — ``extractive``: an offline, deterministic summarizer that *copies*: a
heuristic, and reports say so.

It reads the span being summarized (``SummaryRequest.source``) and writes a structured summary of
what an agent most often needs later: the user's requests, the earlier summary it folds (whole, not
as a request), the files it modified and read, the paths the span names, the errors it hit, its last
message and the commands it ran. Sections are filled in priority order until the output budget is
spent: the strategy's ``max_output_tokens``, but never more than real summaries reach (measured
conservatively at 3 characters a token). It copies the very strings facts are matched on, so it carries
more than a model's summary does: the optimistic end, beside ``calibrated`` (the default).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, TypeAlias

from compbench.data.calls import call_commands, call_paths, command_paths
from compbench.data.transcript import Message, Text, ToolCall, ToolResult
from compbench.measure.facts.derive import PATH_SHAPE
from compbench.sdk.context import ReplayContext
from compbench.sdk.session import Compact, SummaryRequest
from compbench.summarizers import SummaryResult, summarizer

DEFAULT_BUDGET_TOKENS = 4_096
CHARS_PER_TOKEN = 3  # conservative: code and paths tokenize denser than prose
MAX_ITEM_CHARS = 300
MENTION_SCAN_CHARS = 20_000
MENTIONS_PER_TEXT = 60  # a plan or a tree listing names dozens of files: the copy keeps them
MENTIONS_LISTED = 150  # the newest paths only: a listing of thousands would crowd out everything else

_ERROR_WORD = re.compile(
    r"\b(?:\w*Error|\w*Exception|Traceback|FAILED|FAIL:|fatal:|error:|panic:|command not found)\b")
# A literal prefilter for the lines worth testing: a superset of _ERROR_WORD's matches, found without
# trying ``\w*`` at every position of a long log.
_ERROR_HINT = re.compile(r"Error|Exception|Traceback|FAILED|FAIL:|fatal:|error:|panic:|command not found")


def error_lines(text: str, limit: int = 2) -> list[str]:
    r"""The first ``limit`` lines holding an error word: ``^.*\b(...)\b.*$`` with re.M, only faster."""
    out: list[str] = []
    pos = 0
    while len(out) < limit:
        m = _ERROR_HINT.search(text, pos)
        if m is None:
            break
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        line = text[start:end]
        if _ERROR_WORD.search(line):
            out.append(line)
        pos = end + 1
    return out


def _clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for i in items:
        if i and i not in seen:
            seen[i] = None
    return list(seen)


class _Extracted(NamedTuple):
    """What one message contributes to a summary's raw material."""

    request: str
    last: str
    modified: tuple[str, ...]
    read: tuple[str, ...]
    commands: tuple[str, ...]
    errors: tuple[str, ...]
    mentioned: tuple[str, ...]  # paths a tool output or the assistant's text names


# Strategies summarize overlapping spans of the same transcript again and again (nine strategies, each
# compacting several times), often through copies of a message (a rendered view, reasoning dropped) that
# share its parts: with a cache (the run's replay context holds one per transcript) each message is read
# once. Keyed by role and part identities, holding the parts so no id can be reused while cached.
Cache: TypeAlias = dict[tuple[object, ...], tuple[tuple[object, ...], _Extracted]]
CACHE = "extractive.messages"  # its name in the replay context
_CACHE_LIMIT = 100_000


def _extract(m: Message, cache: Cache | None = None) -> _Extracted:
    key = (m.role, *map(id, m.parts))
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit[1]
    modified: list[str] = []
    read: list[str] = []
    commands: list[str] = []
    errors: list[str] = []
    mentioned: list[str] = []
    for p in m.parts:
        # each part read once too: a rendered copy of a pruned message is a new message (its placeholder a
        # new part) whose other parts are the recorded ones
        x = _extract_part(m.role, p, cache)
        modified += x.modified
        read += x.read
        commands += x.commands
        errors += x.errors
        mentioned += x.mentioned
    text = m.text if m.role in ("user", "assistant") else ""
    out = _Extracted(_clip(text) if m.role == "user" and text.strip() else "",
                     text if m.role == "assistant" and text.strip() else "",
                     tuple(modified), tuple(read), tuple(commands), tuple(errors), tuple(mentioned))
    _put(cache, key, m.parts, out)
    return out


NOTHING = _Extracted("", "", (), (), (), (), ())


def _extract_part(role: str, p: object, cache: Cache | None) -> _Extracted:
    """One part's share of its message's :func:`_extract` (in a message of ``role``)."""
    if not isinstance(p, ToolCall | ToolResult | Text):
        return NOTHING
    key = ("part", role, id(p))
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit[1]
    modified: list[str] = []
    read: list[str] = []
    commands: list[str] = []
    errors: list[str] = []
    mentioned: list[str] = []
    if isinstance(p, ToolCall):
        paths, writes = call_paths(p)
        (modified if writes else read).extend(paths)
        for c in call_commands(p):
            commands.append(_clip(c, 200))
            for path, w in command_paths(c):
                (modified if w else read).append(path)
    elif isinstance(p, ToolResult):
        if p.is_error:
            errors.append(_clip(p.output.strip().splitlines()[0] if p.output.strip() else "error", 200))
        errors += [_clip(line, 200) for line in error_lines(p.output)]
        mentioned += mentioned_paths(p.output)
    elif role == "tool":
        errors += [_clip(line, 200) for line in error_lines(p.text)]
        mentioned += mentioned_paths(p.text)
    elif role in ("assistant", "user"):
        mentioned += mentioned_paths(p.text)
    out = _Extracted("", "", tuple(modified), tuple(read), tuple(commands), tuple(errors), tuple(mentioned))
    _put(cache, key, (p,), out)
    return out


def _put(cache: Cache | None, key: tuple[object, ...], held: tuple[object, ...], out: _Extracted) -> None:
    if cache is not None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = (held, out)


_TOKEN_EDGES = "\"'`()[]{}<>,;:!?*.~/"
_PATH_TOKEN = re.compile(PATH_SHAPE.pattern.replace("(?<![\\w@])", "^", 1).replace("|\\b", "$|^", 1) + "$")


def mentioned_paths(text: str) -> list[str]:
    """Path-shaped strings in a text (its first :data:`MENTION_SCAN_CHARS`), at most
    :data:`MENTIONS_PER_TEXT`: the files a listing, a search or a plan names. Whitespace-separated
    tokens are tested whole (a regex scan over a long output costs more than the rest of a summary)."""
    out: list[str] = []
    for tok in text[:MENTION_SCAN_CHARS].split():
        if "/" not in tok and "." not in tok:
            continue
        if "://" in tok:
            continue
        tok = tok.split("::", 1)[0].strip(_TOKEN_EDGES)
        # a bracketed component is part of a path (Next.js routes ``app/[slug]/page.tsx``, a redacted
        # ``/home/[USER]/...``): the copy keeps the path as the output spells it
        if not _PATH_TOKEN.match(tok.replace("[", "").replace("]", "") if "[" in tok else tok):
            continue
        p = tok.strip(".-/")
        if len(p) >= 4 and p not in out:
            out.append(p)
            if len(out) >= MENTIONS_PER_TEXT:
                break
    return out


def facts_of(messages: Sequence[Message], cache: Cache | None = None) -> dict[str, list[str]]:
    """The raw material of a summary, in order of appearance (``cache``: what earlier calls read)."""
    requests: list[str] = []
    modified: list[str] = []
    read: list[str] = []
    commands: list[str] = []
    errors: list[str] = []
    mentioned: list[str] = []
    summaries: list[str] = []
    last_assistant = ""
    for m in messages:
        if m.meta.get("origin") == "summary":  # an earlier summary in the span: carried whole, not a request
            summaries.append(m.text)
            continue
        x = _extract(m, cache)
        mentioned += x.mentioned
        if x.request:
            requests.append(x.request)
        if x.last:
            last_assistant = x.last
        modified += x.modified
        read += x.read
        commands += x.commands
        errors += x.errors
    modified = _unique(modified)
    read = [p for p in _unique(read) if p not in modified]
    touched = set(modified) | set(read)
    return {
        "requests": requests,
        "modified": modified,
        "read": read,
        "mentioned": [p for p in _unique(mentioned) if p not in touched and "/" + p not in touched],
        "commands": _unique(commands),
        "errors": _unique(errors),
        "last": [_clip(last_assistant, 600)] if last_assistant else [],
        "summaries": summaries,
    }


def summarize_messages(messages: Sequence[Message], budget_tokens: int, previous: str | None = None,
                       cache: Cache | None = None) -> str:
    """A structured summary of ``messages`` no longer than ``budget_tokens * CHARS_PER_TOKEN`` chars."""
    f = facts_of(messages, cache)
    budget = max(0, budget_tokens) * CHARS_PER_TOKEN
    # an earlier summary (the strategy's, or one inside the span) is merged section by section when it is
    # this summarizer's own: what it listed stays listed behind what is new, so a chain of compactions
    # keeps carrying the old files and errors until the budget, not until a clip halves them each time
    prev, foreign = _merge_sources([x for x in (previous, *f["summaries"]) if x])
    # (title, items, newest first?) in priority order: what a continuing agent needs most.
    first = prev.get("User requests", [])[:1] or f["requests"][:1]
    later = [r for r in f["requests"][::-1] if r not in first]
    sections: list[tuple[str, list[str]]] = [
        ("User requests", first + _unique(later + prev.get("User requests", [])[1:])),
        ("Previous summary", [_clip(foreign, budget // 2)] if foreign else []),
        ("Files modified", _unique(prev.get("Files modified", []) + f["modified"])),
        ("Errors seen", _unique(f["errors"][::-1] + prev.get("Errors seen", []))),
        ("Last assistant message", f["last"] or prev.get("Last assistant message", [])),
        ("Files read", _unique(f["read"][::-1] + prev.get("Files read", []))),
        ("Commands run", _unique(f["commands"][::-1] + prev.get("Commands run", []))),
        ("Paths mentioned", _unique(f["mentioned"][::-1] + prev.get("Paths mentioned", []))[:MENTIONS_LISTED]),
    ]
    out: list[str] = []
    used = 0
    mentions = bool(sections[-1][1])
    for title, items in sections:
        if not items:
            continue
        header = f"## {title}\n"
        if used + len(header) + 3 > budget:
            break
        # the last two sections share what is left: commands must not crowd out every path a plan named
        limit = budget if title != "Commands run" or not mentions else used + (budget - used) // 2
        lines: list[str] = []
        cost = len(header)
        for item in items:
            line = f"- {item}\n"
            room = limit - used - cost
            if len(line) > room:
                if not lines and room > 24:  # a section's first item is clipped to fit rather than lost
                    lines.append(f"- {item[: room - 4]}…\n")
                    cost += len(lines[-1])
                break
            lines.append(line)
            cost += len(line)
        if lines:
            out.append(header + "".join(lines))
            used += cost
    return "\n".join(out).rstrip("\n")


SECTION_TITLES = ("User requests", "Previous summary", "Files modified", "Errors seen", "Last assistant message",
                  "Files read", "Paths mentioned", "Commands run")


def _merge_sources(texts: Sequence[str]) -> tuple[dict[str, list[str]], str]:
    """Earlier summaries split into this summarizer's sections (their items, newest summary first) and
    the text that is not in its format (another summarizer's, a tool's heading), kept whole."""
    merged: dict[str, list[str]] = {}
    foreign: list[str] = []
    for text in reversed(texts):
        title: str | None = None
        for line in text.splitlines():
            if line.startswith("## ") and line[3:].strip() in SECTION_TITLES:
                title = line[3:].strip()
            elif title is not None and line.startswith("- "):
                if title == "Previous summary":
                    foreign.append(line[2:])
                else:
                    merged.setdefault(title, []).append(line[2:])
            elif line.strip():
                title = None
                foreign.append(line)
    return merged, "\n".join(foreign)


class ExtractiveSummarizer:
    name = "extractive"

    def __init__(self, context: ReplayContext | None = None) -> None:
        self.context = context if context is not None else ReplayContext()

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """A strategy may ask for a heading (seed 004 detects its previous summary by one)."""
        budget = min(request.max_output_tokens or DEFAULT_BUDGET_TOKENS, largest_real_summary())
        heading = str(request.meta.get("heading", ""))
        if heading:
            budget -= len(heading) // CHARS_PER_TOKEN + 1
        text = summarize_messages(request.source, budget, request.previous_summary,
                                  self.context.cache(CACHE)) or "(nothing to summarize)"
        return SummaryResult(f"{heading}\n{text}" if heading else text)

    def copy_text(self, act: Compact) -> str:
        """What this summarizer would write for a compaction's requests: retention's optimistic
        counterfactual for the summaries another summarizer wrote."""
        text = self.summarize(act.request).text if act.request is not None else act.summary_text
        for f in act.followups:
            text += f.joiner + self.summarize(f.request).text
        return text


def largest_real_summary() -> int:
    """The size real summaries reach (their 90th percentile, :mod:`compbench.validation.summary_rates`):
    a copy longer than any real summary would win by length, not by what it chose to keep."""
    from compbench.summarizers.keep_rates import table

    return int(table()["size"]["max_tokens"])


@summarizer("extractive", deterministic=True,
            summary="offline heuristic: copies the span's paths, commands and errors (optimistic)")
def create(arg: str, context: ReplayContext, **options: Any) -> ExtractiveSummarizer:
    return ExtractiveSummarizer(context)


def copy_text(act: Compact) -> str:
    """:meth:`ExtractiveSummarizer.copy_text` without a replay context (nothing cached across calls)."""
    return ExtractiveSummarizer().copy_text(act)

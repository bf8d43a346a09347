"""``extractive``: the offline, deterministic default summarizer. A heuristic, and reports say so.

It reads the span being summarized (``SummaryRequest.source``) and writes a structured summary of
what an agent most often needs later: the user's requests, the files it modified and read, the
commands it ran, the errors it hit, and its last message, plus the previous summary when chaining.
Sections are filled in priority order until the output budget is spent, so the summary never exceeds
the strategy's ``max_output_tokens`` (measured conservatively at 3 characters a token).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from compbench.facts.derive import call_commands, call_paths
from compbench.session import SummaryRequest
from compbench.summarizers import SummaryResult
from compbench.transcript import Message, Text, ToolCall, ToolResult

DEFAULT_BUDGET_TOKENS = 4_096
CHARS_PER_TOKEN = 3  # conservative: code and paths tokenize denser than prose
MAX_ITEM_CHARS = 300

_ERROR_LINE = re.compile(
    r"^.*\b(?:\w*Error|\w*Exception|Traceback|FAILED|FAIL:|fatal:|error:|panic:|command not found)\b.*$", re.M)


def _clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for i in items:
        if i and i not in seen:
            seen[i] = None
    return list(seen)


def facts_of(messages: Sequence[Message]) -> dict[str, list[str]]:
    """The raw material of a summary, in order of appearance."""
    requests: list[str] = []
    modified: list[str] = []
    read: list[str] = []
    commands: list[str] = []
    errors: list[str] = []
    last_assistant = ""
    for m in messages:
        if m.role == "user" and m.text.strip():
            requests.append(_clip(m.text))
        if m.role == "assistant" and m.text.strip():
            last_assistant = m.text
        for p in m.parts:
            if isinstance(p, ToolCall):
                paths, writes = call_paths(p)
                (modified if writes else read).extend(paths)
                commands += [_clip(c, 200) for c in call_commands(p)]
            elif isinstance(p, ToolResult):
                if p.is_error:
                    errors.append(_clip(p.output.strip().splitlines()[0] if p.output.strip() else "error", 200))
                errors += [_clip(line, 200) for line in _ERROR_LINE.findall(p.output)[:2]]
            elif isinstance(p, Text) and m.role == "tool":
                errors += [_clip(line, 200) for line in _ERROR_LINE.findall(p.text)[:2]]
    modified = _unique(modified)
    return {
        "requests": requests,
        "modified": modified,
        "read": [p for p in _unique(read) if p not in modified],
        "commands": _unique(commands),
        "errors": _unique(errors),
        "last": [_clip(last_assistant, 600)] if last_assistant else [],
    }


def summarize_messages(messages: Sequence[Message], budget_tokens: int, previous: str | None = None) -> str:
    """A structured summary of ``messages`` no longer than ``budget_tokens * CHARS_PER_TOKEN`` chars."""
    f = facts_of(messages)
    budget = max(0, budget_tokens) * CHARS_PER_TOKEN
    # (title, items, newest first?) in priority order: what a continuing agent needs most.
    sections: list[tuple[str, list[str]]] = [
        ("User requests", f["requests"][:1] + f["requests"][1:][::-1]),
        ("Files modified", f["modified"]),
        ("Errors seen", f["errors"][::-1]),
        ("Last assistant message", f["last"]),
        ("Files read", f["read"][::-1]),
        ("Commands run", f["commands"][::-1]),
        ("Previous summary", [_clip(previous, 2_000)] if previous else []),
    ]
    out: list[str] = []
    used = 0
    for title, items in sections:
        if not items:
            continue
        header = f"## {title}\n"
        if used + len(header) + 3 > budget:
            break
        lines: list[str] = []
        cost = len(header)
        for item in items:
            line = f"- {item}\n"
            room = budget - used - cost
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


class ExtractiveSummarizer:
    name = "extractive"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """A strategy may ask for a heading (seed 004 detects its previous summary by one)."""
        budget = request.max_output_tokens or DEFAULT_BUDGET_TOKENS
        heading = str(request.meta.get("heading", ""))
        if heading:
            budget -= len(heading) // CHARS_PER_TOKEN + 1
        text = summarize_messages(request.source, budget, request.previous_summary) or "(nothing to summarize)"
        return SummaryResult(f"{heading}\n{text}" if heading else text)


def create(kind: str, arg: str, **options: object) -> ExtractiveSummarizer:
    return ExtractiveSummarizer()

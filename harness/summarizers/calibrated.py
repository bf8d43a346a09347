"""``compbench.summarizers.calibrated`` — ``calibrated``: the offline default summarizer, calibrated on the summaries
real tools wrote.

A summary's worth, as retention measures it, is which task facts it carries. The ``extractive``
summarizer copies the very paths, commands and error lines the fact extractor looks for, so it carries
several times more than the real tools' summaries do (an upper bound, and named so). ``calibrated``
carries what a real summary would: of the facts present in the span it is asked to summarize, per kind and
provenance, the share real summaries kept (:mod:`compbench.validation.summary_rates`, fitted on the
compactions recorded in real Claude Code, OpenCode and pi logs), the most recently seen first
(:func:`choose`). Its length follows the real summaries' sizes: a fitted share of the span,
within the real summaries' 10th–90th percentile sizes, and never over the strategy's budget.

Its text is the kept facts, then an activity log of the span (tool names per turn, which carry no
fact) standing in for the model's prose, then, when these are shorter than the size real summaries
reach, neutral stand-in lines up to that size: a summary's tokens cost context and money whether or not
they carry facts, so the size must be the real one even where the facts are few. It is deterministic
and pure; a heuristic, and reports say so.

The run's replay context holds each transcript's fact index (provenance is a property of the whole
transcript: where a fact first appeared), and it reads provenance from there; with no transcript in its
context (a single request in a test, fidelity's spans) it indexes the span it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compbench.data.facts import Fact, normalize
from compbench.data.transcript import Message, Part, Text, ToolCall, Transcript
from compbench.measure.facts.derive import extract
from compbench.measure.facts.presence import FactIndex, part_match_text
from compbench.sdk.context import ReplayContext
from compbench.sdk.session import SummaryRequest
from compbench.summarizers import SummaryResult, summarizer
from compbench.summarizers.keep_rates import CHARS_PER_TOKEN, chars_tokens, draw, keep_rate, table

HEADER = "(calibrated offline summary: facts kept at the rates real summaries kept them)"
SECTIONS = (("decision", "Constraints and decisions"), ("continuation", "Pending"),
            ("artifact", "Files"), ("recall", "Details"))
ACTIVITY = "## Activity (stand-in for the model's narrative: tool names only)"
NARRATIVE = "## Narrative (stand-in for the rest of the model's prose, to a real summary's size)"
# a neutral line: no path, identifier, number or decision word a fact could be matched or flagged on
FILLER = "- (the model's account of this stretch of work, in its own words, goes here; it adds no fact)\n"


class CalibratedSummarizer:
    name = "calibrated"

    def __init__(self, rates: Mapping[str, object] | None = None, size: Mapping[str, float] | None = None,
                 context: ReplayContext | None = None) -> None:
        data = table()
        self.rates = rates if rates is not None else data["rates"]
        self.size = size if size is not None else data["size"]
        self.context = context if context is not None else ReplayContext()

    def _recorded(self) -> tuple[dict[str, int], list[tuple[Part, ...]]]:
        """Where each message of the context's transcript is, and its recorded parts (once per transcript)."""
        t = self.context.transcript

        def build() -> tuple[dict[str, int], list[tuple[Part, ...]]]:
            messages = t.messages if t is not None else ()
            return {m.id: i for i, m in enumerate(messages)}, [m.parts for m in messages]

        return self.context.derived("calibrated.recorded", build)

    def _present(self, index: FactIndex, messages: Sequence[Message], previous: str | None
                 ) -> dict[str, tuple[Part | str, int, int]]:
        """Fact ids present in the span, in order of appearance, each with where it was first seen there
        (a recorded part's facts from the index, any other text — a summary, a pruned part's placeholder, a
        message the caller built — matched anew), the position of its last sighting (the span's messages in
        order; the previous summary before them all, at -1) and how many parts show it."""
        bound = index is self.context.facts
        positions, parts = self._recorded() if bound else ({}, [])
        seen: dict[str, tuple[Part | str, int, int]] = {}
        if previous:
            for f in sorted(index.matcher.facts_in(previous)):
                seen[f] = (previous, -1, 1)
        for k, m in enumerate(messages):
            i = positions.get(m.id, -1)
            recorded = parts[i] if i >= 0 else ()
            for j, p in enumerate(m.parts):
                ids = (index.part_facts[i][j] if j < len(recorded) and recorded[j] is p
                       else index.matcher.facts_in(part_match_text(p)))
                for f in sorted(ids):
                    where, _, n = seen.get(f, (p, k, 0))
                    seen[f] = (where, k, n + 1)
        return seen

    def target_tokens(self, span_tokens: int, budget: int | None) -> int:
        ratio, lo, hi = (float(self.size[k]) for k in ("ratio", "min_tokens", "max_tokens"))
        target = int(min(hi, max(lo, ratio * span_tokens)))
        return min(target, budget) if budget else target

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        messages = list(request.source)
        index: FactIndex | None = self.context.facts
        if index is None:
            own = Transcript("span", "compbench", tuple(messages))
            index = FactIndex.build(own, extract(own))
        facts = {f.id: f for f in index.facts}
        present = self._present(index, messages, request.previous_summary)
        words = _Words(messages, request.previous_summary)
        chosen = choose({f: (facts[f], last, n) for f, (_, last, n) in present.items()
                         if facts[f].provenance != "system" and not facts[f].boilerplate}, self.rates)
        kept = [_as_spelled(facts[f], present[f][0], words) for f in present if f in chosen]
        heading = str(request.meta.get("heading", ""))
        budget = request.max_output_tokens
        target = self.target_tokens(chars_tokens(messages), budget)
        text = compose(kept, messages, target * CHARS_PER_TOKEN, heading)
        return SummaryResult(text)


def choose(present: Mapping[str, tuple[Fact, int, int]], rates: Mapping[str, Any]) -> frozenset[str]:
    """Which facts a summary keeps: per kind and provenance, the keep-rate's share of the span's facts of
    that cell, the most recently seen first (then the most often seen, then the fact's fixed draw). Real
    summaries carry what the work is about now: at the real compactions in ../shared, an artifact last seen
    in the span's final tenth was kept 60% of the time, one older than its first 60% 34%; ranking within
    the cell keeps the calibrated rates and puts the kept ones where real summaries put theirs."""
    cells: dict[tuple[str, str], list[tuple[int, int, float, str]]] = {}
    for fid, (f, last, n) in present.items():
        cells.setdefault((f.kind, f.provenance), []).append((-last, -n, draw(f), fid))
    out: set[str] = set()
    for (kind, prov), members in cells.items():
        members.sort()
        # rate × n kept on average: the fraction rounds up when it beats the top member's fixed draw
        k = int(keep_rate(kind, prov, rates) * len(members) + members[0][2])
        out.update(fid for *_, fid in members[:k])
    return frozenset(out)


class _Words:
    """The text of a span (and the summary it carries), joined on first use: whether the span spells a
    path somewhere is one substring search (a C loop, cheaper than splitting the span into words)."""

    def __init__(self, messages: Sequence[Message], previous: str | None) -> None:
        self.messages, self.previous = messages, previous
        self._text: str | None = None

    def __contains__(self, word: object) -> bool:
        if self._text is None:
            texts = [part_match_text(p) for m in self.messages for p in m.parts]
            self._text = "\n".join([*texts, self.previous or ""])
        return isinstance(word, str) and word in self._text


def _as_spelled(f: Fact, where: Part | str, words: _Words) -> Fact:
    """A fact as the span spells it. Its text is one sighting's (a file named by its absolute path in one
    message, by a relative one in another are one fact): when neither the text where the span first shows
    the fact nor (a path) the rest of the span holds it, the summary writes the anchor that matched (a
    path's tail) instead of a spelling the span never showed, which the fabrication check would rightly
    flag."""
    text = where if isinstance(where, str) else part_match_text(where)
    if f.text in text or (f.kind == "artifact" and f.text in words):
        return f
    anchor = f.anchors[-1] if f.kind == "artifact" else f.anchors[0]
    return replace(f, text=anchor)


def _line(f: Fact) -> str:
    text = " ".join(f.text.split())
    if not any(a in normalize(text) for a in f.anchors):
        text += f" ({f.anchors[0]})"
    return f"- {text}\n"


def activity(messages: Sequence[Message]) -> list[str]:
    """One line per assistant turn of the span: the tools it called (names carry no fact)."""
    out = []
    turn = 0
    for m in messages:
        if m.role != "assistant":
            continue
        turn += 1
        tools = [p.name for p in m.parts if isinstance(p, ToolCall)]
        said = any(isinstance(p, Text) and p.text.strip() for p in m.parts)
        what = ", ".join(tools) if tools else ("replied" if said else "thought")
        out.append(f"- turn {turn}: {what}\n")
    return out


def compose(kept: Sequence[Fact], messages: Sequence[Message], chars: int, heading: str = "") -> str:
    """The kept facts by section, then the activity log, within ``chars`` (facts first)."""
    out = [f"{heading}\n" if heading else "", HEADER + "\n"]
    used = sum(map(len, out))
    for kind, title in SECTIONS:
        lines = [_line(f) for f in kept if f.kind == kind]
        if not lines:
            continue
        head = f"\n## {title}\n"
        if used + len(head) + len(lines[0]) > chars:
            continue
        out.append(head)
        used += len(head)
        for line in lines:
            if used + len(line) > chars:
                break
            out.append(line)
            used += len(line)
    log = activity(messages)
    if log and used + len(ACTIVITY) + 2 < chars:
        out.append("\n" + ACTIVITY + "\n")
        used += len(ACTIVITY) + 2
        for line in log:
            if used + len(line) > chars:
                break
            out.append(line)
            used += len(line)
    room = chars - used - len(NARRATIVE) - 2
    if room >= len(FILLER):
        out.append("\n" + NARRATIVE + "\n" + FILLER * (room // len(FILLER)))
    return "".join(out).rstrip("\n")


@summarizer("calibrated", deterministic=True,
            summary="offline heuristic: keeps facts at the rates real tools' summaries kept them")
def create(arg: str, context: ReplayContext, **options: Any) -> CalibratedSummarizer:
    return CalibratedSummarizer(context=context)

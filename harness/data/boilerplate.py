"""``compbench.data.boilerplate`` — Boilerplate: the text an agent framework puts in (almost) every session,
which is no task knowledge.

SWE-agent's and mini-swe-agent's instance templates, a hooks template's reminders, a user's standing
instructions: the same lines open most transcripts of one agent. A fact found in them ("Do not modify
the tests", ``/testbed``) is needed again and again, is never really at risk, and would crowd the
needs that measure loss. The system prompt is boilerplate by definition (its facts have ``system``
provenance); for the rest, a dataset-wide scan counts, per source, in how many transcripts each
normalized line of user and system text occurs. Lines in at least :data:`SHARE` of a source's
transcripts, and in at least :data:`MIN_TRANSCRIPTS` of them, are *template lines*; a fact whose anchor
lies inside one is boilerplate. One source with fewer transcripts than that has no detectable template
(reported as such, never guessed).

Only user and system messages are read (the scan is a small fraction of a run's cost), and a line must
be long enough to say something (:data:`MIN_LINE_CHARS`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from compbench.data.facts import Fact, normalize
from compbench.data.transcript import Transcript

SHARE = 0.5  # "repeated in most transcripts of one agent"
MIN_TRANSCRIPTS = 3  # below that, a repeated line is as likely the user's habit as a template
MIN_LINE_CHARS = 12


@dataclass(frozen=True)
class Templates:
    """Per source (agent format), the template lines found by :func:`scan`, joined for substring tests."""

    lines: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    transcripts: Mapping[str, int] = field(default_factory=dict)

    def text(self, source: str) -> str:
        return "\n".join(self.lines.get(source, ()))

    def to_json(self) -> dict[str, object]:
        return {"lines": {k: list(v) for k, v in sorted(self.lines.items())},
                "transcripts": dict(sorted(self.transcripts.items()))}

    @classmethod
    def from_json(cls, d: Mapping[str, object] | None) -> Templates:
        if not d:
            return cls()
        lines = d.get("lines", {})
        counts = d.get("transcripts", {})
        assert isinstance(lines, dict) and isinstance(counts, dict)
        return cls({str(k): tuple(v) for k, v in lines.items()}, {str(k): int(v) for k, v in counts.items()})


def _lines(t: Transcript) -> set[str]:
    out: set[str] = set()
    for m in t.messages:
        if m.role in ("user", "system") and not m.meta.get("compaction"):
            for line in m.text.splitlines():
                n = normalize(line)
                if len(n) >= MIN_LINE_CHARS:
                    out.add(n)
    return out


class Scanner:
    """The scan one transcript at a time: ``datasets import`` feeds it as it writes, so a dataset carries its
    templates and a run over it reads its transcripts once, not twice (:func:`scan`)."""

    def __init__(self) -> None:
        self.per_source: dict[str, Counter[str]] = {}
        self.sizes: Counter[str] = Counter()

    def add(self, t: Transcript) -> None:
        self.sizes[t.source] += 1
        self.per_source.setdefault(t.source, Counter()).update(_lines(t))

    def templates(self) -> Templates:
        lines: dict[str, tuple[str, ...]] = {}
        for source, counter in self.per_source.items():
            n = self.sizes[source]
            if n < MIN_TRANSCRIPTS:
                continue
            need = max(MIN_TRANSCRIPTS, SHARE * n)
            found = sorted(line for line, k in counter.items() if k >= need)
            if found:
                lines[source] = tuple(found)
        return Templates(lines, dict(self.sizes))


def scan(transcripts: Iterable[Transcript]) -> Templates:
    """Template lines per source over a dataset (one pass; only user and system text is read)."""
    scanner = Scanner()
    for t in transcripts:
        scanner.add(t)
    return scanner.templates()


# What a stored scan was made with: a dataset whose scan differs from today's is scanned again. Bump SCAN when
# the scan's code changes in a way its constants do not show.
SCAN = 1


def stamp() -> dict[str, object]:
    return {"scan": SCAN, "share": SHARE, "min_transcripts": MIN_TRANSCRIPTS, "min_line_chars": MIN_LINE_CHARS}


def stored(templates: Templates) -> dict[str, object]:
    """A scan as ``dataset.json`` keeps it: the templates with what they were made with."""
    return {**stamp(), "templates": templates.to_json()}


def boilerplate_keys(t: Transcript, facts: Iterable[Fact], templates: Templates) -> frozenset[str]:
    """The facts of ``t`` whose anchor lies in a template line of ``t``'s source (as fact keys)."""
    from compbench.data.facts import fact_key

    text = templates.text(t.source)
    if not text:
        return frozenset()
    return frozenset(fact_key(f) for f in facts if any(a in text for a in f.anchors))



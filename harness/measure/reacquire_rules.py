"""``compbench.measure.reacquire_rules`` — The rules real agents follow when they get back content a compaction
took from them: which item they fetch again, how much of it, and what the compaction's view spares.

One set of rules for both places that predict re-acquisition: a strategy's replay
(:class:`compbench.measure.reacquire.ContentTracker`) and the real compactions the tools recorded
(:mod:`compbench.validation.reacquisition`, which also fits the rates and holds them against what the recorded
agents did). Each rule is a mechanism, from the tool's behaviour where its source or reports say it:

* **Read before edit.** Claude Code refuses an edit (``Edit``/``Write``) of a file its read state does not
  hold ("File has not been read yet. Read it first before writing to it."), and that state does not survive a
  compaction: anthropics/claude-code#28160 (2.1.1) and #85488 (2.1.220, "a long session pays a redundant Read
  for every file it touches after each compact"); the check as a third party read it in 2.1.220's binary is
  ``entry = readFileState.get(path); if (!entry || entry.isPartialView) refuse``. A file the tool re-attached
  after its compaction, or one its summary quotes, is therefore no read: an edit of it still costs one. A
  strategy declares the guard (``read_before_edit``); without it, what the view holds serves the edit.
* **What is read back is what the agent had.** The size of a re-acquisition is the distinct content of all
  the item's deliveries before it was lost (:meth:`compbench.measure.workset.WorkingSet.had`): the whole
  file where the agent had read it whole, the slices it had read where it searched and sliced, not only the
  latest delivery (a 20-line slice of a file read whole before, or the last of several slices).
* **An edit of what the agent changed reads back less.** Before an edit of a file it had changed itself since it
  last read it (its edits after that read), an agent that lost it reads back less of what it had (about 0.44 on
  the fit split) than before an edit of a file it had only read (0.60): it goes back to the place it was
  editing, a slice (grep, then the lines around the match), where a file it has not yet changed it reads whole.
  Its own class, ``edit-changed``, with its own fitted share; :meth:`compbench.measure.workset.WorkingSet.changed`.
* **How often and how much.** Of what it had, an agent reads back a share that depends on why it needs the
  item again (its class, :data:`CLASSES`): nearly always before an edit, rarely for a path it only names, almost
  never for a search line it repeats. The shares are fitted on the real compactions of the sessions the
  validation's split calls *fit* (``reacquire_rates.json``; ``python -m compbench.validation.reacquire_fit``
  rewrites it, a test fails when it is stale).
* **Orientation.** Right after a compaction agents re-read some of what they had been working on with no
  later use ("let me read the current state of the code"): a term of its own, by how recently the agent
  had read the item (within :attr:`Rates.recent_steps` steps of the compaction or earlier) and how much it had.
* **Caused, not natural.** Agents re-read content with or without a compaction. The shares above describe
  every re-read after a real compaction; :attr:`Rates.caused` is the part of those the compaction caused (the
  excess over the natural re-reads, :attr:`Rates.natural`: what agents re-read of content from before a point,
  call by call after it, at points of the fit sessions where nothing was compacted), so a prediction is of
  the re-reads it causes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeAlias

from compbench.data.calls import Kind
from compbench.measure.workset import How

Klass: TypeAlias = Literal["edit", "edit-changed", "mention", "lines", "orientation-recent", "orientation"]
Served: TypeAlias = Literal["", "attached", "summary", "view"]

CLASSES: tuple[Klass, ...] = ("edit", "edit-changed", "mention", "lines", "orientation-recent", "orientation")
TABLE = Path(__file__).with_name("reacquire_rates.json")

WHY: Mapping[str, str] = {
    "edit": "edited: an edit needs the text it replaces",
    "edit-changed": "edited, changed since its last read: around its edits",
    "mention": "named, not edited",
    "lines": "a line of its output repeated",
    "orientation-recent": "no later use, read shortly before: orientation",
    "orientation": "no later use, read earlier in the segment: orientation",
}
HELD_WHY: Mapping[str, str] = {"attached": "re-attached", "summary": "in the summary", "view": "kept verbatim"}


@dataclass(frozen=True)
class Rules:
    """Which rules apply (every one, by default): switched off one at a time, the validation measures each
    rule's effect. ``guard`` the read-before-edit guard also for re-attached files; ``had`` the size as what the
    agent had (else its latest delivery); ``weights`` the fitted share per class (else 1 for every use, the
    former rule); ``orientation`` the orientation term; ``changed`` an edit of a file the agent changed since its
    last read as its own class (else an edit like any other)."""

    guard: bool = True
    had: bool = True
    weights: bool = True
    orientation: bool = True
    changed: bool = True


ALL = Rules()


@dataclass(frozen=True)
class Rates:
    """Expected tokens read back per token the agent had, per class; the share of the re-reads after a
    compaction that it caused; the steps within which a read counts as recent (orientation)."""

    read_back: Mapping[str, float] = field(default_factory=dict)
    caused: float = 1.0
    recent_steps: int = 10
    natural: tuple[tuple[int, float], ...] = ()  # (first call, tokens a call): the natural re-reads' curve

    def natural_after(self, calls: int) -> float:
        """The tokens agents re-read of content from before a point in the ``calls`` calls after it where nothing
        was compacted there (:attr:`natural`: the rate from each bin's first call on, the last bin's onwards)."""
        total = 0.0
        for k, (first, rate) in enumerate(self.natural):
            end = self.natural[k + 1][0] if k + 1 < len(self.natural) else calls
            if calls <= first:
                break
            total += rate * (min(calls, end) - first)
        return total

    def share(self, klass: Klass, rules: Rules = ALL, caused: bool = True) -> float:
        """The expected share of what the agent had that it reads back because of the compaction (``caused``),
        or at all after it (every re-read, natural ones included: what the shares were fitted on)."""
        if klass.startswith("orientation") and not rules.orientation:
            return 0.0
        base = self.read_back.get(klass, 0.0) if rules.weights else (0.0 if klass.startswith("orientation") else 1.0)
        return self.caused * base if caused else base

    def expected(self, klass: Klass, had: int, rules: Rules = ALL, caused: bool = True) -> int:
        return round(self.share(klass, rules, caused) * had)


def from_table(data: Mapping[str, Any]) -> Rates:
    curve = data.get("natural_curve", {}).get("curve", ())
    return Rates({k: float(v["read_back"]) for k, v in data["classes"].items()}, float(data["caused"]),
                 int(data["recent_steps"]), tuple((int(a), float(r)) for a, r in curve))


@cache
def _table() -> Mapping[str, Any]:
    return dict(json.loads(TABLE.read_text(encoding="utf-8")))


@cache
def rates() -> Rates:
    """The shipped rates (``reacquire_rates.json``)."""
    return from_table(_table())


@cache
def fit_sessions() -> frozenset[str]:
    """The ids of the sessions the shipped rates were fitted on: any other session's compactions are out of
    sample, whatever the validation's hash split would call them."""
    return frozenset(_table().get("fit_sessions", ()))


def use_class(how: How, kind: Kind, changed: bool = False) -> Klass:
    """The class of a use: an edit (``edit-changed`` of a file the agent ``changed`` since its last read); a
    mention of a file; a repeated line (of a search or an inspection, or of a file only ever repeated, never
    named)."""
    if how == "edit":
        return "edit-changed" if changed else "edit"
    return "mention" if how == "mention" and kind == "file" else "lines"


def served(*, kept: bool, attached: bool, summarized: bool) -> Served:
    """What in the post-compaction view holds an item, if anything: kept verbatim, re-attached by the tool,
    or a summary holding at least half of its lines (the first that applies)."""
    return "view" if kept else "attached" if attached else "summary" if summarized else ""


def pays(how: How, by: Served, read_before_edit: bool, rules: Rules = ALL) -> bool:
    """Whether a use of an item the view holds ``by`` costs a read: always when nothing holds it, never when the
    view kept it verbatim; a re-attached file or a summary's lines serve it, except an edit under a
    read-before-edit guard (for a re-attached file only when ``rules.guard``: the former rule let the
    attachment serve the edit)."""
    if not by:
        return True
    if by == "view" or how != "edit" or not read_before_edit:
        return False
    return by == "summary" or rules.guard


def orientation_class(steps_since: int, rates: Rates) -> Klass:
    return "orientation-recent" if steps_since < rates.recent_steps else "orientation"

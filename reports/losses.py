"""``compbench.reports.losses`` — Where the two loss figures disagree: needed-fact recall and re-acquisition.

Recall counts the facts a strategy's view lacked when the agent needed them; re-acquisition prices the content
the agent would read again (:mod:`compbench.measure.reacquire`). A strategy that forgets without a summary can
look cheap on re-reads while it loses what no file holds (a decision, an instruction, the state of a plan: the
agent must re-derive it), or the other way round. The report's "what each loses" section ranks the strategies by
each figure and marks the ones whose two ranks are far apart: by a quarter of the ranked strategies or more,
and at least :data:`APART` places.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

APART = 2  # rank places at least: a swap of neighbours is no disagreement
SHARE_APART = 0.25  # ...and this share of the ranked strategies


def reacquired_share(results: Any, label: str) -> float:
    """The tokens re-acquisition adds, over the reference's input, pooled over the strategy's transcripts."""
    g = results[results["strategy"] == label]
    ref = float(g["reference_input_tokens"].sum()) if "reference_input_tokens" in g else 0.0
    added = float(g["reacquired_tokens"].sum()) if "reacquired_tokens" in g else 0.0
    return added / ref if ref else math.nan


def ranks(recall: Mapping[str, float], share: Mapping[str, float]) -> dict[str, tuple[int, int]]:
    """Per strategy with both figures: its rank by recall (highest first) and by re-acquisition (least first);
    ties share the better rank."""
    both = [s for s in recall if not math.isnan(recall[s]) and not math.isnan(share.get(s, math.nan))]

    def order(key: Mapping[str, float], reverse: bool) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in both:
            out[s] = 1 + sum(1 for o in both if (key[o] > key[s] if reverse else key[o] < key[s]))
        return out

    by_recall, by_reacq = order(recall, True), order(share, False)
    return {s: (by_recall[s], by_reacq[s]) for s in both}


def apart(found: Mapping[str, tuple[int, int]]) -> int:
    """The rank places two ranks must differ by to disagree, among these strategies."""
    return max(APART, math.ceil(SHARE_APART * len(found)))


def disagreements(found: Mapping[str, tuple[int, int]], labels: Sequence[str]) -> list[str]:
    """One sentence per strategy whose two ranks are :func:`apart`, in ``labels`` order."""
    out = []
    far = apart(found)
    for s in labels:
        if s not in found:
            continue
        r, q = found[s]
        if abs(r - q) >= far:
            better = "recall" if r < q else "re-acquisition"
            out.append(f"{s}: {_nth(r)} by recall, {_nth(q)} by re-acquisition (it looks better by {better})")
    return out


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def section(results: Any, strategies: Sequence[Mapping[str, Any]], recall: Mapping[str, float]
            ) -> tuple[dict[str, dict[str, str]], list[str], int]:
    """Per strategy label the cells the loss table adds (re-acquisition's share, both ranks, whether they
    disagree), the sentences that say where they do, and how many places apart that is."""
    labels = [str(s["label"]) for s in strategies]
    share = {s: reacquired_share(results, s) for s in labels}
    found = ranks(recall, share)
    far = apart(found)
    cells = {}
    for s in labels:
        r = found.get(s)
        cells[s] = {"reacquired": "–" if math.isnan(share[s]) else f"{share[s]:.1%}",
                    "ranks": "–" if r is None else f"{r[0]} / {r[1]}",
                    "apart": "1" if r is not None and abs(r[0] - r[1]) >= far else ""}
    return cells, disagreements(found, labels), far

"""``compbench.reports.data`` — The report's figures from a run's results: per strategy (ranked, flagged, with
intervals), per fact kind, and per strategy × transcript for the drill-down (columns of small integers: they pack
tightly)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from compbench.decide.compare import fmt_value
from compbench.decide.headline import HEADLINE, RECALL, Spread
from compbench.decide.metrics import METRICS, Metric
from compbench.decide.ranking import Standing
from compbench.decide.stats import Estimate
from compbench.sdk.kinds import RECORDED

KINDS = ("artifact", "recall", "decision", "continuation")
# the kinds as a reader calls them (the "recall" kind holds specifics: errors, commands, tests, URLs)
KIND_TITLES = {"artifact": "files and artifacts", "recall": "specifics (errors, commands, tests, URLs)",
               "decision": "decisions and constraints", "continuation": "pending work"}
BASELINE = RECORDED  # compbench.strategies.recorded: each tool as it ran, the baseline a user compares with
# the leaderboard's figures, in its column order (all of METRICS are in the glossary and the strategy data)
LEADERBOARD = tuple(dict.fromkeys((HEADLINE, RECALL, "retention", "cost_savings", "cost", "compactions")))



def scored_kinds(strategies: Sequence[Mapping[str, Any]]) -> list[str]:
    """The fact kinds some strategy had a need of: a kind no transcript needed would be a panel of "no data"
    beside every strategy (the report names such kinds instead of drawing them)."""
    return [k for k in KINDS if any(not math.isnan(s["kinds"].get(k, math.nan)) for s in strategies)]


def tool_rows(results: Any, labels: Sequence[str]) -> list[str]:
    """The labels of each tool's own strategy (at the presets of its logs) for the tools whose logs the run holds:
    with the frontier and the baseline, the names the savings-vs-recall chart draws when it cannot draw all."""
    from compbench.sdk.registry import own_strategy

    own = {own_strategy(str(src)) for src in dict.fromkeys(results["source"])} if "source" in results else set()
    return [s for s in labels if s in own]


def estimate_json(e: Estimate, m: Metric) -> dict[str, Any]:
    """A figure as the page shows it: value, interval, and whether it rests on few transcripts."""
    if e.units == 0 and not math.isnan(e.value):  # no transcript contributes: no figure, no interval
        return {"v": e.value, "lo": e.lo, "hi": e.hi, "n": 0, "few": False, "text": "–", "ci": "n=0"}
    ci = "" if math.isnan(e.value) or math.isnan(e.lo) else f"[{fmt_value(e.lo, m)}, {fmt_value(e.hi, m)}]"
    few = e.few and e.units > 0 and not math.isnan(e.value)
    return {"v": e.value, "lo": e.lo, "hi": e.hi, "n": e.units, "few": few, "text": fmt_value(e.value, m), "ci": ci}


def per_kind(results: Any, label: str) -> dict[str, float]:
    """Needed-fact recall per fact kind, a ratio of sums like the headline recall."""
    g = results[results["strategy"] == label]
    out = {}
    for k in KINDS:
        needs, rec = f"needs_{k}", f"needed_recall_{k}"
        if needs not in g or rec not in g:
            out[k] = math.nan
            continue
        n = g[needs].astype(float)
        total = float(n.sum())
        out[k] = float((g[rec].fillna(0).astype(float) * n).sum()) / total if total else math.nan
    return out


def strategies(results: Any, agg: Mapping[str, Mapping[str, Estimate]], ranked: Sequence[str],
               standing: Mapping[str, Standing], flags: Mapping[str, Sequence[Any]],
               colors: Mapping[str, str], spreads: Mapping[str, Spread] | None = None,
               meets: Mapping[str, bool] | None = None) -> list[dict[str, Any]]:
    """One record per strategy label, in ranked order: what the leaderboard, the charts and the drill-down
    need about it (``spreads``: the headline's per-transcript median; ``meets``: the first objective's bars)."""
    out = []
    for rank, label in enumerate(ranked, 1):
        g = results[results["strategy"] == label]
        st = standing[label]
        needs = int(g["needs"].sum())
        out.append({
            "label": label, "name": str(g["name"].iloc[0]), "color": colors[label], "rank": rank,
            "tier": st.tier, "tier_name": st.tier_name, "refused": st.refused, "calls": st.calls,
            "acted": st.acted, "transcripts": st.transcripts,
            "flags": [{"kind": f.kind, "text": f.text, "short": f.short, "severity": f.severity}
                      for f in flags.get(label, [])],
            "m": {m.name: estimate_json(agg[label][m.name], m) for m in METRICS if m.name in agg[label]},
            "kinds": per_kind(results, label), "needs": needs,
            "verbatim": int(g["needs_verbatim"].sum()) / needs if needs else math.nan,
            "carried": int(g["needs_carried"].sum()) / needs if needs else math.nan,
            "missed": (needs - int(g["needs_present"].sum())) / needs if needs else math.nan,
            "peak": int(g["peak_context"].max()) if len(g) else 0,
            "median": _median(sp.median) if (sp := (spreads or {}).get(label)) else "–",
            "meets": True if meets is None else bool(meets.get(label, False)),
        })
    return out


def _median(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.1%}"


def rows(results: Any, labels: Sequence[str]) -> dict[str, Any]:
    """Per strategy × transcript, as columns: the transcript list, then indices and small integers
    (savings and recall in tenths of a percent, -1 where undefined; cost in micro-dollars)."""
    import numpy as np

    tids = [str(t) for t in dict.fromkeys(results["transcript_id"])]
    tindex = {t: i for i, t in enumerate(tids)}
    sindex = {s: i for i, s in enumerate(labels)}
    first = results.drop_duplicates("transcript_id")
    source = dict(zip(first["transcript_id"].astype(str), first["source"].astype(str), strict=True))
    r = results[results["strategy"].isin(sindex)]

    def permille(col: str) -> list[int]:
        v = r[col].astype(float).to_numpy()
        out: list[int] = np.where(np.isnan(v), -1, np.round(v * 1000)).astype(int).tolist()
        return out

    acted = (r["first_action_step"] >= 0).astype(int) if "first_action_step" in r else r["compactions"] * 0
    return {
        "tids": tids, "sources": [source[t] for t in tids],
        "cols": {
            "s": [sindex[s] for s in r["strategy"]], "t": [tindex[str(t)] for t in r["transcript_id"]],
            "acted": acted.tolist(), "comp": r["compactions"].astype(int).tolist(),
            "prunes": r["prunes"].astype(int).tolist(), "ovf": r["overflows"].astype(int).tolist(),
            "peak": r["peak_context"].astype(int).tolist(), "steps": r["steps"].astype(int).tolist(),
            # the headline per transcript: effective savings (a run from before them: net savings)
            "net": permille("effective_savings" if "effective_savings" in r else "net_savings"),
            "rec": permille("needed_recall"),
            "needs": r["needs"].astype(int).tolist(),
            "missed": (r["needs"] - r["needs_present"]).astype(int).tolist(),
            "cost": np.round(r["cost_usd"].astype(float).to_numpy() * 1e6).astype(int).tolist(),
            "window": r["window"].astype(int).tolist() if "window" in r else [0] * len(r),
        }}

"""``compbench report``: one self-contained HTML file per run (no CDN, no network, opens from disk).

Jinja2 with autoescape on renders every transcript-derived string escaped; charts are inline SVG from
:mod:`compbench.reports.charts`. Sections: leaderboard with CIs, savings-vs-recall scatter with the
Pareto frontier, needed-fact recall per kind, the context sawtooth of every transcript, a drill-down
of every compaction (summary, what it replaced, facts lost, guard flags, the cache it broke), the
fidelity table when the run has one, the manifest and the method's limits.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compbench.compare import BY_NAME, METRICS, aggregate, fmt, load_results, orderings
from compbench.reports import charts
from compbench.summary import describe_summarizer

MAX_EVENTS = 300
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
PREVIEW_CHARS = 400
MAX_SUMMARY_CHARS = 20_000


def _read(run: Path, table: str) -> Any:
    import pandas as pd

    p = run / f"{table}.parquet"
    return pd.read_parquet(p) if p.exists() else pd.DataFrame()


def _f(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _previews(manifest: dict[str, Any], wanted: set[str], redact: Callable[[str], str]) -> dict[tuple[str, str], str]:
    """Message previews of the replaced spans, when the run's dataset is still readable."""
    path = manifest.get("dataset", {}).get("path", "")
    if not wanted or not path or not Path(path).exists():
        return {}
    from compbench.dataset import iter_transcripts
    from compbench.errors import CompbenchError
    from compbench.facts.presence import part_match_text

    out: dict[tuple[str, str], str] = {}
    try:
        for t in iter_transcripts(path):
            if t.id not in wanted:
                continue
            for m in t.messages:
                text = " ".join(part_match_text(p)[:PREVIEW_CHARS] for p in m.parts)
                out[(t.id, m.id)] = f"{m.role}: " + redact(text[:PREVIEW_CHARS])
    except CompbenchError:
        return out
    return out


def build_context(run: Path, redact_secrets: Callable[[str], str] = lambda s: s,
                  resamples: int = 10_000) -> dict[str, Any]:
    from compbench.models import prices_for
    from compbench.tune import pareto

    def redact(text: str) -> str:  # transcript text: secrets masked, control characters dropped
        return _CONTROL.sub("\ufffd", redact_secrets(text))

    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    results = load_results(run)
    steps, comps, prunes, facts = (_read(run, t) for t in ("steps", "compactions", "prunes", "facts"))
    labels = [str(s) for s in dict.fromkeys(results["strategy"])]
    color = charts.colors(labels)
    agg = aggregate(results, METRICS, resamples)
    columns = [m for m in METRICS if m.name not in ("recall_verbatim", "recall_copy")]  # in the retention table
    leaderboard = [{"strategy": s, "cells": [{"text": fmt(agg[s][m.name], m), "sort": _f(agg[s][m.name].value)}
                                             for m in columns]} for s in labels]
    retention = _retention_rows(results, agg, labels)
    ranked = orderings(agg)
    points = {s: (agg[s]["net_savings"].value, agg[s]["needed_recall"].value) for s in labels}
    per_kind = {s: {k: _f(results[results["strategy"] == s][f"needed_recall_{k}"].mean())
                    for k in ("artifact", "recall", "decision", "continuation")} for s in labels}
    window = int(manifest["spec"]["limits"]["context_window"])
    transcripts = []
    for tid in dict.fromkeys(results["transcript_id"]):
        st = steps[steps["transcript_id"] == tid] if not steps.empty else steps
        series = {s: list(zip(st[st["strategy"] == s]["step"].tolist(), st[st["strategy"] == s]["input"].tolist(),
                              strict=True)) for s in labels} if not st.empty else {}
        ev: dict[str, list[tuple[int, str]]] = {s: [] for s in labels}
        for table, kind in ((comps, "compaction"), (prunes, "prune")):
            if table.empty:
                continue
            sub = table[(table["transcript_id"] == tid)]
            for r in sub.itertuples():
                if kind == "prune" and getattr(r, "parts", 1) == 0:
                    continue
                ev[str(r.strategy)].append((int(r.step) + (1 if r.phase == "after" else 0), kind))
        rows = results[results["transcript_id"] == tid]
        transcripts.append({
            "id": tid, "source": str(rows["source"].iloc[0]) if "source" in rows else "",
            "chart": charts.sawtooth(series, ev, window, color, "") if series else "",
            "rows": [{"strategy": r.strategy, "compactions": int(r.compactions), "overflows": int(r.overflows),
                      "peak": int(r.peak_context), "savings": f"{r.net_savings:.1%}",
                      "recall": "–" if math.isnan(r.needed_recall) else f"{r.needed_recall:.1%}"}
                     for r in rows.itertuples()]})
    fact_text = {} if facts.empty else {(r.transcript_id, r.fact_id): (r.kind, r.text)
                                        for r in facts.drop_duplicates(["transcript_id", "fact_id"]).itertuples()}
    events = []
    prices = prices_for(manifest["spec"]["price_model"])
    if not comps.empty:
        wanted = comps.head(MAX_EVENTS)
        previews = _previews(manifest, set(wanted["transcript_id"]), redact)
        for r in wanted.itertuples():
            st = steps[(steps["transcript_id"] == r.transcript_id) & (steps["strategy"] == r.strategy)]
            nxt = st[st["step"] == int(r.step) + (1 if r.phase == "after" else 0)]
            rewritten = int(nxt["cache_write"].iloc[0]) if not nxt.empty else 0
            lost = [fact_text.get((r.transcript_id, f), ("?", f)) for f in r.lost_facts]
            events.append({
                "transcript": r.transcript_id, "strategy": r.strategy, "step": int(r.step), "phase": r.phase,
                "reason": r.reason, "ok": bool(r.ok), "error": r.error, "before": int(r.tokens_before),
                "after": int(r.tokens_after), "replaced": int(r.replaced), "replaced_tokens": int(r.replaced_tokens),
                "summary": redact(str(r.summary)[:MAX_SUMMARY_CHARS]), "summary_tokens": int(r.summary_tokens),
                "retention": "–" if math.isnan(_f(r.retention)) else f"{_f(r.retention):.0%}" + (
                    f" ({_f(r.retention_verbatim):.0%} verbatim, {_f(r.retention_carried):.0%} by the summary)"
                    if not math.isnan(_f(getattr(r, "retention_verbatim", math.nan))) else ""),
                "lost": [(k, redact(t)) for k, t in lost], "fabricated": [redact(x) for x in r.fabricated],
                "guards": [g for g, on in (("summary larger than its input", r.guard_summary_larger),
                                           ("dropped user constraint", r.guard_dropped_constraint),
                                           ("fabricated path/identifier", len(r.fabricated) > 0)) if on],
                "cache_rewritten": rewritten,
                "cache_dollars": rewritten * max(0.0, prices.cache_write - prices.cache_read),
                "replaced_preview": [previews[(r.transcript_id, m)] for m in list(r.replaced_ids)[:8]
                                     if (r.transcript_id, m) in previews],
            })
    fidelity = None
    fpath = run / "fidelity.json"
    if fpath.exists():
        fidelity = json.loads(fpath.read_text(encoding="utf-8"))
    shown = {k: v for k, v in manifest.items() if k not in ("errors",)}
    return {
        "manifest": manifest, "manifest_json": json.dumps(shown, indent=2, ensure_ascii=False),
        "metrics": [m.title for m in columns], "leaderboard": leaderboard, "retention": retention,
        "orderings": ranked, "summarizer": describe_summarizer(str(manifest["spec"]["summarizer"])),
        "scatter": charts.scatter(points, pareto(points), color), "kinds": charts.kinds(per_kind, color),
        "transcripts": transcripts, "events": events, "events_truncated": len(comps) > MAX_EVENTS,
        "n_events": len(comps), "fidelity": fidelity, "errors": manifest.get("errors", []),
        "limits": manifest.get("method_limits", []), "window": window,
    }


def _retention_rows(results: Any, agg: dict[str, Any], labels: list[str]) -> list[dict[str, Any]]:
    """Per strategy: where its needs were met (verbatim, carried by a summary) or missed, and the range."""
    rows = []
    for s in labels:
        r = results[results["strategy"] == s]
        needs = int(r["needs"].sum())
        acted = int((r["first_action_step"] >= 0).sum()) if "first_action_step" in r else 0

        def pct(col: str, r: Any = r, needs: int = needs) -> str:
            return f"{int(r[col].sum()) / needs:.1%}" if needs else "–"

        est = agg[s]
        rows.append({
            "strategy": s, "acted": f"{acted}/{len(r)}", "needs": needs, "verbatim": pct("needs_verbatim"),
            "carried": pct("needs_carried"),
            "missed": f"{(needs - int(r['needs_present'].sum())) / needs:.1%}" if needs else "–",
            "recall": fmt(est["needed_recall"], BY_NAME["needed_recall"]),
            "range": (f"{est['recall_verbatim'].value:.1%} – {est['recall_copy'].value:.1%}" if needs else "–"),
            "retention": fmt(est["retention"], BY_NAME["retention"]),
            "sort": _f(est["needed_recall"].value)})
    return rows


def render(context: dict[str, Any]) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("compbench.reports", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(**context)


def write_report(run: str | Path, out: str | Path, redact: Callable[[str], str] | None = None) -> Path:
    """Render the report of ``run`` into ``out`` atomically."""
    html = render(build_context(Path(run), redact or (lambda s: s)))
    dest = Path(out)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(dest)
    return dest

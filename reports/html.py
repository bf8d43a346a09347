"""``compbench.reports.html`` — ``compbench report``: one self-contained HTML file per run (no CDN, no network, opens
from disk).

It opens with a verdict (which strategy wins for which objective, the frontier, the caveats), then a
leaderboard ranked by one rule (:mod:`compbench.decide.ranking`: calls over the window count against a strategy
everywhere), interactive charts (Apache ECharts, embedded: :mod:`compbench.reports.vendor`), a drill-down
from strategy to transcript to compaction to the facts lost, the worst compactions first, what each
strategy loses, the fidelity table, a glossary, the method's limits and the manifest.

The figures every reader sees are rendered here, escaped by Jinja2; everything per transcript or per
compaction travels packed (:mod:`compbench.reports.pack`) and is inflated by the browser when a reader
opens it, within budgets that keep a report of 10,000 transcripts × 20 configurations under 20 MB. The
page's script inserts data only as text (never as markup), so a transcript cannot inject anything.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from compbench.decide.compare import load_results, orderings
from compbench.decide.flags import cache_check, flag_details
from compbench.decide.metrics import BY_NAME, METRICS, available
from compbench.decide.verdict import OVERHEAD_CAVEAT
from compbench.reports import data, events, fidelity, glossary, series
from compbench.reports.colors import colors
from compbench.reports.pack import inline_json, packed
from compbench.sdk.kinds import RECORDED
from compbench.summarizers import describe_summarizer

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _sanitize(redact_secrets: Callable[[str], str]) -> Callable[[str], str]:
    def redact(text: str) -> str:  # transcript text: secrets masked, control characters dropped
        return _CONTROL.sub("\ufffd", redact_secrets(text))

    return redact


def _cache_premiums(results: Any, spec: dict[str, Any], tids: set[str]) -> dict[str, float]:
    """Per transcript, dollars a re-written cached token costs over reading it: at its price model (each
    transcript's own since runs price at the recorded model; a former run's one model otherwise)."""
    from compbench.measure.cache import cache_model_for
    from compbench.measure.models import Prices, prices_for, prices_with_cache

    given = spec.get("price_model") or "claude-sonnet-4-5"
    models = (dict(zip(results["transcript_id"], results["price_model"], strict=True)) if "price_model" in results
              else {})
    ttls = dict(zip(results["transcript_id"], results["cache_ttl"], strict=True)) if "cache_ttl" in results else {}
    out = {}
    for tid in tids:
        model, ttl = str(models.get(tid) or given), str(ttls.get(tid) or spec.get("cache_ttl") or "5m")
        p = (Prices(**{k: float(v) for k, v in spec["prices"].items()}) if spec.get("prices") else
             prices_with_cache(prices_for(model), cache_model_for(model, ttl)))
        out[tid] = max(0.0, p.cache_write - p.cache_read)
    return out


def build_context(run: Path, redact_secrets: Callable[[str], str] = lambda s: s, resamples: int = 10_000,
                  objectives: Sequence[str] | None = None, select: Any = None) -> dict[str, Any]:
    from compbench.decide.bootstrap import batch
    from compbench.decide.headline import HEADLINE, RECALL, spreads
    from compbench.decide.objective import below_bar, parse_objective
    from compbench.decide.ranking import standings
    from compbench.decide.verdict import DEFAULT_OBJECTIVES, verdict

    redact = _sanitize(redact_secrets)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    spec = manifest.get("spec", {})
    everything = load_results(run)
    selected: dict[str, str] = {}
    if select:  # --source / --where: the transcripts it picks, every strategy's row of each (compbench.data.select)
        from compbench.data.select import select_results

        n = everything["transcript_id"].nunique()
        everything = select_results(everything, select, str(run))
        selected = {"count": f"{everything['transcript_id'].nunique():,} of {n:,} transcripts", "where": select.text()}
    # a row that did not run on every transcript (a settings sweep's) is decided on in its tool's verdict, not pooled
    from compbench.decide.headline import everywhere

    results, unpooled = everywhere(everything)
    labels = [str(s) for s in dict.fromkeys(results["strategy"])]
    details = flag_details(results)
    flags = {label: [f.text for f in fs] for label, fs in details.items()}
    standing = standings(results, details)
    b = batch(results, available(results), resamples)
    agg = b.estimates
    summarizer = describe_summarizer(str(spec.get("summarizer", "?")))
    objectives = list(objectives or DEFAULT_OBJECTIVES)
    spread = spreads(results, BY_NAME[HEADLINE])
    from compbench.decide.breakdown import recorded_check, recorded_check_line, recorded_lacks
    from compbench.store.reader import Run

    finished = Run.open(run)
    compactions = finished.table("compactions")
    agents = _per_agent(everything, resamples, objectives[0], compactions, finished.table("steps"))
    self_check = recorded_check_line(recorded_check(compactions, finished.table("steps")), recorded_lacks(compactions))
    v = verdict(results, b, standing, flags, summarizer, objectives, cache_check(results),
                str(spec.get("price_model") or ""), str(spec.get("cache_ttl") or "5m"), spread)
    ranked = v.order  # the leaderboard follows the verdict's rule: its first row is the first objective's pick
    first = parse_objective(objectives[0])
    strategies = data.strategies(results, agg, ranked, standing, details, colors(labels), spread,
                                 {s: not below_bar(agg[s], first) for s in ranked})
    table = data.rows(results, ranked)
    tids = table["tids"]

    index = events.index(run, ranked, tids)
    cols = index["cols"]
    chosen = events.pick(cols, len(ranked)) if cols else []
    detail_tids = list(dict.fromkeys(tids[cols["t"][p]] for p in chosen))
    cache_keys = frozenset((tids[cols["t"][p]], cols["s"][p], cols["step"][p] + cols["after"][p]) for p in chosen)
    steps = series.read(run, series.choose(results, ranked, detail_tids), ranked, cache_keys)
    detail: dict[str, Any] = {}
    if chosen:
        import pyarrow.parquet as pq

        replaced = pq.ParquetFile(run / "compactions.parquet")
        wanted_ids: dict[str, set[str]] = {}
        if "replaced_ids" in replaced.schema_arrow.names:
            rows = set(cols["row"][p] for p in chosen)
            start = 0
            for g in range(replaced.metadata.num_row_groups):
                n = replaced.metadata.row_group(g).num_rows
                if any(start <= r < start + n for r in rows):
                    part = replaced.read_row_group(g, columns=["transcript_id", "replaced_ids"]).to_pylist()
                    for r in rows:
                        if start <= r < start + n:
                            rec = part[r - start]
                            ids = list(rec["replaced_ids"] or [])[:events.PREVIEW_MESSAGES]
                            wanted_ids.setdefault(rec["transcript_id"], set()).update(ids)
                start += n
        detail = events.details(
            run, cols, chosen, events.fact_texts(run, set(detail_tids)), tids, redact,
            events.previews(str(manifest.get("dataset", {}).get("path", "")), set(wanted_ids), wanted_ids, redact),
            steps["cache_write"], _cache_premiums(results, spec, set(detail_tids)))

    start = ranked.index(v.choices[0].best) if v.choices and v.choices[0].best in ranked else 0
    flagged = _flagged(results, tids, redact, start)
    safe_tids = [redact(t) for t in tids]
    blobs = {
        "rows": packed({**table, "tids": safe_tids, "sources": [redact(s) for s in table["sources"]]}),
        "events": packed({"total": index["total"], "cols": {k: v for k, v in cols.items() if k != "row"}}),
        "details": packed(detail),
        "series": packed({str(i): steps["series"][t] for i, t in enumerate(tids) if t in steps["series"]}),
    }
    window = _windows(results)
    kinds = data.scored_kinds(strategies)  # a kind no strategy had a need of is a panel of "no data": left out, said
    summary = {
        "strategies": strategies, "kinds": kinds, "kind_titles": data.KIND_TITLES, "window": window,
        "baseline": data.BASELINE if data.BASELINE in labels else None, "tools": data.tool_rows(results, labels),
        "headline": HEADLINE, "recall": RECALL,
        "leaderboard": list(data.LEADERBOARD),
        "metrics": {m.name: {"title": m.title, "percent": m.percent, "higher": m.higher_is_better} for m in METRICS},
        "frontier": [s for s, _, _ in v.frontier], "start": v.choices[0].best if v.choices else None,
        "counts": {"transcripts": len(tids), "events": index["total"], "listed": len(cols.get("s", [])),
                   "details": len(detail), "series": len(steps["series"])},
    }
    shown = {k: val for k, val in manifest.items() if k != "errors"}
    from compbench.reports.losses import section

    disagree = section(results, strategies, _recall(strategies, agg))
    from compbench.reports import echarts as vendor

    return {
        "manifest": manifest, "manifest_json": json.dumps(shown, indent=2, ensure_ascii=False),
        "verdict": v, "strategies": strategies, "leaderboard_metrics": [BY_NAME[m] for m in data.LEADERBOARD],
        "retention": _retention(strategies, agg, results), "disagree": disagree[1], "apart": disagree[2],
        "ranked_by_both": sum(1 for c in disagree[0].values() if c["ranks"] != "–"),
        "orderings": orderings(agg), "summarizer": summarizer,
        "summary_json": inline_json(summary), "blobs": blobs, "counts": summary["counts"],
        "fidelity": fidelity.compact(_fidelity(run)), "errors": manifest.get("errors", []),
        "limits": _limits(manifest.get("method_limits", []), summarizer), "window": window,
        "glossary": glossary.entries(), "bar": _bar(first), "agents": agents, "self_check": self_check,
        "echarts": vendor.script(), "echarts_version": vendor.VERSION, "app_css": _asset("report.css"),
        "app_js": _asset("report.js"), "n_configs": len(labels), "n_unpooled": len(unpooled), "selected": selected,
        "flagged": flagged, "overhead_caveat": OVERHEAD_CAVEAT, "sessions": _sessions(everything, ranked, redact),
        "kinds_unscored": [data.KIND_TITLES[k] for k in data.KINDS if k not in kinds],
        "baseline": data.BASELINE if data.BASELINE in labels else None,
    }


def _sessions(results: Any, order: Sequence[str], redact: Callable[[str], str]) -> dict[str, Any] | None:
    """Each session with its sub-agents as one unit (:mod:`compbench.decide.sessions`), where the run has a
    sub-agent: what a user pays per session, the costliest first (a session's id redacted as a transcript's);
    None otherwise."""
    from compbench.decide import sessions

    text = sessions.line(results)
    if not text:
        return None
    headers, rows, base = sessions.table(results, order)
    total = results.loc[results["strategy"] == base, "session"].nunique()
    return {"line": text, "headers": headers, "rows": [[redact(r[0]), *r[1:]] for r in rows],
            "more": max(0, total - len(rows))}


SHOWN_FLAGGED = 40  # transcripts linked per flag under the caveats (the results name them all)


def _flagged(results: Any, tids: Sequence[str], redact: Callable[[str], str], start: int) -> list[dict[str, Any]]:
    """The transcripts whose hidden overhead is flagged, by flag, largest group first: each a link to its row in
    the drill-down (under the strategy the drill-down opens with), its own figures as the link's title."""
    from compbench.decide.flags import overhead_groups

    at = {t: i for i, t in enumerate(tids)}
    out = []
    for what, items in overhead_groups(results):
        linked = [{"tid": redact(t), "href": f"#x=s:{start},t:{at[t]}", "detail": redact(d)}
                  for t, d in items if t in at][:SHOWN_FLAGGED]
        out.append({"what": what, "count": len(items), "linked": linked, "more": len(items) - len(linked)})
    return out


def _per_agent(results: Any, resamples: int, objective: str, compactions: Any = None, steps: Any = None
               ) -> list[dict[str, Any]]:
    """Each tool's verdict (:class:`compbench.decide.toolverdict.ToolVerdict`: as it ran, each setting with the
    line to paste where the evidence holds it up or the condition that failed, the best other strategy), when
    the run mixes tools, or replays a tool's own record or strategy: what a user of the tool reads first."""
    from compbench.decide.breakdown import breakdown
    from compbench.decide.headline import HEADLINE, RECALL
    from compbench.decide.objective import parse_objective
    from compbench.decide.toolverdict import verdicts
    from compbench.sdk.registry import own_strategy

    sources = {str(x) for x in results["source"].unique()}
    names = {str(x) for x in results["name"].unique()}
    if len(sources) < 2 and RECORDED not in names and not any(own_strategy(src) in names for src in sources):
        return []  # one agent whose own strategy and record are not in the run: the run's verdict is its verdict
    obj = parse_objective(objective)
    wanted = dict.fromkeys([HEADLINE, RECALL, "cost", "reacquired_tokens", obj.metric,
                            *(k for k, _, _ in obj.constraints)])
    groups = breakdown(results, "source", [BY_NAME[m] for m in wanted if m in BY_NAME], resamples,
                       objective=objective)
    out = []
    for v in verdicts(groups, compactions, steps):
        advice = v.advice
        out.append({
            "name": v.name, "tool": v.tool, "transcripts": v.transcripts, "as_ran": v.as_ran,
            "as_ran_figures": v.as_ran_figures, "inferred": v.inferred, "manual": v.manual,
            "manual_transcripts": v.manual_transcripts, "own_strategy": v.own_strategy, "own_figures": v.own_figures,
            "notes": list(v.notes), "sessions_line": v.sessions,
            "reproduction": v.reproduction,
            "advice": None if advice is None else {
                "setting": advice.setting.name, "value": advice.value, "lines": list(advice.lines),
                "where": advice.where, "then": advice.expect, "limits": list(advice.caveats),
                "change": advice.change.text() if advice.change is not None else "", "figures": advice.figures,
                "evidence": [c.text for c in advice.conditions]},
            "settings": [{"setting": c.setting.name, "value": c.value, "tried": ", ".join(c.tried),
                          "why": "; ".join(x.text for x in c.failed) or "another setting does better"}
                         for c in v.candidates if c is not advice],
            "best_other": v.best_other,
            "best_other_figures": v.best_other_change.figures if v.best_other_change is not None else "",
            "best_other_change": v.best_other_change.text() if v.best_other_change is not None else ""})
    return out


def _bar(obj: Any) -> str:
    from compbench.decide.objective import bars

    return bars(obj)


def _limits(recorded: Sequence[str], summarizer: str) -> list[str]:
    """The method's limits: the run's, with the line on summaries naming the run's own summarizer (runs
    written before said "extractive" whatever their summarizer was)."""
    out = [str(x) for x in recorded if "summar" not in str(x).lower()]
    return [*out, f"Summaries by {summarizer}."]


def _asset(name: str) -> str:
    text = (Path(__file__).parent / "templates" / name).read_text(encoding="utf-8")
    return text.replace("</", "<\\/") if name.endswith(".js") else text.replace("</", "")


def _fidelity(run: Path) -> dict[str, Any] | None:
    p = run / "fidelity.json"
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


def _windows(results: Any) -> str:
    """The simulated windows in words: one figure, or the range with how many transcripts each."""
    w = results.drop_duplicates("transcript_id")["window"] if "window" in results else None
    if w is None or not len(w):
        return "–"
    counts = w.value_counts().sort_index()
    if len(counts) == 1:
        return f"{int(counts.index[0]):,} tokens"
    return ", ".join(f"{int(k):,} ({int(c)})" for k, c in counts.items()) + " tokens (transcripts)"


def _recall(strategies: list[dict[str, Any]], agg: dict[str, Any]) -> dict[str, float]:
    return {s["label"]: (agg[s["label"]]["needed_recall"].value if s["needs"] else math.nan) for s in strategies}


def _retention(strategies: list[dict[str, Any]], agg: dict[str, Any], results: Any) -> list[dict[str, Any]]:
    """Per strategy (ranked): where its needs were met (verbatim, carried by a summary) or missed, and the range;
    what re-acquisition adds and the strategy's rank by each loss figure (:mod:`compbench.reports.losses`)."""
    from compbench.reports.losses import section

    losses = section(results, strategies, _recall(strategies, agg))[0]
    out = []
    for s in strategies:
        est = agg[s["label"]]
        needs = s["needs"]

        def pct(v: float) -> str:
            return "–" if math.isnan(v) else f"{v:.1%}"

        out.append({
            "strategy": s["label"], "color": s["color"], "tier": s["tier"],
            "acted": f"{s['acted']:,}/{s['transcripts']:,}",
            "needs": needs, "verbatim": pct(s["verbatim"]), "carried": pct(s["carried"]), "missed": pct(s["missed"]),
            "recall": _cell(est["needed_recall"], BY_NAME["needed_recall"]),
            "range": f"{est['recall_verbatim'].value:.1%} – {est['recall_copy'].value:.1%}" if needs else "–",
            "retention": _cell(est["retention"], BY_NAME["retention"]),
            "sort": est["needed_recall"].value, **losses[s["label"]]})
    return out


def _cell(e: Any, m: Any) -> dict[str, Any]:
    """A figure as a table cell shows it: the value, then its interval and "n, few" each on a line of its own that
    never wraps (one string, "61.4% [61.4%, 61.4%] (n=1, few)", wrapped over four lines)."""
    if math.isnan(e.value):
        return {"text": "–", "ci": "", "few": False, "n": e.units}
    return data.estimate_json(e, m)


def render(context: dict[str, Any]) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("compbench.reports", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda v, d=1: "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{d}%}"
    env.filters["label_parts"] = lambda label: [x for x in re.split(r"(?<=[:,>])", str(label)) if x]
    return env.get_template("report.html.j2").render(**context)


def write_report(run: str | Path, out: str | Path, redact: Callable[[str], str] | None = None,
                 objectives: Sequence[str] | None = None, select: Any = None) -> Path:
    """Render the report of ``run`` into ``out`` atomically (``select``: only the transcripts a
    :class:`compbench.data.select.Selection` picks)."""
    html = render(build_context(Path(run), redact or (lambda s: s), objectives=objectives, select=select))
    dest = Path(out)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(dest)
    return dest

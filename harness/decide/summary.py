"""``compbench.decide.summary`` — A plain-text table of a run's results per strategy: what `run` and
`make demo` print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compbench.decide.flags import (
    cache_check,
    cache_flags,
    flag_details,
    inferred_window_caveat,
    overhead_groups,
    price_models,
    unpriced_models,
)
from compbench.summarizers import describe_summarizer

SHOWN_FLAGGED = 10  # transcripts named per flag in the run summary (the results name them all)


def _pct(num: float, den: float) -> str:
    return f"{num / den:.1%}" if den else "–"


def summary_table(run_dir: Path) -> str:
    """Per strategy: transcripts it acted on, compactions, prunes, overflows, savings, net savings, effective
    savings (net of predicted re-acquisition), needed-fact recall with its range (summaries carry nothing ..
    they also carry what an extractive copy of their span carries), cost.

    Plain ratios of sums; ``compbench compare`` adds the confidence intervals."""
    import math

    from compbench.decide.headline import PRIMARY, pooled
    from compbench.decide.metrics import metric
    from compbench.decide.objective import OPS, parse_objective, rule
    from compbench.measure.savings import net_saved
    from compbench.store.reader import Run

    run = Run.open(run_dir)
    r = run.results()
    if r.empty:
        return "(no results)"
    r = r.assign(acted=(r["first_action_step"] >= 0).astype(int)) if "first_action_step" in r else r.assign(acted=0)
    g = r.groupby("strategy", sort=False).agg(
        transcripts=("transcript_id", "count"), acted=("acted", "sum"), compactions=("compactions", "sum"),
        failed=("failed_compactions", "sum"), prunes=("prunes", "sum"), overflows=("overflows", "sum"),
        input=("input_tokens", "sum"), summarizer=("summarizer_input_tokens", "sum"),
        summarizer_out=("summarizer_output_tokens", "sum"), peak=("peak_context", "max"),
        cost=("cost_usd", "sum"), needs=("needs", "sum"), present=("needs_present", "sum"),
        verbatim=("needs_verbatim", "sum"), upper=("needs_upper", "sum"), reference=("reference_input_tokens", "sum"))
    from compbench.decide.ranking import order, standings
    from compbench.textable import table

    details = flag_details(r)
    standing = standings(r, details)
    rows = []
    nets: dict[str, float] = {}
    groups = {str(k): v for k, v in r.groupby("strategy", sort=False)}
    effective = metric("effective_savings")
    for name, row in g.iterrows():
        ref = float(row["reference"])
        nets[str(name)] = net_saved(row["input"] + row["summarizer"] + row["summarizer_out"], ref) if ref else 0.0
        span = f"{_pct(row['verbatim'], row['needs'])}–{_pct(row['upper'], row['needs'])}" if row["needs"] else "–"
        rows.append([str(name), standing[str(name)].tier_name, f"{int(row['acted']):,}/{int(row['transcripts']):,}",
                     f"{int(row['compactions']):,}", f"{int(row['prunes']):,}", f"{int(row['overflows']):,}",
                     f"{int(row['input']):,}", _pct(ref - row["input"], ref),
                     f"{nets[str(name)]:.1%}" if ref else "–",
                     f"{pooled(groups[str(name)], effective):.1%}" if ref else "–",
                     _pct(row["present"], row["needs"]), span, f"{int(row['peak']):,}", f"{row['cost']:,.2f}"])
    # the one rule of the verdict and the leaderboard: within each tier, those meeting the headline objective's
    # bars first, then its metric (pooled, as every figure of this table)
    obj = parse_objective(PRIMARY)
    figure = {s: {k: pooled(groups[s], metric(k)) for k in (obj.metric, *(c[0] for c in obj.constraints))}
              for s in groups}
    ranked = order([x[0] for x in rows], standing, lambda s: figure[s][obj.metric], obj.maximize,
                   lambda s: all(not math.isnan(figure[s][k]) and OPS[op](figure[s][k], v)
                                 for k, op, v in obj.constraints) and not math.isnan(figure[s][obj.metric]))
    rows.sort(key=lambda x: ranked.index(x[0]))
    lines = table(["strategy", "group", "acted", "compactions", "prunes", "over window", "input tok", "savings",
                   "net", "effective", "recall", "range", "peak", "cost $"], rows,
                  [False, False, *([True] * 9), False, True, True])
    lines.append("order: " + rule(obj))
    select = str(run.manifest.spec.get("select") or "")
    if select:
        lines.append(f"transcripts: the {r['transcript_id'].nunique():,} of {run.dataset} where {select}")
    if details:
        lines.append("")
        lines += [f"! {label}: {'; '.join(f.text for f in details[label])}" for label in ranked if label in details]
    windows = r.drop_duplicates("transcript_id")
    if "window" in windows:
        counts = windows["window"].value_counts().sort_index()
        sizes = ", ".join(f"{int(str(w)):,} ({k})" for w, k in counts.items())
        rate = (f", growth x{windows['overhead_rate'].median():.3f} per counted token"
                if "overhead_rate" in windows else "")
        lines.append(f"windows: {sizes} transcripts; hidden overhead: median fixed part "
                     f"{int(windows['system_tokens'].median()):,} tokens{rate} (see results: window_source, "
                     "system_tokens_source)")
    wide = inferred_window_caveat(r)
    if wide:
        lines.append("! " + wide)
    priced = price_models(r)
    if priced:
        lines.append(f"priced at: {priced} (see results: price_model_source)")
    unpriced = unpriced_models(r)
    if unpriced:
        lines.append(f"! no price in litellm's table for {', '.join(unpriced)}: priced at the default (give "
                     "--price-model or --prices)")
    hits = cache_check(r)
    if hits:
        lines.append("prompt cache of none, simulated (the recording provider's cache, its recorded lifetime) vs "
                     "recorded on the same calls: " + "; ".join(
            f"{src} {sim:.1%} vs {rec:.1%} ({calls:,} calls)" for src, (calls, rec, sim) in hits.items()))
    off = cache_flags(r)
    if off:
        lines.append("! the prompt cache model is more than 5 points off the recording for " + "; ".join(off)
                     + ": their cost figures rest on a cache the recording contradicts")
    flagged_by = overhead_groups(r)
    if flagged_by:
        n = len({tid for _, items in flagged_by for tid, _ in items})
        lines.append(f"! hidden overhead flagged on {n} transcript{'s' * (n != 1)} (their savings rest on it; see "
                     "results: overhead_flag), by flag:")
        for what, items in flagged_by:
            shown = ", ".join(f"{tid} ({detail})" for tid, detail in items[:SHOWN_FLAGGED])
            more = f", and {len(items) - SHOWN_FLAGGED} more" if len(items) > SHOWN_FLAGGED else ""
            lines.append(f"!   {what}, {len(items)} transcript{'s' * (len(items) != 1)}: {shown}{more}")
    lines += _advice_lines(run, r)
    lines.append("")
    lines.append(f"summaries: {describe_summarizer(run.summarizer)}")
    lines.append("recall: received facts the agent used again, present when it did, scored from each strategy's "
                 "first action; range: summaries carry nothing .. also what an extractive copy carries")
    return "\n".join(lines)


def _advice_lines(run: Any, results: Any) -> list[str]:
    """Each tool's verdict in a line (compbench.decide.toolverdict): its advice, or the first condition that
    failed; ``compare`` gives the evidence."""
    from compbench.decide.breakdown import breakdown
    from compbench.decide.compare import fmt_diff
    from compbench.decide.metrics import metric
    from compbench.decide.toolverdict import verdicts

    groups = breakdown(results, "source", [metric(m) for m in ("effective_savings", "needed_recall", "cost",
                                                                 "reacquired_tokens")], 1_000)
    out = []
    for v in verdicts(groups, run.table("compactions"), run.table("steps")):
        if v.own_strategy is None or not v.candidates:
            continue
        a = v.advice
        if a is not None:
            d = a.change.diffs["effective_savings"] if a.change is not None else None
            gain = f"{fmt_diff(d, metric('effective_savings'))} effective savings against as it ran; " if d else ""
            out.append(f"advice for your {v.tool} logs: {' / '.join(a.lines)} ({gain}where it goes, the evidence and "
                       "how to check it: compbench compare)")
        else:
            first = next((c for c in v.candidates if c.failed), v.candidates[0])
            why = first.failed[0].text if first.failed else "another setting does better"
            out.append(f"no advice for your {v.tool} logs: {first.setting.name}: {why}")
    return ["", *out] if out else []


"""A plain-text table of a run's results per strategy: what `run` and `make demo` print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUMMARIZERS = {
    "calibrated": "calibrated: an offline heuristic that keeps facts at the rates real tools' summaries kept them",
    "extractive": "extractive: an offline heuristic that copies the span's paths, commands and errors (optimistic)",
    "mock": "mock: content-free summaries (they carry nothing)",
}


def describe_summarizer(spec: str) -> str:
    """What produced a run's summaries, in words every table and report prints beside recall."""
    kind = spec.partition(":")[0]
    if kind == "litellm":
        return f"{spec}: a real model"
    if kind == "cache-only":
        return f"{spec}: a real model's recorded answers"
    return SUMMARIZERS.get(kind, spec)


DEGENERATE_SHARE = 0.5  # compacting on at least half of the calls: the strategy cannot keep anything


def strategy_flags(results: Any) -> dict[str, list[str]]:
    """What makes a strategy's figures misleading, per strategy label, in words: it never acted, it
    overflowed before acting (a real API would have refused those calls), its compactions replaced nothing
    or failed, it compacts on most calls. The reference's own overflows are flagged under ``none``."""
    out: dict[str, list[str]] = {}
    for label, g in results.groupby("strategy", sort=False):
        flags: list[str] = []
        n = len(g)
        acted = int((g["first_action_step"] >= 0).sum()) if "first_action_step" in g else 0
        if str(g["name"].iloc[0]) != "none":
            if acted == 0:
                flags.append(f"never acted on any of {n} transcript{'s' if n > 1 else ''}")
            elif acted < n:
                flags.append(f"acted on {acted}/{n} transcripts")
        is_reference = str(g["name"].iloc[0]) == "none"
        before = int(g["overflows_before_action"].sum()) if "overflows_before_action" in g else 0
        if before and not is_reference:
            k = int((g["overflows_before_action"] > 0).sum())
            many = before > 1
            flags.append(f"{before:,} call{'s' if many else ''} over the window before it first acted (on {k} "
                         f"transcript{'s' if k > 1 else ''}): a real API refuses {'them' if many else 'it'}")
        noop = int(g["noop_compactions"].sum()) if "noop_compactions" in g else 0
        if noop:
            flags.append(f"{noop:,} compactions that would have replaced nothing (not applied, not charged)")
        failed = int(g["failed_compactions"].sum())
        if failed:
            flags.append(f"{failed:,} failed compactions")
        steps = int(g["steps"].sum())
        if steps and int(g["compactions"].sum()) >= DEGENERATE_SHARE * steps:
            flags.append(f"compacts on {int(g['compactions'].sum()) / steps:.0%} of its calls: degenerate "
                         "(reserves at or above the window?)")
        if "reference_overflows" in g and is_reference:
            refused, calls = int(g["reference_overflows"].sum()), int(g["reference_steps"].sum())
            if refused:
                flags.append(f"{refused:,} of its {calls:,} calls ({refused / calls:.0%}) exceed the window: "
                             "savings are measured against calls a real API would have refused")
        if flags:
            out[str(label)] = flags
    return out


def cache_check(results: Any) -> dict[str, tuple[int, float, float]]:
    """Per agent with recorded cache reads: calls, recorded and simulated hit rate of ``none``."""
    if "recorded_cache_read" not in results:
        return {}
    per = results.drop_duplicates("transcript_id").groupby("source")[
        ["cache_calls", "recorded_cache_read", "recorded_input", "simulated_cache_read", "simulated_input"]].sum()
    return {str(src): (int(row["cache_calls"]), row["recorded_cache_read"] / row["recorded_input"],
                       row["simulated_cache_read"] / row["simulated_input"])
            for src, row in per.iterrows() if row["recorded_cache_read"] > 0 and row["simulated_input"] > 0}


def _pct(num: float, den: float) -> str:
    return f"{num / den:.1%}" if den else "–"


def summary_table(run_dir: Path) -> str:
    """Per strategy: transcripts it acted on, compactions, prunes, overflows, savings, net savings,
    needed-fact recall with its range (summaries carry nothing .. they also carry what an extractive copy
    of their span carries), cost.

    Plain ratios of sums; ``compbench compare`` adds the confidence intervals."""
    import pandas as pd

    r = pd.read_parquet(run_dir / "results.parquet")
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
    lines = [f"{'strategy':<34}{'acted':>8}{'compactions':>12}{'prunes':>8}{'overflows':>10}{'input tok':>13}"
             f"{'savings':>9}{'net':>8}{'recall':>8}{'  range':<16}{'peak':>9}{'cost $':>10}"]
    for name, row in g.iterrows():
        ref = float(row["reference"])
        net = _pct(ref - row["input"] - row["summarizer"] - row["summarizer_out"], ref)
        span = f"  {_pct(row['verbatim'], row['needs'])}–{_pct(row['upper'], row['needs'])}" if row["needs"] else "  –"
        lines.append(f"{str(name)[:33]:<34}{int(row['acted']):>4}/{int(row['transcripts']):<3}"
                     f"{int(row['compactions']):>12}{int(row['prunes']):>8}"
                     f"{int(row['overflows']):>10}{int(row['input']):>13,}{_pct(ref - row['input'], ref):>9}"
                     f"{net:>8}{_pct(row['present'], row['needs']):>8}{span:<16}"
                     f"{int(row['peak']):>9,}{row['cost']:>10.2f}")
    flags = strategy_flags(r)
    if flags:
        lines.append("")
        lines += [f"! {label}: {'; '.join(fs)}" for label, fs in flags.items()]
    windows = r.drop_duplicates("transcript_id")
    if "window" in windows:
        counts = windows["window"].value_counts().sort_index()
        sizes = ", ".join(f"{int(str(w)):,} ({k})" for w, k in counts.items())
        lines.append(f"windows: {sizes} transcripts; overhead: median {int(windows['system_tokens'].median()):,} "
                     "tokens (see results: window_source, system_tokens_source)")
    hits = cache_check(r)
    if hits:
        lines.append("prompt cache of none, simulated vs recorded (the same calls): " + "; ".join(
            f"{src} {sim:.1%} vs {rec:.1%} ({calls:,} calls)" for src, (calls, rec, sim) in hits.items()))
    manifest = run_dir / "manifest.json"
    if manifest.exists():
        spec = json.loads(manifest.read_text(encoding="utf-8")).get("spec", {})
        lines.append("")
        lines.append(f"summaries: {describe_summarizer(str(spec.get('summarizer', '?')))}")
        lines.append("recall: received facts the agent used again, present when it did, scored from each strategy's "
                     "first action; range: summaries carry nothing .. also what an extractive copy carries")
    return "\n".join(lines)


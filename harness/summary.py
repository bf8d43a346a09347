"""A plain-text table of a run's results per strategy: what `run` and `make demo` print."""

from __future__ import annotations

from pathlib import Path


def summary_table(run_dir: Path) -> str:
    """Per strategy: compactions, prunes, overflows, savings, net savings, needed-fact recall, cost.

    Plain ratios of sums; ``compbench compare`` adds the confidence intervals."""
    import pandas as pd

    r = pd.read_parquet(run_dir / "results.parquet")
    if r.empty:
        return "(no results)"
    g = r.groupby("strategy", sort=False).agg(
        transcripts=("transcript_id", "count"), compactions=("compactions", "sum"),
        failed=("failed_compactions", "sum"), prunes=("prunes", "sum"), overflows=("overflows", "sum"),
        input=("input_tokens", "sum"), summarizer=("summarizer_input_tokens", "sum"),
        summarizer_out=("summarizer_output_tokens", "sum"), peak=("peak_context", "max"),
        cost=("cost_usd", "sum"), needs=("needs", "sum"), present=("needs_present", "sum"))
    ref = float(g["input"].get("none", float("nan")))
    lines = [f"{'strategy':<34}{'compactions':>12}{'prunes':>8}{'overflows':>10}{'input tok':>13}"
             f"{'savings':>9}{'net':>8}{'recall':>8}{'peak':>9}{'cost $':>10}"]
    for name, row in g.iterrows():
        net = 1 - (row["input"] + row["summarizer"] + row["summarizer_out"]) / ref
        lines.append(f"{str(name)[:33]:<34}{int(row['compactions']):>12}{int(row['prunes']):>8}"
                     f"{int(row['overflows']):>10}{int(row['input']):>13,}{1 - row['input'] / ref:>9.1%}"
                     f"{net:>8.1%}{row['present'] / row['needs'] if row['needs'] else float('nan'):>8.1%}"
                     f"{int(row['peak']):>9,}{row['cost']:>10.2f}")
    return "\n".join(lines)

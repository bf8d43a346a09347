"""``compbench.decide.sessions`` — A session with its sub-agents as one unit: what a user pays per session.

A sub-agent runs in its own context (its own transcript, its own compactions), but its tokens are the session's:
a user's cost per session, and a tool's in its verdict, is the session's conversation and every sub-agent it
spawned (:mod:`compbench.data.tree`; a run's ``session`` column names each transcript's session, ``agent_type``
what it is there). :func:`rollup` sums each configuration's tokens and cost per session (a sub-agent's sub-agent
rolls up to the session at the root) with the sub-agents' share; :func:`line` says it in one sentence for a
verdict; :func:`table` is ``compare --by session``.

Tokens are what a configuration sent and received: its calls' input and output and its summarizer's requests and
answers. Savings are ratios of the session's sums against the ``none`` replay of the same transcripts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from compbench.sdk.kinds import RECORDED, REFERENCE

MAIN = "main"  # compbench.data.tree.MAIN (decide reads the results, not the transcripts)
NOT_SUBAGENTS = frozenset({MAIN, "fork"})  # agent types that are not a sub-agent's
SUMS = ("input_tokens", "output_tokens", "summarizer_input_tokens", "summarizer_output_tokens", "cost_usd",
        "reference_input_tokens", "reference_cost_usd")
SHOWN_SESSIONS = 20  # compare --by session without --wide: the costliest sessions
SHOWN_OTHERS = 3  # and the first configurations of the ranking beside the base


def base_strategy(results: Any) -> str:
    """What a session's figures are read under: as it ran where the run replays it, else ``none`` (never
    compacting), else the run's first configuration."""
    labels = [str(s) for s in dict.fromkeys(results["strategy"])]
    return next((s for s in (RECORDED, REFERENCE) if s in labels), labels[0] if labels else "")


def roots(results: Any) -> dict[str, str]:
    """Per transcript, the session at the root of its tree: a sub-agent's parent's session, followed up while
    that parent is itself a transcript of the run with a session of its own (OpenCode's and Codex's sub-agents
    can spawn sub-agents)."""
    first = results.drop_duplicates("transcript_id")
    parent = {str(t): str(s) for t, s in zip(first["transcript_id"], first["session"].fillna(""), strict=True)}
    out = {}
    for tid, up in parent.items():
        seen = {tid}
        while up in parent and parent[up] != up and up not in seen and parent[up]:
            seen.add(up)
            up = parent[up]
        out[tid] = up or tid
    return out


def is_subagent(results: Any) -> Any:
    """Per row, whether it is a sub-agent's (its agent type; a run without the column: a transcript whose
    session is another's)."""
    if "agent_type" in results.columns:
        kind = results["agent_type"].fillna("").astype(str)
        return ~kind.isin(NOT_SUBAGENTS) & (kind != "")
    return results["transcript_id"].astype(str) != results["session"].fillna("").astype(str)


def rollup(results: Any) -> Any:
    """One row per configuration and session (``strategy``, ``session``): the tool that recorded it, how many
    transcripts and sub-agents, each figure of :data:`SUMS` summed, ``tokens`` (calls and summaries), the
    sub-agents' ``subagent_tokens`` and ``subagent_cost_usd`` with their shares, and the session's ``net_savings``
    and ``cost_savings`` against ``none``. Sessions in order of first appearance, configurations in run order."""
    import pandas as pd

    if results.empty:
        return pd.DataFrame()
    df = results.copy()
    df["session"] = df["transcript_id"].astype(str).map(roots(results))
    for c in SUMS:
        df[c] = pd.to_numeric(df[c], errors="coerce").fillna(0.0) if c in df.columns else 0.0
    df["tokens"] = df["input_tokens"] + df["output_tokens"] + df["summarizer_input_tokens"] \
        + df["summarizer_output_tokens"]
    sub = is_subagent(df)
    df["subagents"] = sub.astype(int)
    df["subagent_tokens"] = df["tokens"].where(sub, 0.0)
    df["subagent_cost_usd"] = df["cost_usd"].where(sub, 0.0)
    df["transcripts"] = 1
    keys = ["strategy", "session"]
    summed = df.groupby(keys, sort=False)[[*SUMS, "tokens", "subagent_tokens", "subagent_cost_usd", "subagents",
                                           "transcripts"]].sum().reset_index()
    source = df.groupby(keys, sort=False)["source"].first().reset_index() if "source" in df.columns else None
    if source is not None:
        summed = summed.merge(source, on=keys, how="left")
    summed["subagent_token_share"] = _ratio(summed["subagent_tokens"], summed["tokens"])
    summed["subagent_cost_share"] = _ratio(summed["subagent_cost_usd"], summed["cost_usd"])
    spent = summed["input_tokens"] + summed["summarizer_input_tokens"] + summed["summarizer_output_tokens"]
    summed["net_savings"] = 1 - _ratio(spent, summed["reference_input_tokens"])
    summed["cost_savings"] = 1 - _ratio(summed["cost_usd"], summed["reference_cost_usd"])
    for c in ("transcripts", "subagents"):
        summed[c] = summed[c].astype(int)
    return summed


def _ratio(num: Any, den: Any) -> Any:
    return (num / den.where(den != 0)).astype(float)


def line(results: Any, strategy: str | None = None) -> str:
    """The sub-agents' share of ``results`` (one tool's, or a run's) in one sentence, read under ``strategy``
    (:func:`base_strategy` by default); "" where no transcript is a sub-agent's. For a verdict: a tool's cost is
    its sessions' with their sub-agents."""
    if results.empty or not bool(is_subagent(results).any()):
        return ""
    label = strategy or base_strategy(results)
    rows = rollup(results[results["strategy"] == label])
    if rows.empty:
        return ""
    n_sub, n_all, sessions = int(rows["subagents"].sum()), int(rows["transcripts"].sum()), len(rows)
    with_sub = int((rows["subagents"] > 0).sum())
    tokens = _share(rows["subagent_tokens"].sum(), rows["tokens"].sum())
    cost = _share(rows["subagent_cost_usd"].sum(), rows["cost_usd"].sum())
    import numpy as np

    per = rows["cost_usd"].to_numpy(dtype=float)
    read = "as it ran" if label == RECORDED else f"under {label}"
    p90 = float(np.quantile(per, 0.9, method="inverted_cdf"))
    return (f"Sub-agents: {n_sub:,} of {n_all:,} transcripts, in {with_sub:,} of {sessions:,} "
            f"session{'s' * (sessions != 1)}; {read} they spent {tokens} of the tokens and {cost} of the cost. A "
            f"session with its sub-agents costs {_usd(float(np.median(per)))} (median; {_usd(p90)} at the 90th "
            f"percentile, {_usd(float(per.max()))} at most).")


def _share(num: float, den: float) -> str:
    return "–" if not den else f"{num / den:.1%}"


def _usd(v: float) -> str:
    return "–" if math.isnan(v) else f"${v:,.2f}" if v >= 0.01 or v == 0 else f"${v:.4f}"


def table(results: Any, order: Sequence[str], wide: bool = False) -> tuple[list[str], list[list[str]], str]:
    """``compare --by session``: per session (the costliest first; :data:`SHOWN_SESSIONS` without ``wide``) its
    tool, transcripts and sub-agents, the base configuration's tokens, sub-agents' shares and cost
    (:func:`base_strategy`), then the cost of the first configurations of ``order`` beside it (every one with
    ``wide``) with their change against the base. Headers, rows, and the base's label."""
    from compbench.data.formats.catalog import tool_name

    base = base_strategy(results)
    rows = rollup(results)
    others = [s for s in order if s != base]
    others = others if wide else others[:SHOWN_OTHERS]
    at = rows[rows["strategy"] == base].sort_values(["cost_usd", "session"], ascending=[False, True])
    if not wide:
        at = at.head(SHOWN_SESSIONS)
    cost = {(str(s), str(k)): float(c) for s, k, c in zip(rows["strategy"], rows["session"], rows["cost_usd"],
                                                          strict=True)}
    read = "as it ran" if base == RECORDED else base
    headers = ["session", "tool", "transcripts", "sub-agents", f"tokens {read}", "sub-agents' tokens",
               "sub-agents' cost", f"cost {read}", *(f"cost {s}" for s in others)]
    out = []
    for r in at.itertuples(index=False):
        session = str(r.session)
        cells = [session, tool_name(str(getattr(r, "source", "") or "")), f"{int(r.transcripts):,}",
                 f"{int(r.subagents):,}", f"{int(r.tokens):,}", _pct(float(r.subagent_token_share)),
                 _pct(float(r.subagent_cost_share)), _usd(float(r.cost_usd))]
        for s in others:
            c = cost.get((s, session))
            change = "" if c is None or not r.cost_usd else f" ({(c - float(r.cost_usd)) / float(r.cost_usd):+.1%})"
            cells.append("–" if c is None else _usd(c) + change)
        out.append(cells)
    return headers, out, base


def _pct(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.1%}"


def to_json(results: Any) -> dict[str, Any]:
    """``compare --by session --format json``: the base configuration, the line, and per session its figures
    under every configuration."""
    rows = rollup(results)
    sessions: dict[str, dict[str, Any]] = {}
    for r in rows.itertuples(index=False):
        entry = sessions.setdefault(str(r.session), {"source": str(getattr(r, "source", "") or ""),
                                                     "transcripts": int(r.transcripts), "subagents": int(r.subagents),
                                                     "strategies": {}})
        entry["strategies"][str(r.strategy)] = {
            "tokens": int(r.tokens), "cost_usd": _num(float(r.cost_usd)),
            "subagent_tokens": int(r.subagent_tokens), "subagent_cost_usd": _num(float(r.subagent_cost_usd)),
            "subagent_token_share": _num(float(r.subagent_token_share)),
            "subagent_cost_share": _num(float(r.subagent_cost_share)),
            "net_savings": _num(float(r.net_savings)), "cost_savings": _num(float(r.cost_savings))}
    return {"by": "session", "base": base_strategy(results), "line": line(results), "sessions": sessions}


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6) + 0.0

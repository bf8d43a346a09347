"""``compbench.decide.breakdown`` — A run's figures per agent, model or project (``compare --by``, the report's
verdict per agent).

A user's logs mix agents, models and projects, and a pooled verdict can be decided by one of them. Each group
is ranked by the same rule as the whole run (:func:`compbench.decide.objective.ranked`, the headline
objective of :mod:`compbench.decide.headline`), bootstrapped on its own transcripts, and set beside the
strategy of the tool that recorded those logs: "for your Claude Code logs, Claude Code's own compaction
against the best alternative".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.catalog import tool_name
from compbench.decide.bootstrap import Batch
from compbench.decide.compare import fmt_diff
from compbench.decide.headline import HEADLINE, PRIMARY, RECALL
from compbench.decide.metrics import metric
from compbench.decide.objective import meets, parse_objective, ranked
from compbench.decide.ranking import Standing
from compbench.errors import UsageError
from compbench.sdk.kinds import RECORDED
from compbench.sdk.registry import own_strategy

BY = ("source", "model", "project", "agent-type", "session")
# --by session is a roll-up, not a ranking per group: each session with its sub-agents (compbench.decide.sessions)
RANKED_BY = ("source", "model", "project", "agent-type")
COLUMN = {"agent-type": "agent_type"}  # a --by value -> its results column (the same name otherwise)


def group_name(by: str, key: str) -> str:
    """A group in words: ``Claude Code logs``, ``model claude-opus-4-5``, ``project /home/me/app``, ``Explore
    sub-agents``, ``main conversations``."""
    if by == "source":
        return f"{tool_name(key)} logs"
    if by == "agent-type":
        return {"main": "main conversations (no sub-agent's)", "sub-agent": "sub-agents whose log names no type",
                "fork": "forked sessions"}.get(key, f"{key} sub-agents")
    return f"{by} {key or '(not recorded)'}"


@dataclass
class Group:
    """One group's transcripts ranked by the rule, with its pick and the recording tool's own strategy."""

    by: str
    key: str
    transcripts: int
    batch: Batch
    standing: dict[str, Standing]
    order: list[str]
    pick: str | None
    own: list[str] = field(default_factory=list)  # the recording tool's own configurations, in ranked order
    rows: Any = None  # the group's results

    @property
    def name(self) -> str:
        return group_name(self.by, self.key)

    @property
    def alternative(self) -> str | None:
        """The best strategy that is not the tool's own (the pick, unless the pick is the tool's own)."""
        obj = parse_objective(PRIMARY)
        agg = self.batch.estimates
        return next((s for s in self.order if s not in self.own and meets(agg[s], obj)), None)


def labels_of(results: Any, by: str) -> Any:
    """Per row, its group under ``by`` (a column of the results)."""
    if by not in BY:
        raise UsageError(f"--by {by}: expected one of {', '.join(BY)}")
    col = COLUMN.get(by, by)
    if col not in results.columns:
        raise UsageError(f"this run's results have no {col!r} column (written by an older compbench); rerun it")
    return results[col].fillna("").astype(str)


def breakdown(results: Any, by: str, metrics: Sequence[Any], resamples: int = 10_000,
              cluster: str = "session", objective: str = PRIMARY) -> list[Group]:
    """Every group under ``by``, the largest first, each ranked by the rule on its own transcripts."""
    from compbench.decide.bootstrap import batch
    from compbench.decide.flags import flag_details
    from compbench.decide.ranking import standings

    keys = labels_of(results, by)
    obj = parse_objective(objective)
    sizes = results.assign(_g=keys).drop_duplicates("transcript_id")["_g"].value_counts()
    out = []
    for key in sorted(sizes.index, key=lambda k: (-int(sizes[k]), str(k))):
        sub = results[keys == key]
        b = batch(sub, metrics, resamples, by=cluster)
        standing = standings(sub, flag_details(sub))
        order = ranked(b.estimates, standing, obj)
        pick = next((s for s in order if meets(b.estimates[s], obj)), None)
        own_name = own_strategy(str(key)) if by == "source" else None
        own = [s for s in order if str(s).split(":")[0] == own_name] if own_name else []
        out.append(Group(by, str(key), int(sizes[key]), b, standing, order, pick, own, sub))
    return out


def figures(g: Group, label: str) -> str:
    """``net savings 90.8%; needed-fact recall 90.0%; 7 calls over the window`` on the group's transcripts."""
    e = g.batch.estimates[label]
    parts = []
    for name in (HEADLINE, RECALL):
        m, v = metric(name), e[name]
        parts.append(f"{m.title} {'–' if math.isnan(v.value) else f'{v.value:.1%}'}"
                     + (f" (n={v.units}, few)" if v.few and v.units else ""))
    st = g.standing[label]
    if st.refused and label == RECORDED:
        # The log shows these calls answered: what is off is this replay's window or token estimate, not the tool.
        parts.append(f"{st.refused:,} call{'s' * (st.refused != 1)} over the window as counted here, though the log "
                     "shows them answered (the window or the token estimate is off for these logs)")
    elif st.refused:
        parts.append(f"{st.refused:,} call{'s' * (st.refused != 1)} over the window")
    if label == RECORDED and "noop_compactions" in g.rows:
        lost = int(g.rows.loc[g.rows["strategy"] == label, "noop_compactions"].sum())
        if lost:  # compbench.strategies.recorded: the tool deleted from its log what these replaced
            parts.append(f"the log lacks what {lost:,} of its compactions replaced (the figures before them miss "
                         "that history)")
    elif not st.sound:
        parts.append(st.tier_name)
    return "; ".join(parts)


def _margin(g: Group, a: str, b: str) -> str:
    """``a − b``: the headline's and recall's paired differences on this group's transcripts."""
    from compbench.decide.compare import paired

    out = []
    for name in (HEADLINE, RECALL):
        m = metric(name)
        d = g.batch.diff(a, b, name)
        if d is None:
            rows = g.rows
            d = paired(rows[rows["strategy"] == a], rows[rows["strategy"] == b], m, 2_000)
        if not math.isnan(d.value):
            out.append(f"{fmt_diff(d, m)} {m.title}" + ("" if d.significant else " (not significant)"))
    return "; ".join(out)


def summary(g: Group, objective: str = PRIMARY) -> dict[str, Any]:
    """The group's verdict as fields (the report's table): its pick by the same rule as the run's, with the
    verdict's notes (on the edge of a bar, no sound strategy meets it), the recording tool's own strategy,
    and the paired difference between the two (or between the tool's own and the best alternative, when the
    tool's own is the pick)."""
    from compbench.decide.verdict import choose

    c = choose(g.batch, g.standing, objective)
    own = g.own[0] if g.own else None
    out: dict[str, Any] = {
        "name": g.name, "transcripts": g.transcripts, "objective": c.objective, "best": c.best,
        "best_figures": figures(g, c.best) if c.best else "", "notes": [x for x in (c.edge, c.note) if x],
        "own": own, "own_figures": figures(g, own) if own else "", "own_is_best": own is not None and own == c.best,
        "versus": None, "margin": "", "other_own": g.own[1:],
        "own_known": g.by == "source" and own_strategy(g.key) is not None}  # a strategy reproduces the tool
    if own is not None and own == c.best:
        alt = g.alternative
        if alt:
            out.update(versus=alt, versus_figures=figures(g, alt), margin=_margin(g, own, alt))
    elif own is not None and c.best is not None:
        out.update(versus=own, margin=_margin(g, c.best, own))
    return out


def sentence(g: Group, objective: str = PRIMARY) -> str:
    """The group's verdict in one sentence (:func:`summary` in words)."""
    f = summary(g, objective)
    head = f"For your {g.name} ({g.transcripts:,} transcript{'s' * (g.transcripts != 1)})"
    if f["best"] is None:
        text = f"{head}: no strategy meets {f['objective']}"
    else:
        text = f"{head}: best for {f['objective']} is {f['best']} ({f['best_figures']})" + "".join(
            f"; {x}" for x in f["notes"])
    if f["own"] is not None:
        if f["own_is_best"]:
            text += ", the tool's own strategy"
            if f["versus"]:
                text += f"; the best alternative is {f['versus']} ({f['versus_figures']})" + (
                    f": own − it {f['margin']}" if f["margin"] else "")
        else:
            text += f". The tool's own strategy: {f['own']} ({f['own_figures']})"
            text += f"; best − own {f['margin']}" if f["margin"] else ""
        if f["other_own"]:
            text += f" (other configurations of it: {', '.join(f['other_own'])})"
    return text + "."


def _checked(compactions: Any) -> Any:
    """The recorded row's compactions with a recorded next prompt to check against; an inferred one (no marker)
    is sized to that prompt, so it checks nothing and is left out."""
    c = compactions[(compactions["strategy"] == RECORDED) & (compactions["recorded_next_input"] > 0)]
    return c[c["reason"] != "recorded inferred"]


def recorded_lacks(compactions: Any) -> tuple[tuple[str, int], ...]:
    """What the logs lack of the context their tools sent after the compactions the self-check counts, named
    per compaction by the ``recorded`` row (``recorded_lacks``), most frequent first, with how many; and how
    many inferred compactions it leaves out (``("inferred", n)`` last)."""
    from collections import Counter

    c = _checked(compactions)
    out = tuple(Counter(x for x in c["recorded_lacks"] if x).most_common())
    inferred = int(((compactions["strategy"] == RECORDED) & (compactions["reason"] == "recorded inferred")
                    & (compactions["recorded_next_input"] > 0)).sum())
    return out + ((("inferred", inferred),) if inferred else ())


def recorded_check(compactions: Any, steps: Any) -> tuple[int, float, float] | None:
    """The ``recorded`` row's self-check: after each compaction it replays, the prompt of its next call against
    the prompt the log recorded there (``recorded_next_input``): how many, and the median and 90th percentile of
    the relative error; None when the run replayed no recorded compaction with a recorded next prompt."""
    import numpy as np

    c = _checked(compactions)
    if c.empty:
        return None
    s = steps[steps["strategy"] == RECORDED]
    by_step = {(t, int(k)): int(x) for t, k, x in zip(s["transcript_id"], s["step"], s["input"], strict=True)}
    errors = []
    for t, step, phase, want in zip(c["transcript_id"], c["step"], c["phase"], c["recorded_next_input"], strict=True):
        got = by_step.get((t, int(step) + (phase == "after")))
        if got is not None:
            errors.append(abs(got - int(want)) / int(want))
    if not errors:
        return None
    return len(errors), float(np.median(errors)), float(np.quantile(errors, 0.9, method="inverted_cdf"))


def recorded_check_line(check: tuple[int, float, float] | None, lacks: Sequence[tuple[str, int]] = ()) -> str:
    """The self-check in words, and what the logs lack there (:func:`recorded_lacks`): the error that stays."""
    if check is None:
        return ""
    n, median, p90 = check
    out = (f"Self-check of as it ran: after each of the {n:,} recorded compaction{'s' * (n != 1)} it replays, its "
           f"next prompt is within {median:.1%} of the one the log recorded (median; 90th percentile {p90:.1%}).")
    named = [f"{text} ({k:,})" for text, k in lacks if text != "inferred"]
    if named:
        out += " What the logs lack there: " + "; ".join(named) + "."
    inferred = sum(k for text, k in lacks if text == "inferred")
    if inferred:
        out += (f" {inferred:,} inferred compaction{'s' * (inferred != 1)} (no marker in the log) "
                f"{'are' if inferred != 1 else 'is'} sized to the recorded prompt and not counted.")
    return out + (" No log holds the tool's system prompt and tool schemas: each log's are fitted on its own "
                  "recorded calls.")

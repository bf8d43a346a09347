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
from compbench.sdk.registry import own_strategy, resolve

BY = ("source", "model", "project")
RECORDED = "recorded"  # the row of each log's own compactions: the tool as it ran (compbench.strategies.recorded)
# the figures a tool's verdict sets beside "as it ran": the headline, what it costs, what the agent re-reads
CHANGES = (HEADLINE, "cost", "reacquired_tokens")


def group_name(by: str, key: str) -> str:
    """A group in words: ``Claude Code logs``, ``model claude-opus-4-5``, ``project /home/me/app``."""
    if by == "source":
        return f"{tool_name(key)} logs"
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
    if by not in results.columns:
        raise UsageError(f"this run's results have no {by!r} column (written by an older compbench); rerun it")
    return results[by].fillna("").astype(str)


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


def _brief(g: Group, label: str) -> str:
    return f"{label} ({figures(g, label)})"


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


SHORT = {HEADLINE: "effective savings", "cost": "cost per transcript",
         "reacquired_tokens": "re-read tokens per transcript"}


@dataclass(frozen=True)
class Change:
    """One configuration against the tool as it ran, on the group's transcripts: the paired difference of each
    figure of :data:`CHANGES` (with its interval); a figure no transcript carries is left out."""

    label: str
    figures: str
    diffs: dict[str, Any]

    def text(self) -> str:
        out = []
        for name, d in self.diffs.items():
            if d is None or math.isnan(d.value) or not d.n or d.value == d.lo == d.hi == 0:
                continue  # no transcript carries it, or nothing changed
            m = metric(name)
            shown = fmt_diff(d, m) if m.percent else _signed_amount(d, name)
            out.append(f"{shown} {SHORT.get(name, m.title)}" + ("" if d.significant else " ~"))
        return ", ".join(out)


def _signed_amount(d: Any, name: str) -> str:
    """A paired difference of an amount (dollars, tokens) with its interval: ``-$0.12 [-0.20, -0.03]``."""
    dollars = name == "cost"

    def one(v: float) -> str:
        return f"{'-' if v < 0 else '+'}{'$' if dollars else ''}{abs(v):,.{2 if dollars else 0}f}"

    return f"{one(d.value)} [{one(d.lo)}, {one(d.hi)}]"


def setting_lines(label: str) -> list[str]:
    """What a user of the tool writes to get configuration ``label``: the lines for each parameter it changes, as
    the tool's declaration says it (compbench.sdk.tools.Setting); a parameter users cannot set is named as such."""
    c = resolve(label)
    tool = c.info.tool
    out: list[str] = []
    for key, raw in c.overrides.items():
        setting = tool.setting(key) if tool is not None else None
        value = getattr(c.params, key, raw)
        line = setting.paste(value) if setting is not None else f"{key}={raw} (not a setting of the tool)"
        out += line.splitlines()
    return out


def _change(g: Group, label: str, base: str | None) -> Change:
    from compbench.decide.compare import paired

    rows = g.rows
    diffs: dict[str, Any] = {}
    if base is None:
        return Change(label, figures(g, label), diffs)
    for name in CHANGES:
        if name not in g.batch.estimates.get(label, {}):
            continue
        d = g.batch.diff(label, base, name)
        if d is None:
            try:
                d = paired(rows[rows["strategy"] == label], rows[rows["strategy"] == base], metric(name), 2_000)
            except UsageError:  # no transcript in common
                d = None
        diffs[name] = d
    return Change(label, figures(g, label), diffs)


def tool_verdict(g: Group, objective: str = PRIMARY) -> dict[str, Any]:
    """A tool's logs' verdict (``--by source``): the tool *as it ran* (the row of its own recorded compactions),
    *the same tool at its best settings* (the best configuration of its own strategy by the run's rule, the
    exact lines to set, and its paired change from as it ran), and *the best other strategy* (for those who
    build agents), with its paired change from as it ran."""
    from compbench.decide.objective import bar_unmeasurable, bars, unmeasured

    obj = parse_objective(objective)
    agg = g.batch.estimates
    as_ran = RECORDED if RECORDED in agg else None
    own_ranked = [s for s in g.order if s in g.own]
    # the bar decides where it can be measured; on logs where no row can measure it (no fact received is used
    # again in them), the best by the metric
    anywhere = not bar_unmeasurable(agg, [s for s in g.order if s != "none"], obj)
    open_bar = [] if anywhere else [s for s in own_ranked if unmeasured(agg[s], obj) and g.standing[s].acted]
    best_own = next((s for s in own_ranked if meets(agg[s], obj)),
                    open_bar[0] if open_bar else own_ranked[0] if own_ranked else None)
    others = [s for s in g.order if s not in g.own and s not in (RECORDED, "none")]
    other = next((s for s in others if meets(agg[s], obj)),
                 None if anywhere else next((s for s in others if unmeasured(agg[s], obj) and g.standing[s].acted),
                                            None))
    return {"name": g.name, "tool": tool_name(g.key), "transcripts": g.transcripts, "bar": bars(obj),
            "as_ran": as_ran, "as_ran_figures": figures(g, as_ran) if as_ran else "",
            "own_strategy": own_strategy(g.key), "best_settings": best_own,
            "best_settings_meets": best_own is not None and meets(agg[best_own], obj),
            "best_settings_unmeasured": best_own is not None and not anywhere and unmeasured(agg[best_own], obj),
            "best_other_unmeasured": other is not None and not anywhere and unmeasured(agg[other], obj),
            # never acted on these logs, at any setting tried: no recall to hold to the bar
            "best_settings_idle": best_own is not None and not g.standing[best_own].acted,
            "settings_lines": setting_lines(best_own) if best_own else [],
            "best_settings_change": _change(g, best_own, as_ran) if best_own else None,
            "best_other": other, "best_other_change": _change(g, other, as_ran) if other else None}


def tool_lines(g: Group, objective: str = PRIMARY) -> list[str]:
    """:func:`tool_verdict` as a user of the tool reads it first: as it ran, at its best settings with the lines
    to set, the best other strategy; each change from as it ran paired, with its 95% interval (~: not
    significant)."""
    v = tool_verdict(g, objective)
    out = [f"{v['name']} ({g.transcripts:,} transcript{'s' * (g.transcripts != 1)})"]
    out.append(f"  as it ran ({RECORDED}: the tool's own recorded compactions): {v['as_ran_figures']}"
               if v["as_ran"] else f"  as it ran: not in this run (add --strategy {RECORDED})")
    if v["own_strategy"] is None:
        out.append(f"  no strategy reproduces {v['tool']}: no setting of its own to suggest")
    elif v["best_settings"] is None:
        out.append(f"  {v['tool']}'s own strategy ({v['own_strategy']}) is not in this run")
    else:
        c = v["best_settings_change"]
        lines = v["settings_lines"]
        idle = v["best_settings_idle"]
        where = ("never compacts on these logs, at any setting tried (its threshold is not reached)" if idle
                 else "at its best settings tried" if lines
                 else "at the settings it runs with (no setting tried does better)")
        bar = ("" if v["best_settings_meets"] or idle else
               f", {v['bar']} not measurable on these logs (no fact received was used again)"
               if v["best_settings_unmeasured"] else f", misses {v['bar']}")
        out.append(f"  {v['tool']} {where}{bar}: {c.figures}")
        if c.text():
            out.append(f"    against as it ran: {c.text()}")
        out += [f"    set: {x}" if k == 0 else f"         {x}" for k, x in enumerate(lines)]
    if v["best_other"] is not None:
        c = v["best_other_change"]
        open_bar = (f" ({v['bar']} not measurable on these logs: the best by {metric(HEADLINE).title})"
                    if v["best_other_unmeasured"] else "")
        out.append(f"  best other strategy (for those who build agents){open_bar}: {v['best_other']}: {c.figures}")
        if c.text():
            out.append(f"    against as it ran: {c.text()}")
    return out


def tool_sentence(g: Group, objective: str = PRIMARY) -> str:
    """:func:`tool_lines` in one paragraph (JSON, a report cell)."""
    return " ".join(x.strip() for x in tool_lines(g, objective))


def _checked(compactions: Any) -> Any:
    """The recorded row's compactions with a recorded next prompt to check against; an inferred one (no marker)
    is sized to that prompt, so it checks nothing and is left out."""
    if "recorded_next_input" not in compactions.columns:
        return compactions.iloc[0:0]
    c = compactions[(compactions["strategy"] == RECORDED) & (compactions["recorded_next_input"] > 0)]
    return c[c["reason"] != "recorded inferred"] if "reason" in c.columns else c


def recorded_lacks(compactions: Any) -> tuple[tuple[str, int], ...]:
    """What the logs lack of the context their tools sent after the compactions the self-check counts, named
    per compaction by the ``recorded`` row (``recorded_lacks``), most frequent first, with how many; and how
    many inferred compactions it leaves out (``("inferred", n)`` last)."""
    from collections import Counter

    c = _checked(compactions)
    counts = Counter(x for x in c["recorded_lacks"] if x) if "recorded_lacks" in c.columns else Counter[str]()
    out = tuple(counts.most_common())
    if "recorded_next_input" in compactions.columns and "reason" in compactions.columns:
        inferred = int(((compactions["strategy"] == RECORDED) & (compactions["reason"] == "recorded inferred")
                        & (compactions["recorded_next_input"] > 0)).sum())
        out += (("inferred", inferred),) if inferred else ()
    return out


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

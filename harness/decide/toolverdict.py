"""``compbench.decide.toolverdict`` — Each tool's verdict on its own logs, computed once as a typed object: the tool
*as it ran*, its settings held to the evidence gate (:mod:`compbench.decide.advice`: the line to paste where the
evidence holds, the condition that failed where not), and *the best other strategy*.

``compare``, ``compare --by source``, the report and the run summary only render it (:func:`lines` for text,
the fields for HTML and JSON): the gate lives here and nowhere else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.catalog import tool_name
from compbench.decide.advice import (
    Candidate,
    Condition,
    better,
    caveats,
    check_line,
    comparable,
    expected,
    honoured,
    interior,
    manual_set_aside,
    per_transcript,
    reach,
    reproduction,
    tool_settings,
)
from compbench.decide.compare import fmt_diff
from compbench.decide.headline import HEADLINE, RECALL, RECALL_BAR, pooled
from compbench.decide.metrics import metric
from compbench.errors import UsageError
from compbench.sdk.kinds import RECORDED, REFERENCE, SWEEP, SWEPT
from compbench.sdk.registry import get, own_strategy, resolve
from compbench.sdk.tools import Setting

# the figures a tool's verdict sets beside "as it ran": the headline, what it costs, what the agent re-reads
CHANGES = (HEADLINE, "cost", "reacquired_tokens")
SHORT = {HEADLINE: "effective savings", "cost": "cost per transcript",
         "reacquired_tokens": "re-read tokens per transcript"}
HEURISTIC = ("needed-fact recall is a heuristic (it does not predict what agents re-read after real compactions: "
             "README, recall_evidence); the ranking is by effective savings, which carries the validated "
             "re-acquisition")


@dataclass(frozen=True)
class Change:
    """One configuration against the tool as it ran, on the same transcripts: the paired difference of each
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
            out.append(f"{shown} {SHORT.get(name, m.title)}" + ("" if d.significant else " (n.s.)"))
        return ", ".join(out)


def _signed_amount(d: Any, name: str) -> str:
    """A paired difference of an amount (dollars, tokens) with its interval: ``-$0.12 [-0.20, -0.03]``."""
    dollars = name == "cost"

    def one(v: float) -> str:
        return f"{'-' if v < 0 else '+'}{'$' if dollars else ''}{abs(v):,.{2 if dollars else 0}f}"

    return f"{one(d.value)} [{one(d.lo)}, {one(d.hi)}]"


def figures(rows: Any, label: str, standing: Any = None) -> str:
    """``effective savings 31.2%; needed-fact recall 90.0% (a heuristic)`` pooled over ``rows`` (one label's)."""
    mine = rows[rows["strategy"] == label]
    n = mine["transcript_id"].nunique()
    parts = []
    for name in (HEADLINE, RECALL):
        v = pooled(mine, metric(name))
        text = "–" if math.isnan(v) else f"{v:.1%}"
        parts.append(f"{metric(name).title} {text}" + (" (a heuristic)" if name == RECALL and not math.isnan(v)
                                                       else ""))
    parts.append(f"n={n}" + (", few" if n < 5 else ""))
    if standing is not None and label in standing:
        st = standing[label]
        if st.refused and label == RECORDED:
            parts.append(f"{st.refused:,} call{'s' * (st.refused != 1)} over the window as counted here, though the "
                         "log shows them answered (the window or the token estimate is off for these logs)")
        elif st.refused:
            parts.append(f"{st.refused:,} call{'s' * (st.refused != 1)} over the window")
        elif not st.sound:
            parts.append(st.tier_name)
    if label == RECORDED and "noop_compactions" in mine:
        lost = int(mine["noop_compactions"].sum())
        if lost:  # compbench.strategies.recorded: the tool deleted from its log what these replaced
            parts.append(f"the log lacks what {lost:,} of its compactions replaced (the figures before them miss "
                         "that history)")
    return "; ".join(parts)


def change(rows: Any, label: str, base: str | None, resamples: int = 2_000) -> Change | None:
    """``label`` − ``base`` on the transcripts of ``rows`` both replayed, paired."""
    from compbench.decide.compare import paired

    if base is None:
        return None
    diffs: dict[str, Any] = {}
    a, b = rows[rows["strategy"] == label], rows[rows["strategy"] == base]
    for name in CHANGES:
        try:
            diffs[name] = paired(a, b, metric(name), resamples)
        except (UsageError, KeyError):  # no transcript in common, or a run without the column
            diffs[name] = None
    return Change(label, figures(rows, label), diffs)


def setting_lines(label: str, version: str = "", source: str = "") -> list[str]:
    """What a user of the tool writes to get configuration ``label`` (in ``source`` logs' tool at ``version``):
    the lines for each
    parameter it changes, as the tool's declaration says it; a parameter users cannot set is named as such."""
    c = resolve(label)
    tool = c.info.tool
    out: list[str] = []
    for key, raw in c.overrides.items():
        setting = tool.setting(key) if tool is not None else None
        value = getattr(c.params, key, raw)
        if setting is None:
            out.append(f"{key}={raw} (not a setting of the tool)")
            continue
        out += setting.paste_for(value, version, source)[0].splitlines()
    return out


@dataclass(frozen=True)
class ToolVerdict:
    """One tool's logs: as it ran, its settings against the evidence gate, the best other strategy."""

    source: str
    tool: str
    transcripts: int
    own_strategy: str | None
    as_ran: str | None  # the recorded row's label, when the run has it
    as_ran_figures: str
    manual: int  # manual compactions set aside from the settings comparison
    manual_transcripts: int
    inferred: int  # compactions the recorded row replays that the log inferred (no marker)
    reproduction: Condition | None
    own_figures: str  # the tool's own strategy at the settings each log ran with
    candidates: tuple[Candidate, ...] = ()
    best_other: str | None = None
    best_other_change: Change | None = None
    self_check: tuple[int, float, float] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    sessions: str = ""  # the sub-agents' share of the sessions' tokens and cost (compbench.decide.sessions.line)

    @property
    def name(self) -> str:
        return f"{self.tool} logs"

    @property
    def advice(self) -> Candidate | None:
        """The advised candidate with the most effective savings (None: no setting passes the gate)."""
        ok = [c for c in self.candidates if c.advised and c.change is not None]
        return max(ok, key=lambda c: c.change.diffs[HEADLINE].value) if ok else None


def _version_of(rows: Any) -> str:
    """The newest version among the logs (the line a version reads is that of what they run now)."""
    from compbench.sdk.tools import version_tuple

    if "tool_version" not in rows.columns:
        return ""
    versions = [str(v) for v in per_transcript(rows)["tool_version"] if v]
    return max(versions, key=lambda v: version_tuple(v) or (), default="")


def _tried(setting: Setting, label: str, own: str, raw: Any) -> str:
    """A value tried, as the user writes it: ``unset`` for the tool's own default (0 or None)."""
    shown = "unset" if raw is None or (isinstance(raw, int | float) and not isinstance(raw, bool) and raw == 0
                                       and setting.unset_at is not None) else setting.shown(raw)
    return f"{shown} (default)" if label == own else shown


@dataclass(frozen=True)
class Tried:
    """A setting's configurations a run replayed on a tool's comparable transcripts: their labels (the tool's
    default first), each one's value where it sits among the others (``unset`` at ``Setting.unset_at``), its
    pooled effective savings, and the best sound one that keeps needed-fact recall at the default objectives' bar
    (None: none could be measured, or none keeps it). ``lossy``: sound values that would have saved more but keep
    fewer of the facts the agent used again — the ranking is by effective savings, but a line a user pastes must
    not trade away their agent's facts for it (recall is a heuristic; it is the only loss figure a settings sweep
    has per value, and silence beats a line that loses facts)."""

    labels: tuple[str, ...]
    values: dict[str, Any]
    scores: dict[str, float]
    best: str | None
    lossy: tuple[str, ...] = ()


def tried(rows: Any, own: str, setting: Setting, standing: Any) -> Tried:
    """What the run tried of ``setting`` on ``rows`` (one tool's logs; manual compactions set aside)."""
    from compbench.decide.advice import numeric

    swept = rows[SWEPT] == SWEEP
    sweep = rows[(rows["name"] == own) & swept]
    labels = [x for x in dict.fromkeys(sweep["strategy"]) if set(resolve(x).overrides) == {setting.param}]
    default_label = own if (rows["strategy"] == own).any() else None
    tried_labels = ([default_label] if default_label else []) + labels
    values: dict[str, Any] = {}
    for x in tried_labels:
        v = resolve(x).value(setting.param)
        unset = v is None or (numeric(v) == 0 and setting.unset_at is not None)
        values[x] = setting.unset_at if unset and setting.unset_at is not None else v
    mine = comparable(rows)
    scores = {x: pooled(mine[mine["strategy"] == x], metric(HEADLINE)) for x in tried_labels}
    recall = {x: pooled(mine[mine["strategy"] == x], metric(RECALL)) for x in tried_labels}
    sound = [x for x in tried_labels if standing.get(x) is None or standing[x].sound]
    ranked = sorted((x for x in sound if not math.isnan(scores[x])), key=lambda x: -scores[x])
    keeps = [x for x in ranked if math.isnan(recall[x]) or recall[x] >= RECALL_BAR]
    best = keeps[0] if keeps else None
    lossy = tuple(x for x in ranked if x not in keeps and (best is None or scores[x] > scores[best]))
    return Tried(tuple(tried_labels), values, scores, best, lossy)


def _candidate(rows: Any, own: str, setting: Setting, standing: Any, self_check: Any, have_recorded: bool,
               compactions: Any, source: str, resamples: int) -> Candidate:
    """``setting`` at its best value tried on the comparable transcripts, held to the gate."""
    t = tried(rows, own, setting, standing)
    tried_labels, values, best = list(t.labels), t.values, t.best
    mine = comparable(rows)
    shown_tried = tuple(_tried(setting, x, own, resolve(x).value(setting.param)) for x in values)
    version = _version_of(rows)
    acted = mine[mine["strategy"].isin(tried_labels)]
    never = "first_action_step" in acted and not (acted["first_action_step"] >= 0).any()
    lost = _lossy(t)
    if never or best is None or best == own:
        cond = Condition("better", False, _no_better(rows, mine, never, best) if not (best is None and t.lossy)
                         else f"every value tried that saves more {lost}")
        c = change(mine, own, RECORDED if have_recorded else None, resamples) if best else None
        return Candidate(setting, None, "", shown_tried, (), setting.where, "", (), c, "", (cond,))
    value = resolve(best).value(setting.param)
    line, where = setting.paste_for(value, version, source)
    c = change(mine, best, RECORDED if have_recorded else None, resamples)
    said, versions_off = honoured(setting, [str(v) for v in per_transcript(mine).get("tool_version", [])])
    conditions = (reproduction(rows, self_check), reach(rows, best), better(c, self_check, have_recorded),
                  interior(setting, values[best], list(values.values())), said)
    near = expected(compactions, best, list(per_transcript(mine)["transcript_id"]))
    return Candidate(setting, best, setting.shown(value), shown_tried, tuple(line.splitlines()), where,
                     check_line(best, near, tool_name(source)),
                     caveats(setting, mine) + versions_off + _lossy_note(setting, t, own, lost), c,
                     figures(mine, best, standing), conditions)


def _lossy(t: Tried) -> str:
    """What the values set aside for their recall lose, in words."""
    return (f"keeps needed-fact recall under {RECALL_BAR:.0%} (a heuristic): fewer of the facts your agent used "
            "again survive its compactions" if t.lossy else "")


def _lossy_note(setting: Setting, t: Tried, own: str, lost: str) -> tuple[str, ...]:
    """The line beside an advice naming the values that would save more but lose facts."""
    if not t.lossy:
        return ()
    return (f"{_shown_values(setting, t, own)} would save more, but {'each ' * (len(t.lossy) > 1)}{lost}",)


def _shown_values(setting: Setting, t: Tried, own: str) -> str:
    """The values set aside for their recall, as the user writes them."""
    return ", ".join(_tried(setting, x, own, t.values[x]) for x in t.lossy)


def _no_better(rows: Any, mine: Any, never: bool, best: str | None) -> str:
    """Why no value of a setting is advised when none beat the tool as it runs, in the log's own terms: a
    threshold is never said unreached on logs where the tool compacted by itself, nor where every transcript was
    set aside for a manual compaction."""
    def auto(r: Any) -> int:
        return int(per_transcript(r)["auto_compactions"].sum()) if "auto_compactions" in r else 0

    aside = per_transcript(rows)["transcript_id"].nunique() - per_transcript(mine)["transcript_id"].nunique()
    if mine.empty:
        return (f"every transcript of these logs holds a manual compaction ({aside:,} set aside): none is left to "
                "compare an automatic threshold on")
    if never and auto(mine):
        n = auto(mine)
        return (f"the strategy never compacts on these logs at any value tried, though your tool compacted by itself "
                f"{n:,} time{'s' * (n != 1)}: it does not reproduce the tool here")
    if never and auto(rows):
        kept = per_transcript(mine)["transcript_id"].nunique()
        return (f"its threshold is not reached at any value tried on the {kept:,} transcript{'s' * (kept != 1)} "
                f"compared; your tool compacted by itself only in the {aside:,} set aside for a manual compaction")
    if never:
        return "its threshold is not reached on these logs at any value tried (your tool never compacted by itself " \
               "in them either)"
    return "no value tried does better than the settings it runs with" if best else \
        "no value tried could be measured on these logs"


def build(g: Any, compactions: Any = None, self_check: tuple[int, float, float] | None = None,
          resamples: int = 2_000) -> ToolVerdict:
    """``g``'s verdict (a :class:`compbench.decide.breakdown.Group` of one source's logs)."""
    from compbench.decide.objective import meets, parse_objective

    rows = g.rows
    own = own_strategy(g.key)
    have_recorded = bool((rows["strategy"] == RECORDED).any())
    manual, manual_t = manual_set_aside(rows)
    inferred = int(rows.loc[rows["strategy"] == RECORDED, "recorded_inferred"].sum())  # on the recorded row only
    tool = get(own).tool if own is not None else None
    candidates: list[Candidate] = []
    reproduced = reproduction(rows, self_check) if own is not None else None
    own_figures = figures(rows, own, g.standing) if own is not None and (rows["strategy"] == own).any() else ""
    if tool is not None and own is not None and own_figures:
        for s in tool_settings(tool):
            candidates.append(_candidate(rows, own, s, g.standing, self_check, have_recorded, compactions, g.key,
                                         resamples))
    # the best other strategy, for those who build agents: by effective savings among sound strategies that acted
    # (recall beside it, a heuristic)
    obj = parse_objective(f"max {HEADLINE}")
    others = [s for s in g.order if s not in g.own and s not in (RECORDED, REFERENCE) and g.standing[s].sound
              and g.standing[s].acted]
    agg = g.batch.estimates
    scored = sorted(others, key=lambda s: -agg[s][HEADLINE].value if not math.isnan(agg[s][HEADLINE].value)
                    else math.inf)
    other = next((s for s in scored if meets(agg[s], obj)), None)
    from compbench.decide.sessions import line as sessions_line

    shared = sessions_line(rows)  # a tool's cost is its sessions', sub-agents included
    notes = _overhead_note(rows)
    return ToolVerdict(
        g.key, tool_name(g.key), g.transcripts, own, RECORDED if have_recorded else None,
        figures(rows, RECORDED, g.standing) if have_recorded else "", manual, manual_t, inferred, reproduced,
        own_figures, tuple(candidates), other,
        change(rows, other, RECORDED if have_recorded else None, resamples) if other else None, self_check, notes,
        shared)


OVERHEAD_OFF = 0.25  # a hidden-overhead fit whose median error on these logs' calls passes this is said


def _overhead_note(rows: Any) -> tuple[str, ...]:
    """What as it ran and every row rest on where it is weak: the hidden-overhead fit's error on these logs."""
    if "overhead_error" not in rows.columns:
        return ()
    t = per_transcript(rows)
    err = t["overhead_error"].dropna()
    if err.empty or float(err.median()) <= OVERHEAD_OFF:
        return ()
    p90 = float(err.quantile(0.9))
    return (f"every figure rests on a hidden-overhead fit that is off by {float(err.median()):.0%} on these logs' "
            f"recorded calls (median over transcripts; 90th percentile {p90:.0%}): few or inferred recorded figures "
            "to fit it on",)


PASTE = "    set: "  # how a line to paste begins


def lines(v: ToolVerdict, width: int | None = None) -> list[str]:
    """The verdict in lines of at most ``width`` characters (None: unwrapped); a line to paste is never wrapped
    (a YAML fragment keeps its indentation)."""
    import textwrap

    out: list[str] = []
    pasting = False
    for line in _lines(v):
        pasting = line.startswith(PASTE) or (pasting and line.startswith(" " * len(PASTE)))
        if width is None or pasting or len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def _lines(v: ToolVerdict) -> list[str]:
    """The verdict as a user of the tool reads it first: as it ran; each setting with the line to paste where the
    evidence holds (where it goes, the figure the next logs should show) or the condition that failed; the best
    other strategy. Each change from as it ran paired, with its 95% interval ((n.s.): not significant). The lines
    to paste start with :data:`PASTE` (their continuation lines with as many spaces)."""
    out = [f"{v.name} ({v.transcripts:,} transcript{'s' * (v.transcripts != 1)})"]
    if v.as_ran:
        extra = ""
        if v.inferred:
            extra = f"; {v.inferred:,} of its compactions inferred (no marker in the log)"
        out.append(f"  as it ran ({RECORDED}: the tool's own recorded compactions): {v.as_ran_figures}{extra}")
        out += [f"    ! {x}" for x in v.notes]
    else:
        out.append(f"  as it ran: not in this run (add --strategy {RECORDED})")
    if v.sessions:
        out.append(f"  {v.sessions}")
    if v.manual:
        out.append(f"  {v.manual:,} manual compaction{'s' * (v.manual != 1)} (/compact) in {v.manual_transcripts:,} "
                   f"transcript{'s' * (v.manual_transcripts != 1)}: part of as it ran, set aside from the settings "
                   "below (an automatic threshold is compared where the tool compacted by itself or never)")
    if v.own_strategy is None:
        out.append(f"  no strategy reproduces {v.tool}: no setting of its own to suggest")
        return out + _other(v)
    if not v.own_figures:
        out.append(f"  {v.tool}'s own strategy ({v.own_strategy}) is not in this run")
        return out + _other(v)
    out.append(f"  {v.tool} as replayed ({v.own_strategy}, each log's version preset): {v.own_figures}")
    if v.reproduction is not None:
        out.append(f"    check: {v.reproduction.text}")
    if not v.candidates:
        declared = get(v.own_strategy).tool
        out.append(f"  no setting of {v.tool} was swept in this run (run without --no-settings)"
                   if declared is not None and any(s.sweep for s in declared.settings) else
                   f"  compbench models no setting of {v.tool} that its users change: nothing to advise")
    advice = v.advice
    for c in v.candidates:
        name = c.setting.name
        if c is advice:
            out.append(f"  advice: set {name} = {c.value} (in {c.where}): {c.figures}")
            if c.change is not None and c.change.text():
                out.append(f"    against as it ran: {c.change.text()}")
            out += [f"{PASTE}{x}" if k == 0 else f"{' ' * len(PASTE)}{x}" for k, x in enumerate(c.lines)]
            out.append(f"    evidence: {'; '.join(x.text for x in c.conditions)}")
            out += [f"    limit: {x}" for x in c.caveats]
            out.append(f"    then: {c.expect}")
        elif c.label is None:
            out.append(f"  {name}: no advice: {c.conditions[0].text} (tried {', '.join(c.tried)})")
        else:
            failed = "; ".join(x.text for x in c.failed) or "another setting does better"
            out.append(f"  {name}: no advice for {c.value}: {failed} (tried {', '.join(c.tried)})")
    return out + _other(v)


def _other(v: ToolVerdict) -> list[str]:
    if v.best_other is None:
        return ["  best other strategy: none acted soundly on these logs"]
    out = [f"  best other strategy (for those who build agents; by effective savings): {v.best_other}"
           + (f": {v.best_other_change.figures}" if v.best_other_change is not None else "")]
    if v.best_other_change is not None and v.best_other_change.text():
        out.append(f"    against as it ran: {v.best_other_change.text()}")
    return out


def sentence(v: ToolVerdict) -> str:
    """:func:`lines` in one paragraph (JSON, a report cell)."""
    return " ".join(x.strip() for x in lines(v))


def to_json(v: ToolVerdict) -> dict[str, Any]:
    """The verdict for machines: every condition of every setting, the advice (or none) with its line."""
    def diffs(c: Change | None) -> dict[str, Any] | None:
        if c is None:
            return None
        return {n: None if d is None or math.isnan(d.value) else {"diff": round(d.value, 6), "lo": round(d.lo, 6),
                                                                   "hi": round(d.hi, 6), "significant": d.significant,
                                                                   "n": d.units}
                for n, d in c.diffs.items()}

    advice = v.advice
    return {
        "tool": v.tool, "source": v.source, "transcripts": v.transcripts, "own_strategy": v.own_strategy,
        "as_ran": v.as_ran, "as_ran_figures": v.as_ran_figures, "manual_compactions": v.manual,
        "manual_transcripts": v.manual_transcripts, "inferred_compactions": v.inferred,
        "reproduction": None if v.reproduction is None else {"met": v.reproduction.met, "text": v.reproduction.text},
        "advice": None if advice is None else {"setting": advice.setting.name, "value": advice.value,
                                               "configuration": advice.label, "lines": list(advice.lines),
                                               "where": advice.where, "then": advice.expect,
                                               "limits": list(advice.caveats)},
        "settings": [{"setting": c.setting.name, "configuration": c.label, "value": c.value, "tried": list(c.tried),
                      "advised": c.advised, "where": c.where,
                      "conditions": [{"key": x.key, "met": x.met, "text": x.text} for x in c.conditions],
                      "against_as_ran": diffs(c.change)} for c in v.candidates],
        "best_other": v.best_other, "best_other_against_as_ran": diffs(v.best_other_change), "sessions": v.sessions,
        "self_check": None if v.self_check is None else {"compactions": v.self_check[0], "median": v.self_check[1],
                                                         "p90": v.self_check[2]},
    }


def verdicts(groups: Sequence[Any], compactions: Any = None, steps: Any = None,
             resamples: int = 2_000) -> list[ToolVerdict]:
    """Each source group's verdict, each with its own logs' self-check."""
    from compbench.decide.breakdown import recorded_check

    out = []
    for g in groups:
        check = None
        if compactions is not None and steps is not None:
            ids = set(g.rows["transcript_id"])
            check = recorded_check(compactions[compactions["transcript_id"].isin(ids)],
                                   steps[steps["transcript_id"].isin(ids)])
        out.append(build(g, compactions, check, resamples))
    return out

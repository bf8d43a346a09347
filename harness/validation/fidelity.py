"""``compbench.validation.fidelity`` — Fidelity: each strategy against the real tool's own compactions recorded in real
logs.

For every compaction a tool made inside a transcript (Claude Code, Codex, OpenCode, pi, OpenHands), the strategy
modelling that tool replays the transcript with the window the tool used (``models.effective_limits``:
the recorded model, the tool's default for it, the evidence in the transcript; each row says which and
why) under each of the strategy's presets, and its decisions are set beside the tool's:
the trigger (step and tokens), the kept set (Jaccard over message ids), the rebuilt context against
the next recorded prompt, the summary's budget and fact coverage against the real summary, and the
token count compbench computes right before the compaction against what the API recorded there.

Two things make the comparison fair. The system prompt and tool schemas are not in transcripts, so
the replay adds the transcript's own hidden overhead as a run does (a fixed part from its first recorded
call, its messages counted at the session's growth rate: :mod:`compbench.measure.overhead`). And the k-th
compaction is replayed from the tool's state after the (k−1)-th: the recorded summary as a user message,
the messages the tool kept, then what followed — so an early difference does not shift every later
comparison. What a log leaves out of the tool's own count is filled from the tool's recorded figures
(:mod:`compbench.run.missing_usage`), and the row says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from compbench.data.recorded import segment
from compbench.data.transcript import RecordedCompaction, Transcript
from compbench.measure.facts.derive import extract
from compbench.measure.facts.presence import Matcher
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.run.trigger import main_compaction, manual_reason, position, steps_before
from compbench.sdk.registry import get, own_strategy
from compbench.sdk.tools import Tool
from compbench.sdk.trace import Trace
from compbench.summarizers import Summarizer
from compbench.validation.reacquisition import RealReacquisition, interval_text

COLUMNS = ("tool", "transcript", "n", "trigger", "preset", "real_step", "our_step", "d_steps", "real_tokens",
           "our_tokens", "d_tokens", "kept_jaccard", "rebuilt_tokens", "next_recorded_input", "real_summary_tokens",
           "our_budget", "facts_real_summary", "facts_our_summary", "kept_real", "kept_calibrated", "kept_extractive",
           "counted_before", "recorded_before", "calibration_error", "overhead", "window", "window_source",
           "reacq_predicted", "reacq_observed", "reacq_natural_rate", "reacq_natural", "reacq_excess",
           "reacq_orientation", "cause")


@dataclass(frozen=True)
class Row:
    tool: str
    transcript: str
    n: int
    trigger: str
    preset: str
    real_step: int
    our_step: int | None
    d_steps: int | None
    real_tokens: int | None
    our_tokens: int | None
    d_tokens: int | None
    kept_jaccard: float | None
    rebuilt_tokens: int | None
    next_recorded_input: int | None
    real_summary_tokens: int | None
    our_budget: int | None
    facts_real_summary: str
    facts_our_summary: str
    counted_before: int | None
    recorded_before: int | None
    calibration_error: float | None
    cause: str
    overhead: int = 0
    # facts of the span the tool summarized kept by its real summary and by our summarizers on that same
    # span (compbench.validation.summary_rates.kept_by_summarizers): "kept/facts"
    kept_real: str = "–"
    kept_calibrated: str = "–"
    kept_extractive: str = "–"
    window: int = 0
    window_source: str = ""
    # re-acquisition after the real compaction (compbench.validation.reacquisition): predicted from the real
    # post-compaction view, and what the recorded agent re-read, re-listed or re-searched (tokens)
    reacq_predicted: int | None = None
    reacq_observed: int | None = None
    reacq_natural_rate: float | None = None  # the session's re-reads of content it held, per call, before it
    reacq_natural: int | None = None  # what agents re-read over as many calls where nothing was compacted
    reacq_excess: int | None = None  # observed beyond the natural re-reads: what the compaction caused
    reacq_orientation: int | None = None  # the part of reacq_predicted that is orientation reads
    reacq_detail: RealReacquisition | None = None  # the whole comparison, for the summary below the table

    def cells(self) -> list[str]:
        out = []
        for k in COLUMNS:
            v = getattr(self, k)
            out.append("–" if v is None else f"{v:.2f}" if isinstance(v, float) else f"{v:,}"
                       if isinstance(v, int) and k not in ("n",) else str(v))
        return out


LOST = ("the file holds only the history after this compaction (an export or checkpoint): trigger, kept set "
        "and summary not compared; the real summary is the snapshot")
KEPT_UNKNOWN = "the log does not record what the tool kept: kept set not compared"


def _next_input(t: Transcript, index: int) -> int | None:
    for m in t.messages[index:]:
        # an all-zero usage is a call that never reached the API (pi records aborted turns so)
        if m.role == "assistant" and m.usage is not None and m.usage.input > 0 and not m.meta.get("compaction"):
            return m.usage.input
    return None


def _jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return 1.0 if not sa and not sb else len(sa & sb) / len(sa | sb)


def tool_of(source: str) -> Tool | None:
    """The declared tool of the strategy that reproduces ``source``'s tool (compbench.sdk.tools: its presets by
    version, why a compaction without a trigger was a /compact, the configurations a log records)."""
    own = own_strategy(source)
    return get(own).tool if own is not None else None


def version_preset(tool: str, version: str) -> str | None:
    """The preset that models ``tool``'s ``version``, where the strategy's declaration says."""
    declared = tool_of(tool)
    pick = declared.version_preset if declared is not None else None
    return str(pick(version)) if pick is not None and pick(version) is not None else None


def strategy_of(t: Transcript, rc: RecordedCompaction) -> str:
    """The strategy that models this compaction: the one its importer names (Cline truncates with ``cline`` and
    summarizes with ``cline-condense``), else the tool's."""
    from compbench.sdk.registry import names

    named = rc.meta.get("strategy")
    return str(named) if isinstance(named, str) and named in names() else str(own_strategy(t.source))


def recorded_preset(t: Transcript, rc: RecordedCompaction) -> str | None:
    """The preset that models the tool as the log shows it, where the strategy says (``recorded_preset``)."""
    declared = tool_of(t.source)
    pick = declared.recorded_preset if declared is not None else None
    return pick(t.source, str(rc.meta.get("layout") or "")) if pick is not None else None


def _unmeasured(seg: Transcript, rc: RecordedCompaction) -> bool:
    """A log without token usage before the compaction (a markdown export) cannot place a trigger."""
    return rc.tokens_before is None and not any(m.usage for m in seg.messages[:rc.index])


def _cause(t: Transcript, rc: RecordedCompaction, preset: str) -> str:
    causes = []
    declared = tool_of(t.source)
    if rc.trigger == "manual":
        # a tool without a /compact names what its manual summary is (aider: summarize_all on a chat-mode switch)
        what = declared.manual_name if declared is not None else ""
        causes.append(f"manual ({what}): trigger not compared, the strategy's own run at the same point" if what else
                      "manual /compact: trigger not compared, the strategy's /compact run at the same point")
    elif declared is not None and declared.auto_name:
        causes.append(declared.auto_name)
    if preset == recorded_preset(t, rc):
        causes.append(f"this preset models {t.source} as the log shows it: {rc.meta.get('layout') or t.source}")
    if rc.meta.get("encrypted"):
        causes.append("remote compaction: summary encrypted")
    if t.source == "claude-code":
        causes.append("file pre-redacted by its author")
    from compbench.run.missing_usage import compaction_version

    version = compaction_version(t, rc)
    # the versions each preset models, where the strategy's declaration says
    models = declared.preset_versions if declared is not None else {}
    if version and preset == version_preset(t.source, version):
        causes.append(f"recorded by {t.source} {version}, the version this preset models")
    elif version and preset in models:
        causes.append(f"recorded by {t.source} {version}; the preset models {t.source} {models[preset]}")
    elif version and preset == "seed":
        causes.append(f"recorded by {t.source} {version}; the seed describes an older version")
    elif version and preset == "current":
        causes.append(f"recorded by {t.source} {version}; the preset models today's {t.source}")
    elif version:
        causes.append(f"recorded by {t.source} {version}; the preset models {t.source} {preset}")
    return "; ".join(causes)


def _trigger(rc: RecordedCompaction, below: str) -> str:
    """The trigger column: the recorded one, "(inferred)" where the log holds no marker of the compaction or of
    its trigger (a /compact told by its size)."""
    if below:
        return "manual (inferred)"
    return f"{rc.trigger} (inferred)" if rc.meta.get("inferred") else rc.trigger


def _inferred(rc: RecordedCompaction) -> str:
    """Said first in the cause of a compaction the log does not mark (its figures rest on an inference)."""
    why = rc.meta.get("inferred")
    if not why:
        return ""
    return "inferred: the log holds no marker of this compaction" + (f" ({why})" if isinstance(why, str) else "")


def overhead(t: Transcript, counter: TokenCounter) -> tuple[int, TokenCounter]:
    """The transcript's unrecorded prompt as a run adds it (:mod:`compbench.measure.overhead`): the fixed
    part of its first recorded call, and the counter at the session's growth rate; 0 and ``counter``
    without recorded usage (the agent's defaults describe no particular session)."""
    from compbench.measure.overhead import fit
    from compbench.measure.usage import pairs

    if not pairs(t, counter):
        return 0, counter
    o, session = fit(t, counter)
    return o.fixed, session




def rows_for(t: Transcript, counter: TokenCounter, summarizer: Summarizer) -> list[Row]:
    from compbench.measure.models import effective_limits
    from compbench.run.missing_usage import at_recorded_points, complete, per_call_usage
    from compbench.strategies import get, resolve

    own = own_strategy(t.source)
    declared = tool_of(t.source)
    if own is None or declared is None or not t.compactions:
        return []
    from compbench.validation.summary_rates import kept_by_summarizers

    t, filled = complete(t)
    window = effective_limits(t)
    limits = window.limits
    # a log without per-call usage (Crush, Goose) cannot show where the strategy's trigger fires; it records
    # where the tool's did: there the strategy is made to compact (missing_usage.at_recorded_points), and what it
    # keeps and summarizes is compared. A strategy that counts its own tokens (aider) needs no usage.
    own_count = declared.own_count
    stub = not per_call_usage(t) and not own_count
    facts = extract(t)
    kept = {k.n: k for k in kept_by_summarizers(t)}
    matcher = Matcher(facts)
    system, counter = overhead(t, counter)
    from compbench.validation.reacquisition import at_compactions, shipped_split

    reacq = at_compactions(t, counter.index(t).part_tokens, split_of=shipped_split)
    # with no per-call usage a strategy without a /compact is made to compact where the tool did
    stubbed = at_recorded_points(t, limits.context_window) if stub else t
    # the calibration columns describe the recorded history, not a strategy: counted from a replay
    # that never compacts (a strategy that compacted earlier would report its own, smaller context)
    segments = [segment(t, n)[0] for n in range(len(t.compactions))]
    counted_at: list[int | None] = []
    for seg in segments:
        base = replay(seg, resolve("none").create(), summarizer, ReplayConfig(limits, system, recorded_usage=True),
                      counter)
        before = [s for s in base.steps if s.message_index < seg.compactions[0].index]
        counted_at.append(before[-1].input + before[-1].output if before else None)
    out = []
    names = {n: strategy_of(t, rc) for n, rc in enumerate(t.compactions)}
    specs: list[tuple[str, str, str]] = []  # (strategy, preset label, spec)
    for name in dict.fromkeys(names.values()):
        pick = declared.fidelity_specs if name == own else None
        # "seed": the parameters' own defaults (a strategy that declares its tool runs each log at its version's
        # preset when no preset is named: here every preset is named)
        seed = f"{name}:preset=seed" if get(name).tool is not None and get(name).presets else name
        specs += [(name, p, spec) for p, spec in (pick(t) if pick is not None else
                  [("seed", seed)] + [(p, f"{name}:preset={p}") for p in get(name).presets])]
    for name, preset, spec in specs:
        c = resolve(spec)
        for n, seg in enumerate(segments):
            if names[n] != name:
                continue
            # without per-call usage, an automatic compaction is one the strategy is made to make where the tool
            # did (its trigger cannot be placed); any other is asked of the strategy's own /compact there
            forced = stub and seg.compactions[0].trigger == "auto"
            if forced:
                seg = segment(stubbed, n)[0]
            rc = seg.compactions[0]
            below = manual_reason(t, rc, limits)
            unmeasured = not forced and not own_count and _unmeasured(seg, rc)
            auto = rc.trigger != "manual" and not below and not unmeasured
            # a manual /compact is asked of the strategy where the user asked the tool: its trigger is
            # not compared, what it keeps and summarizes is
            config = ReplayConfig(limits, system, recorded_usage=True, manual_at=None if auto else rc.index)
            real_step = steps_before(seg, rc.index)
            notes = ["no token usage recorded: trigger not compared, the strategy's compaction run at the same point"
                     ] if unmeasured and rc.trigger != "manual" else []
            if rc.summary and not any(m.id not in set(rc.kept_ids) and not m.meta.get("compaction")
                                      for m in seg.messages[:rc.index]):
                notes.append("the log holds none of the messages the tool summarized (only what the model saw after)")
            if rc.meta.get("history_in_file") is False:  # an export: only the view after the compaction
                trace: Trace | None = None
                notes.append(LOST)
            else:
                trace = replay(seg, c.create(), summarizer, config, counter)
            if trace is None:
                ev = None
            elif auto:
                ev = main_compaction(trace.compactions)
            else:
                ev = main_compaction(trace.compactions, "manual")
                earlier = [e.step for e in trace.compactions if e.ok and e.phase != "manual" and e.step <= real_step
                           and e.meta.get("kind") != "tool-pair"]
                if earlier:
                    notes.append(f"the strategy had compacted by itself before, at step {earlier[0]}")
                if ev is None:
                    notes.append("the strategy's manual summary failed" if declared.manual_name
                                 else "the strategy's /compact failed or does not exist")
            dropped = next((e.error for e in trace.compactions if not e.ok and e.error), None) if trace else None
            if ev is None and dropped:
                notes.append(f"its compactions did not apply ({dropped})")
            if forced and auto:
                own_config = ReplayConfig(limits, system, recorded_usage=True)
                notes.append(_own_trigger(segment(t, n)[0], c, summarizer, own_config, counter, ev is not None))
            counted = counted_at[n]
            est = [f.id for f in facts if 0 <= f.first_index < t.compactions[n].index]
            real_cov = matcher.facts_in(rc.summary) if rc.summary else frozenset()
            our_cov = matcher.facts_in(ev.summary) if ev else frozenset()
            # kept messages the tool had when it compacted: a prompt that arrived later (pi's check at the
            # end of a run is made before the new prompt, which is then kept after the summary) is not one,
            # and neither are inserted messages or the stand-in for the tool's earlier summary
            had = {m.id for m in seg.messages[:rc.index]}
            recorded_ids = [i for i in (ev.kept_ids if ev else ())
                            if i in had and not i.startswith("recorded-summary-")]
            k = kept.get(n + 1)
            out.append(Row(
                kept_real=f"{k.real}/{k.facts}" if k else "–",
                kept_calibrated=f"{k.calibrated}/{k.facts}" if k else "–",
                kept_extractive=f"{k.extractive}/{k.facts}" if k else "–",
                tool=t.source, transcript=t.id, n=n + 1, trigger=_trigger(rc, below),
                preset=preset if name == own else f"{name}:{preset}", real_step=real_step,
                our_step=position(ev) if ev and auto and not forced else None,
                d_steps=position(ev) - real_step if ev and auto and not forced else None,
                real_tokens=rc.tokens_before, our_tokens=ev.tokens_before if ev and auto and not forced else None,
                d_tokens=ev.tokens_before - rc.tokens_before if ev and auto and rc.tokens_before and not forced
                else None,
                kept_jaccard=_jaccard(recorded_ids, rc.kept_ids) if ev and not rc.meta.get("kept_unknown") else None,
                rebuilt_tokens=ev.tokens_after if ev else None, next_recorded_input=_next_input(seg, rc.index),
                real_summary_tokens=counter.count_text(rc.summary) if rc.summary else None,
                our_budget=ev.summary_budget if ev else None,
                facts_real_summary=f"{sum(f in real_cov for f in est)}/{len(est)}" if rc.summary else "–",
                facts_our_summary=f"{sum(f in our_cov for f in est)}/{len(est)}" if ev else "–",
                counted_before=counted, recorded_before=rc.tokens_before,
                calibration_error=(counted - rc.tokens_before) / rc.tokens_before
                if counted is not None and rc.tokens_before else None,
                overhead=system, window=limits.context_window, window_source=window.source,
                reacq_predicted=reacq[n].reacq_predicted, reacq_observed=reacq[n].reacq_observed,
                reacq_natural_rate=reacq[n].natural_rate, reacq_natural=reacq[n].reacq_natural,
                reacq_excess=reacq[n].reacq_excess,
                reacq_orientation=reacq[n].reacq_orientation, reacq_detail=reacq[n],
                cause="; ".join(x for x in (below, _inferred(rc), _cause(t, rc, preset),
                                            filled.get(n, "") if auto else "",
                                            "" if ev or not auto or trace is None else "strategy never compacted",
                                            KEPT_UNKNOWN if rc.meta.get("kept_unknown") and trace is not None else "",
                                            *notes) if x),
            ))
    return out


def _own_trigger(seg: Transcript, spec: Any, summarizer: Summarizer, config: ReplayConfig, counter: TokenCounter,
                 compacted: bool) -> str:
    """The row's note for a log without per-call usage: compared where the tool compacted, and where the
    strategy's own trigger would fire on compbench's count (no system prompt calibrated: not compared)."""
    rc = seg.compactions[0]
    ev = main_compaction(replay(seg, spec.create(), summarizer, config, counter).compactions)
    where = (f"its own trigger on compbench's count (no usage to calibrate the hidden prompt) would fire after "
             f"{position(ev)} calls, the tool's after {steps_before(seg, rc.index)}" if ev else
             "its own trigger on compbench's count (no usage to calibrate the hidden prompt) never fires here")
    made = "made to compact where the tool did" if compacted else "asked to compact where the tool did, it did not"
    return f"no per-call usage in the log: the strategy was {made}, trigger not compared; {where}"


def fidelity(transcripts: Iterable[Transcript], tokenizer: str = "o200k_base",
             summarizer: Summarizer | None = None) -> list[Row]:
    from compbench.summarizers.extractive import ExtractiveSummarizer

    counter = TokenCounter(tokenizer)
    s = summarizer or ExtractiveSummarizer()
    return [r for t in transcripts for r in rows_for(t, counter, s)]


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    records = [{k: v for k, v in asdict(r).items() if k != "reacq_detail"} for r in rows]
    return {"columns": list(COLUMNS), "rows": [r.cells() for r in rows], "records": records,
            "reacquisition": reacquisition_summary(rows),
            "reacquisition_items": [{"transcript": d.transcript, "n": d.n, "split": d.split,
                                     "predicted": d.reacq_predicted, "predicted_all": d.reacq_predicted_all,
                                     "observed": d.reacq_observed, "natural": d.reacq_natural,
                                     "excess": d.reacq_excess, "natural_rate": round(d.natural_rate, 1),
                                     "steps_after": d.steps_after,
                                     "items": [{"key": x.key, "class": x.klass, "held": x.held, "spared": x.spared,
                                                "why": x.why, "had": x.size, "latest": x.latest,
                                                "predicted": x.predicted, "observed": x.observed} for x in d.items]}
                                    for d in reacquisition_items(rows)]}


def agreement_note(transcripts: Iterable[Transcript]) -> str:
    """Which facts the calibrated summarizer keeps against the real summaries', per fact, on held-out sessions
    (rates fitted on the others), beside a null draw at the same rates."""
    from compbench.validation.summary_rates import agreement

    parts = agreement(transcripts)
    held, null = parts["held-out"]
    if not held.real:
        return "calibrated's choice of facts: no held-out real compaction with a readable summary"
    return (f"calibrated's choice of facts against the real summaries, held-out sessions (rates fitted on the "
            f"others): precision {held.precision:.2f} at recall {held.recall:.2f} ({held.chosen} kept, {held.real} "
            f"real); a null draw at the same rates: precision {null.precision:.2f} at recall {null.recall:.2f}")


def reacquisition_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """Predicted against observed re-acquisition over the real compactions (each once, whatever the preset)."""
    from compbench.validation.reacquisition import summarize

    seen = {(r.transcript, r.n): r.reacq_detail for r in rows if r.reacq_detail is not None}
    return summarize(v for v in seen.values() if v is not None)


def _number(v: float) -> str:
    return "not measurable" if math.isnan(v) else f"{v:.2f}"


def reacquisition_note(rows: Sequence[Row]) -> str:
    """The validation of predicted re-acquisition, per split: every re-read against the observation, what the
    compaction caused against the excess over the natural re-reads, and with the natural re-reads added."""
    s = reacquisition_summary(rows)
    if not s["all"]["compactions"]:
        return "re-acquisition: no real compaction"
    lines = ["re-acquisition after the real compactions (tokens re-read, re-listed or re-searched of content the "
             "agent had before; predicted from the real post-compaction view with the shipped rates, fitted on "
             "sessions of ../shared (fitted on: those among these logs): every re-read against the observation, "
             "what the compaction caused against the excess; natural: what agents re-read of older content over as "
             "many calls where nothing was compacted (the fit sessions' curve); excess: observed less natural; [95% "
             "intervals over sessions]):"]
    for name, label in (("fit", "fitted on"), ("held-out", "not fitted on"), ("all", "all")):
        x = s[name]
        if not x["compactions"]:
            continue
        named, unnamed = x["named"], x["not_named"]
        ci = partial(interval_text, x)
        lines.append(
            f"  {label:<13} {x['compactions']:>3} compactions / {x['sessions']} sessions: observed {x['observed']:,}, "
            f"every re-read predicted {x['predicted_all']:,}: pooled ratio {x['pooled_ratio_all']:.2f}"
            f"{ci('pooled_ratio_all')}, Spearman {x['spearman']:.2f}{ci('spearman')}; excess "
            f"{x['excess']:,} (natural {x['natural']:,}), caused predicted {x['predicted']:,} (orientation "
            f"{x['orientation']:,}): pooled ratio {x['pooled_ratio_excess']:.2f}{ci('pooled_ratio_excess')}, "
            f"Spearman {x['spearman_excess']:.2f}{ci('spearman_excess')}; caused + natural against "
            f"observed: {x['pooled_ratio_with_natural']:.2f}, Spearman {x['spearman_with_natural']:.2f}; each "
            f"session's own rate before its compaction (not subtracted), its reliability "
            f"{_number(x['natural_reliability'])} (its two half-windows, {x['natural_reliability_n']} compactions); "
            f"used keys the summary named: {named[0]} re-acquired / {named[1]} not, not named: {unnamed[0]} / "
            f"{unnamed[1]}")
    if s["all"]["compactions"] < 30:
        lines.append(f"  (few compactions: {s['all']['compactions']}; a figure on so few says little)")
    return "\n".join(lines)


def reacquisition_items(rows: Sequence[Row]) -> list[RealReacquisition]:
    """Each real compaction once, whatever the preset, with its items (key, why, what the agent had of it, its
    latest delivery, predicted and observed tokens): the walk-through a reader needs to see a miss."""
    seen: dict[tuple[str, int], RealReacquisition] = {}
    for r in rows:
        if r.reacq_detail is not None:
            seen.setdefault((r.transcript, r.n), r.reacq_detail)
    return list(seen.values())


def kept_note(rows: Sequence[Row]) -> str:
    """One line: how far the calibrated summarizer's kept share is from the real summaries', per real
    compaction (each counted once, whatever the preset)."""
    import statistics

    seen: dict[tuple[str, int], tuple[float, float, float]] = {}
    for r in rows:
        if r.kept_real != "–":
            k, n = map(int, r.kept_real.split("/"))
            if n:
                seen[(r.transcript, r.n)] = (k / n, int(r.kept_calibrated.split("/")[0]) / n,
                                             int(r.kept_extractive.split("/")[0]) / n)
    if not seen:
        return "no real compaction with a readable summary"
    real, cal, ext = (list(x) for x in zip(*seen.values(), strict=True))
    diff = [c - r for r, c in zip(real, cal, strict=True)]
    med = statistics.median
    return (f"facts kept of the summarized span, median over {len(seen)} real compactions: real {med(real):.0%}, "
            f"calibrated {med(cal):.0%} (calibrated - real: median {med(diff):+.0%}, range {min(diff):+.0%}.."
            f"{max(diff):+.0%}), extractive {med(ext):.0%}")

"""``compbench.validation.fidelity`` — Fidelity: each strategy against the real tool's own compactions recorded in real
logs.

For every compaction a tool made inside a transcript (Claude Code, Codex, OpenCode, pi), the strategy
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
(``evidence``), and the row says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript
from compbench.measure.facts.derive import extract
from compbench.measure.facts.presence import Matcher
from compbench.measure.tokens import TokenCounter
from compbench.replay.loop import CompactionEvent, ReplayConfig, Trace, replay
from compbench.replay.session import ModelLimits
from compbench.summarizers import Summarizer

TOOL_STRATEGY = {"claude-code": "claude-code", "codex": "codex", "opencode": "opencode", "pi": "pi"}
COLUMNS = ("tool", "transcript", "n", "trigger", "preset", "real_step", "our_step", "d_steps", "real_tokens",
           "our_tokens", "d_tokens", "kept_jaccard", "rebuilt_tokens", "next_recorded_input", "real_summary_tokens",
           "our_budget", "facts_real_summary", "facts_our_summary", "kept_real", "kept_calibrated", "kept_extractive",
           "counted_before", "recorded_before", "calibration_error", "overhead", "window", "window_source", "cause")


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
    # span (compbench.summarizers.calibration.kept_by_summarizers): "kept/facts"
    kept_real: str = "–"
    kept_calibrated: str = "–"
    kept_extractive: str = "–"
    window: int = 0
    window_source: str = ""

    def cells(self) -> list[str]:
        out = []
        for k in COLUMNS:
            v = getattr(self, k)
            out.append("–" if v is None else f"{v:.2f}" if isinstance(v, float) else f"{v:,}"
                       if isinstance(v, int) and k not in ("n",) else str(v))
        return out


def _steps_before(t: Transcript, index: int) -> int:
    return sum(1 for m in t.messages[:index] if m.role == "assistant" and not m.meta.get("compaction"))


def _next_input(t: Transcript, index: int) -> int | None:
    for m in t.messages[index:]:
        # an all-zero usage is a call that never reached the API (pi records aborted turns so)
        if m.role == "assistant" and m.usage is not None and m.usage.input > 0 and not m.meta.get("compaction"):
            return m.usage.input
    return None


def _position(ev: CompactionEvent) -> int:
    """Model calls completed before the compaction, the measure ``real_step`` uses: a compaction in
    step k's after-hook (pi's seed) comes after k + 1 calls, one in its before-hook (Claude Code, Codex,
    OpenCode, today's pi) after k."""
    return ev.step + 1 if ev.phase == "after" else ev.step


def _jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return 1.0 if not sa and not sb else len(sa & sb) / len(sa | sb)


def _strategy_module(tool: str) -> Any:
    """The module of the strategy that reproduces ``tool``: where it says what fidelity must know of the tool
    (``version_preset(version)``: the preset of a recorded version; ``manual_compaction(tokens_before,
    window)``: why a compaction the log records without a trigger was a user's /compact)."""
    import sys

    from compbench.strategies import get

    return sys.modules[get(TOOL_STRATEGY[tool]).factory.__module__]


def version_preset(tool: str, version: str) -> str | None:
    """The preset that models ``tool``'s ``version``, where the strategy says (``version_preset``)."""
    pick = getattr(_strategy_module(tool), "version_preset", None)
    return str(pick(version)) if pick is not None else None


def _cause(t: Transcript, rc: RecordedCompaction, preset: str) -> str:
    causes = []
    if rc.trigger == "manual":
        causes.append("manual /compact: trigger not compared, the strategy's /compact run at the same point")
    if rc.meta.get("encrypted"):
        causes.append("remote compaction: summary encrypted")
    if t.source == "claude-code":
        causes.append("file pre-redacted by its author")
    version = t.meta.get("tool_version")
    if version and preset == version_preset(t.source, str(version)):
        causes.append(f"recorded by {t.source} {version}, the version this preset models")
    elif version and preset == "seed":
        causes.append(f"recorded by {t.source} {version}; the seed describes an older version")
    elif version and preset == "current":
        causes.append(f"recorded by {t.source} {version}; the preset models today's {t.source}")
    elif version:
        causes.append(f"recorded by {t.source} {version}; the preset models {t.source} {preset}")
    return "; ".join(causes)


def _below_auto_threshold(t: Transcript, rc: RecordedCompaction, limits: ModelLimits) -> str:
    """A compaction recorded without a trigger that the tool could not have made by itself was a manual
    /compact (the strategy's ``manual_compaction`` says when): comparing a trigger step with it would blame
    the strategy for the user's choice."""
    if rc.trigger != "unknown" or not rc.tokens_before or not limits.context_window or t.source not in TOOL_STRATEGY:
        return ""
    why = getattr(_strategy_module(t.source), "manual_compaction", None)
    return str(why(rc.tokens_before, limits.context_window)) if why is not None else ""


def overhead(t: Transcript, counter: TokenCounter) -> tuple[int, TokenCounter]:
    """The transcript's unrecorded prompt as a run adds it (:mod:`compbench.measure.overhead`): the fixed
    part of its first recorded call, and the counter at the session's growth rate; 0 and ``counter``
    without recorded usage (the agent's defaults describe no particular session)."""
    from compbench.measure.calibrate import pairs
    from compbench.measure.overhead import fit

    if not pairs(t, counter):
        return 0, counter
    o, session = fit(t, counter)
    return o.fixed, session


def segment(t: Transcript, n: int) -> tuple[Transcript, int]:
    """The transcript as the tool saw it after its (n−1)-th compaction, and the offset of its messages.

    Its first message is the recorded summary (a user message), then the messages the tool kept,
    then everything recorded after that compaction.
    """
    if n == 0:
        return t, 0
    prev = t.compactions[n - 1]
    kept = set(prev.kept_ids)
    head = [Message(f"recorded-summary-{n}", "user", (Text(prev.summary or "(summary not recorded)"),),
                    meta={"recorded_summary": True})]
    head += [m for m in t.messages[: prev.index] if m.id in kept]
    tail = [m for m in t.messages[prev.index:] if not m.meta.get("compaction")]
    # a later compaction's position among the messages kept: the tool's own artifacts (a summary record) are
    # dropped from the tail, so they are not counted either
    later = tuple(replace(c, index=len(head) + sum(1 for m in t.messages[prev.index: c.index]
                                                   if not m.meta.get("compaction"))) for c in t.compactions[n:])
    return replace(t, messages=(*head, *tail), compactions=later), prev.index - len(head)


def rows_for(t: Transcript, counter: TokenCounter, summarizer: Summarizer) -> list[Row]:
    from compbench.measure.models import effective_limits
    from compbench.strategies import get, resolve
    from compbench.validation.evidence import complete

    name = TOOL_STRATEGY.get(t.source)
    if name is None or not t.compactions:
        return []
    from compbench.summarizers.calibration import kept_by_summarizers

    t, filled = complete(t)
    window = effective_limits(t)
    limits = window.limits
    facts = extract(t)
    kept = {k.n: k for k in kept_by_summarizers(t)}
    matcher = Matcher(facts)
    info = get(name)
    system, counter = overhead(t, counter)
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
    for preset in ("seed", *info.presets):
        c = resolve(name if preset == "seed" else f"{name}:preset={preset}")
        for n, seg in enumerate(segments):
            rc = seg.compactions[0]
            below = _below_auto_threshold(t, rc, limits)
            auto = rc.trigger != "manual" and not below
            # a manual /compact is asked of the strategy where the user asked the tool: its trigger is
            # not compared, what it keeps and summarizes is
            config = ReplayConfig(limits, system, recorded_usage=True, manual_at=None if auto else rc.index)
            trace: Trace = replay(seg, c.create(), summarizer, config, counter)
            real_step = _steps_before(seg, rc.index)
            notes = []
            if auto:
                ev = next((e for e in trace.compactions if e.ok), None)
            else:
                ev = next((e for e in trace.compactions if e.ok and e.phase == "manual"), None)
                earlier = [e.step for e in trace.compactions if e.ok and e.phase != "manual" and e.step <= real_step]
                if earlier:
                    notes.append(f"the strategy had compacted by itself before, at step {earlier[0]}")
                if ev is None:
                    notes.append("the strategy's /compact failed or does not exist")
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
                tool=t.source, transcript=t.id, n=n + 1, trigger="manual (inferred)" if below else rc.trigger,
                preset=preset, real_step=real_step,
                our_step=_position(ev) if ev and auto else None,
                d_steps=_position(ev) - real_step if ev and auto else None,
                real_tokens=rc.tokens_before, our_tokens=ev.tokens_before if ev and auto else None,
                d_tokens=ev.tokens_before - rc.tokens_before if ev and auto and rc.tokens_before else None,
                kept_jaccard=_jaccard(recorded_ids, rc.kept_ids) if ev else None,
                rebuilt_tokens=ev.tokens_after if ev else None, next_recorded_input=_next_input(seg, rc.index),
                real_summary_tokens=counter.count_text(rc.summary) if rc.summary else None,
                our_budget=ev.summary_budget if ev else None,
                facts_real_summary=f"{sum(f in real_cov for f in est)}/{len(est)}" if rc.summary else "–",
                facts_our_summary=f"{sum(f in our_cov for f in est)}/{len(est)}" if ev else "–",
                counted_before=counted, recorded_before=rc.tokens_before,
                calibration_error=(counted - rc.tokens_before) / rc.tokens_before
                if counted is not None and rc.tokens_before else None,
                overhead=system, window=limits.context_window, window_source=window.source,
                cause="; ".join(x for x in (below, _cause(t, rc, preset), filled.get(n, "") if auto else "",
                                            "" if ev or not auto else "strategy never compacted", *notes) if x),
            ))
    return out


def fidelity(transcripts: Iterable[Transcript], tokenizer: str = "o200k_base",
             summarizer: Summarizer | None = None) -> list[Row]:
    from compbench.summarizers.extractive import ExtractiveSummarizer

    counter = TokenCounter(tokenizer)
    s = summarizer or ExtractiveSummarizer()
    return [r for t in transcripts for r in rows_for(t, counter, s)]


def as_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"columns": list(COLUMNS), "rows": [r.cells() for r in rows], "records": [asdict(r) for r in rows]}


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

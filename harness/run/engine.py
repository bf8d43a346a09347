"""``compbench.run.engine`` — A run's engine: every transcript × every configured strategy, replayed and measured into
table rows.

Each transcript is tokenized once (one index shared by every strategy and by the ``none`` reference)
and its facts indexed once; ``--workers N`` replays transcripts in N processes, results kept in dataset
order. :mod:`compbench.store.rundir` writes the rows to the run directory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

from compbench.data.boilerplate import Templates, boilerplate_keys
from compbench.data.dataset import project_of
from compbench.data.transcript import Transcript
from compbench.errors import CompbenchError
from compbench.measure.cache import CacheModel, cache_model_for, ttl_for
from compbench.measure.facts.presence import FactIndex, PresenceTracker
from compbench.measure.facts.sources import facts_for, load_gold
from compbench.measure.models import Prices, prices_for, prices_with_cache
from compbench.measure.pricing import price_model_for
from compbench.measure.reacquire import ContentTracker, Trackers, counted
from compbench.measure.reacquire import columns as reacquisition
from compbench.measure.replay_metrics import result_row
from compbench.measure.retention import CompactionFacts, evaluate
from compbench.measure.retention import Shared as Evaluated
from compbench.measure.tokens import TokenCounter, TranscriptTokens
from compbench.measure.workset import later
from compbench.replay.members import Member
from compbench.replay.trajectories import recorded_entries, replay, replay_together
from compbench.replay.viewstate import ReplayConfig
from compbench.run.cache import Reads, TemplateReads
from compbench.run.missing_usage import complete
from compbench.run.spec import RunSpec
from compbench.sdk.context import ReplayContext
from compbench.sdk.kinds import INFERRED_META, NOT_SWEPT, RECORDED_META, REFERENCE, SWEEP, SWEPT
from compbench.sdk.protocols import reads_before_edit
from compbench.sdk.registry import own_strategy
from compbench.sdk.session import Entry
from compbench.sdk.trace import StepRecord, Trace
from compbench.store.columns import Columns, Table, columns_of
from compbench.store.tables import TABLES
from compbench.strategies import Configured, resolve
from compbench.summarizers import Summarizer
from compbench.summarizers import info as summarizer_info
from compbench.summarizers.extractive import ExtractiveSummarizer

SHARE_REPLAYS = True  # off: every configuration replayed by itself (the reference that sharing is tested against)


class Replayed(dict[str, Table]):
    """A transcript's rows per table, with what the results cache and the estimate need to know of their making:
    what the replay read of the dataset's templates (:class:`compbench.run.cache.TemplateReads`) and its CPU
    seconds (this thread's)."""

    def __init__(self, rows: dict[str, Table], reads: Reads, seconds: float) -> None:
        super().__init__(rows)
        self.reads = reads
        self.seconds = seconds


class Replayer:
    """Per-process (per-thread) state: the counter, the strategies, the summarizer, built once, and the
    replay context they share, open on one transcript at a time."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.counter = TokenCounter(spec.tokenizer, spec.message_overhead, mode=spec.token_correction)
        self.configs: list[Configured] = [resolve(s) for s in spec.strategies]
        # a settings configuration replays only its tool's logs (a Claude Code setting means nothing to a Codex log)
        self.scoped = {k: c.info.tool.formats for k, c in enumerate(self.configs)
                       if c.label in spec.settings and c.info.tool is not None}
        self._guards: dict[int, bool] = {}
        self.reference = resolve(REFERENCE)
        self.context = ReplayContext()
        backend = summarizer_info(spec.summarizer)
        self.summarizer: Summarizer = backend.create(spec.summarizer.partition(":")[2], self.context,
                                                     **spec.summarizer_options)
        if spec.price_model:
            prices_for(spec.price_model)  # an unknown model fails here, before any work
        self._pricing: dict[tuple[str, str], tuple[CacheModel, Prices]] = {}
        self.gold = load_gold(Path(spec.gold)) if spec.gold else {}
        self.share = backend.deterministic  # see _trajectories
        # what a replay reads of the dataset's templates is recorded: the results cache keys on it (compbench.run.cache)
        self.templates = TemplateReads.of(Templates.from_json(spec.boilerplate))
        # recall's optimistic end: what an extractive copy of each summarized span would carry
        self.copy = None if self.summarizer.name == "extractive" else ExtractiveSummarizer(self.context).copy_text
        # the trigger checks' summaries: what a summary says does not move a trigger (compbench.run.trigger)
        self.quiet = ExtractiveSummarizer()
        self._own: dict[str, Configured] = {}

    def run(self, t: Transcript) -> Replayed:
        """The rows of ``t`` under every configuration, per table."""
        self.templates.taken()  # a replay that failed half-way leaves no reads behind
        start = time.thread_time()
        try:
            rows = self._run(t)
        finally:
            self.context.end()  # nothing derived from a transcript outlives it
        return Replayed(rows, self.templates.taken(), time.thread_time() - start)

    def pricing(self, price_model: str, ttl: str) -> tuple[CacheModel, Prices]:
        """The cache and the prices of one price model (a price file is taken as given; the table's cache
        writes follow the provider's premium), built once per run."""
        key = (price_model, ttl)
        if key not in self._pricing:
            cache = cache_model_for(price_model, ttl)
            self._pricing[key] = cache, (Prices(**self.spec.prices) if self.spec.prices else
                                         prices_with_cache(prices_for(price_model), cache))
        return self._pricing[key]

    def _run(self, t: Transcript) -> dict[str, Table]:
        # what the log leaves out of the figures its tool decided on, filled from the tool's own (run.missing_usage):
        # strategies are shown the usage the tool saw; the accounting counts the messages as before
        t = complete(t)[0]
        # corrected for t's recorded model family (spec.token_correction), then at its own growth rate; a file
        # that starts mid-conversation replays the history it lacks as a leading message
        t, config, conditions, counter = conditioned(self.spec, t, self.counter.scoped(t), self.pricing)
        # where the tool's own strategy fires against where the tool did; the window the log shows where they part
        config, calibrated = self.triggers(t, config, conditions, counter)
        index = counter.index(t)
        prices = self.pricing(conditions["price_model"], conditions["cache_ttl"])[1]
        by_role = self.summarizer_pricing(t, conditions, prices)
        groups = units(t)
        found = facts_for(t, gold=self.gold)
        facts = FactIndex.build(t, found, boilerplate_keys(t, found, self.templates))
        entries = recorded_entries(t, index)
        ws = later(t, index.part_tokens)  # built when a replay first loses content, if one does
        self.context.begin(t, facts)  # the calibrated summarizer reads provenance from the transcript's facts

        def new_tracker() -> Trackers:
            return Trackers(PresenceTracker(facts, self.copy), ContentTracker(ws))

        # each configuration as it replays this log: an own-tool strategy named without a preset at the preset
        # of the version the log recorded (compbench.sdk.tools), with why
        picked = [(k, *c.for_log(t)) for k, c in enumerate(self.configs)
                  if k not in self.scoped or t.source in self.scoped[k]]
        configs = [c for _, c, _ in picked]
        ref, outcomes = self._trajectories(t, configs, config, counter, index, entries, new_tracker)
        conditions = {**conditions, **recorded_cache(t, ref[0])}
        shared: dict[tuple[int, bool], _TraceRows] = {}
        evaluated = Evaluated()  # what the evaluations of t's trajectories share
        rows = {k: Table() for k in TABLES}
        for (k, c, why), (trace, tracker) in zip(picked, outcomes, strict=True):
            # a strategy whose tool insists on a read before an edit pays those re-reads (compbench.sdk)
            guard = self.guard(c)
            got = shared.get((id(trace), guard))
            if got is None:  # configurations that shared a trajectory share its evaluation and its rows
                retained, per_event, fact_rows = evaluate(t, trace, facts, tracker.presence, index.part_tokens,
                                                          config.system_tokens, evaluated)
                reacquired = reacquisition(counted(tracker.content.events, guard), trace.steps, trace.compactions,
                                           prices)
                outcome = {e.seq: e for e in per_event}
                got = shared[(id(trace), guard)] = _TraceRows(
                    {**result_row(trace, ref[0], prices, reacquired, by_role), **retained}, _step_columns(trace),
                    columns_of([{**_compaction_row(e), **_event_facts(outcome.get(e.seq))} for e in trace.compactions]),
                    columns_of(fact_rows),
                    columns_of([{"seq": p.seq, "step": p.step, "phase": p.phase, "reason": p.reason,
                                 "parts": len(p.parts), "tokens_hidden": p.tokens_hidden} for p in trace.prunes]))
            key = {"transcript_id": t.id, "strategy": c.label}
            if calibrated and c.name == own_strategy(t.source):
                why = f"{why}; {calibrated}" if why else calibrated
            preset = {"preset": c.preset or ("seed" if c.info.presets else ""), "preset_source": why,
                      SWEPT: SWEEP if k in self.scoped else NOT_SWEPT}
            rows["results"].append({**key, "name": c.name, **preset, "source": t.source, **groups, **conditions,
                                    **got.result, "recorded_inferred": _recorded_inferred(trace)})
            for table, (columns, n) in (("steps", got.steps), ("compactions", got.compactions), ("facts", got.facts),
                                        ("prunes", got.prunes)):
                rows[table].extend(columns, n, key)
        return rows


    def triggers(self, t: Transcript, config: ReplayConfig, conditions: dict[str, Any], counter: TokenCounter
                 ) -> tuple[ReplayConfig, str]:
        """The log's own compactions against its tool's strategy (:mod:`compbench.run.trigger`), into
        ``conditions``: how many were automatic, manual, checked, and within reach of the strategy's. Where the
        strategy misses some, the window its compactions show replaces the table's (unless the user gave one), for
        every configuration: the config to replay with, and what a calibration changed, in words ("" if none)."""
        from dataclasses import replace

        from compbench.run import trigger

        own = own_strategy(t.source)
        found = trigger.points(t, config.limits)
        if own is None or not found[0]:
            conditions.update(found[1].columns(), trigger_within_table=0, window_calibrated=False)
            return config, ""
        if own not in self._own:
            self._own[own] = resolve(own)
        configured = self._own[own].for_log(t)[0]
        before = trigger.check(t, configured, config, counter, self.quiet, found)
        conditions.update(before.columns(), trigger_within_table=before.within, window_calibrated=False)
        if before.within == before.checked or self.spec.limits is not None:
            return config, ""
        cal = trigger.calibrate(t, configured, config, counter, self.quiet, found, before)
        if cal is None:
            return config, ""
        table = config.limits.context_window
        said = (f"window {cal.window:,} calibrated from the log's {before.checked} automatic "
                f"compaction{'s' * (before.checked != 1)} (at {table:,}, from {conditions['window_source']}, "
                f"{own} fired within {trigger.WITHIN} calls of {before.within}; at {cal.window:,}, of "
                f"{cal.check.within})")
        conditions.update(cal.check.columns(), window=cal.window, window_source=said, window_calibrated=True)
        return replace(config, limits=trigger.with_window(config.limits, cal.window)), \
            f"trigger calibrated from the log: {said}"

    def guard(self, c: Configured) -> bool:
        """Whether ``c``'s tool refuses an edit of a file not read since its compaction (its params decide)."""
        found = self._guards.get(id(c))
        if found is None:
            found = self._guards[id(c)] = reads_before_edit(c.create())
        return found


    def summarizer_pricing(self, t: Transcript, conditions: dict[str, Any], prices: Prices) -> dict[str, Prices]:
        """The prices of each summary request's model, by role (compbench.measure.pricing.summarizer_models); the
        roles priced elsewhere than the session are named in its ``price_model_source``."""
        from compbench.measure.pricing import summarizer_models

        main = conditions["price_model"]
        out: dict[str, Prices] = {}
        named = []
        for role, (model, why) in summarizer_models(t, main, self.spec.summarizer_model).items():
            out[role] = prices if model == main else self.pricing(model, conditions["cache_ttl"])[1]
            if model != main:
                named.append(f"{role or 'summaries'}: {why}")
        if named:
            conditions["price_model_source"] += "; summary requests: " + ", ".join(named)
        return out

    def _trajectories(self, t: Transcript, configs: Sequence[Configured], config: ReplayConfig, counter: TokenCounter,
                      index: TranscriptTokens, entries: Sequence[Entry], tracker: Callable[[], Trackers]
                      ) -> tuple[tuple[Trace, Trackers], list[tuple[Trace, Trackers]]]:
        """The reference replay and each configuration's.

        Every configuration follows the ``none`` reference, asked the questions it is asked on its view:
        while a strategy has not acted its replay is the reference's (on a transcript that never reaches
        its thresholds, all of it), and as ``none`` never asks for a summary this holds with any summarizer.
        One that acts forks its own trajectory from there (:mod:`compbench.replay.branch`), followed by the
        configurations that acted alike and go on acting alike — only with a pure summarizer; otherwise
        each by itself."""
        if not SHARE_REPLAYS:
            def alone(c: Configured) -> tuple[Trace, Trackers]:
                observer = tracker()
                return replay(t, c.create(), self.summarizer, config, counter, index, observer, entries,
                              self.context), observer

            ref = alone(self.reference)
            return ref, [ref if c.name == REFERENCE else alone(c) for c in configs]
        followers = [Member(k, c.create(), c.create) for k, c in enumerate(configs)]
        out = replay_together(t, Member(-1, self.reference.create()), followers, self.summarizer, config, counter,
                              index, tracker, entries, self.context, reference=True, pure=self.share)
        return cast(tuple[Trace, Trackers], out[-1]), [cast(tuple[Trace, Trackers], out[k])
                                                               for k in range(len(configs))]


def recorded_cache(t: Transcript, reference: Trace) -> dict[str, int]:
    """The prompt cache the API recorded on the fully recorded calls (before the tool's first compaction)
    beside what the ``none`` replay simulates on the same calls: the cache model checked against reality.
    The simulation uses the cache of the provider that recorded the calls (the recorded model's, with the
    lifetime the recording asked for), not the run's price model: a Gemini session is checked against
    Gemini's cache, whatever the run is priced at."""
    from compbench.measure.cache import message_time, none_reads
    from compbench.measure.token_correction import recorded_model

    limit = min((c.index for c in t.compactions), default=len(t.messages))
    out = {"cache_calls": 0, "recorded_cache_read": 0, "recorded_input": 0, "simulated_cache_read": 0,
           "simulated_input": 0}
    messages = t.messages
    model = cache_model_for(recorded_model(t), ttl_for(messages, "auto")[0])
    reads = none_reads([(st.input, message_time(messages[st.message_index].meta)) for st in reference.steps], model)
    for st, read in zip(reference.steps, reads, strict=True):
        u = messages[st.message_index].usage if st.message_index < limit else None
        if u is not None and u.input > 0:
            out["cache_calls"] += 1
            out["recorded_cache_read"] += u.cache_read
            out["recorded_input"] += u.input
            out["simulated_cache_read"] += read
            out["simulated_input"] += st.input
    return out


def units(t: Transcript) -> dict[str, str]:
    """What a transcript is not independent of: its ``session`` (a sub-agent belongs to its parent's:
    Claude Code's ``<session>/<agent>``, OpenCode's, Codex's, Crush's and pi's parent session) and its ``project``
    (the working directory or project the log records; empty when unknown); its recorded ``model`` and
    ``tool_version``; its ``agent_type`` (:func:`compbench.data.tree.agent_type`)."""
    from compbench.data.tree import agent_type, session_of

    session = session_of(t)
    project = project_of(t)
    # the recorded model (the first a message names when the log has none for the session): `compare --by model`
    model = next((str(v) for v in (t.meta.get("model"), *(m.meta.get("model") for m in t.messages))
                  if isinstance(v, str) and v and v != "<synthetic>"), "")
    version = t.meta.get("tool_version")  # the version that wrote the log: whether it reads a setting advised
    return {"session": session, "project": project, "model": model,
            "tool_version": str(version) if isinstance(version, str) else "", "agent_type": agent_type(t)}


Pricing = Callable[[str, str], tuple[CacheModel, Any]]  # (price model, ttl) -> (cache, prices)


def conditioned(spec: RunSpec, t: Transcript, counter: TokenCounter, pricing: Pricing | None = None
                ) -> tuple[Transcript, ReplayConfig, dict[str, Any], TokenCounter]:
    """``t`` as it is replayed and its conditions (:func:`replay_conditions`): the history a file lacks
    (``compbench.measure.overhead``: a file that starts mid-conversation) moved out of the fixed overhead into a
    leading message a compaction can remove."""
    from dataclasses import replace

    from compbench.measure.overhead import inherited_history

    config, conditions, session = replay_conditions(spec, t, counter, pricing)
    lacked = int(conditions.pop("_inherited", 0))
    if lacked:
        t = inherited_history(t, lacked, session)
        config = replace(config, system_tokens=config.system_tokens - lacked)
        conditions["system_tokens"] -= lacked
    return t, config, conditions, session


def replay_conditions(spec: RunSpec, t: Transcript, counter: TokenCounter, pricing: Pricing | None = None
                      ) -> tuple[ReplayConfig, dict[str, Any], TokenCounter]:
    """The replay conditions of ``t``, each with where it comes from (fixed by the spec, or the
    transcript's own): its window (the one its tool used), its hidden overhead (the fixed part and growth
    rate its recorded usage shows, :mod:`compbench.measure.overhead`), its price model and cache lifetime
    (recorded); and the counter its replay counts with (``counter`` at the session's growth rate)."""
    from compbench.measure.models import effective_limits
    from compbench.measure.overhead import UNIT, Overhead, fit

    if spec.limits is not None:
        limits, window_source, known = spec.limits, "--context-window / --model (every transcript)", True
    else:
        eff = effective_limits(t)
        limits, window_source, known = eff.limits, eff.source, eff.known
    family = counter.correction.label if counter.correction else "none"
    if spec.system_tokens is not None:
        hidden, session = Overhead(spec.system_tokens, UNIT, "--system-tokens (every transcript)"), counter
    else:
        hidden, session = fit(t, counter)
    price_model, price_source = price_model_for(t, spec.price_model)
    ttl, ttl_source = ttl_for(t.messages, spec.cache_ttl)
    cache = pricing(price_model, ttl)[0] if pricing else cache_model_for(price_model, ttl)
    # strategies are shown the usage the API recorded while their view is still the recorded context: the real
    # tool decided on those figures (our count of the same context differs by the tokenizer's error)
    return ReplayConfig(limits, hidden.fixed, recorded_usage=True, cache=cache), {
        "window": limits.context_window, "window_source": window_source, "window_known": known,
        "system_tokens": hidden.fixed, "system_tokens_source": hidden.source, "overhead_rate": hidden.rate / UNIT,
        "overhead_first_error": hidden.first_error, "overhead_error": hidden.median_error,
        "overhead_p90": hidden.p90_error, "overhead_flag": hidden.flag,
        "token_correction": family, "price_model": price_model, "price_model_source": price_source,
        "cache_ttl": ttl, "cache_ttl_source": ttl_source, "_inherited": hidden.inherited}, session


def _event_facts(c: CompactionFacts | None) -> dict[str, Any]:
    if c is None:
        return {"retention": math.nan, "retention_verbatim": math.nan, "retention_carried": math.nan,
                "lost_facts": [], "artifact_f1": math.nan, "fabricated": [],
                "guard_summary_larger": False, "guard_dropped_constraint": False}
    return {"retention": c.retention, "retention_verbatim": c.verbatim, "retention_carried": c.carried,
            "lost_facts": list(c.lost), "artifact_f1": c.artifact_f1,
            "fabricated": list(c.fabricated), "guard_summary_larger": c.guard_larger,
            "guard_dropped_constraint": c.guard_dropped_constraint}


class _TraceRows(NamedTuple):
    """One trajectory's rows, made once for every configuration that followed it to its end."""

    result: dict[str, Any]
    steps: tuple[Columns, int]
    compactions: tuple[Columns, int]
    facts: tuple[Columns, int]
    prunes: tuple[Columns, int]


STEP_COLUMNS = ("step", "message_id", "input", "output", "cache_read", "cache_write", "visible", "epoch", "overflow")


def _step_columns(t: Trace) -> tuple[Columns, int]:
    """The steps table's columns of a trace (its step records, field by field)."""
    fields = dict(zip(StepRecord._fields, zip(*t.steps, strict=True), strict=True)) if t.steps else {}
    return {name: list(fields.get(name, ())) for name in STEP_COLUMNS}, len(t.steps)


def _recorded_inferred(trace: Trace) -> int:
    """The compactions the ``recorded`` row replayed that the log does not mark (inferred: at a fall of the recorded
    prompt, or by the importer): 0 on every other row, whose compactions are its own."""
    return sum(1 for e in trace.compactions
               if e.ok and e.meta and RECORDED_META in e.meta and e.meta.get(INFERRED_META))


def _compaction_row(e: Any) -> dict[str, Any]:
    return {"seq": e.seq, "step": e.step, "phase": e.phase, "reason": e.reason, "ok": e.ok,
            "tokens_before": e.tokens_before, "tokens_after": e.tokens_after,
            "replaced": len(e.replaced_ids), "replaced_ids": list(e.replaced_ids), "kept_ids": list(e.kept_ids),
            "replaced_tokens": e.replaced_tokens, "summary": e.summary, "summary_tokens": e.summary_tokens,
            "compression": 1 - e.summary_tokens / e.replaced_tokens if e.ok and e.replaced_tokens else math.nan,
            "summarizer_input": e.summarizer_input, "summarizer_output": e.summarizer_output,
            "error": e.error or "", "attempts": e.attempts, "latency_ms": e.latency_ms,
            "summary_budget": e.summary_budget if e.summary_budget is not None else -1,
            # the recorded row's self-check: the prompt the log recorded after the tool's compaction (-1: none)
            "recorded_next_input": int(e.meta.get("recorded_next_input", -1)) if e.meta else -1,
            # what the log lacks of the context the tool sent after it ("": nothing known)
            "recorded_lacks": str(e.meta.get("recorded_lacks", "")) if e.meta else ""}


Outcome = dict[str, Table] | str  # a transcript's rows per table, or why it failed


def run_one(r: Replayer, t: Transcript) -> Outcome:
    """Replay one transcript; a failure is returned as text (recorded in the manifest), never lost."""
    try:
        return r.run(t)
    except CompbenchError as e:
        return f"error: {e}"
    except Exception as e:  # a bug on one transcript must not lose the others' results
        return f"internal error: {type(e).__name__}: {e}"





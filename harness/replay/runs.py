"""``compbench.replay.runs`` — A run's engine: every transcript × every configured strategy, replayed and measured into
table rows.

Each transcript is tokenized once (one index shared by every strategy and by the ``none`` reference)
and its facts indexed once; ``--workers N`` replays transcripts in N processes, results kept in dataset
order. :mod:`compbench.store.rundir` writes the rows to the run directory.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, cast

from compbench.data.transcript import Transcript
from compbench.errors import CompbenchError
from compbench.measure.cache import cache_model_for
from compbench.measure.facts.boilerplate import Templates, boilerplate_keys
from compbench.measure.facts.presence import FactIndex, PresenceTracker
from compbench.measure.facts.sources import facts_for, load_gold
from compbench.measure.metrics import result_row
from compbench.measure.models import Prices, prices_for, prices_with_cache
from compbench.measure.retention import CompactionFacts, evaluate
from compbench.measure.tokens import TokenCounter, TranscriptTokens
from compbench.replay.context import ReplayContext
from compbench.replay.loop import Member, ReplayConfig, StepRecord, Trace, recorded_entries, replay, replay_together
from compbench.replay.rows import Columns, Table, columns_of
from compbench.replay.session import Entry, ModelLimits
from compbench.store.tables import TABLES
from compbench.strategies import Configured, resolve
from compbench.summarizers import Summarizer
from compbench.summarizers import info as summarizer_info
from compbench.summarizers.extractive import ExtractiveSummarizer

# summarizer options a manifest may keep: endpoints and folders, never credentials
SAFE_SUMMARIZER_OPTIONS = ("api_base", "cache_dir", "retries", "temperature", "timeout_s")
SHARE_REPLAYS = True  # off: every configuration replayed by itself (the reference that sharing is tested against)
DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's results (and goes into its manifest)."""

    strategies: tuple[str, ...]
    # None: each transcript's own window, the one its tool used (models.effective_limits)
    limits: ModelLimits | None = None
    summarizer: str = "calibrated"
    tokenizer: str = "o200k_base"
    message_overhead: int = 4
    token_correction: str = "auto"  # compbench.measure.correction: the recorded model family's, "none", or a family
    # None: each transcript's own hidden overhead (system prompt, tool schemas), calibrated on its
    # recorded usage, else its agent's default (calibrate.overhead_for)
    system_tokens: int | None = 0
    model: str | None = None
    price_model: str = DEFAULT_PRICE_MODEL
    seed: int = 0
    gold: str | None = None  # a gold_facts.jsonl file
    prices: dict[str, float] | None = None  # dollars per token, overriding litellm's table
    summarizer_options: dict[str, Any] = field(default_factory=dict)
    cache_ttl: str = "5m"  # Anthropic's 5-minute or 1-hour cache ("5m" | "1h"), or "none": never expires
    # the dataset's template lines per source (compbench.measure.facts.boilerplate.Templates.to_json())
    boilerplate: dict[str, Any] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d["limits"] = asdict(self.limits) if self.limits is not None else None
        from compbench.measure.correction import in_use

        d["token_corrections"] = in_use(self.tokenizer, self.token_correction)  # family -> what was applied
        # options can hold an API key or endpoint credentials: keep only what is safe and relevant
        d["summarizer_options"] = {k: v for k, v in sorted(self.summarizer_options.items())
                                   if k in SAFE_SUMMARIZER_OPTIONS}
        return d

    @classmethod
    def from_manifest(cls, d: Mapping[str, Any]) -> RunSpec:
        """The spec a manifest recorded (what :meth:`manifest` wrote; secrets were never in it)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in d.items() if k in fields}
        values["strategies"] = tuple(values["strategies"])
        values.setdefault("token_correction", "none")  # a run from before corrections counted without one
        values["limits"] = ModelLimits(**values["limits"]) if values.get("limits") else None
        return cls(**values)


class Replayer:
    """Per-process (per-thread) state: the counter, the strategies, the summarizer, built once, and the
    replay context they share, open on one transcript at a time."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.counter = TokenCounter(spec.tokenizer, spec.message_overhead, mode=spec.token_correction)
        self.configs: list[Configured] = [resolve(s) for s in spec.strategies]
        self.reference = resolve("none")
        self.context = ReplayContext()
        backend = summarizer_info(spec.summarizer)
        self.summarizer: Summarizer = backend.create(spec.summarizer.partition(":")[2], self.context,
                                                     **spec.summarizer_options)
        self.cache = cache_model_for(spec.price_model, spec.cache_ttl)
        # a price file is taken as given; the table's cache writes follow the provider's premium
        self.prices: Prices = Prices(**spec.prices) if spec.prices else prices_with_cache(
            prices_for(spec.price_model), self.cache)
        self.gold = load_gold(Path(spec.gold)) if spec.gold else {}
        self.share = backend.deterministic  # see _trajectories
        self.templates = Templates.from_json(spec.boilerplate)
        # recall's optimistic end: what an extractive copy of each summarized span would carry
        self.copy = None if self.summarizer.name == "extractive" else ExtractiveSummarizer(self.context).copy_text

    def run(self, t: Transcript) -> dict[str, Table]:
        """The rows of ``t`` under every configuration, per table."""
        try:
            return self._run(t)
        finally:
            self.context.end()  # nothing derived from a transcript outlives it

    def _run(self, t: Transcript) -> dict[str, Table]:
        counter = self.counter.scoped(t)  # corrected for t's recorded model family (spec.token_correction)
        index = counter.index(t)
        config, conditions = self.conditions(t, counter)
        groups = units(t)
        found = facts_for(t, gold=self.gold)
        facts = FactIndex.build(t, found, boilerplate_keys(t, found, self.templates))
        entries = recorded_entries(t, index)
        self.context.begin(t, facts)  # the calibrated summarizer reads provenance from the transcript's facts

        def new_tracker() -> PresenceTracker:
            return PresenceTracker(facts, self.copy)

        ref, outcomes = self._trajectories(t, config, counter, index, entries, new_tracker)
        conditions = {**conditions, **recorded_cache(t, ref[0])}
        shared: dict[int, _TraceRows] = {}
        rows = {k: Table() for k in TABLES}
        for c, (trace, tracker) in zip(self.configs, outcomes, strict=True):
            got = shared.get(id(trace))
            if got is None:  # configurations that shared a trajectory share its evaluation and its rows
                retained, per_event, fact_rows = evaluate(t, trace, facts, tracker, index.part_tokens,
                                                          config.system_tokens)
                outcome = {e.seq: e for e in per_event}
                got = shared[id(trace)] = _TraceRows(
                    {**result_row(trace, ref[0], self.prices), **retained}, _step_columns(trace),
                    columns_of([{**_compaction_row(e), **_event_facts(outcome.get(e.seq))} for e in trace.compactions]),
                    columns_of(fact_rows),
                    columns_of([{"seq": p.seq, "step": p.step, "phase": p.phase, "reason": p.reason,
                                 "parts": len(p.parts), "tokens_hidden": p.tokens_hidden} for p in trace.prunes]))
            key = {"transcript_id": t.id, "strategy": c.label}
            rows["results"].append({**key, "name": c.name, "source": t.source, **groups, **conditions, **got.result})
            for table, (columns, n) in (("steps", got.steps), ("compactions", got.compactions), ("facts", got.facts),
                                        ("prunes", got.prunes)):
                rows[table].extend(columns, n, key)
        return rows


    def conditions(self, t: Transcript, counter: TokenCounter) -> tuple[ReplayConfig, dict[str, Any]]:
        return replay_conditions(self.spec, t, counter)

    def _trajectories(self, t: Transcript, config: ReplayConfig, counter: TokenCounter, index: TranscriptTokens,
                      entries: Sequence[Entry], tracker: Callable[[], PresenceTracker]
                      ) -> tuple[tuple[Trace, PresenceTracker], list[tuple[Trace, PresenceTracker]]]:
        """The reference replay and each configuration's.

        Every configuration follows the ``none`` reference, asked the questions it is asked on its view:
        while a strategy has not acted its replay is the reference's (on a transcript that never reaches
        its thresholds, all of it), and as ``none`` never asks for a summary this holds with any summarizer.
        One that acts forks its own trajectory from there (:mod:`compbench.replay.branch`), followed by the
        configurations that acted alike and go on acting alike — only with a pure summarizer; otherwise
        each by itself."""
        configs = self.configs
        if not SHARE_REPLAYS:
            def alone(c: Configured) -> tuple[Trace, PresenceTracker]:
                observer = tracker()
                return replay(t, c.create(), self.summarizer, config, counter, index, observer, entries,
                              self.context), observer

            ref = alone(self.reference)
            return ref, [ref if c.name == "none" else alone(c) for c in configs]
        followers = [Member(k, c.create(), c.create) for k, c in enumerate(configs)]
        out = replay_together(t, Member(-1, self.reference.create()), followers, self.summarizer, config, counter,
                              index, tracker, entries, self.context, reference=True, pure=self.share)
        return cast(tuple[Trace, PresenceTracker], out[-1]), [cast(tuple[Trace, PresenceTracker], out[k])
                                                               for k in range(len(configs))]


def recorded_cache(t: Transcript, reference: Trace) -> dict[str, int]:
    """The prompt cache the API recorded on the fully recorded calls (before the tool's first compaction)
    beside what the ``none`` replay simulates on the same calls: the cache model checked against reality.
    The simulation uses the cache of the provider that recorded the calls (the recorded model's), not the
    run's price model: a Gemini session is checked against Gemini's cache, whatever the run is priced at."""
    from compbench.measure.cache import message_time, none_reads

    limit = min((c.index for c in t.compactions), default=len(t.messages))
    out = {"cache_calls": 0, "recorded_cache_read": 0, "recorded_input": 0, "simulated_cache_read": 0,
           "simulated_input": 0}
    messages = t.messages
    model = cache_model_for(str(t.meta.get("model") or ""))
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
    Claude Code's ``<session>/<agent>``, OpenCode's and pi's parent session) and its ``project`` (the
    working directory or project the log records; empty when unknown)."""
    parent = t.meta.get("parent_session")
    session = str(parent) if isinstance(parent, str) and parent else t.id.split("/")[0]
    project = next((str(v) for k in ("project_id", "cwd", "repository", "project")
                    if isinstance(v := t.meta.get(k), str) and v), "")
    return {"session": session, "project": project}


def replay_conditions(spec: RunSpec, t: Transcript, counter: TokenCounter) -> tuple[ReplayConfig, dict[str, Any]]:
    """The replay conditions of ``t``: its window and hidden overhead, each with where it comes from
    (fixed by the spec, or the transcript's own: the window its tool used, the overhead its recorded
    usage shows)."""
    from compbench.measure.calibrate import overhead_for
    from compbench.measure.models import effective_limits

    if spec.limits is not None:
        limits, window_source = spec.limits, "--context-window / --model (every transcript)"
    else:
        eff = effective_limits(t)
        limits, window_source = eff.limits, eff.source
    if spec.system_tokens is not None:
        system, system_source = spec.system_tokens, "--system-tokens (every transcript)"
    else:
        system, system_source = overhead_for(t, counter)
    return ReplayConfig(limits, system, cache=cache_model_for(spec.price_model, spec.cache_ttl)), {
        "window": limits.context_window, "window_source": window_source,
        "system_tokens": system, "system_tokens_source": system_source,
        "token_correction": counter.correction.label if counter.correction else "none"}


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


def _compaction_row(e: Any) -> dict[str, Any]:
    return {"seq": e.seq, "step": e.step, "phase": e.phase, "reason": e.reason, "ok": e.ok,
            "tokens_before": e.tokens_before, "tokens_after": e.tokens_after,
            "replaced": len(e.replaced_ids), "replaced_ids": list(e.replaced_ids), "kept_ids": list(e.kept_ids),
            "replaced_tokens": e.replaced_tokens, "summary": e.summary, "summary_tokens": e.summary_tokens,
            "compression": 1 - e.summary_tokens / e.replaced_tokens if e.ok and e.replaced_tokens else math.nan,
            "summarizer_input": e.summarizer_input, "summarizer_output": e.summarizer_output,
            "error": e.error or "", "attempts": e.attempts, "latency_ms": e.latency_ms,
            "summary_budget": e.summary_budget if e.summary_budget is not None else -1}


Outcome = dict[str, Table] | str  # a transcript's rows per table, or why it failed


def run_one(r: Replayer, t: Transcript) -> Outcome:
    """Replay one transcript; a failure is returned as text (recorded in the manifest), never lost."""
    try:
        return r.run(t)
    except CompbenchError as e:
        return f"error: {e}"
    except Exception as e:  # a bug on one transcript must not lose the others' results
        return f"internal error: {type(e).__name__}: {e}"


def replay_all(spec: RunSpec, transcripts: Iterable[Transcript], workers: int = 1,
               progress: Callable[[str], None] | None = None, executor: str = "local", concurrency: int = 1,
               ray_address: str | None = None) -> Iterator[tuple[Transcript, Outcome]]:
    """Replay every transcript under every strategy; yields rows (or an error string) in dataset order,
    through the executor named (:data:`compbench.replay.executors.EXECUTORS`: local processes, threads, Ray, a
    plug-in's)."""
    from compbench.replay.executors import EXECUTORS, Job

    run = EXECUTORS.get(executor)
    Replayer(spec)  # validates the spec here, before any worker starts
    for t, out in run(Job(spec, transcripts, workers, concurrency, ray_address)):
        if progress:
            progress(t.id)
        yield t, out


def versions() -> dict[str, str]:
    """The versions of the libraries a run's numbers depend on (for its manifest)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("tiktoken", "litellm", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out

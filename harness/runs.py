"""A run: every transcript × every configured strategy, replayed, measured and written to a directory.

The run directory holds ``manifest.json`` and parquet tables (``results``, ``steps``, ``compactions``,
``prunes``). Tables are written into a temporary directory that is renamed into place at the end, so a
crash never leaves a half-written run. Same inputs, same bytes: rows are ordered by transcript then
strategy, nothing depends on time except the manifest's single ``created_at`` field.

Each transcript is tokenized once (one index shared by every strategy and by the ``none`` reference);
``--workers N`` replays transcripts in N processes, results kept in dataset order.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from compbench import __version__
from compbench.errors import CompbenchError, UsageError
from compbench.facts.presence import FactIndex, PresenceTracker
from compbench.facts.sources import facts_for
from compbench.loop import ReplayConfig, Trace, replay
from compbench.metrics import result_row
from compbench.models import Prices, prices_for
from compbench.retention import CompactionFacts, evaluate
from compbench.session import ModelLimits
from compbench.strategies import Configured, resolve
from compbench.summarizers import Summarizer
from compbench.summarizers import get as get_summarizer
from compbench.tokens import TokenCounter
from compbench.transcript import Transcript, from_json, to_json

RUN_FORMAT_VERSION = 1
TABLES = ("results", "steps", "compactions", "prunes", "facts")
DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's results (and goes into its manifest)."""

    strategies: tuple[str, ...]
    limits: ModelLimits
    summarizer: str = "extractive"
    tokenizer: str = "o200k_base"
    message_overhead: int = 4
    system_tokens: int = 0
    model: str | None = None
    price_model: str = DEFAULT_PRICE_MODEL
    seed: int = 0
    summarizer_options: dict[str, Any] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d["limits"] = asdict(self.limits)
        # options can hold an API key or endpoint credentials: keep only what is safe and relevant
        d["summarizer_options"] = {k: v for k, v in sorted(self.summarizer_options.items())
                                   if k in ("api_base", "retries", "temperature", "timeout_s")}
        return d


class _Replayer:
    """Per-process state: the counter, the strategies, the summarizer, built once."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.counter = TokenCounter(spec.tokenizer, spec.message_overhead)
        self.configs: list[Configured] = [resolve(s) for s in spec.strategies]
        self.reference = resolve("none")
        self.summarizer: Summarizer = get_summarizer(spec.summarizer, **spec.summarizer_options)
        self.config = ReplayConfig(spec.limits, spec.system_tokens)
        self.prices: Prices = prices_for(spec.price_model)

    def run(self, t: Transcript) -> dict[str, list[dict[str, Any]]]:
        index = self.counter.index(t)
        facts = FactIndex.build(t, facts_for(t))

        def go(c: Configured) -> tuple[Trace, PresenceTracker]:
            tracker = PresenceTracker(facts)
            return replay(t, c.create(), self.summarizer, self.config, self.counter, index, tracker), tracker

        ref = go(self.reference)
        rows: dict[str, list[dict[str, Any]]] = {k: [] for k in TABLES}
        for c in self.configs:
            trace, tracker = ref if c.name == "none" else go(c)
            retained, per_event, fact_rows = evaluate(t, trace, facts, tracker, index.part_tokens)
            key = {"transcript_id": t.id, "strategy": c.label}
            rows["results"].append({**key, "name": c.name, "source": t.source,
                                    **result_row(trace, ref[0], self.prices), **retained})
            rows["steps"] += [{**key, **_step_row(s)} for s in _steps(trace)]
            outcome = {e.seq: e for e in per_event}
            rows["compactions"] += [{**key, **_compaction_row(e), **_event_facts(outcome.get(e.seq))}
                                    for e in trace.compactions]
            rows["facts"] += [{**key, **r} for r in fact_rows]
            rows["prunes"] += [{**key, "seq": p.seq, "step": p.step, "phase": p.phase, "reason": p.reason,
                                "parts": len(p.parts), "tokens_hidden": p.tokens_hidden} for p in trace.prunes]
        return rows


def _event_facts(c: CompactionFacts | None) -> dict[str, Any]:
    if c is None:
        return {"retention": math.nan, "lost_facts": [], "artifact_f1": math.nan, "fabricated": [],
                "guard_summary_larger": False, "guard_dropped_constraint": False}
    return {"retention": c.retention, "lost_facts": list(c.lost), "artifact_f1": c.artifact_f1,
            "fabricated": list(c.fabricated), "guard_summary_larger": c.guard_larger,
            "guard_dropped_constraint": c.guard_dropped_constraint}


def _steps(t: Trace) -> Iterable[Any]:
    return t.steps


def _step_row(s: Any) -> dict[str, Any]:
    return {"step": s.step, "message_id": s.message_id, "input": s.input, "output": s.output,
            "cache_read": s.cache_read, "cache_write": s.cache_write, "visible": s.visible, "epoch": s.epoch,
            "overflow": s.overflow}


def _compaction_row(e: Any) -> dict[str, Any]:
    return {"seq": e.seq, "step": e.step, "phase": e.phase, "reason": e.reason, "ok": e.ok,
            "tokens_before": e.tokens_before, "tokens_after": e.tokens_after,
            "replaced": len(e.replaced_ids), "replaced_ids": list(e.replaced_ids), "kept_ids": list(e.kept_ids),
            "replaced_tokens": e.replaced_tokens, "summary": e.summary, "summary_tokens": e.summary_tokens,
            "summarizer_input": e.summarizer_input, "summarizer_output": e.summarizer_output,
            "error": e.error or "", "attempts": e.attempts, "latency_ms": e.latency_ms}


_worker: _Replayer | None = None


def _init_worker(spec: RunSpec) -> None:
    global _worker
    _worker = _Replayer(spec)


def _work(payload: str) -> tuple[str, dict[str, list[dict[str, Any]]] | str]:
    assert _worker is not None
    t = from_json(payload)
    return t.id, _run_one(_worker, t)


def _run_one(r: _Replayer, t: Transcript) -> dict[str, list[dict[str, Any]]] | str:
    """Replay one transcript; a failure is returned as text (recorded in the manifest), never lost."""
    try:
        return r.run(t)
    except CompbenchError as e:
        return f"error: {e}"
    except Exception as e:  # a bug on one transcript must not lose the others' results
        return f"internal error: {type(e).__name__}: {e}"


def replay_all(spec: RunSpec, transcripts: Iterable[Transcript], workers: int = 1,
               progress: Callable[[str], None] | None = None
               ) -> Iterator[tuple[Transcript, dict[str, list[dict[str, Any]]] | str]]:
    """Replay every transcript under every strategy; yields rows (or an error string) in dataset order."""
    if workers <= 1:
        r = _Replayer(spec)
        for t in transcripts:
            out = _run_one(r, t)
            if progress:
                progress(t.id)
            yield t, out
        return
    from concurrent.futures import ProcessPoolExecutor

    _Replayer(spec)  # validate the spec here, so a bad option fails before any process starts
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(spec,)) as pool:
        batch: list[Transcript] = []
        for t in transcripts:
            batch.append(t)
            if len(batch) >= workers * 4:
                yield from _drain(pool, batch, progress)
                batch = []
        yield from _drain(pool, batch, progress)


def _drain(pool: Any, batch: list[Transcript], progress: Callable[[str], None] | None
           ) -> Iterator[tuple[Transcript, dict[str, list[dict[str, Any]]] | str]]:
    for t, (_, out) in zip(batch, pool.map(_work, [to_json(t) for t in batch]), strict=True):
        if progress:
            progress(t.id)
        yield t, out


def write_run(out: Path, spec: RunSpec, dataset: str, transcripts: Iterable[Transcript], workers: int = 1,
              progress: Callable[[str], None] | None = None, force: bool = False) -> dict[str, Any]:
    """Replay and write the run directory atomically; returns the manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if out.exists() and not force:
        raise UsageError(f"{out} exists; choose another --out or pass --force to replace it")
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        tables: dict[str, list[dict[str, Any]]] = {k: [] for k in TABLES}
        digest = hashlib.sha256()
        errors: list[dict[str, str]] = []
        ids: list[str] = []
        for t, rows in replay_all(spec, transcripts, workers, progress):
            digest.update(to_json(t).encode())
            ids.append(t.id)
            if isinstance(rows, str):
                errors.append({"transcript_id": t.id, "error": rows})
                continue
            for k in TABLES:
                tables[k] += rows[k]
        if not ids:
            raise UsageError(f"no transcripts in {dataset}")
        for k in TABLES:
            empty = pa.table({"transcript_id": pa.array([], pa.string())})
            table = pa.Table.from_pylist(tables[k]) if tables[k] else empty
            pq.write_table(table, tmp / f"{k}.parquet", compression="zstd")
        manifest = {
            "format_version": RUN_FORMAT_VERSION,
            "compbench_version": __version__,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "dataset": {"path": dataset, "fingerprint": digest.hexdigest(), "transcripts": len(ids)},
            "spec": spec.manifest(),
            "strategies": [{"label": c.label, "name": c.name, "source": c.info.source, "params": c.param_dict()}
                           for c in (resolve(s) for s in spec.strategies)],
            "errors": errors,
            "environment": {"python": platform.python_version(), **_versions()},
            "method_limits": [
                "The replay assumes the agent would have acted the same after a compaction.",
                "The extractive summarizer is a deterministic heuristic, not a model.",
            ],
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("tiktoken", "litellm", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out

"""``compbench.reports.series`` — Context over steps for the transcripts a reader is most likely to open, within a
budget of points.

The steps table holds one row per model call per configuration (20 million rows for 10,000 transcripts
× 20 configurations × 100 calls): the report cannot carry it all. It carries the series of the
transcripts that matter most — those holding the compactions whose details it keeps, then each
strategy's worst transcripts in turn (needs missed, then calls over the window) — until
:data:`MAX_POINTS`; a longer series keeps the lowest and highest value of each of :data:`MAX_STEPS`
buckets, so every compaction's drop and every peak survive. The table is read a batch at a time,
filtered to the chosen transcripts, so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

MAX_POINTS = 1_500_000  # step values over all embedded series
MAX_STEPS = 600  # points per series before it is thinned


def choose(results: Any, labels: Sequence[str], first: Iterable[str], max_points: int = MAX_POINTS) -> list[str]:
    """Transcript ids whose series to embed: ``first`` (in order), then each strategy's worst in turn."""
    import numpy as np

    steps = results.groupby("transcript_id", sort=False)["steps"].sum()
    cost = {str(t): min(int(v), MAX_STEPS * len(labels)) for t, v in steps.items()}
    chosen: dict[str, None] = {}
    total = 0

    def take(t: str) -> bool:
        nonlocal total
        if t in chosen or t not in cost:
            return True
        if total + cost[t] > max_points:
            return False
        chosen[t] = None
        total += cost[t]
        return True

    for t in first:
        if not take(t):
            return list(chosen)
    queues = []
    for label in labels:
        g = results[results["strategy"] == label]
        missed = (g["needs"] - g["needs_present"]).to_numpy()
        rank = np.lexsort((g["compactions"].to_numpy() * -1, g["overflows"].to_numpy() * -1, missed * -1))
        queues.append([str(x) for x in g["transcript_id"].to_numpy()[rank]])
    for depth in range(max((len(q) for q in queues), default=0)):
        for q in queues:
            if depth < len(q) and not take(q[depth]):
                return list(chosen)
    return list(chosen)


def thin(points: list[list[int]], max_steps: int = MAX_STEPS) -> list[list[int]]:
    """``[[step, value], ...]``: every point when few enough, else each bucket's lowest and highest."""
    n = len(points)
    if n <= max_steps:
        return points
    out: list[list[int]] = []
    size = -(-n * 2 // max_steps)
    for start in range(0, n, size):
        chunk = points[start:start + size]
        lo = min(range(len(chunk)), key=lambda k: chunk[k][1])
        hi = max(range(len(chunk)), key=lambda k: chunk[k][1])
        out += [chunk[k] for k in sorted({lo, hi})]
    return out


def read(run: Path, wanted: Sequence[str], labels: Sequence[str],
         cache_keys: frozenset[tuple[str, int, int]] = frozenset()) -> dict[str, Any]:
    """Per wanted transcript: ``{"n": calls, "s": {strategy index: [[step, input], ...]}, "o": {strategy
    index: [overflowing steps]}}``, and for each (transcript, strategy index, step) of ``cache_keys`` the
    cache tokens that call re-wrote (a compaction's price in the cache)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = run / "steps.parquet"
    series: dict[str, dict[str, Any]] = {t: {"n": 0, "s": {}, "o": {}} for t in wanted}
    scan = list(dict.fromkeys([*wanted, *(k[0] for k in cache_keys)]))
    if not scan or not path.exists():
        return {"series": series, "cache_write": {}}
    f = pq.ParquetFile(path)
    names = f.schema_arrow.names
    if not {"transcript_id", "strategy", "step", "input"} <= set(names):
        return {"series": series, "cache_write": {}}
    cols = [c for c in ("transcript_id", "strategy", "step", "input", "cache_write", "overflow") if c in names]
    want = pa.array(scan)
    parts = []
    for rb in f.iter_batches(batch_size=65_536, columns=cols):
        batch = pa.Table.from_batches([rb])
        keep = pc.is_in(batch["transcript_id"], value_set=want)
        if pc.any(keep).as_py():
            parts.append(batch.filter(keep))
    cache_write: dict[tuple[str, int, int], int] = {}
    if not parts:
        return {"series": series, "cache_write": cache_write}
    table = pa.concat_tables(parts)
    tcode = pc.index_in(table["transcript_id"], value_set=want).to_numpy(zero_copy_only=False)
    scode = pc.fill_null(pc.index_in(table["strategy"], value_set=pa.array(list(labels))), -1).to_numpy(
        zero_copy_only=False)
    tcode = tcode.astype(int)
    step = table["step"].to_numpy(zero_copy_only=False).astype(int)
    value = table["input"].to_numpy(zero_copy_only=False).astype(int)
    written = (table["cache_write"].to_numpy(zero_copy_only=False).astype(int) if "cache_write" in table.column_names
               else np.zeros(len(step), int))
    over = (table["overflow"].to_numpy(zero_copy_only=False).astype(bool) if "overflow" in table.column_names
            else np.zeros(len(step), bool))
    order = np.lexsort((step, scode, tcode))
    order = order[scode[order] >= 0]
    tcode, scode, step, value, written, over = (a[order] for a in (tcode, scode, step, value, written, over))
    cuts = np.flatnonzero((np.diff(tcode) != 0) | (np.diff(scode) != 0)) + 1
    bounds = zip(np.concatenate([[0], cuts]).tolist(), np.concatenate([cuts, [len(step)]]).tolist(), strict=True)
    for a, b in bounds:
        if a == b:
            continue
        t, s = scan[tcode[a]], int(scode[a])
        if cache_keys:
            for st, w in zip(step[a:b].tolist(), written[a:b].tolist(), strict=True):
                if (t, s, st) in cache_keys:
                    cache_write[(t, s, st)] = w
        if t not in series:
            continue
        entry = series[t]
        entry["n"] = max(entry["n"], int(step[b - 1]) + 1)
        entry["s"][str(s)] = thin(np.column_stack([step[a:b], value[a:b]]).tolist())
        hits = step[a:b][over[a:b]]
        if len(hits):
            entry["o"][str(s)] = hits[:MAX_STEPS].tolist()
    return {"series": series, "cache_write": cache_write}
    df = pa.concat_tables(parts).to_pandas()
    sindex = {s: i for i, s in enumerate(labels)}
    df["s"] = df["strategy"].map(sindex)
    df = df[df["s"].notna()].sort_values(["transcript_id", "s", "step"], kind="stable")
    if "cache_write" not in df:
        df["cache_write"] = 0
    if "overflow" not in df:
        df["overflow"] = False
    for (t, si), g in df.groupby(["transcript_id", "s"], sort=False):
        t, s = str(t), int(si)
        steps, values = g["step"].to_numpy(), g["input"].to_numpy()
        if cache_keys:
            for step, w in zip(steps.tolist(), g["cache_write"].to_numpy().tolist(), strict=True):
                if (t, s, step) in cache_keys:
                    cache_write[(t, s, step)] = int(w)
        if t not in series:
            continue
        entry = series[t]
        entry["n"] = max(entry["n"], int(steps[-1]) + 1)
        entry["s"][str(s)] = thin(np.column_stack([steps, values]).tolist())
        over = steps[g["overflow"].to_numpy().astype(bool)]
        if len(over):
            entry["o"][str(s)] = over[:MAX_STEPS].tolist()
    return {"series": series, "cache_write": cache_write}

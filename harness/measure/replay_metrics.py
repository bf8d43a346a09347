"""``compbench.measure.replay_metrics`` — Per-replay metrics: what a strategy spent and saved on one transcript,
against the ``none`` reference (the metrics results are *decided* on, ratios over transcripts, are
:mod:`compbench.decide.metrics`'; this module was ``measure.metrics`` until the two names were told apart).

Pure functions over a :class:`~compbench.replay.trajectories.Trace`; the run writer turns them into table rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compbench.measure.models import Prices
from compbench.measure.savings import net_saved, saved
from compbench.sdk.events import NOOP
from compbench.sdk.kinds import RECORDED_META
from compbench.sdk.trace import Trace

REACQUIRED_COLUMNS = ("reacquisitions", "reacquired_content_tokens", "reacquired_content_tokens_soon",
                      "reacquired_tokens", "reacquired_output_tokens", "reacquired_cost_usd")


@dataclass(frozen=True, slots=True)
class Totals:
    steps: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    peak: int
    overflows: int


def totals(t: Trace) -> Totals:
    s = t.steps
    return Totals(
        steps=len(s),
        input=sum(x.input for x in s),
        output=sum(x.output for x in s),
        cache_read=sum(x.cache_read for x in s),
        cache_write=sum(x.cache_write for x in s),
        peak=max((x.input for x in s), default=0),
        overflows=sum(1 for x in s if x.overflow),
    )


def cost(t: Totals, summarizer_input: int, summarizer_output: int, p: Prices, summarizer_cached: int = 0) -> float:
    """Dollars, cache-aware: each call's cached prefix at the cache-read price, what it writes to the cache
    at the cache-write price (the input price times the provider's write premium, see
    :func:`compbench.measure.models.prices_with_cache`), anything else at the input price. A summary request pays
    the cache-read price for the part the session's cache serves (see the loop)."""
    uncached = t.input - t.cache_read - t.cache_write
    return (uncached * p.input + t.cache_read * p.cache_read + t.cache_write * p.cache_write
            + t.output * p.output + summarizer_cached * p.cache_read
            + (summarizer_input - summarizer_cached) * p.input + summarizer_output * p.output)


def cost_without_cache(t: Totals, summarizer_input: int, summarizer_output: int, p: Prices) -> float:
    """Dollars if nothing were cached: the other end of the cost range (every input token at full price)."""
    return (t.input + summarizer_input) * p.input + (t.output + summarizer_output) * p.output


def summarizer_cost(trace: Trace, prices: Prices, by_role: Mapping[str, Prices] | None = None,
                    cached: bool = True) -> float:
    """Dollars of the summary requests, each at the model that makes it: its ``model`` role (aider's "weak",
    Goose's "fast", else the session's own) priced by ``by_role``, the session's ``prices`` where it names none.
    The session's prompt cache serves a request only at the session's own model (``cached``: with the cache);
    what a request marked for caching writes is paid at the cache-write price (pi's, :mod:`.cache`)."""
    total = 0.0
    for c in trace.compactions:
        role = str(c.meta.get("model") or "")
        p = (by_role or {}).get(role, prices)
        shared = c.summarizer_cached if cached and p is prices else 0
        written = c.summarizer_written if cached else 0
        total += (shared * p.cache_read + written * p.cache_write + (c.summarizer_input - shared - written) * p.input
                  + c.summarizer_output * p.output)
    return total


def _overflows_before_action(trace: Trace) -> int:
    """Calls a real API would have refused before the strategy first changed the view (all of them if it
    never did): a strategy that cannot act in time overflows here."""
    first = min([c.step for c in trace.compactions if c.ok and c.replaced_ids]
                + [p.step for p in trace.prunes if p.parts], default=None)
    return sum(1 for x in trace.steps if x.overflow and (first is None or x.step < first))


def result_row(trace: Trace, reference: Trace, prices: Prices,
               reacquired: Mapping[str, Any] | None = None,
               summarizer_prices: Mapping[str, Prices] | None = None) -> dict[str, Any]:
    """One ``results`` row: counts, tokens, savings and cost against the ``none`` replay; with ``reacquired``
    (:func:`compbench.measure.reacquire.columns`), the effective savings: what is left once re-acquiring the
    content the strategy's view lost is paid for. Summary requests are priced at the model that makes them
    (``summarizer_prices`` by role, :func:`summarizer_cost`)."""
    t, ref = totals(trace), totals(reference)
    summ_in = sum(c.summarizer_input for c in trace.compactions)
    summ_out = sum(c.summarizer_output for c in trace.compactions)
    summ_cached = sum(c.summarizer_cached for c in trace.compactions)
    dollars = cost(t, 0, 0, prices) + summarizer_cost(trace, prices, summarizer_prices)
    ref_dollars = cost(ref, 0, 0, prices)
    plain = cost_without_cache(t, 0, 0, prices) + summarizer_cost(trace, prices, summarizer_prices, cached=False)
    ref_plain = cost_without_cache(ref, 0, 0, prices)
    return {
        "steps": t.steps,
        "compactions": sum(1 for c in trace.compactions if c.ok),
        "failed_compactions": sum(1 for c in trace.compactions if not c.ok and c.error != NOOP),
        # a recorded compaction applied with nothing the log holds to replace counts here too (compbench.strategies
        # .recorded: the tool deleted what it replaced from its log)
        "noop_compactions": sum(1 for c in trace.compactions
                                if c.error == NOOP or (c.ok and not c.replaced_ids and RECORDED_META in c.meta)),
        "prunes": sum(1 for p in trace.prunes if p.parts),
        "pruned_parts": sum(len(p.parts) for p in trace.prunes),
        "overflows": t.overflows,
        "input_tokens": t.input,
        "output_tokens": t.output,
        "cache_read_tokens": t.cache_read,
        "cache_write_tokens": t.cache_write,
        "summarizer_input_tokens": summ_in,
        "summarizer_output_tokens": summ_out,
        "peak_context": t.peak,
        "mean_context": t.input / t.steps if t.steps else 0.0,
        "savings": saved(t.input, ref.input),
        "net_savings": net_saved(t.input + summ_in + summ_out, ref.input),
        "peak_ratio": t.peak / ref.peak if ref.peak else 0.0,
        "summarizer_cached_tokens": summ_cached,
        "cost_usd": dollars,
        "cost_savings": saved(dollars, ref_dollars),
        "cost_usd_nocache": plain,
        "cost_savings_nocache": saved(plain, ref_plain),
        "reference_input_tokens": ref.input,
        "reference_cost_usd": ref_dollars,
        "reference_cost_usd_nocache": ref_plain,
        "reference_steps": ref.steps,
        "reference_overflows": ref.overflows,
        "overflows_before_action": _overflows_before_action(trace),
        **_effective(t.input + summ_in + summ_out, ref.input, dollars, ref_dollars, reacquired or {}),
    }


def _effective(spent: int, ref_input: int, dollars: float, ref_dollars: float,
               reacquired: Mapping[str, Any]) -> dict[str, Any]:
    """Net savings minus what re-acquisition costs, in tokens (every input token the extra calls send and
    the re-read content rides along with) and in dollars (cache-aware)."""
    tokens = int(reacquired.get("reacquired_tokens", 0))
    usd = float(reacquired.get("reacquired_cost_usd", 0.0))
    out = {k: reacquired.get(k, 0) for k in REACQUIRED_COLUMNS}
    out["effective_savings"] = net_saved(spent + tokens, ref_input)
    out["effective_cost_savings"] = saved(dollars + usd, ref_dollars)
    return out

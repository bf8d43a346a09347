"""``compbench.decide.metrics`` — The metrics a run's results are decided on: each a ratio of sums over transcripts
(or a per-transcript mean), its column expression, its direction and bounds, the plug-in registry
(``compbench.metrics`` entry points), and how the results are grouped for the bootstrap (sessions, projects)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from compbench.errors import UsageError
from compbench.measure.savings import EFFECTIVE_SPENT, NET_SPENT
from compbench.plugins import Registry


@dataclass(frozen=True)
class Metric:
    """A headline metric: Σ num / Σ den over transcripts (1 − that when ``complement``), or a mean.

    ``common``: a per-transcript mean compared only on the transcripts where every strategy that has the
    figure anywhere has it (retention exists only where a strategy acted: averaging each strategy over its
    own subset would compare different transcripts)."""

    name: str
    title: str
    num: str
    den: str | None = None
    complement: bool = False
    higher_is_better: bool = True
    percent: bool = True
    common: bool = False
    # a saving against the reference comes only from the transcripts where the strategy acted (or spent anything
    # the reference did not): those are the ones it rests on (three acting transcripts make a figure of three,
    # whatever the dataset's size; none makes no figure: compbench.decide.bootstrap.changed)
    acted_only: bool = False
    doc: str = ""  # what it measures, in the glossary, the report and every command's help
    most: float | None = None  # the largest value it can take (1 for a share): a threshold above it is a typo

    @property
    def share(self) -> bool:
        """A percentage that cannot exceed 100% (a saving, a recall): ``90`` as its threshold means 90%, a typo."""
        return self.percent and self.most == 1.0


def _sum(*cols: str) -> str:
    return "+".join(cols)


METRICS: tuple[Metric, ...] = (
    Metric("net_savings", "net savings",
           _sum(*NET_SPENT), "reference_input_tokens", complement=True, acted_only=True,
           doc="1 − (input tokens + the summarizer's input and output tokens) / the input tokens of none, "
               "summed over transcripts; its n counts the transcripts where the strategy acted or spent "
               "differently from none (a summary paid for and dropped): with none, the figure is none ('– (n=0)')"),
    Metric("effective_savings", "effective savings",
           _sum(*EFFECTIVE_SPENT), "reference_input_tokens", complement=True, acted_only=True,
           doc="net savings once re-acquiring what the view lost is paid: 1 − (input tokens + the summarizer's "
               "tokens + the tokens the agent would spend getting back content it needs again: the extra calls "
               "and the re-read content riding along until the next compaction) / the input tokens of none; "
               "re-acquisition is predicted from the recorded agent's later edits and mentions (validated against "
               "real agents' re-reads after their tools' compactions: `compbench fidelity`)"),
    Metric("effective_cost_savings", "effective cost savings", "cost_usd+reacquired_cost_usd", "reference_cost_usd",
           complement=True, acted_only=True,
           doc="cost savings once re-acquisition is paid (cache-aware: the re-read content is written to the cache "
               "once and read by every later call until the next compaction)"),
    Metric("reacquired", "re-acquired content tokens / transcript", "reacquired_content_tokens",
           higher_is_better=False, percent=False,
           doc="tokens of content the agent would read, list or search again because the strategy's view lost "
               "it (the sizes of the outputs that had delivered it)"),
    Metric("reacquired_tokens", "tokens re-acquisition adds / transcript", "reacquired_tokens",
           higher_is_better=False, percent=False,
           doc="what effective savings subtracts from net savings: the re-acquired content, the extra calls that "
               "fetch it and the content riding along in every call until the strategy's next compaction"),
    Metric("needed_recall", "needed-fact recall", "needs_present", "needs",
           doc="needs met / needs: a need is a later step where the recorded agent uses a fact it was given "
               "(by the user or a tool), scored from the strategy's first action; met when the fact is in "
               "that step's prompt (presence: an upper bound on what a model retains)"),
    Metric("needed_recall_soon", "needed-fact recall within 10 calls of a compaction", "needs_present_soon",
           "needs_soon",
           doc="needed-fact recall on the needs of the first 10 calls after each compaction: what its summary "
               "had to serve (real summaries carry what is about to be used)"),
    Metric("needed_recall_later", "needed-fact recall later on", "needs_present_later", "needs_later",
           doc="needed-fact recall on every other need (more than 10 calls after a compaction, or where the "
               "strategy never compacted)"),
    Metric("needs_reacquired_real", "needs the recorded agent met only by re-acquiring", "needs_reacquired_real",
           "needs", higher_is_better=False,
           doc="the share of needs that the recorded agent itself met only by fetching the fact again after its "
               "tool's own compaction (logs with real compactions): the figure a replay inherits from the log"),
    Metric("recall_verbatim", "recall kept verbatim (summary carries nothing)", "needs_verbatim", "needs",
           doc="needs met word for word, as if summaries carried nothing: the low end of recall's range"),
    Metric("recall_copy", "recall if summaries also copied (optimistic)", "needs_upper", "needs",
           doc="needs met if each summary also carried what an extractive copy of its span carries: the "
               "high end of recall's range"),
    Metric("oracle_recall", "hindsight oracle's recall at the same cost (a bound, not a strategy)",
           "oracle_present", "needs",
           doc="needs a hindsight oracle meets at the strategy's own prompt sizes: it writes out exactly the "
               "facts the agent is about to need (or keeps the strategy's prompt, if that meets more); no "
               "strategy can do better at that cost, so the distance to it is the strategy's headroom"),
    Metric("retention", "retention after acting", "retention_after", common=True,
           doc="the share of received facts still in view at each step after the first action, averaged per "
               "transcript, on the transcripts where every strategy acted (each strategy's own when no transcript "
               "has them all)"),
    Metric("savings", "token savings", "input_tokens", "reference_input_tokens", complement=True, acted_only=True,
           doc="1 − input tokens / the input tokens of none (the summarizer's tokens not counted)"),
    Metric("cost_savings", "cost savings", "cost_usd", "reference_cost_usd", complement=True, acted_only=True,
           doc="1 − dollars / the dollars of none, with the simulated prompt cache (cache reads and writes "
               "at the price model's rates; a compaction breaks the cached prefix)"),
    Metric("cost_savings_nocache", "cost savings without a cache", "cost_usd_nocache", "reference_cost_usd_nocache",
           complement=True, acted_only=True,
           doc="cost savings if nothing were cached: every input token at the full price (the cost range's "
               "other end)"),
    Metric("cost", "cost $ / transcript", "cost_usd", higher_is_better=False, percent=False,
           doc="dollars per transcript with the simulated cache, the summarizer's calls included"),
    Metric("compactions", "compactions / transcript", "compactions", higher_is_better=False, percent=False,
           doc="successful compactions per transcript"),
    Metric("overflows", "overflows / transcript", "overflows", higher_is_better=False, percent=False,
           doc="calls per transcript whose prompt exceeds the window: a real API refuses them, so any "
               "overflow ranks a strategy below every strategy without one"),
)


METRICS = tuple(replace(m, most=1.0) if m.percent else m for m in METRICS)  # every built-in share is at most 100%


BY_NAME = {m.name: m for m in METRICS}


def _metric(name: str, obj: object) -> Metric | None:
    return obj if isinstance(obj, Metric) else None


# every metric by name: the built-ins, then plug-ins' (a Metric object named by a ``compbench.metrics``
# entry point, or a module that registers some), usable wherever a metric is named (compare, gate, tune)
REGISTRY: Registry[Metric] = Registry("metric", "compbench.metrics", adopt=_metric)
for _m in METRICS:
    REGISTRY.register(_m.name, _m, "compbench")


# names other commands used before one vocabulary: accepted everywhere, printed as the canonical name
ALIASES = {"recall": "needed_recall", "retention_at_compaction": "retention", "retention_after": "retention",
           "net": "net_savings", "token_savings": "savings", "cost_usd": "cost"}


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def metric(name: str) -> Metric:
    """The metric ``name`` (or an alias of it, see :data:`ALIASES`), a built-in or a plug-in's."""
    return REGISTRY.get(canonical(name.strip()))


def metrics_help() -> str:
    """Every metric with its meaning, for the commands' help (click keeps a ``\b`` block's lines)."""
    lines = ["\b", "Metrics:"]
    width = max(len(m.name) for m in METRICS) + 2
    lines += [f"  {m.name:<{width}}{m.title}{' (lower is better)' if not m.higher_is_better else ''}" for m in METRICS]
    names = [f"{k} (= {v})" for k, v in ALIASES.items()]
    lines += ["Older names still accepted: " + ", ".join(names[:3]) + ",", "  " + ", ".join(names[3:])]
    return "\n".join(lines)


# columns a run written before they existed lacks: a sum leaves them out (a run from before re-acquisition was
# measured has effective savings equal to its net savings, and its summary says it predates them)
ADDED_LATER = frozenset({"reacquired_tokens", "reacquired_cost_usd", "reacquired_content_tokens"})


def column(df: Any, expr: str) -> Any:
    """A metric's column expression (``a+b``: a sum of result columns) on ``df``; a column an older run lacks
    is named in the error (the metrics and the bootstrap read results through this one function)."""
    cols = [c for c in expr.split("+") if c in df.columns or c not in ADDED_LATER]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise UsageError(f"results lack column(s) {', '.join(missing)}; rerun with this compbench version")
    out = df[cols[0]].astype(float)
    for c in cols[1:]:
        out = out + df[c].astype(float)
    return out.to_numpy()


CLUSTERS = ("session", "project", "transcript")  # the resampling unit of the bootstrap


def cluster_labels(df: Any, by: str = "session") -> Any:
    """Per row, the unit it is resampled with: its session (a sub-agent with its parent), its project
    where the log records one (else its session), or the transcript itself. Runs written before these
    columns existed fall back to the transcript."""
    if by == "transcript" or "session" not in df.columns:
        return df["transcript_id"].astype(str).to_numpy()
    session = df["session"].astype(str)
    if by == "project":
        project = df["project"].astype(str)
        return project.where(project != "", "session:" + session).to_numpy()
    return session.to_numpy()


def common_transcripts(df: Any, m: Metric) -> set[str]:
    """Transcripts where every strategy that has ``m`` anywhere has it (see :attr:`Metric.common`)."""
    import numpy as np

    values = df.assign(_v=column(df, m.num))
    having = values[~np.isnan(values["_v"])]
    strategies = set(having["strategy"])
    if not strategies:
        return set()
    per = having.groupby("transcript_id")["strategy"].nunique()
    return {str(t) for t, k in per.items() if k == len(strategies)}


def available(df: Any, metrics: Sequence[Metric] = METRICS) -> list[Metric]:
    """The built-in metrics ``df`` has the columns of: a run written before a metric existed (version 1 had
    no re-acquisition) is shown without it; a metric asked for by name still names what is missing."""
    have = set(df.columns)

    def ok(m: Metric) -> bool:
        cols = (*m.num.split("+"), *(m.den.split("+") if m.den else ()))
        return m not in METRICS or (all(c in have or c in ADDED_LATER for c in cols) and any(c in have for c in cols))

    return [m for m in metrics if ok(m)]

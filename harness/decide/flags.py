"""``compbench.decide.flags`` — What makes a strategy's figures misleading, found in a run's results: never acted,
acted on some, a threshold beyond the window, overflows, no-op or failed compactions, degenerate, identical
configurations; and the run's notes on its cache, overhead fits and prices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compbench.sdk.kinds import RECORDED, REFERENCE
from compbench.sdk.tools import FROM_LOG

DEGENERATE_SHARE = 0.5  # compacting on at least half of the calls: the strategy cannot keep anything


# the columns two configurations must agree on, transcript by transcript, to behave identically
SAME_BEHAVIOUR = ("steps", "compactions", "prunes", "pruned_parts", "overflows", "input_tokens", "output_tokens",
                  "summarizer_input_tokens", "summarizer_output_tokens", "needs_present", "cost_usd")


@dataclass(frozen=True)
class Flag:
    """Something that makes a strategy's figures misleading: ``kind`` for code (rankings), ``text`` for people."""

    kind: str  # never_acted | partial | beyond_window | overflows | noop | failed | degenerate | designed | identical |
    #            reference_overflows
    text: str

    @property
    def short(self) -> str:
        """A few words for a table cell or a compact line (the full text is in :attr:`text`)."""
        return SHORT.get(self.kind, self.kind)

    @property
    def severity(self) -> str:
        """``bad`` (a figure is misleading), ``warn`` (read it with care) or ``info`` (the table shows it)."""
        return SEVERITY.get(self.kind, "bad")


SHORT = {"never_acted": "never acted", "partial": "acted on some", "beyond_window": "threshold beyond window",
         "overflows": "calls over window", "noop": "no-op compactions", "failed": "failed compactions",
         "degenerate": "degenerate", "identical": "identical config", "reference_overflows": "reference overflows",
         "designed": "by design"}


SEVERITY = {"never_acted": "warn", "partial": "info", "noop": "info", "identical": "warn", "designed": "info"}


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' * (n != 1)}"




def _designed(name: str) -> dict[str, str]:
    """What the tool a strategy reproduces does by design that a generic flag would misname (its declaration's
    ``designed``: compbench.sdk.tools.Tool); nothing for an unknown or undeclared strategy."""
    from compbench.errors import UsageError
    from compbench.sdk.registry import get

    if name == RECORDED:  # the tool as it ran: however often it compacted, the log says it did
        return {"degenerate": "the tools' own compactions, as their logs record them",
                "noop": "the log holds nothing of what these compactions replaced (the tool deleted it from its "
                        "log): the row inserts their summaries, and every row's figures before them miss that "
                        "history"}
    try:
        tool = get(name).tool
    except UsageError:  # a plug-in's strategy that is not installed here
        return {}
    return dict(tool.designed) if tool is not None else {}


def flag_details(results: Any) -> dict[str, list[Flag]]:
    """Per strategy label, what makes its figures misleading (see :func:`strategy_flags`)."""
    import numpy as np

    identical = {label: group[0] for group in identical_configurations(results) for label in group[1:]}
    out: dict[str, list[Flag]] = {}
    for label, g in results.groupby("strategy", sort=False):
        flags: list[Flag] = []
        n = len(g)
        is_reference = str(g["name"].iloc[0]) == REFERENCE
        acted_rows = g["first_action_step"] >= 0 if "first_action_step" in g else g["compactions"] < 0
        acted = int(acted_rows.sum())
        if not is_reference:
            if acted == 0:
                flags.append(Flag("never_acted", f"never acted on any of {_plural(n, 'transcript')}"))
            elif acted < n:
                flags.append(Flag("partial", f"acted on {acted:,}/{n:,} transcripts"))
        before = g["overflows_before_action"].to_numpy() if "overflows_before_action" in g else np.zeros(n)
        if int(before.sum()) and not is_reference:
            k = int((before > 0).sum())
            idle = int(((before > 0) & ~acted_rows.to_numpy()).sum())
            flags.append(Flag("beyond_window", f"threshold beyond the window (inferred from behaviour): "
                                               f"{_plural(int(before.sum()), 'call')} over the window before it "
                                               f"first acted, on {_plural(k, 'transcript')}"
                                               + (f" ({idle:,} where it never acted)" if idle else "")
                                               + ": a real API refuses them"))
        after = int(g["overflows"].sum()) - (0 if is_reference else int(before.sum()))
        if after > 0 and not is_reference:
            k = int(((g["overflows"].to_numpy() - before) > 0).sum())
            flags.append(Flag("overflows", f"{_plural(after, 'call')} over the window after it acted, on "
                                           f"{_plural(k, 'transcript')}: a real API refuses them"))
        noop = int(g["noop_compactions"].sum()) if "noop_compactions" in g else 0
        designed = _designed(str(g["name"].iloc[0]))
        if noop and "noop" in designed:
            flags.append(Flag("designed", f"{noop:,} compactions: {designed['noop']}"))
        elif noop:
            flags.append(Flag("noop", f"{noop:,} compactions that would have replaced nothing (not applied, "
                                      "not charged)"))
        failed = int(g["failed_compactions"].sum())
        if failed and "failed" in designed:  # the tool's own behaviour, named as what it is, not a failure
            flags.append(Flag("designed", f"{failed:,} summaries made and not used: {designed['failed']}"))
        elif failed:
            flags.append(Flag("failed", f"{failed:,} failed compactions"))
        steps = int(g["steps"].sum())
        if steps and int(g["compactions"].sum()) >= DEGENERATE_SHARE * steps:
            share = f"compacts on {int(g['compactions'].sum()) / steps:.0%} of its calls"
            if "degenerate" in designed:
                flags.append(Flag("designed", f"{share}: {designed['degenerate']}"))
            else:
                flags.append(Flag("degenerate", f"{share}: degenerate (reserves at or above the window?)"))
        if str(label) in identical:
            flags.append(Flag("identical", f"behaves exactly as {identical[str(label)]} on every transcript "
                                           "(the parameters that differ change nothing here)"))
        if "reference_overflows" in g and is_reference:
            refused, calls = int(g["reference_overflows"].sum()), int(g["reference_steps"].sum())
            if refused:
                flags.append(Flag("reference_overflows",
                                  f"{refused:,} of its {calls:,} calls ({refused / calls:.0%}) exceed the window: "
                                  "savings are measured against calls a real API would have refused"))
        if flags:
            out[str(label)] = flags
    return out


def strategy_flags(results: Any) -> dict[str, list[str]]:
    """What makes a strategy's figures misleading, per strategy label, in words: it never acted, its
    threshold lies beyond the window (inferred: calls over the window before it first acted — a real API
    refuses them), it overflowed after acting, its compactions replaced nothing or failed, it compacts on
    most calls, it behaves exactly as another configuration. The reference's own overflows are flagged
    under ``none``."""
    return {label: [f.text for f in fs] for label, fs in flag_details(results).items()}


def identical_configurations(results: Any) -> list[list[str]]:
    """Groups (of two or more) of configurations of one strategy that behave identically on every
    transcript: a tuning grid whose parameters change nothing on the dataset shows here."""
    import numpy as np
    import pandas as pd

    cols = [c for c in SAME_BEHAVIOUR if c in results.columns]
    groups: dict[tuple[str, bytes], list[str]] = {}
    if results.empty:
        return []
    # each row's hash once for the whole frame (a row's hash is its own: the same as hashed in its group), then a
    # configuration's key: its rows' hashes in transcript order
    hashes = pd.util.hash_pandas_object(results[["transcript_id", *cols]], index=False).to_numpy()
    ids = results["transcript_id"].to_numpy()
    names = results["name"].to_numpy()
    for label, at in results.groupby("strategy", sort=False).indices.items():
        rows = at[np.argsort(ids[at], kind="stable")]
        groups.setdefault((str(names[at[0]]), hashes[rows].tobytes()), []).append(str(label))
    return [labels for labels in groups.values() if len(labels) > 1]


def cache_check(results: Any) -> dict[str, tuple[int, float, float]]:
    """Per agent with recorded cache reads: calls, recorded and simulated hit rate of ``none``."""
    if "recorded_cache_read" not in results:
        return {}
    per = results.drop_duplicates("transcript_id").groupby("source")[
        ["cache_calls", "recorded_cache_read", "recorded_input", "simulated_cache_read", "simulated_input"]].sum()
    return {str(src): (int(row["cache_calls"]), row["recorded_cache_read"] / row["recorded_input"],
                       row["simulated_cache_read"] / row["simulated_input"])
            for src, row in per.iterrows() if row["recorded_cache_read"] > 0 and row["simulated_input"] > 0}


CACHE_TOLERANCE = 0.05  # a cache model more than 5 points off the recorded hit rate of its agent is flagged


def cache_flags(results: Any) -> list[str]:
    """Per agent whose simulated prompt cache (of ``none``, the recording provider's cache) is more than
    :data:`CACHE_TOLERANCE` off what its calls recorded: ``"<agent>: simulated x% vs recorded y%"``."""
    return [f"{src}: simulated {sim:.1%} vs recorded {rec:.1%} over {calls:,} calls"
            for src, (calls, rec, sim) in cache_check(results).items() if abs(sim - rec) > CACHE_TOLERANCE]


def overhead_flags(results: Any) -> list[str]:
    """Per transcript whose hidden-overhead fit is flagged (poor fit, inherited history, a clamped rate):
    ``"<transcript>: <why>"`` (:mod:`compbench.measure.overhead`)."""
    if "overhead_flag" not in results:
        return []
    first = results.drop_duplicates("transcript_id")
    return [f"{tid}: {flag}" for tid, flag in zip(first["transcript_id"], first["overhead_flag"], strict=True)
            if isinstance(flag, str) and flag]


# a hidden-overhead flag's kind, in words, and the pattern of its sentence (compbench.measure.overhead.fit): the
# part a transcript's own figures fill
OVERHEAD_KINDS: tuple[tuple[str, str], ...] = (
    ("the overhead fit stays poor", r"the overhead fit stays poor: (?P<detail>.*)"),
    ("its first call carries history its file lacks, counted as fixed where no strategy can compact it",
     r"its first call carries (?P<detail>[\d,]+ tokens) beyond its counted context \((?P<why>[^)]*)\)"),
    ("its prompt grows at a rate its log does not explain, clamped",
     r"its prompt grows (?P<detail>x[\d.]+ per counted token \(clamped to x[\d.]+\))"),
)


def overhead_groups(results: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """The transcripts whose hidden-overhead fit is flagged, grouped by flag, the largest group first: ``(what the
    flag means, [(transcript, its own figures), ...])``; a transcript with two flags is in both groups."""
    import re

    groups: dict[str, list[tuple[str, str]]] = {}
    for line in overhead_flags(results):
        tid, _, flags = line.partition(": ")
        for flag in flags.split("; "):
            for kind, pattern in OVERHEAD_KINDS:
                m = re.match(pattern, flag.strip())
                if m:
                    why = m.groupdict().get("why")
                    groups.setdefault(kind, []).append((tid, m["detail"] + (f"; {why}" if why else "")))
                    break
            else:
                head, _, rest = flag.partition(": ")
                groups.setdefault(head, []).append((tid, rest))
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def price_models(results: Any) -> str:
    """What the run's transcripts were priced at: each model with its number of transcripts, and how many
    fell back to the default (no recorded model, or one litellm's table does not price)."""
    if "price_model" not in results:
        return ""
    first = results.drop_duplicates("transcript_id")
    counts = first["price_model"].value_counts()
    text = ", ".join(f"{m} ({n})" for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    fallback = (int(first["price_model_source"].str.contains("the default").sum()) if "price_model_source" in first
                else 0)
    local = int((first["price_model"] == "local").sum())
    default = f"; {fallback} at the default (no recorded model, or one the table does not price)" if fallback else ""
    return text + default + (f"; {local} local ($0: the model ran on the user's machine)" if local else "")


def unpriced_models(results: Any) -> list[str]:
    """The recorded models litellm's table does not price (their transcripts priced at the default): flagged."""
    if "price_model_source" not in results:
        return []
    first = results.drop_duplicates("transcript_id")
    found = first["price_model_source"].str.extract(r"^UNPRICED: recorded model (\S+)")[0].dropna()
    return sorted(set(found))


ONE_M = 1_000_000


def inferred_windows(results: Any) -> tuple[list[str], list[str]]:
    """Claude Code sessions on a 1M window, whose auto-compact rule is inferred: (those whose window their own
    first automatic compaction shows, those left to the version table). Anthropic tunes a model's default
    window without a release (anthropics/claude-code#86863), so either rests on evidence a reader should see."""
    if not {"window", "preset_source", "source"} <= set(results.columns):
        return [], []
    wide = results[(results["window"] >= ONE_M) & (results["source"] == "claude-code")]
    from_log = set(wide.loc[wide["preset_source"].astype(str).str.contains(FROM_LOG, regex=False),
                            "transcript_id"].astype(str))
    table = set(wide["transcript_id"].astype(str)) - from_log
    return sorted(from_log), sorted(table)


def inferred_window_caveat(results: Any) -> str:
    """One sentence on the 1M-window sessions of a run (see :func:`inferred_windows`); "" for none."""
    from_log, table = inferred_windows(results)
    if not from_log and not table:
        return ""
    parts = []
    if from_log:
        parts.append(f"{len(from_log):,} from its own first automatic compaction (tokens before it + the 20,000 "
                     "output reserve + the 13,000 buffer)")
    if table:
        parts.append(f"{len(table):,} from the version table, its log showing no automatic compaction past 200k "
                     "(public reports of where those versions compacted; the default can change without a release)")
    n = len(from_log) + len(table)
    return (f"{_plural(n, 'Claude Code session')} on a 1M window, whose auto-compact window is inferred: "
            + "; ".join(parts) + " (see results: preset_source)")

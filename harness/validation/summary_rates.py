"""``compbench.validation.summary_rates`` — What real summaries keep: keep-rates and sizes fitted on the compactions
real tools recorded, for the ``calibrated`` summarizer (:mod:`compbench.summarizers.keep_rates` reads them).

Claude Code, OpenCode and pi write their own summary into the session log. For each such compaction
the *span* is what the tool summarized: the context it had right before (after an earlier compaction:
that summary, the messages it kept, and what followed), less the messages it kept verbatim. Every derived
fact present in the span is an opportunity; it is *kept* when the real summary contains its anchor. Per
fact kind and provenance, the pooled share kept is the keep-rate the ``calibrated`` summarizer applies;
cells with few opportunities are shrunk towards their kind's rate (:data:`PRIOR_WEIGHT` pseudo-counts).
Sizes: the real summary's tokens against the span's.

The fitted table ships as ``compbench/summarizers/keep_rates.json``, with the files and compactions it
came from. Regenerate it (and its test compares a fresh fit with it) with::

    python -m compbench.validation.summary_rates ../shared/transcripts ../shared/real-compactions
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compbench.data.facts import KINDS, Fact
from compbench.data.transcript import Message, Transcript
from compbench.measure.facts.derive import extract
from compbench.measure.facts.presence import FactIndex, part_match_text
from compbench.summarizers import keep_rates
from compbench.summarizers.keep_rates import CHARS_PER_TOKEN, chars_tokens, draw, keep_rate

TABLE = keep_rates.TABLE
PROVENANCES = ("user", "tool", "agent")  # system facts are boilerplate: never a summary's job
PRIOR_WEIGHT = 5.0
SUMMARY_TOOLS = ("claude-code", "opencode", "pi", "cline", "roo-code", "kilo-code", "crush", "aider",
                 "goose")  # logs with a readable summary


@dataclass(frozen=True)
class Observation:
    """One real compaction: the facts of its span (id, kind, provenance), those its summary kept."""

    tool: str
    transcript: str
    n: int
    span: tuple[tuple[str, str, str], ...]
    kept: frozenset[str]
    span_tokens: int
    summary_tokens: int

    @property
    def share(self) -> float:
        return len(self.kept) / len(self.span) if self.span else float("nan")




def span_of(t: Transcript, n: int) -> list[Message]:
    """The messages the tool summarized at its n-th compaction (see the module docstring)."""
    from compbench.data.recorded import segment

    seg, _ = segment(t, n)
    rc = seg.compactions[0]
    kept = set(rc.kept_ids)
    return [m for m in seg.messages[: rc.index] if m.id not in kept and not m.meta.get("compaction")]


def facts_in_messages(index: FactIndex, messages: Sequence[Message]) -> frozenset[str]:
    """The facts present in ``messages`` (matched on their text: a segment's head is a new message)."""
    out: set[str] = set()
    for m in messages:
        for p in m.parts:
            out |= index.matcher.facts_in(part_match_text(p))
    return frozenset(out)


def observations(t: Transcript) -> list[Observation]:
    """Every real compaction of ``t`` whose summary the log holds in readable form."""
    if t.source not in SUMMARY_TOOLS or not t.compactions:
        return []
    index = FactIndex.build(t, extract(t))
    facts = {f.id: f for f in index.facts}
    out = []
    for n, rc in enumerate(t.compactions):
        if not rc.summary or rc.meta.get("encrypted"):
            continue
        span = span_of(t, n)
        present = sorted(f for f in facts_in_messages(index, span)
                         if facts[f].provenance in PROVENANCES and not facts[f].boilerplate)
        in_summary = index.matcher.facts_in(rc.summary)
        out.append(Observation(t.source, t.id, n + 1,
                               tuple((f, facts[f].kind, facts[f].provenance) for f in present),
                               frozenset(f for f in present if f in in_summary),
                               chars_tokens(span), len(rc.summary) // CHARS_PER_TOKEN))
    return out


@dataclass(frozen=True)
class Kept:
    """Facts of one real compaction's span kept by the real summary, by ``calibrated`` and by ``extractive``
    summarizing the same span (``loo``: calibrated with rates fitted without this transcript)."""

    n: int
    facts: int
    real: int
    calibrated: int
    extractive: int
    loo: int | None = None


def kept_by_summarizers(t: Transcript, rates: Mapping[str, Any] | None = None,
                        loo_rates: Mapping[str, Any] | None = None) -> list[Kept]:
    """For every real compaction of ``t`` with a readable summary: what each summarizer keeps of its span."""
    from compbench.sdk.context import ReplayContext
    from compbench.sdk.session import SummaryRequest
    from compbench.summarizers.calibrated import CalibratedSummarizer
    from compbench.summarizers.extractive import ExtractiveSummarizer

    if t.source not in SUMMARY_TOOLS or not t.compactions:
        return []
    index = FactIndex.build(t, extract(t))
    context = ReplayContext()
    context.begin(t, index)  # provenance from the whole transcript, as in a run
    obs = {o.n: o for o in observations(t)}
    out = []
    for n, o in sorted(obs.items()):
        span = span_of(t, n - 1)
        ids = {f for f, _, _ in o.span}
        request = SummaryRequest("", tuple(span), tuple(span))

        def kept(text: str, ids: set[str] = ids) -> int:
            return len(ids & index.matcher.facts_in(text))

        cal = CalibratedSummarizer(rates, context=context)
        loo = None
        if loo_rates is not None:
            loo = kept(CalibratedSummarizer(loo_rates, context=context).summarize(request).text)
        out.append(Kept(n, len(ids), len(o.kept), kept(cal.summarize(request).text),
                        kept(ExtractiveSummarizer().summarize(request).text), loo))
    return out


@dataclass(frozen=True)
class Agreement:
    """Per-fact agreement of a choice of facts with the real summaries' (kept facts only)."""

    chosen: int
    real: int
    both: int

    @property
    def precision(self) -> float:
        return self.both / self.chosen if self.chosen else float("nan")

    @property
    def recall(self) -> float:
        return self.both / self.real if self.real else float("nan")


def agreement(transcripts: Iterable[Transcript]) -> dict[str, tuple[Agreement, Agreement]]:
    """Which facts ``calibrated`` keeps against which the real summary kept, per fact, on the compactions of
    the held-out sessions (:func:`compbench.validation.reacquisition.split`) with keep-rates fitted on the
    other half; beside it the null: the same rates applied by each fact's fixed draw alone (no ranking).
    Also on the fit half itself. Returns split -> (calibrated, null)."""
    from compbench.summarizers.calibrated import choose
    from compbench.validation.reacquisition import split

    per: list[tuple[str, Observation, dict[str, tuple[Fact, int, int]]]] = []
    for t in transcripts:
        obs = {o.n: o for o in observations(t)}
        if not obs:
            continue
        index = FactIndex.build(t, extract(t))
        facts = {f.id: f for f in index.facts}
        for n, o in sorted(obs.items()):
            ids = {f for f, _, _ in o.span}
            seen: dict[str, tuple[Fact, int, int]] = {}
            for k, m in enumerate(span_of(t, n - 1)):
                for p in m.parts:
                    for f in index.matcher.facts_in(part_match_text(p)) & ids:
                        seen[f] = (facts[f], k, seen[f][2] + 1 if f in seen else 1)
            per.append((split(t.id), o, seen))
    rates = fit([o for s, o, _ in per if s == "fit"])["rates"]
    out: dict[str, tuple[Agreement, Agreement]] = {}
    for part in ("held-out", "fit"):
        got = [0, 0, 0]
        null = [0, 0, 0]
        for s, o, seen in per:
            if s != part:
                continue
            chosen = choose(seen, rates)
            drawn = {f for f, (fact, _, _) in seen.items() if draw(fact) < keep_rate(fact.kind, fact.provenance, rates)}
            for acc, pick in ((got, chosen), (null, drawn)):
                acc[0] += len(pick)
                acc[1] += len(o.kept)
                acc[2] += len(pick & o.kept)
        out[part] = (Agreement(*got), Agreement(*null))
    return out


def fit(obs: Sequence[Observation]) -> dict[str, Any]:
    """The keep-rate table and size model from observations (see the module docstring)."""
    cells: dict[tuple[str, str], list[int]] = {}
    for o in obs:
        for fid, kind, prov in o.span:
            c = cells.setdefault((kind, prov), [0, 0])
            c[0] += fid in o.kept
            c[1] += 1
    kept_all = sum(c[0] for c in cells.values())
    total_all = sum(c[1] for c in cells.values())
    overall = kept_all / total_all if total_all else 0.0
    rates: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        kk = sum(cells.get((kind, p), [0, 0])[0] for p in PROVENANCES)
        kn = sum(cells.get((kind, p), [0, 0])[1] for p in PROVENANCES)
        kind_rate = (kk + PRIOR_WEIGHT * overall) / (kn + PRIOR_WEIGHT)
        for prov in PROVENANCES:
            k, n = cells.get((kind, prov), [0, 0])
            rates[f"{kind}/{prov}"] = {"kept": k, "of": n,
                                       "rate": round((k + PRIOR_WEIGHT * kind_rate) / (n + PRIOR_WEIGHT), 4)}
    sizes = sorted(o.summary_tokens for o in obs)
    ratios = sorted(o.summary_tokens / o.span_tokens for o in obs if o.span_tokens)
    return {
        "regenerate": "python -m compbench.validation.summary_rates ../shared/transcripts ../shared/real-compactions",
        "overall_rate": round(overall, 4),
        "rates": rates,
        "size": {"ratio": round(statistics.median(ratios), 4) if ratios else 0.02,
                 "min_tokens": _quantile(sizes, 0.1), "max_tokens": _quantile(sizes, 0.9)},
        "observations": [{"tool": o.tool, "transcript": o.transcript, "n": o.n, "facts": len(o.span),
                          "kept": len(o.kept), "span_tokens": o.span_tokens, "summary_tokens": o.summary_tokens}
                         for o in obs],
    }


def _quantile(xs: Sequence[int], q: float) -> int:
    if not xs:
        return 0
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def fit_paths(paths: Sequence[str]) -> dict[str, Any]:
    from compbench.data.formats import read_all

    obs = [o for t in sorted(read_all(list(paths)), key=lambda t: t.id) for o in observations(t)]
    return fit(obs)








def main(argv: Sequence[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    data = fit_paths(argv)
    TABLE.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(data['observations'])} real compactions -> {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``compbench.cli.judge_cost`` — What ``compbench judge`` would send, and what it would cost, before it sends
anything.

The estimate is the judged track itself (:func:`compbench.run.judge.judge_run`: the same replay, the same
compactions, the same probes) with stand-in models that answer every call at once, offline: a probe is always
written, answered and graded, so every call a real run could make is counted. Each call's prompt is counted as
sent (the run's tokenizer, ``o200k_base``, scaled to the model family's tokenizer where
:mod:`compbench.measure.token_correction` knows it); what a model writes is unknown before it writes it, so the
estimate is a range: from the prompts alone, up to every output at its budget and every model-written text
inside a later prompt (the question in the answer's prompt; question, reference and answer in the grade's) at
its budget too. Prices are litellm's for the model; a model litellm does not price is said, with its tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BUDGET = 600  # the output budget of every judged-track call (compbench.run.judge._ask)
PLACEHOLDER = '{"question": "?", "answer": "?", "correct": true}'  # a probe, an answer and a grade at once
ROLES = ("probe", "answer", "grade")  # written by the judge, answered by the agent, graded by the judge
# model-written text a call's prompt carries, at most: the answer's prompt holds the question, the grade's the
# question, the reference answer and the agent's answer
UNKNOWN = {"probe": 0, "answer": 1, "grade": 3}


@dataclass
class Call:
    role: str
    prompt: int  # tokens of the prompt as counted, without the model-written parts
    unknown: int  # at most this many more: model-written text inside the prompt
    output: int  # at most this many output tokens


@dataclass
class Tally:
    """A stand-in model: every call answered at once with :data:`PLACEHOLDER`, its request counted."""

    spec: str
    calls: list[Call] = field(default_factory=list)
    name: str = "tally"
    counter: Any = None

    def summarize(self, request: Any) -> Any:
        from compbench.run.judge import ANSWER_SYSTEM, JUDGE_SYSTEM, PROBE_SYSTEM
        from compbench.summarizers import SummaryResult
        from compbench.summarizers.llm import request_messages

        role = {PROBE_SYSTEM: "probe", ANSWER_SYSTEM: "answer", JUDGE_SYSTEM: "grade"}.get(request.system, "probe")
        counter = self.counter = self.counter or _counter(self.spec)
        prompt = sum(counter.count_text(str(m.get("content") or "")) + counter.message_overhead
                     for m in request_messages(request))
        budget = request.max_output_tokens or BUDGET
        self.calls.append(Call(role, prompt, UNKNOWN[role] * budget, budget))
        return SummaryResult(PLACEHOLDER, prompt, 0)


def _counter(spec: str) -> Any:
    from compbench.measure.token_correction import family_correction, family_of
    from compbench.measure.tokens import TokenCounter

    family = family_of(model_of(spec))
    return TokenCounter("o200k_base", correction=family_correction(family, "o200k_base") if family else None)


def model_of(spec: str) -> str:
    """The model a ``litellm:MODEL`` / ``cache-only:DIR@MODEL`` spec names ('' when none)."""
    kind, _, arg = spec.partition(":")
    return arg.rpartition("@")[2] if kind == "cache-only" and "@" in arg else arg if kind == "litellm" else ""


@dataclass(frozen=True)
class Priced:
    """One model's share of the estimate."""

    spec: str
    roles: tuple[str, ...]
    calls: int
    prompt: int
    unknown: int
    output: int
    low: float | None  # dollars: prompts only; None when the model has no price
    high: float | None  # dollars: every output and model-written text at its budget
    note: str  # how it is priced, in words


def priced(spec: str, calls: Sequence[Call], roles: tuple[str, ...]) -> Priced:
    """``calls`` of one model, priced: litellm's prices for it, nothing for answers from a cache, and no figure
    (said) for a model litellm does not price."""
    mine = [c for c in calls if c.role in roles]
    prompt, unknown, output = (sum(c.prompt for c in mine), sum(c.unknown for c in mine),
                               sum(c.output for c in mine))
    kind = spec.partition(":")[0]
    if kind != "litellm":
        what = "answers from its response cache" if kind == "cache-only" else "an offline stand-in"
        return Priced(spec, roles, len(mine), prompt, unknown, output, 0.0, 0.0, f"{what}: nothing is sent")
    from compbench.measure.models import prices_for
    from compbench.measure.pricing import price_entry

    model = model_of(spec)
    entry = price_entry(model) if model else None
    if entry is None:
        return Priced(spec, roles, len(mine), prompt, unknown, output, None, None,
                      f"litellm has no price for {model or spec}: tokens only (a local model costs no API fees)")
    p = prices_for(entry)
    low = prompt * p.input
    high = (prompt + unknown) * p.input + output * p.output
    rate = f"${p.input * 1e6:,.2f} in / ${p.output * 1e6:,.2f} out per million tokens"
    return Priced(spec, roles, len(mine), prompt, unknown, output, low, high, f"at {entry}'s prices ({rate})")


def dollars(v: float | None) -> str:
    return "no price" if v is None else f"${v:,.4f}" if v < 1 else f"${v:,.2f}"


def estimate(run: Path, agent_spec: str, judge_spec: str, max_events: int) -> tuple[list[str], float | None]:
    """The lines of the estimate and its upper bound in dollars (None when a model has no price): the probes
    and compactions the judged track would take, each model's calls, tokens and cost."""
    from compbench.cli.compare_view import wrap
    from compbench.run.judge import judge_run

    agent, judge = Tally(agent_spec), Tally(judge_spec)
    rows = judge_run(run, agent, judge, max_events)
    calls = [*agent.calls, *judge.calls]
    events = len({(r["transcript_id"], r["strategy"], r["seq"]) for r in rows})
    out = [f"judge estimate: {len(rows):,} probes on {events:,} compactions (--max-events {max_events:,}), "
           f"{len(calls):,} model calls; nothing sent yet"]
    shares = ([priced(agent_spec, calls, ROLES)] if agent_spec == judge_spec else
              [priced(agent_spec, calls, ("answer",)), priced(judge_spec, calls, ("probe", "grade"))])
    for s in shares:
        what = "writes probes, answers and grades" if len(s.roles) == 3 else (
            "answers the probes" if s.roles == ("answer",) else "writes and grades the probes")
        cost = f": {dollars(s.low)} – {dollars(s.high)} {s.note}" if s.low is not None else f"; {s.note}"
        out += wrap(f"  {s.spec} ({what}): {s.calls:,} calls, {s.prompt:,} prompt tokens (+ up to {s.unknown:,} "
                    f"the models write into them), up to {s.output:,} output tokens{cost}", indent="    ")
    known = [s for s in shares if s.high is not None]
    high = None if len(known) < len(shares) else sum(s.high or 0.0 for s in known)
    low = sum(s.low or 0.0 for s in known)
    total = (f"{dollars(low)} – {dollars(high)}" if high is not None else
             f"{dollars(low)} – {dollars(sum(s.high or 0.0 for s in known))} for the priced model"
             if known else "no price")
    out += wrap(f"  total: {total} (prompts counted with o200k_base, scaled to the model's tokenizer where known; "
                "every call is counted, though one already in the response cache costs nothing)", indent="    ")
    return out, high

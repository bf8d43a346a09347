"""``compbench.validation.subagents`` — What Claude Code's sub-agents spend, and what their work adds to the main
context, read from the logs (issue 41).

**The share.** Per session, every call's recorded tokens (its prompt, the cache read and written included, and its
output) and their cost at the recorded model's prices (the table's; cache writes at its 5-minute price): the main
conversation's, and each sub-agent's, from its own file (``<session>/subagents/agent-<id>.jsonl``, imported and
linked to its session) or, where that file is not beside the main one, from the ``agent_progress`` records the main
file streams it in (:mod:`compbench.data.formats.claude_code_progress`: every call but the final report's, whose
usage the Task result carries).

**The main context.** A sub-agent's work reaches the main conversation as its Task result (its report and the
``agentId … <usage>`` note), not as its progress records (the UI's). Per synchronous Task result whose call made no
other call, the next main call's recorded prompt grows from the spawning call's prompt and output by the result
(as the session's own fitted counter counts it), not by the sub-agent's context: the ratio of the growth to the
result, beside the sub-agent's own final context. The overhead fit (:mod:`compbench.measure.overhead`) needs no
term for sub-agents.

Run::

    python -m compbench.validation.subagents ../shared/real-compactions/claude-code ../shared/transcripts/claude-code
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.transcript import Message, Transcript, Usage
from compbench.measure.tokens import TokenCounter

TASK_TOOLS = frozenset({"Task", "Agent"})
ASYNC_LAUNCH = "Async agent launched"  # a background sub-agent's immediate result: its report comes later


@dataclass
class Session:
    """One Claude Code session: its main conversation's calls and each sub-agent's, (model, usage) each."""

    id: str
    main: list[tuple[str, Usage]] = field(default_factory=list)
    fit: tuple[float, float] = (float("nan"), float("nan"))  # the overhead fit's first-call and median errors
    from_files: dict[str, list[tuple[str, Usage]]] = field(default_factory=dict)
    streamed: dict[str, list[tuple[str, Usage]]] = field(default_factory=dict)

    @property
    def subagents(self) -> dict[str, list[tuple[str, Usage]]]:
        return {**self.streamed, **self.from_files}  # a sub-agent's own file wins over its streamed copy


@dataclass(frozen=True)
class Growth:
    """One Task result: the main prompt's recorded growth over it, the result as counted, the sub-agent's
    final context (``totalTokens`` where the log has it, else 0)."""

    session: str
    growth: int
    result: int
    subagent_context: int


def tokens(calls: Iterable[tuple[str, Usage]]) -> int:
    return sum(u.input + u.output for _, u in calls)


def cost(calls: Iterable[tuple[str, Usage]]) -> float:
    """Dollars at the recorded model's table prices (cache reads and writes at its cache prices)."""
    from compbench.measure.models import prices_for

    out = 0.0
    for model, u in calls:
        p = prices_for(model or "claude-sonnet-4-5")
        fresh = u.input - u.cache_read - u.cache_write
        out += fresh * p.input + u.cache_read * p.cache_read + u.cache_write * p.cache_write + u.output * p.output
    return out


def _calls(t: Transcript) -> list[tuple[str, Usage]]:
    return [(str(m.meta.get("model") or t.meta.get("model") or ""), m.usage) for m in t.messages
            if m.role == "assistant" and m.usage is not None and not m.meta.get("synthetic")]


def collect(paths: Sequence[str | Path]) -> tuple[list[Session], list[Growth]]:
    """Every Claude Code session under ``paths`` with its sub-agents' calls, and the main context's growth over
    each Task result (:class:`Growth`)."""
    from compbench.data.formats.claude_code_progress import streamed
    from compbench.data.importing import transcripts
    from compbench.measure.overhead import fit

    sessions: dict[str, Session] = {}
    growths: list[Growth] = []
    for t in transcripts(paths, on_error="skip"):
        if t.source != "claude-code":
            continue
        if t.meta.get("sidechain"):
            parent = str(t.meta.get("parent_session") or t.id.split("/")[0])
            sessions.setdefault(parent, Session(parent)).from_files[str(t.meta.get("agent_id") or t.id)] = _calls(t)
            continue
        s = sessions.setdefault(t.id, Session(t.id))
        s.main = _calls(t)
        path = Path(str(t.meta.get("path") or ""))
        agents = streamed(path) if path.is_file() else {}
        s.streamed = {a: x.usages() for a, x in agents.items() if x.usages()}
        fitted, counter = fit(t, TokenCounter("o200k_base"))
        s.fit = (fitted.first_error, fitted.median_error)
        growths += growth(t, counter, agents)
    return [sessions[k] for k in sorted(sessions)], growths


def growth(t: Transcript, counter: TokenCounter, agents: Mapping[str, Any] | None = None) -> list[Growth]:
    """Per synchronous Task result of ``t`` (an assistant call whose every tool call is a Task, its results next,
    then the next call): the recorded prompt's growth over the results against the results as ``counter`` (the
    session's fitted one) counts them."""
    msgs = t.messages
    out = []
    for k, m in enumerate(msgs):
        calls = m.tool_calls()
        if m.role != "assistant" or m.usage is None or not calls or any(c.name not in TASK_TOOLS for c in calls):
            continue
        j = k + 1
        between: list[Message] = []
        while j < len(msgs) and msgs[j].role == "tool":
            between.append(msgs[j])
            j += 1
        nxt = msgs[j] if j < len(msgs) else None
        results = [r for x in between for r in x.tool_results()]
        if (nxt is None or nxt.role != "assistant" or nxt.usage is None or len(results) != len(calls)
                or any(r.output.startswith(ASYNC_LAUNCH) for r in results)):
            continue
        total = sum(_total(agents, r.output) for r in results)
        out.append(Growth(t.id, nxt.usage.input - m.usage.input - m.usage.output,
                          sum(counter.message(x) for x in between), total))
    return out


def _total(agents: Mapping[str, Any] | None, output: str) -> int:
    """The sub-agent's final context, by the ``agentId`` its result names (0 where the log has none)."""
    import re

    named = re.search(r"agentId:\s*([A-Za-z0-9_-]+)", output)
    s = agents.get(named.group(1)) if agents and named else None
    total = getattr(s, "total_tokens", None)
    return total if isinstance(total, int) else 0


def _m(n: float) -> str:
    return f"{n / 1e6:,.2f}M" if n >= 1e6 else f"{n:,.0f}"


def report(sessions: Sequence[Session], growths: Sequence[Growth]) -> list[str]:
    main = [c for s in sessions for c in s.main]
    sub = [c for s in sessions for calls in s.subagents.values() for c in calls]
    files = sum(len(s.from_files) for s in sessions)
    streamed_only = sum(len(set(s.streamed) - set(s.from_files)) for s in sessions)
    with_sub = sum(1 for s in sessions if s.subagents)
    t_main, t_sub, c_main, c_sub = tokens(main), tokens(sub), cost(main), cost(sub)
    lines = [f"Claude Code sessions: {len(sessions):,} ({with_sub:,} with sub-agents); sub-agents: "
             f"{files + streamed_only:,} ({files:,} from their own files, {streamed_only:,} from the main file's "
             "agent_progress records)",
             f"tokens (prompt with the cache, and output, as recorded): main {_m(t_main)}, sub-agents {_m(t_sub)}: "
             f"{t_sub / max(1, t_main + t_sub):.1%} in sub-agents; cost ${c_main:,.2f} main, ${c_sub:,.2f} "
             f"sub-agents: {c_sub / max(1e-12, c_main + c_sub):.1%}"]
    per = sorted((tokens(c for calls in s.subagents.values() for c in calls) / max(1, tokens(s.main) + tokens(
        c for calls in s.subagents.values() for c in calls)), s.id) for s in sessions if s.subagents)
    if per:
        shares = [x for x, _ in per]
        lines.append(f"per session with sub-agents, their share of its tokens: median {statistics.median(shares):.1%}, "
                     f"range {shares[0]:.1%}–{shares[-1]:.1%}")
    for label, group in (("with", [x for x in sessions if x.subagents]), ("without", [x for x in sessions
                                                                                 if not x.subagents])):
        fits = [x.fit for x in group if x.fit[1] == x.fit[1]]  # not NaN: the session records usage
        if fits:
            median = statistics.median(m for _, m in fits)
            lines.append(f"the hidden-overhead fit on the {len(fits):,} sessions {label} sub-agents: first call off "
                         f"by at most {max(f for f, _ in fits):.1%}, median per-call error {median:.1%} (the worst "
                         f"session's {max(m for _, m in fits):.1%})")
    if growths:
        ratios = sorted(g.growth / g.result for g in growths if g.result > 0)
        excess = statistics.median(g.growth - g.result for g in growths)
        contexts = [g.subagent_context for g in growths if g.subagent_context]
        q = statistics.quantiles(ratios, n=10, method="inclusive") if len(ratios) >= 2 else ratios * 9
        lines.append(
            f"what a sub-agent's work adds to the main context, over {len(growths):,} Task results: the next call's "
            f"recorded prompt grew by a median {statistics.median(g.growth for g in growths):,.0f} tokens, "
            f"{statistics.median(ratios):.2f}x the results as the session's counter counts them (10th–90th "
            f"percentile {q[0]:.2f}–{q[-1]:.2f}x; beyond the results a median {excess:,.0f} tokens, what Claude Code "
            "appends with them)"
            + (f"; the sub-agents' own final contexts were a median {statistics.median(contexts):,.0f} tokens (what "
               "the main context would have grown by had their progress records been sent)" if contexts else ""))
    return lines


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python -m compbench.validation.subagents PATH...", file=sys.stderr)
        return 2
    print("\n".join(report(*collect(argv))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""``compbench.run.judge`` — The judged track: does a model *answer* from the compacted context, or is the fact
merely present?

After a run, for each compaction event: probes are written from the facts the recorded agent *needs*
after it (present before the event and needed at a later step; one per kind: recall, artifact,
continuation, decision — Factory.ai's probe types; a kind with no needed fact falls back to one present
before, marked ``needed=False``), each with a reference answer taken from the span the compaction
replaced; the agent model answers from the view right after the compaction — its head (where the summary
sits) and its tail within the budget, never a tail-only cut that would hide the summary; a blind judge
(it never sees the strategy) scores the answer on Factory's six dimensions (0–5) and says whether it is
correct. Comparing judged correctness with deterministic presence, per fact kind, shows how far presence
overstates what a model retains.

Every model call goes through the summarizer backends' on-disk cache, so a rerun costs nothing and
``cache-only:DIR`` reproduces the whole track offline in CI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.facts import KINDS, Fact
from compbench.data.transcript import Message, Text
from compbench.measure.facts.presence import FactIndex, PresenceTracker
from compbench.sdk.kinds import REFERENCE
from compbench.sdk.session import Action, Compact, Entry, SummaryRequest
from compbench.summarizers import Summarizer

DIMENSIONS = ("accuracy", "context_awareness", "artifact_trail", "completeness", "continuity",
              "instruction_following")  # Factory.ai's probe-evaluation rubric
SPAN_CHARS = 12_000
VIEW_CHARS = 24_000
HEAD_SHARE = 0.4  # of VIEW_CHARS, for the view's first messages (the summary, the task)

PROBE_SYSTEM = ("You write evaluation probes for a coding agent whose conversation history was compacted. "
                "Reply with JSON only: {\"question\": \"...\", \"answer\": \"...\"}.")
PROBE_PROMPT = """Probe type: {kind} ({what})
Fact the agent must still know: {fact}

Conversation span that was compacted away:
{span}

Write one question the agent can only answer if it still knows this fact, and the reference answer."""
KIND_HELP = {"recall": "a specific error, command, test or identifier", "artifact": "which files it touched",
             "continuation": "what remains to be done", "decision": "a constraint or choice the user set"}
ANSWER_SYSTEM = ("You are the coding agent continuing this session. Answer the question from the conversation "
                 "above only; if it is not there, answer exactly: unknown.")
JUDGE_SYSTEM = ("You grade an agent's answer against a reference, without knowing how its context was produced. "
                "Reply with JSON only: {" + ", ".join(f'"{d}": 0-5' for d in DIMENSIONS) + ', "correct": true|false}.')
JUDGE_PROMPT = "Question: {q}\nReference answer: {ref}\nAgent's answer: {ans}"


def _ask(llm: Summarizer, system: str, prompt: str, max_tokens: int = 600) -> tuple[str, str | None]:
    msg = Message("probe", "user", (Text(prompt),))
    r = llm.summarize(SummaryRequest(system, (msg,), (), max_tokens))
    return r.text, r.error


def _json(text: str) -> dict[str, Any] | None:
    m = re.search(r"\{.*\}", text, re.S)
    if not m:
        return None
    try:
        value = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _render(m: Message) -> str:
    from compbench.measure.facts.presence import part_match_text

    return f"{m.role.upper()}: " + "\n".join(part_match_text(p) for p in m.parts)


def _text(messages: Sequence[Message], limit: int) -> str:
    """The span a probe is written from: its newest ``limit`` characters."""
    out = "\n\n".join(_render(m) for m in messages)
    return out if len(out) <= limit else out[-limit:]


def head_and_tail(messages: Sequence[Message], limit: int, head_share: float = HEAD_SHARE) -> str:
    """The view within ``limit`` characters as a model would need it: whole messages from the start (the
    summary a compaction put first) up to ``head_share`` of the budget, the newest messages in the rest,
    and a marker where the middle was left out. A first message longer than the head's share is cut at
    its end, never dropped."""
    parts = [_render(m) for m in messages]
    total = sum(len(p) for p in parts) + 2 * max(0, len(parts) - 1)
    if total <= limit:
        return "\n\n".join(parts)
    head: list[str] = []
    used = 0
    head_budget = int(limit * head_share)
    for p in parts:
        if used + len(p) + 2 > head_budget:
            if not head:
                head.append(p[: head_budget - 1] + "…")
                used = head_budget
            break
        head.append(p)
        used += len(p) + 2
    tail: list[str] = []
    room = limit - used - 64
    for p in reversed(parts[len(head):]):
        if len(p) + 2 > room:
            if not tail and room > 0:
                tail.append("…" + p[-(room - 1):])
            break
        tail.append(p)
        room -= len(p) + 2
    omitted = len(parts) - len(head) - len(tail)
    marker = [f"[… {omitted} message(s) omitted …]"] if omitted > 0 else []
    return "\n\n".join([*head, *marker, *reversed(tail)])


@dataclass
class Capture(PresenceTracker):
    """Presence tracking plus the views around each compaction (for the probes and the answers)."""

    before_views: dict[int, list[Message]] = field(default_factory=dict)
    after_views: dict[int, list[Message]] = field(default_factory=dict)
    before_ids: dict[int, set[str]] = field(default_factory=dict)

    def action(self, seq: int, done: bool, entries: Sequence[Entry], act: Action) -> None:
        super().action(seq, done, entries, act)
        if not isinstance(act, Compact):
            return
        if done:
            self.after_views[seq] = [e.rendered() for e in entries]
            kept = {e.id for e in entries}
            self.before_views[seq] = [m for m in self.before_views[seq] if m.id not in kept]
        else:
            self.before_views[seq] = [e.rendered() for e in entries]


def choose_probes(facts: Sequence[Fact], present_before: frozenset[str],
                  needed_after: Mapping[str, int] | None = None) -> list[tuple[Fact, bool]]:
    """One fact per kind among those present before the event: the one needed most often afterwards
    (ties: lowest id); a kind with no needed fact falls back to its lowest-id present fact, marked
    ``False`` (not needed)."""
    needed = needed_after or {}
    out = []
    for kind in KINDS:
        cands = [f for f in facts if f.kind == kind and f.id in present_before]
        wanted = sorted((f for f in cands if needed.get(f.id, 0) > 0), key=lambda f: (-needed[f.id], f.id))
        if wanted:
            out.append((wanted[0], True))
        elif cands:
            out.append((min(cands, key=lambda f: f.id), False))
    return out


def needed_after(index: FactIndex, message_index: int) -> dict[str, int]:
    """Fact id -> how many needs it has at or after ``message_index``."""
    out: dict[str, int] = {}
    for i, ids in index.needs.items():
        if i >= message_index:
            for f in ids:
                out[f] = out.get(f, 0) + 1
    return out


def judge_event(agent: Summarizer, judge: Summarizer, facts: Sequence[Fact], replaced: Sequence[Message],
                view: Sequence[Message], before: frozenset[str], after: frozenset[str],
                needed: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    rows = []
    span = _text(replaced, SPAN_CHARS)
    context = head_and_tail(view, VIEW_CHARS)
    for f, is_needed in choose_probes(facts, before, needed):
        row: dict[str, Any] = {"kind": f.kind, "fact_id": f.id, "fact": f.text, "present": f.id in after,
                               "needed": is_needed, "question": "", "reference": "", "answer": "", "correct": None,
                               "error": ""}
        text, err = _ask(judge, PROBE_SYSTEM, PROBE_PROMPT.format(kind=f.kind, what=KIND_HELP[f.kind], fact=f.text,
                                                                  span=span))
        probe = _json(text) if err is None else None
        if not probe or not isinstance(probe.get("question"), str):
            rows.append({**row, "error": err or "probe: malformed JSON"})
            continue
        row["question"], row["reference"] = probe["question"], str(probe.get("answer", f.text))
        answer, err = _ask(agent, ANSWER_SYSTEM, f"{context}\n\n---\nQuestion: {row['question']}")
        if err is not None:
            rows.append({**row, "error": f"answer: {err}"})
            continue
        row["answer"] = answer
        grade_text, err = _ask(judge, JUDGE_SYSTEM, JUDGE_PROMPT.format(q=row["question"], ref=row["reference"],
                                                                         ans=answer))
        grade = _json(grade_text) if err is None else None
        if not grade or not isinstance(grade.get("correct"), bool):
            rows.append({**row, "error": err or "judge: malformed JSON"})
            continue
        row["correct"] = grade["correct"]
        for d in DIMENSIONS:
            v = grade.get(d)
            row[d] = float(v) if isinstance(v, int | float) and 0 <= v <= 5 else None
        rows.append(row)
    return rows


def judge_run(run: Path, agent: Summarizer, judge: Summarizer, max_events: int = 50,
              summarizer_options: Mapping[str, object] | None = None) -> list[dict[str, Any]]:
    """Replay the run's transcripts again (deterministic; summaries come from the cache) and judge its
    first ``max_events`` compactions. The run's summarizer is rebuilt from its manifest (its cache folder
    and endpoint included) with a replay context as the run's, so its summaries are the run's;
    ``summarizer_options`` adds what a manifest never holds (an API key)."""
    from compbench.data.boilerplate import Templates, boilerplate_keys
    from compbench.data.importing import iter_transcripts
    from compbench.measure.facts.sources import facts_for, load_gold
    from compbench.measure.tokens import TokenCounter
    from compbench.replay.trajectories import replay
    from compbench.run.engine import conditioned
    from compbench.run.spec import RunSpec
    from compbench.sdk.context import ReplayContext
    from compbench.store.reader import Run
    from compbench.strategies import resolve
    from compbench.summarizers import get

    finished = Run.open(run)
    spec = RunSpec.from_manifest(finished.manifest.spec)
    base = TokenCounter(spec.tokenizer, spec.message_overhead, mode=spec.token_correction)  # counted as the run did
    context = ReplayContext()  # as the run's: the summarizer reads each transcript's facts from it
    summarizer = get(spec.summarizer, context=context, **{**spec.summarizer_options, **(summarizer_options or {})})
    gold = load_gold(Path(spec.gold)) if spec.gold else {}
    rows: list[dict[str, Any]] = []
    from compbench.run.write import selected

    for t in selected(spec, iter_transcripts(finished.dataset)):  # the run's transcripts (its --source, --where)
        t, config, _, counter = conditioned(spec, t, base.scoped(t))  # t's conditions, counted as the run did
        found = facts_for(t, gold=gold)
        index = FactIndex.build(t, found, boilerplate_keys(t, found, Templates.from_json(spec.boilerplate)))
        context.begin(t, index)
        for label in spec.strategies:
            c = resolve(label)
            if c.name == REFERENCE:
                continue
            cap = Capture(index)
            trace = replay(t, c.create(), summarizer, config, counter, None, cap, context=context)
            outcome = {e.seq: e for e in cap.events}
            at = {st.step: st.message_index for st in trace.steps}
            for ev in trace.compactions:
                if not ev.ok or len({(r["transcript_id"], r["strategy"], r["seq"]) for r in rows}) >= max_events:
                    continue
                o = outcome[ev.seq]
                # an after-hook compaction comes after its step's message: needs from the next one on
                first = at.get(ev.step, len(t.messages)) + (1 if ev.phase == "after" else 0)
                for r in judge_event(agent, judge, index.facts, cap.before_views[ev.seq], cap.after_views[ev.seq],
                                     o.before, o.after, needed_after(index, first)):
                    rows.append({"transcript_id": t.id, "strategy": label, "seq": ev.seq, **r})
        context.end()
    return rows


def agreement(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per kind: probes, presence rate, judged-correct rate, and how often the two agree."""
    out: dict[str, dict[str, float]] = {}
    for kind in (*KINDS, "all"):
        rs = [r for r in rows if r["correct"] is not None and (kind == "all" or r["kind"] == kind)]
        if not rs:
            continue
        n = len(rs)
        out[kind] = {"probes": n, "present": sum(r["present"] for r in rs) / n,
                     "correct": sum(bool(r["correct"]) for r in rs) / n,
                     "agreement": sum(r["present"] == r["correct"] for r in rs) / n}
    return out

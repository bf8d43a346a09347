"""The judged track: does a model *answer* from the compacted context, or is the fact merely present?

After a run, for each compaction event: probes are written from facts established before it (one per
kind: recall, artifact, continuation, decision — Factory.ai's probe types), each with a reference
answer taken from the span the compaction replaced; the agent model answers from the view right after
the compaction; a blind judge (it never sees the strategy) scores the answer on Factory's six
dimensions (0–5) and says whether it is correct. Comparing judged correctness with deterministic
presence, per fact kind, shows how far presence overstates what a model retains.

Every model call goes through the summarizer backends' on-disk cache, so a rerun costs nothing and
``cache-only:DIR`` reproduces the whole track offline in CI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.facts import KINDS, Fact
from compbench.facts.presence import FactIndex, PresenceTracker
from compbench.session import Action, Compact, Entry, SummaryRequest
from compbench.summarizers import Summarizer
from compbench.transcript import Message, Text

DIMENSIONS = ("accuracy", "context_awareness", "artifact_trail", "completeness", "continuity",
              "instruction_following")  # Factory.ai's probe-evaluation rubric
SPAN_CHARS = 12_000
VIEW_CHARS = 24_000

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


def _text(messages: Sequence[Message], limit: int) -> str:
    from compbench.facts.presence import part_match_text

    out = "\n\n".join(f"{m.role.upper()}: " + "\n".join(part_match_text(p) for p in m.parts) for m in messages)
    return out if len(out) <= limit else out[-limit:]


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


def choose_probes(facts: Sequence[Fact], present_before: frozenset[str]) -> list[Fact]:
    """One fact per kind among those present before the event (deterministic: lowest id)."""
    out = []
    for kind in KINDS:
        cands = sorted((f for f in facts if f.kind == kind and f.id in present_before), key=lambda f: f.id)
        if cands:
            out.append(cands[0])
    return out


def judge_event(agent: Summarizer, judge: Summarizer, facts: Sequence[Fact], replaced: Sequence[Message],
                view: Sequence[Message], before: frozenset[str], after: frozenset[str]) -> list[dict[str, Any]]:
    rows = []
    span = _text(replaced, SPAN_CHARS)
    context = _text(view, VIEW_CHARS)
    for f in choose_probes(facts, before):
        row: dict[str, Any] = {"kind": f.kind, "fact_id": f.id, "fact": f.text, "present": f.id in after,
                               "question": "", "reference": "", "answer": "", "correct": None, "error": ""}
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


def judge_run(run: Path, agent: Summarizer, judge: Summarizer, max_events: int = 50) -> list[dict[str, Any]]:
    """Replay the run's transcripts again (deterministic; summaries come from the cache) and judge its
    first ``max_events`` compactions."""
    from compbench.dataset import iter_transcripts
    from compbench.facts.boilerplate import Templates, boilerplate_keys
    from compbench.facts.sources import facts_for, load_gold
    from compbench.loop import ReplayConfig, replay
    from compbench.runs import RunSpec
    from compbench.session import ModelLimits
    from compbench.strategies import resolve
    from compbench.summarizers import get
    from compbench.tokens import TokenCounter

    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    s = manifest["spec"]
    spec = RunSpec(strategies=tuple(s["strategies"]), limits=ModelLimits(**s["limits"]), summarizer=s["summarizer"],
                   tokenizer=s["tokenizer"], message_overhead=s["message_overhead"], system_tokens=s["system_tokens"],
                   gold=s.get("gold"), boilerplate=s.get("boilerplate") or {})
    counter = TokenCounter(spec.tokenizer, spec.message_overhead)
    summarizer = get(spec.summarizer)
    gold = load_gold(Path(spec.gold)) if spec.gold else {}
    rows: list[dict[str, Any]] = []
    for t in iter_transcripts(manifest["dataset"]["path"]):
        found = facts_for(t, gold=gold)
        index = FactIndex.build(t, found, boilerplate_keys(t, found, Templates.from_json(spec.boilerplate)))
        for label in spec.strategies:
            c = resolve(label)
            if c.name == "none":
                continue
            cap = Capture(index)
            trace = replay(t, c.create(), summarizer, ReplayConfig(spec.limits, spec.system_tokens), counter, None, cap)
            outcome = {e.seq: e for e in cap.events}
            for ev in trace.compactions:
                if not ev.ok or len({(r["transcript_id"], r["strategy"], r["seq"]) for r in rows}) >= max_events:
                    continue
                o = outcome[ev.seq]
                for r in judge_event(agent, judge, index.facts, cap.before_views[ev.seq], cap.after_views[ev.seq],
                                     o.before, o.after):
                    rows.append({"transcript_id": t.id, "strategy": label, "seq": ev.seq, **r})
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

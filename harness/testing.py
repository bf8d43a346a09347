"""``compbench.testing`` — The strategy author's test kit: what a plug-in's own tests call.

A strategy is tested at three depths, and this module gives each one line:

* **a hook on a hand-made view** — :func:`view` builds the :class:`~compbench.sdk.SessionView` the loop
  would show before the next step, from messages (:func:`user`, :func:`assistant`, :func:`tool`), counted
  with the run's tokenizer: ``KeepLast(p).before_step(view(msgs))``;
* **a replay** — :func:`replay` runs a strategy (a spec such as ``"keep-last:keep=4"``, a configured one or
  an instance) on a transcript (:func:`transcript` of hand-made messages, or one of :func:`samples`, the
  bundled sample logs) and returns its :class:`~compbench.sdk.trace.Trace`: the steps, compactions,
  prunes and views, at the transcript's own window and overhead as a run replays it, or at ``limits``;
* **the run's own checks** — :func:`wake_differences` replays with and without the strategy's ``wake``
  (:func:`compbench.sdk.asking_every_question`) and lists where the tables a run writes differ (none: the
  wake is exact); :func:`untouched` replays with every hook watched and lists each time the strategy
  changed the view or a message instead of answering with actions. ``compbench strategies check SPEC``
  runs these and the static checks on the bundled samples.

It replays, so it stands above the engine (``tools/layers.py``: the surface layer), outside
``compbench.sdk``, which imports nothing above the data model: what it replays is what ``compbench run``
replays, through the engine's own entry points. A strategy's own module never imports it: its tests do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from compbench.data.transcript import Message, Part, Text, ToolCall, ToolResult, Transcript, Usage, to_json
from compbench.measure.tokens import TokenCounter
from compbench.run.spec import RunSpec
from compbench.sdk.events import CompactionEvent
from compbench.sdk.protocols import Strategy, asking_every_question
from compbench.sdk.registry import Configured, resolve
from compbench.sdk.session import Compact, Entry, ModelLimits, Prune, SessionView, Wake
from compbench.sdk.trace import Trace
from compbench.store.columns import Table

LIMITS = ModelLimits(128_000, 4_096)  # a hand-made view's window when none is given
TOKENIZER = "o200k_base"  # what a run counts with (RunSpec's default)


# --- hand-made messages and views --------------------------------------------------------------------------

def user(id: str, text: str = "") -> Message:
    """A user message (``text`` defaults to one naming it)."""
    return Message(id, "user", (Text(text or f"user says {id}"),))


def assistant(id: str, text: str = "", calls: Sequence[tuple[str, str, Mapping[str, Any]]] = ()) -> Message:
    """An assistant message: its text, then a tool call per ``(call id, tool name, arguments)``."""
    parts: list[Part] = [Text(text or f"assistant says {id}")]
    parts += [ToolCall(cid, name, json.dumps(dict(args))) for cid, name, args in calls]
    return Message(id, "assistant", tuple(parts))


def tool(id: str, call_id: str, output: str, name: str = "bash", is_error: bool = False) -> Message:
    """The result of call ``call_id``."""
    return Message(id, "tool", (ToolResult(call_id, name, output, is_error),))


def transcript(*messages: Message, id: str = "t", source: str = "compbench", **meta: Any) -> Transcript:
    """A transcript of hand-made messages (``meta``: what a log records, e.g. ``tool_version="2.1"``)."""
    return Transcript(id, source, tuple(messages), meta=dict(meta))


def counter(tokenizer: str = TOKENIZER) -> TokenCounter:
    """The counter a run uses (``chars4`` counts a character quarter: no tokenizer file needed)."""
    return TokenCounter(tokenizer)


def view(messages: Sequence[Message], *, limits: ModelLimits = LIMITS, counting: TokenCounter | None = None,
         system_tokens: int = 0, last_usage: Usage | None = None) -> SessionView:
    """The view the loop shows before the next step once ``messages`` were recorded: each an entry counted
    with ``counting`` (the run's tokenizer by default), ``context_tokens`` their sum plus ``system_tokens``,
    ``step`` the number of assistant messages among them (the next call's), ``last_usage`` as given."""
    c = counting or counter()
    entries = []
    for i, m in enumerate(messages):
        counts = c.parts(m)
        entries.append(Entry(m, c.message(m, counts), counts, "recorded", i))
    v = SessionView(entries, limits, c, system_tokens)
    v.context_tokens = sum(e.tokens for e in entries) + system_tokens
    v.step = sum(1 for m in messages if m.role == "assistant")
    v.last_usage = last_usage
    return v


# --- replays ------------------------------------------------------------------------------------------------

def samples() -> list[Transcript]:
    """The bundled sample logs (every command's default input), in the dataset's order."""
    from compbench.data.dataset import default_dataset
    from compbench.data.importing import iter_transcripts

    return list(iter_transcripts(default_dataset()))


StrategyLike = str | Configured | Strategy


def _spec(limits: ModelLimits | None, strategies: tuple[str, ...] = ()) -> RunSpec:
    """A user's run: each transcript's own window and hidden overhead, or ``limits`` and no overhead."""
    return RunSpec(strategies=strategies, limits=limits, system_tokens=None if limits is None else 0)


def _configured(strategy: str | Configured) -> Configured:
    return resolve(strategy) if isinstance(strategy, str) else strategy


def _instance(strategy: StrategyLike, t: Transcript) -> Strategy:
    """A fresh instance for ``t`` (a spec without a preset at the preset of the version ``t`` recorded)."""
    if isinstance(strategy, str | Configured):
        return _configured(strategy).for_log(t)[0].create()
    return strategy


def replay(strategy: StrategyLike, t: Transcript, *, limits: ModelLimits | None = None,
           summarizer: str = "extractive") -> Trace:
    """``strategy``'s trace on ``t``, replayed as a run replays it: at ``t``'s own window and hidden overhead
    (``limits`` None) or at ``limits`` with none; summaries by ``summarizer`` (the offline, deterministic
    ``extractive`` by default; ``mock`` for content-free ones). An instance is used as given (one replay)."""
    from compbench.replay.trajectories import replay as loop_replay
    from compbench.run.engine import conditioned
    from compbench.run.missing_usage import complete
    from compbench.summarizers import get

    spec = _spec(limits)
    made = _instance(strategy, t)
    t = complete(t)[0]
    t, config, _, counting = conditioned(spec, t, TokenCounter(spec.tokenizer, spec.message_overhead,
                                                               mode=spec.token_correction).scoped(t))
    return loop_replay(t, made, get(summarizer), config, counting)


def tables(strategy: str | Configured, transcripts: Iterable[Transcript] | None = None, *,
           limits: ModelLimits | None = None) -> list[tuple[str, dict[str, Table]]]:
    """The rows ``compbench run --strategy SPEC`` writes for each transcript (the bundled samples by default),
    per table (``results``, ``steps``, ``compactions``, ``facts``, ``prunes``): ``strategy`` must be registered
    (the run resolves it by name)."""
    from compbench.run.engine import Replayer

    replayer = Replayer(_spec(limits, (_configured(strategy).label,)))
    return [(t.id, replayer.run(t)) for t in (samples() if transcripts is None else transcripts)]


def _same(a: Any, b: Any) -> bool:
    """Equal, a NaN equal to a NaN (a figure a replay could not compute is NaN in both)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def table_differences(left: Mapping[str, Table], right: Mapping[str, Table], names: tuple[str, str] = ("a", "b"),
                      ) -> list[str]:
    """Where two transcripts' tables differ: per table, its row count or the first row of each column that
    differs, in words (``names`` call the two sides)."""
    out: list[str] = []
    for table in sorted(set(left) | set(right)):
        a, b = left.get(table, Table()), right.get(table, Table())
        if len(a) != len(b):
            out.append(f"{table}: {len(a)} row{'s' * (len(a) != 1)} {names[0]}, {len(b)} {names[1]}")
            continue
        for column in sorted(set(a.columns) | set(b.columns)):
            x, y = a.columns.get(column, [None] * len(a)), b.columns.get(column, [None] * len(b))
            if not _same(x, y):
                row = next(i for i in range(len(x)) if not _same(x[i], y[i]))
                out.append(f"{table}.{column} row {row}: {x[row]!r} {names[0]}, {y[row]!r} {names[1]}")
    return out


def wake_differences(strategy: str | Configured, transcripts: Iterable[Transcript] | None = None, *,
                     limits: ModelLimits | None = None) -> list[str]:
    """Where the tables of a run differ with and without the strategy's ``wake`` (every stage asked every
    question: :func:`compbench.sdk.asking_every_question`), one line per difference prefixed by the
    transcript; empty when the wake is exact on these transcripts (the bundled samples by default). A
    strategy without a wake has none."""
    data = samples() if transcripts is None else list(transcripts)
    woken = tables(strategy, data, limits=limits)
    with asking_every_question():
        asked = tables(strategy, data, limits=limits)
    return [f"{tid}: {d}" for (tid, w), (_, a) in zip(woken, asked, strict=True)
            for d in table_differences(a, w, ("asked every question", "with its wake"))]


def assert_wake_exact(strategy: str | Configured, transcripts: Iterable[Transcript] | None = None, *,
                      limits: ModelLimits | None = None) -> None:
    """Fail (an AssertionError naming the first differences) unless :func:`wake_differences` finds none."""
    found = wake_differences(strategy, transcripts, limits=limits)
    assert not found, "the wake is not exact:\n  " + "\n  ".join(found[:10])


# --- a replay watched: actions only ---------------------------------------------------------------------------

HOOKS = ("before_step", "after_step", "manual", "after_compaction", "wake", "accept")
RETURNS: Mapping[str, str] = {
    "before_step": "a sequence of Compact or Prune", "after_step": "a sequence of Compact or Prune",
    "after_compaction": "a sequence of Compact or Prune", "manual": "a Compact or None", "wake": "a Wake",
    "accept": "None or the reason, a str"}


def _state(v: SessionView) -> tuple[Any, ...]:
    """What a strategy may read and must not change: the entries (by identity, with their prune marks) and the
    view's figures."""
    return (tuple((id(e), len(e.pruned)) for e in v.entries), v.step, v.context_tokens, v.last_usage, v.compactions,
            v.revision, v.last_event, v.limits, v.system_tokens, id(v.meta))


def _answer_ok(hook: str, value: Any) -> bool:
    if hook == "wake":
        return isinstance(value, Wake)
    if hook == "manual":
        return value is None or isinstance(value, Compact)
    if hook == "accept":
        return value is None or isinstance(value, str)
    return isinstance(value, Sequence) and not isinstance(value, str) and all(
        isinstance(a, Compact | Prune) for a in value)


def _mended(hook: str, answer: Any) -> Any:
    """A wrong answer made one the loop accepts: the actions among it, no compaction, no verdict, the next
    question."""
    if hook == "wake":
        return Wake.next_question()
    if hook in ("manual", "accept"):
        return None
    items = answer if isinstance(answer, Sequence) and not isinstance(answer, str) else ()
    return [a for a in items if isinstance(a, Compact | Prune)]


class Watched:
    """A strategy with every hook watched (its stages too): each call that changes the view it was shown, or
    answers with something other than its hook's answer, adds a line to ``problems``. Anything else is the
    strategy's own (its attributes, its capabilities), so the replay is the strategy's."""

    def __init__(self, inner: Any, problems: list[str], where: str) -> None:
        self.__dict__.update(_inner=inner, _problems=problems, _where=where)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.__dict__["_inner"], name)
        if name == "stages" and value:
            return tuple(Watched(s, self._problems, self._where) for s in value)
        if name in HOOKS and callable(value):
            return self._watch(name, value)
        return value

    def _watch(self, hook: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def watched(*args: Any) -> Any:
            shown = next((a for a in args if isinstance(a, SessionView)), None)
            before = _state(shown) if shown is not None else None
            answer = method(*args)
            where = f"{self._where} {getattr(self._inner, 'name', type(self._inner).__name__)}.{hook}"
            if shown is not None and _state(shown) != before:
                self._problems.append(f"{where} changed the view it was shown (a strategy answers with actions)")
            if not _answer_ok(hook, answer):
                self._problems.append(f"{where} answered {type(answer).__name__}, not {RETURNS[hook]}")
                return _mended(hook, answer)  # what the loop can apply, so the replay goes on to the next finding
            return answer

        return watched


def untouched(strategy: str | Configured, transcripts: Iterable[Transcript] | None = None, *,
              limits: ModelLimits | None = None, most: int = 5) -> list[str]:
    """Replay ``strategy`` on each transcript (the bundled samples by default) with every hook watched
    (:class:`Watched`) and each transcript's messages compared before and after: the first ``most`` times it
    changed what it was shown or answered with something other than actions. Empty: actions only."""
    problems: list[str] = []
    for t in samples() if transcripts is None else transcripts:
        before = to_json(t)
        made = Watched(_instance(strategy, t), problems, f"{t.id}:")
        replay(made, t, limits=limits)
        if to_json(t) != before:
            problems.append(f"{t.id}: the recorded messages changed during the replay (a strategy never edits "
                            "a message: it answers with actions)")
        if len(problems) >= most:
            break
    return problems[:most]


def acted(trace: Trace) -> int:
    """Actions the replay applied: compactions that changed the view, and prunes."""
    return sum(1 for e in trace.compactions if e.applied) + len(trace.prunes)


def compactions(trace: Trace) -> list[CompactionEvent]:
    """The trace's compactions that were applied (a failed summary or a rejected one is not)."""
    return [e for e in trace.compactions if e.applied]


__all__ = ["LIMITS", "Watched", "acted", "assert_wake_exact", "assistant", "compactions", "counter", "replay",
           "samples", "table_differences", "tables", "tool", "transcript", "untouched", "user", "view",
           "wake_differences"]

"""Terse builders for hand-made sessions in strategy and loop tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compbench.data.transcript import Message, Part, RecordedCompaction, Text, ToolCall, ToolResult, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk import Strategy
from compbench.sdk.events import CompactionEvent
from compbench.sdk.session import Action, Compact, Entry, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.sdk.trace import Trace
from compbench.summarizers import Summarizer
from compbench.summarizers.mock import MockSummarizer

TESTS = Path(__file__).resolve().parent  # the tests mirror the packages: their data is found from here
ROOT = TESTS.parent  # the checkout
FIXTURES = TESTS / "fixtures"  # hand-made files of the shapes real logs come in
GOLDEN = TESTS / "golden"

# the report tests look at the page as a browser lays it out: headless Chromium, where make test installed it
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=15000"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="Chromium is not installed (make test installs Debian's chromium)")


def user(id: str, text: str = "") -> Message:
    return Message(id, "user", (Text(text or f"user says {id}"),))


def system(id: str = "sys", text: str = "You are a coding agent.") -> Message:
    return Message(id, "system", (Text(text),))


def assistant(id: str, text: str = "", calls: Sequence[tuple[str, str, dict[str, object]]] = ()) -> Message:
    parts: list[Part] = [Text(text or f"assistant says {id}")]
    parts += [ToolCall(cid, name, json.dumps(args)) for cid, name, args in calls]
    return Message(id, "assistant", tuple(parts))


def tool(id: str, call_id: str, output: str, name: str = "bash", is_error: bool = False) -> Message:
    return Message(id, "tool", (ToolResult(call_id, name, output, is_error),))


def transcript(*messages: Message, id: str = "t") -> Transcript:
    return Transcript(id, "compbench", tuple(messages))


def view_of(messages: Sequence[Message], counter: TokenCounter, limits: ModelLimits | None = None,
            system_tokens: int = 0) -> SessionView:
    """A SessionView over recorded messages, as the loop would build it before the next step."""
    entries = []
    for i, m in enumerate(messages):
        counts = counter.parts(m)
        entries.append(Entry(m, counter.message(m, counts), counts, "recorded", i))
    v = SessionView(entries, limits or ModelLimits(128_000, 4_096), counter, system_tokens)
    v.context_tokens = sum(e.tokens for e in entries) + system_tokens
    return v


def applied(view: SessionView, action: Action, seq: int = 1, event: CompactionEvent | None = None) -> CompactionEvent:
    """Mark ``view`` as the loop leaves it once it applied the strategy's compaction ``action``: counted, a
    new revision, and the event of the strategy's last action (``event``: that same event again)."""
    ev = event or CompactionEvent(seq, view.step, "before", getattr(action, "reason", "prune"), True, 0, 0, (), (), 0,
                                  "", 0, 0, 0, meta=getattr(action, "meta", {}), applied=True)
    view.compactions += 1
    view.revision += 1
    view.last_event = ev
    return ev


def run(t: Transcript, strategy: Strategy, counter: TokenCounter, window: int = 128_000, max_output: int = 4_096,
        summarizer: Summarizer | None = None, system_tokens: int = 0) -> Trace:
    return replay(t, strategy, summarizer or MockSummarizer(), ReplayConfig(ModelLimits(window, max_output),
                                                                          system_tokens), counter)


def opencode_db(path: Path, docs: Sequence[Any], schema: str = "current") -> Path:
    """Write ``opencode export`` documents into an OpenCode SQLite store as OpenCode 1.x lays it out:
    ``current`` (session.sql.ts: time_created, part.session_id) or ``early`` (created_at, parts keyed by
    message only). Values that are not what OpenCode writes (a fuzzer's) are stored as they come."""
    import sqlite3

    con = sqlite3.connect(path)
    t = "time_created" if schema == "current" else "created_at"
    con.execute(f"CREATE TABLE session (id text primary key, project_id text, parent_id text, slug text, "
                f"directory text, title text, version text, {t} integer, time_updated integer)")
    con.execute(f"CREATE TABLE message (id text primary key, session_id text, {t} integer, data text)")
    con.execute("CREATE TABLE part (id text primary key, message_id text, session_id text, data text)"
                if schema == "current" else "CREATE TABLE part (id text primary key, message_id text, data text)")

    def get(d: Any, key: str) -> Any:
        return d.get(key) if isinstance(d, dict) else None

    def text(v: Any) -> Any:
        return v if v is None or isinstance(v, (str, int, float)) else json.dumps(v)

    for n, doc in enumerate(docs):
        info = get(doc, "info")
        sid = text(get(info, "id")) or f"ses_{n}"
        created = get(get(info, "time"), "created")
        con.execute(f"INSERT OR IGNORE INTO session (id, project_id, parent_id, slug, directory, title, version, {t}) "
                    "VALUES (?,?,?,?,?,?,?,?)", (sid, *(text(get(info, k)) for k in (
                        "projectID", "parentID", "slug", "directory", "title", "version")), text(created)))
        messages = get(doc, "messages")
        for k, m in enumerate(messages if isinstance(messages, list) else []):
            minfo = get(m, "info")
            mid = text(get(minfo, "id")) or f"msg_{n}_{k}"
            data = {a: b for a, b in minfo.items() if a not in ("id", "sessionID")} if isinstance(minfo, dict) \
                else minfo
            con.execute(f"INSERT OR IGNORE INTO message (id, session_id, {t}, data) VALUES (?,?,?,?)",
                        (mid, sid, text(get(get(minfo, "time"), "created")) or k, json.dumps(data)))
            parts = get(m, "parts")
            for j, p in enumerate(parts if isinstance(parts, list) else []):
                pid = text(get(p, "id")) or f"prt_{n}_{k}_{j}"
                pdata = {a: b for a, b in p.items() if a not in ("id", "sessionID", "messageID")} \
                    if isinstance(p, dict) else p
                row = (pid, mid, sid, json.dumps(pdata)) if schema == "current" else (pid, mid, json.dumps(pdata))
                con.execute(f"INSERT OR IGNORE INTO part VALUES ({','.join('?' * len(row))})", row)
    con.commit()
    con.close()
    return path


def main_cli(capsys: Any, monkeypatch: Any, *args: str | Path) -> tuple[int, str, str]:
    """Run the real entry point (which turns a CompbenchError into one line and exit 2): code, stdout, stderr."""
    import sys

    from compbench.cli import main

    monkeypatch.setattr(sys, "argv", ["compbench", *map(str, args)])
    code = 0
    try:
        main()
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    """The message of a user-mistake error: exit 2, exactly one line on stderr, no traceback."""
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err[len("error: "):-1]


__all__ = ["Usage", "assistant", "main_cli", "one_line_error", "opencode_db", "run", "system", "tool", "transcript",
           "user", "view_of"]


class CutBefore:
    """A strategy for retention tests: before step ``at``, the view becomes a summary plus the entries
    ``keep`` (those still in it)."""

    name = "cut"

    def __init__(self, at: int, keep: Sequence[str] = ()) -> None:
        self.at, self.keep = at, keep

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.step != self.at:
            return ()
        req = SummaryRequest("", s.rendered(), s.rendered())
        kept = [Keep(e.id) for e in s.entries if e.id in self.keep]
        return [Compact("test", (Insert("user", "Summary: ", with_summary=True, origin="summary"), *kept), req)]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


@dataclass(frozen=True)
class KeepLastParams:
    keep: int = 6
    trigger: int = 3_000


class KeepLast:
    """Test strategy: over `trigger` tokens, summarize all but the last `keep` messages (never splits pairs)."""

    name = "test-keep-last"

    def __init__(self, p: KeepLastParams) -> None:
        self.p = p

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.context_tokens < self.p.trigger or len(s.entries) <= self.p.keep + 1:
            return ()
        cut = len(s.entries) - self.p.keep
        while cut > 1 and s.entries[cut].role == "tool":
            cut -= 1
        kept = [Keep(e.id) for e in s.entries[cut:]]
        req = SummaryRequest("Summarize.", s.rendered(), s.rendered(1, cut), 300)
        return [Compact("threshold", (Keep(s.entries[0].id), Insert("user", "Summary:\n", with_summary=True,
                                                                        origin="summary"), *kept), req)]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def register_keep_last() -> None:
    """Register :class:`KeepLast` as ``test-keep-last`` once per process (the CLI and report tests name it)."""
    from compbench.sdk import registry
    from compbench.strategies import strategy

    if "test-keep-last" not in registry._registry:
        strategy("test-keep-last", params=KeepLastParams, source="test", summary="test")(KeepLast)


def invoke(*args: object) -> tuple[int, str]:
    """``compbench ARGS`` in process: (exit code, output); an exception the CLI did not turn into an exit is
    code 2 with its text."""
    from click.testing import CliRunner

    from compbench.cli import cli

    r = CliRunner().invoke(cli, [str(a) for a in args])
    if r.exception and not isinstance(r.exception, SystemExit):
        return 2, str(r.exception)
    return r.exit_code, r.output


def long_session(n: int) -> list[Message]:
    msgs: list[Message] = [user("u0", "refactor the parser")]
    for k in range(1, n):
        msgs += [assistant(f"a{k}", "w" * 40, calls=[(f"c{k}", "bash", {"k": k})]), tool(f"t{k}", f"c{k}", "o" * 200)]
    return [*msgs, assistant("end")]


STEP = 5_000  # tokens each call of growing_session adds


def growing_session(at: int, trigger: str = "auto", usage: bool = True, id: str = "s", calls: int = 50,
                    version: str = "2.1.49") -> Transcript:
    """A Claude Code session whose calls grow by STEP tokens each, the tool compacting once before call ``at``
    (its recorded count there is the last call's), its context small again after it."""
    msgs: list[Message] = []
    for i in range(calls):
        msgs.append(Message(f"u{i}", "user", (Text(f"step {i} " + "word " * 40),)))
        grown = STEP * (i + 1) if i < at else STEP * (i - at + 2)  # what the compaction left, then growing again
        u = Usage(input=grown, output=10) if usage else None
        msgs.append(Message(f"a{i}", "assistant", (Text(f"done {i}"),), usage=u))
    rc = RecordedCompaction(index=2 * at, tool="claude-code", trigger=trigger,  # type: ignore[arg-type]
                            tokens_before=STEP * at if usage else None, summary="the work so far",
                            kept_ids=())
    return Transcript(id, "claude-code", tuple(msgs), meta={"tool_version": version, "model": "claude-sonnet-4-5"},
                      compactions=(rc,))

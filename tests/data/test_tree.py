"""What a transcript is in its session (compbench.data.tree): the session it belongs to, its agent type."""

from __future__ import annotations

from typing import Any

import pytest

from compbench.data.transcript import Message, Text, Transcript
from compbench.data.tree import agent_type, session_of


def _t(tid: str, source: str = "claude-code", **meta: Any) -> Transcript:
    return Transcript(tid, source, (Message("u", "user", (Text("hi"),)),), meta)


@pytest.mark.parametrize(("t", "session", "kind"), [
    (_t("s1"), "s1", "main"),
    (_t("s1/a1", sidechain=True), "s1", "sub-agent"),  # an import from before parent_session: its id's session
    (_t("s1/a1", sidechain=True, parent_session="s1", agent_type="Explore"), "s1", "Explore"),
    (_t("c", "opencode", parent_session="p", subagent=True), "p", "sub-agent"),
    (_t("c", "crush", parent_session="p"), "p", "sub-agent"),
    (_t("f", "pi", parent_session="/home/u/.pi/agent/sessions/x.jsonl"), "/home/u/.pi/agent/sessions/x.jsonl", "fork"),
    (_t("s2", parent_session="", agent_type=""), "s2", "main"),
    # a main conversation whose log names its agent (mini-swe-agent's agent class) is no sub-agent
    (_t("m", "mini-swe-agent", agent_type="minisweagent.run.extra.swebench.ProgressTrackingAgent"), "m", "main"),
    (_t("c", "codex", parent_session="p", agent_type="explorer"), "p", "explorer"),
])
def test_a_transcripts_session_and_agent_type(t: Transcript, session: str, kind: str) -> None:
    assert (session_of(t), agent_type(t)) == (session, kind)

"""compare --by session and --by agent-type, and the report, on a run of hand-made session trees: a Claude Code
session with two sub-agents (one compacting) and its compaction's summarizer call, an OpenCode session with a child
session (tests/subagent_shapes.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from subagent_shapes import SID, claude_project, opencode_pair

from compbench.data.importing import transcripts
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from helpers import invoke


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logs = tmp_path_factory.mktemp("trees") / "logs"
    claude_project(logs)
    opencode_pair(logs)
    out = logs.parent / "run"
    write_run(out, RunSpec(strategies=("none", "recorded"), tokenizer="chars4"), str(logs), list(transcripts([logs])))
    return out


def test_a_runs_results_say_each_transcripts_session_and_agent_type(run: Path) -> None:
    r = pd.read_parquet(run / "results.parquet").drop_duplicates("transcript_id").set_index("transcript_id")
    got = r.loc[[SID, f"{SID}/a1", f"{SID}/a2", "ses_parent", "ses_child"], ["session", "agent_type"]]
    assert got.values.tolist() == [[SID, "main"], [SID, "Explore"], [SID, "general-purpose"], ["ses_parent", "main"],
                                   ["ses_parent", "explore"]]


def test_compare_by_session_rolls_a_session_up_with_its_sub_agents(run: Path) -> None:
    code, out = invoke("compare", run, "--by", "session", "--resamples", "200")
    assert code == 0, out
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= 160
    assert lines[0].startswith("Per session, each with its sub-agents as one unit (5 transcripts)")
    header = next(x for x in lines if x.startswith("session "))
    assert re.split(r"\s{2,}", header) == ["session", "tool", "transcripts", "sub-agents", "tokens as it ran",
                                            "sub-agents' tokens", "sub-agents' cost", "cost as it ran", "cost none"]
    row = re.split(r"\s{2,}", next(x for x in lines if x.startswith(SID[:15])))
    assert row[0] == SID[:15] + "…" + SID[-16:]  # an id gives way to fit 160 columns: head and tail kept
    assert row[1:4] == ["Claude Code", "3", "2"]
    oc = re.split(r"\s{2,}", next(x for x in lines if x.startswith("ses_parent")))
    assert oc[1:4] == ["OpenCode", "2", "1"]
    assert any(x.startswith("Sub-agents: 3 of 5 transcripts, in 2 of 2 sessions; as it ran they spent") for x in lines)
    assert not any("as it ran: not in this run" in x for x in lines)  # recorded is in this run
    data = json.loads(invoke("compare", run, "--by", "session", "--format", "json", "--resamples", "200")[1])
    assert data["by"] == "session" and data["base"] == "recorded" and set(data["sessions"]) == {SID, "ses_parent"}
    claude = data["sessions"][SID]
    assert (claude["transcripts"], claude["subagents"], set(claude["strategies"])) == (3, 2, {"none", "recorded"})
    r = pd.read_parquet(run / "results.parquet")
    mine = r[(r["session"] == SID) & (r["strategy"] == "recorded")]
    assert claude["strategies"]["recorded"]["cost_usd"] == pytest.approx(mine["cost_usd"].sum(), abs=1e-6)
    csv = invoke("compare", run, "--by", "session", "--format", "csv", "--resamples", "200")[1]
    assert csv.splitlines()[0].startswith("session,tool,transcripts,sub-agents,")


def test_compare_by_agent_type_ranks_each_type_on_its_own(run: Path) -> None:
    code, out = invoke("compare", run, "--by", "agent-type", "--resamples", "200")
    assert code == 0, out
    for name in ("main conversations (no sub-agent's): 2 transcripts", "Explore sub-agents: 1 transcript",
                 "general-purpose sub-agents: 1 transcript", "explore sub-agents: 1 transcript"):
        assert f"== {name} ==" in out
    data = json.loads(invoke("compare", run, "--by", "agent-type", "--format", "json", "--resamples", "200")[1])
    assert set(data["groups"]) == {"main", "Explore", "general-purpose", "explore"}


def test_the_report_shows_each_sessions_cost_with_its_sub_agents(run: Path, tmp_path: Path) -> None:
    code, out = invoke("report", run, "--out", tmp_path / "r.html")
    assert code == 0, out
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="sessions">'):]
    section = section[:section.index("</section>")]
    assert "Sessions with their sub-agents" in section and "Sub-agents: 3 of 5 transcripts" in section
    assert f"<code>{SID}</code>" in section and '<a href="#sessions">Sessions</a>' in html

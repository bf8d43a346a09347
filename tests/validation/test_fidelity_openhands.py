"""``compbench fidelity`` on OpenHands logs with recorded condensations (hand-made, tests/openhands_shapes.py): the
strategy configured as the log records (V1: the base state's condenser; V0: an evaluation's condenser config,
else the app's pipeline and the CLI's default), compared trigger step and kept set; a configuration that does
not fit comes out badly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openhands_shapes import eval_line, v0_events, v1_base_state, v1_events, write_v1_folder

from compbench.data.formats import read
from compbench.data.recorded import segment
from compbench.data.transcript import Transcript
from compbench.strategies.openhands_summarizing import fidelity_specs
from compbench.validation.fidelity import fidelity
from helpers import main_cli

COLS = ("preset", "n", "trigger", "real_step", "our_step", "d_steps", "kept_jaccard")


def rows_of(t: Transcript) -> list[dict[str, Any]]:
    return [{k: getattr(r, k) for k in (*COLS, "window", "window_source")} for r in fidelity([t], "chars4")]


def v1(tmp_path: Path) -> Transcript:
    (t,) = read(write_v1_folder(tmp_path) / "base_state.json")
    return t


def test_v1_condensations_match_the_recorded_condenser(tmp_path: Path) -> None:
    t = v1(tmp_path)
    assert fidelity_specs(t) == [("recorded condenser",
                                  "openhands-llm-summarizing:preset=v1,max_size=20")]  # keep_first 2 is v1's
    rows = rows_of(t)
    assert [(r["n"], r["trigger"], r["real_step"], r["our_step"], r["d_steps"], r["kept_jaccard"]) for r in rows] == [
        (1, "auto", 10, 10, 0, 1.0), (2, "auto", 9, 9, 0, 1.0)]
    assert rows[0]["window"] == 200_000 and rows[0]["window_source"].startswith("recorded max_input_tokens 200,000")


def test_the_second_condensation_replays_from_the_summary_where_the_tool_put_it(tmp_path: Path) -> None:
    t = v1(tmp_path)
    seg, _ = segment(t, 1)
    # system, user, then the summary (summary_offset 2), then calls 8-10, as the view after the first condensation
    assert [m.id for m in seg.messages[:4]] == [t.messages[0].id, t.messages[1].id, "recorded-summary-1",
                                                t.messages[16].id]


def test_a_condenser_that_does_not_fit_the_log_comes_out_badly(tmp_path: Path) -> None:
    _, agent, condenser = v1_events()
    base = v1_base_state(agent, condenser)
    base["agent"]["condenser"].update(max_size=80, keep_first=4)  # the agent preset: a log it did not make
    d = write_v1_folder(tmp_path)
    (d / "base_state.json").write_text(json.dumps(base))
    (t,) = read(d / "base_state.json")
    assert fidelity_specs(t) == [("v1-agent", "openhands-llm-summarizing:preset=v1-agent")]
    first = fidelity([t], "chars4")[0]
    assert first.our_step is None and "strategy never compacted" in first.cause  # 80 events are never reached
    del base["agent"]["condenser"]
    (d / "base_state.json").write_text(json.dumps(base))
    (t,) = read(d / "base_state.json")
    assert [label for label, _ in fidelity_specs(t)] == ["v1", "v1-agent"]


def test_v0_session_the_app_pipeline_fits_and_the_cli_default_does_not(tmp_path: Path) -> None:
    p = tmp_path / "traj.json"
    p.write_text(json.dumps(v0_events(calls=65, keep_first=4, max_size=120)))
    (t,) = read(p)
    rows = {r["preset"]: r for r in rows_of(t)}
    assert set(rows) == {"app pipeline", "cli default"}
    app, cli = rows["app pipeline"], rows["cli default"]
    assert (app["real_step"], app["our_step"], app["d_steps"], app["kept_jaccard"]) == (59, 59, 0, 1.0)
    # the CLI's LLMSummarizingCondenser (keep_first 1, max_size 100): 10 calls early, a different kept set
    assert cli["d_steps"] == -10 and cli["kept_jaccard"] < 0.6


def test_evaluation_with_its_recorded_condenser(tmp_path: Path) -> None:
    p = tmp_path / "output.jsonl"
    p.write_text(json.dumps(eval_line(v0_events())) + "\n")
    (t,) = read(p)
    assert fidelity_specs(t) == [("recorded condenser",
                                  "openhands-llm-summarizing:keep_first=4,max_size=24,max_event_length=10000")]
    (row,) = rows_of(t)
    assert (row["real_step"], row["our_step"], row["d_steps"], row["kept_jaccard"]) == (11, 11, 0, 1.0)


def test_cli_on_a_folder_of_conversations(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_v1_folder(tmp_path / "conversations")
    code, out, _ = main_cli(capsys, monkeypatch, "fidelity", str(tmp_path / "conversations"), "--format", "json",
                            "--tokenizer", "chars4")
    records = json.loads(out)
    assert code == 0 and [(r["tool"], r["n"], r["d_steps"]) for r in records] == [("openhands", 1, 0),
                                                                                   ("openhands", 2, 0)]

"""Fidelity of cline, cline-condense and roo-code against the compactions Cline, Roo Code and Kilo Code logs
record: the hand-made task folders (usage recorded: trigger step and kept set), and the real Roo Code fork
export in ../shared/real-logs (no usage: the strategy's compaction run at the recorded point, the kept set and
the summary compared)."""

from __future__ import annotations

import pytest
from conftest import SHARED, need_shared

from compbench.data.formats import read_all
from compbench.validation.fidelity import Row, fidelity
from helpers import FIXTURES, main_cli

DATA = FIXTURES / "cline-family"
REAL_LOGS = SHARED / "real-logs"
FOLDERS = [DATA / "saoudrizwan.claude-dev", DATA / "rooveterinaryinc.roo-cline", DATA / "roo-v1",
           DATA / "kilocode.kilo-code"]


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, int, str], Row]:
    return {(f"{r.tool}-{r.transcript[-2:]}", r.n, r.preset): r
            for r in fidelity(read_all(FOLDERS), tokenizer="chars4")}


def test_cline_truncations_fire_where_recorded_and_keep_the_same(rows: dict[tuple[str, int, str], Row]) -> None:
    for n in (1, 2):
        r = rows[("cline-01", n, "seed")]
        assert (r.tool, r.trigger, r.d_steps, r.kept_jaccard) == ("cline", "auto", 0, 1.0)
    assert rows[("cline-01", 1, "seed")].real_tokens == 161_000


def test_summarize_task_is_compared_with_cline_condense(rows: dict[tuple[str, int, str], Row]) -> None:
    r = rows[("cline-02", 1, "cline-condense:seed")]
    assert (r.d_steps, r.kept_jaccard, r.facts_real_summary) == (0, 1.0, "1/2")


def test_roo_code_layouts_and_their_presets(rows: dict[tuple[str, int, str], Row]) -> None:
    fresh = {p: rows[("roo-code-01", 1, p)] for p in ("seed", "3.42")}  # Roo Code 3.43+: nothing kept
    assert (fresh["seed"].d_steps, fresh["seed"].kept_jaccard) == (0, 1.0) and fresh["3.42"].kept_jaccard == 0.0
    v1 = rows[("roo-code-03", 1, "3.42")]  # the assistant-summary layout: first + last 3
    assert (v1.d_steps, v1.kept_jaccard) == (0, 1.0)
    assert "this preset models roo-code as the log shows it: assistant summary before the last 3" in v1.cause
    assert rows[("roo-code-03", 1, "seed")].kept_jaccard == 0.0
    window = rows[("roo-code-02", 1, "no-condense")]  # the sliding window alone
    assert (window.d_steps, window.kept_jaccard) == (0, 1.0)


def test_kilo_code_is_modelled_by_the_kilo_preset(rows: dict[tuple[str, int, str], Row]) -> None:
    r = rows[("kilo-code-04", 1, "kilo")]
    assert r.tool == "kilo-code" and r.trigger == "manual"
    assert "this preset models kilo-code as the log shows it" in r.cause


@pytest.fixture(scope="module")
def real_rows() -> list[Row]:
    need_shared(REAL_LOGS / "roo-code", "the real Roo Code logs")
    return [r for r in fidelity(read_all([REAL_LOGS]), tokenizer="chars4") if r.tool == "roo-code"]


def test_the_real_roo_fork_compaction_is_compared(real_rows: list[Row]) -> None:
    """No usage in an export: no trigger to compare; today's fresh start keeps none of the 4 messages the fork
    kept; the 3.42 layout would keep them but the export holds nothing it could summarize."""
    by = {r.preset: r for r in real_rows}
    assert set(by) == {"seed", "no-condense", "3.42", "kilo"} and all(r.n == 1 for r in real_rows)
    seed = by["seed"]
    assert (seed.our_step, seed.d_steps, seed.kept_jaccard) == (None, None, 0.0) and seed.real_summary_tokens
    assert "no token usage recorded: trigger not compared" in seed.cause
    assert "the log holds none of the messages the tool summarized" in seed.cause
    assert "this preset models roo-code as the log shows it" in by["3.42"].cause
    assert by["3.42"].kept_jaccard is None and "failed or does not exist" in by["3.42"].cause


def test_cli_fidelity_on_the_real_logs(real_rows: list[Row], capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = main_cli(capsys, monkeypatch, "fidelity", REAL_LOGS)
    assert code == 0
    assert sum(line.split()[:1] == ["roo-code"] and "tchr-dev" in line for line in out.splitlines()) == 4

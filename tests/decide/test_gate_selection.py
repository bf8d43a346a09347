"""What the gate checks (issue 40, item 6): ``--source`` / ``--where`` pick the transcripts, ``recorded`` and the
settings sweep's rows are left out unless named (said in one line), and a figure resting on fewer transcripts than
``--min-transcripts`` (default 5) fails a threshold it meets, saying "few", unless ``--allow-few`` passes it
marked "few" — at 4, 5 and 6 transcripts, and from the ``[gate]`` table as from the flags."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from compbench.cli import cli
from compbench.data.synth import generate
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import register_keep_last

WITHIN = "test-keep-last:trigger=1500"  # compacts on every transcript: each one counts towards its figures
SWEEP = "test-keep-last:trigger=1600"  # a hand-made settings-sweep row, on the codex transcripts only
IDS = [f"synth-3-{i:05d}" for i in range(6)]
CODEX, PI = IDS[:3], IDS[3:]  # the tool each transcript is said to come from (a hand-made source column)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six transcripts, none and one strategy, plus the rows a default run adds: recorded (each tool as it ran)
    on all, and a settings-sweep configuration on one tool's transcripts."""
    register_keep_last()
    out = tmp_path_factory.mktemp("gate-select") / "run"
    spec = RunSpec(strategies=("none", WITHIN), limits=ModelLimits(4_000, 500), tokenizer="chars4",
                   token_correction="none")
    write_run(out, spec, "synth", list(generate(6, seed=3, turns=30, log_lines=30, code_lines=40)))
    r = pd.read_parquet(out / "results.parquet")
    assert list(dict.fromkeys(r["transcript_id"])) == IDS
    r["source"] = r["transcript_id"].map(lambda t: "codex" if t in CODEX else "pi")
    within = r[r["strategy"] == WITHIN]
    recorded = within.assign(strategy="recorded", name="recorded")
    sweep = within[within["transcript_id"].isin(CODEX)].assign(strategy=SWEEP, swept="sweep")
    pd.concat([r, recorded, sweep], ignore_index=True).to_parquet(out / "results.parquet")
    return out


def gate(run: Path, *args: object, cwd: Path) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["gate", str(run), *(str(a) for a in args), "--config", str(cwd),
                                 "--resamples", "300"])
    if r.exception and not isinstance(r.exception, SystemExit):
        return 2, str(r.exception)
    return r.exit_code, r.output


def checked(out: str) -> list[str]:
    """The strategies of the PASS / FAIL / SKIP lines."""
    return [x[5:].split(": ")[0] for x in out.splitlines() if x.startswith(("PASS ", "FAIL ", "SKIP "))]


def test_recorded_and_the_sweep_are_left_out_by_default_and_said_so_in_one_line(run: Path, tmp_path: Path) -> None:
    code, out = gate(run, "--min", "effective_savings=0", cwd=tmp_path)
    assert code == 0, out
    assert checked(out) == [WITHIN]
    notes = [x for x in out.splitlines() if x.startswith("note:")]
    assert len(notes) == 1, out
    assert "none (the reference" in notes[0] and "recorded (each tool as it ran" in notes[0]
    assert f"1 settings-sweep configuration ({SWEEP}: each replayed on its own tool's logs only)" in notes[0]
    # named, each is gated: recorded by its name, a sweep's row by its label (not by its strategy's name alone)
    code, out = gate(run, "--strategy", "recorded", "--min", "effective_savings=0", cwd=tmp_path)
    assert checked(out) == ["recorded"] and "note:" not in out
    code, out = gate(run, "--strategy", "test-keep-last", "--min", "effective_savings=0", cwd=tmp_path)
    assert checked(out) == [WITHIN] and f"not gated: 1 settings-sweep configuration ({SWEEP}" in out
    code, out = gate(run, "--strategy", SWEEP, "--min", "effective_savings=0", "--allow-few", cwd=tmp_path)
    assert checked(out) == [SWEEP] and code == 0 and "note:" not in out


def test_source_and_where_pick_the_transcripts_gated(run: Path, tmp_path: Path) -> None:
    code, out = gate(run, "--source", "codex", "--min", "effective_savings=0", "--min-transcripts", "3",
                     cwd=tmp_path)
    assert code == 0, out
    assert out.splitlines()[0] == f"transcripts: 3 of 6 in {run}, those where source=codex"
    assert f"PASS {WITHIN}: " in out
    code, out = gate(run, "--where", f"id={IDS[0]}|{IDS[1]}", "--min", "effective_savings=0", cwd=tmp_path)
    assert out.splitlines()[0].startswith("transcripts: 2 of 6") and "n=2 transcripts" in out
    code, out = gate(run, "--source", "gemini-cli", "--min", "effective_savings=0", cwd=tmp_path)
    assert code == 2 and "no transcript of" in out
    code, out = gate(run, "--where", "source=codex|gemini-cli", "--min", "effective_savings=0", "--allow-few",
                     cwd=tmp_path)
    assert code == 0 and out.splitlines()[1] == "note: source=codex|gemini-cli: gemini-cli matched no transcript"


@pytest.mark.parametrize(("n", "passes"), [(4, False), (5, True), (6, True)])
def test_min_transcripts_default_is_five(run: Path, tmp_path: Path, n: int, passes: bool) -> None:
    code, out = gate(run, "--where", "id=" + "|".join(IDS[:n]), "--min", "effective_savings=0", cwd=tmp_path)
    line = next(x for x in out.splitlines() if WITHIN in x and x.startswith(("PASS", "FAIL")))
    if passes:
        assert code == 0 and line.startswith("PASS") and "few" not in line, out
    else:
        assert code == 1 and line.startswith("FAIL"), out
        assert "≥ the minimum 0%; but few: n=4 transcripts, under --min-transcripts 5, so not passed" in line
        assert out.splitlines()[-1] == "0 passed, 1 failed (1 on too few transcripts alone)"


@pytest.mark.parametrize(("minimum", "passes"), [(4, True), (5, True), (6, False)])
def test_min_transcripts_flag_at_five_transcripts(run: Path, tmp_path: Path, minimum: int, passes: bool) -> None:
    code, out = gate(run, "--where", "id=" + "|".join(IDS[:5]), "--min", "effective_savings=0",
                     "--min-transcripts", minimum, cwd=tmp_path)
    assert (code == 0) == passes, out
    assert ("few" in out) == (not passes)


def test_allow_few_passes_a_met_threshold_marked_few_and_never_a_missed_one(run: Path, tmp_path: Path) -> None:
    four = "id=" + "|".join(IDS[:4])
    code, out = gate(run, "--where", four, "--min", "effective_savings=0", "--allow-few", cwd=tmp_path)
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith("PASS"))
    assert line.endswith("(few: n=4 transcripts, under --min-transcripts 5; passed by --allow-few)")
    assert out.splitlines()[-1] == "1 passed (1 of them few), 0 failed"
    code, out = gate(run, "--where", four, "--min", "effective_savings=0.99", "--allow-few", cwd=tmp_path)
    assert code == 1 and "is below the minimum 99% (few: n=4 transcripts, under --min-transcripts 5)" in out


def test_the_gate_table_sets_them_and_flags_win(run: Path, tmp_path: Path) -> None:
    four = "id=" + "|".join(IDS[:4])
    (tmp_path / "compbench.toml").write_text(f'[gate]\nmin = {{ effective_savings = 0 }}\nwhere = "{four}"\n'
                                             "min-transcripts = 4\n")
    code, out = gate(run, cwd=tmp_path)
    assert code == 0 and "transcripts: 4 of 6" in out and "few" not in out, out
    code, out = gate(run, "--min-transcripts", "5", cwd=tmp_path)
    assert code == 1 and "under --min-transcripts 5" in out
    (tmp_path / "compbench.toml").write_text('[gate]\nmin = { effective_savings = 0 }\nsource = ["codex"]\n'
                                             "allow_few = true\n")
    code, out = gate(run, cwd=tmp_path)
    assert code == 0 and "transcripts: 3 of 6" in out and "passed by --allow-few" in out, out
    code, out = gate(run, "--source", "pi", cwd=tmp_path)
    assert "those where source=pi" in out
    for bad, said in (("min-transcripts = 0", "'min-transcripts' must be a whole number of transcripts, at least 1"),
                      ('allow-few = "yes"', "'allow-few' must be true or false"),
                      ("min-transcript = 4", "[gate] has no key 'min-transcript'; did you mean 'min-transcripts'?")):
        (tmp_path / "compbench.toml").write_text(f"[gate]\nmin = {{ effective_savings = 0 }}\n{bad}\n")
        code, out = gate(run, cwd=tmp_path)
        assert code == 2 and said in out, (bad, out)
    (tmp_path / "compbench.toml").unlink()
    code, out = gate(run, "--min-transcripts", "0", "--min", "effective_savings=0", cwd=tmp_path)
    assert code == 2 and "0 is not in the range x>=1" in out

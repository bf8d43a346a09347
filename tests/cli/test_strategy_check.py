"""``compbench strategies check SPEC`` (compbench.cli.strategy_check): the example passes; hand-made strategies that
import the engine, whose wake is not exact, whose parameters have no docs, that edit what they are shown, or whose
Tool names no real format fail with the check that says so (exit 1); a bad SPEC is one line and exit 2."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import pytest

from compbench.cli import strategy_check
from compbench.cli.strategy_replays import Finding, Replayed, check_acts
from compbench.sdk import ModelLimits, Transcript
from compbench.sdk.registry import STRATEGIES, get
from helpers import ROOT, main_cli, one_line_error

# a correct strategy, its module's name and parts filled in by each test (a keep-last, as the SDK's example)
MODULE = '''
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import Compact, Insert, Keep, SessionView, SummaryRequest, Tool, Setting, Wake, param, strategy
{imports}

{params}


class S:
    name = "{name}"

    def __init__(self, p):
        self.p = p

    def before_step(self, s: SessionView):
        if s.context_tokens < self.p.trigger or len(s.entries) <= 8:
            return ()
        cut = len(s.entries) - 6
        {mutate}
        return (Compact("over", (Insert("user", "Summary: ", with_summary=True, origin="summary"),
                                 *(Keep(e.id) for e in s.entries[cut:])),
                        SummaryRequest("Summarize.", s.rendered(), s.rendered(0, cut), 500)),)

    def after_step(self, s, u):
        return ()

    def wake(self, s: SessionView) -> Wake:
        return Wake(tokens=self.p.trigger + {late})


@strategy("{name}", params=P, upstream="a test", summary="a hand-made strategy"{tool})
def make(p):
    return S(p)
'''
PARAMS = '''@dataclass(frozen=True)
class P:
    trigger: int = param(30_000, "Context tokens at which it compacts.")'''


def module(tmp_path: Path, stem: str, *, imports: str = "", params: str = PARAMS, mutate: str = "", late: int = 0,
           tool: str = "") -> Path:
    path = tmp_path / f"{stem}.py"
    path.write_text(textwrap.dedent(MODULE).format(name=stem.replace("_", "-"), imports=imports, params=params,
                                                    mutate=mutate, late=late, tool=tool))
    return path


def check(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spec: str | Path
          ) -> tuple[int, dict[str, str], str]:
    """The command's exit code, each check's status, and its output."""
    code, out, err = main_cli(capsys, monkeypatch, "strategies", "check", spec)
    status = {("actions only" if line.split()[1] == "actions" else line.split()[1]): line.split()[0]
              for line in out.splitlines() if line.startswith("  ") and line.split()[0] in ("ok", "fail", "note")}
    return code, status, out + err


def test_the_example_passes_every_check(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check passes on the example, and its output is the one docs/writing-a-strategy.md shows (after a change
    of the figures, ``COMPBENCH_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/cli/test_strategy_check.py -k
    example_passes`` rewrites the guide's block; say why in the commit)."""
    monkeypatch.chdir(ROOT)  # the module's file is shown relative to the working directory
    code, status, out = check(capsys, monkeypatch, "example-keep-last")
    assert code == 0, out
    assert status == {"imports": "ok", "parameters": "ok", "presets": "ok", "acts": "ok", "window": "ok",
                      "frequency": "ok", "wake": "ok", "actions only": "ok", "tool": "ok"}
    assert "seed, 1.2, 2.0 resolve" in out and out.rstrip().endswith("every check passed")
    guide = ROOT / "docs" / "writing-a-strategy.md"
    text = guide.read_text(encoding="utf-8")
    mark = "<!-- output: compbench strategies check example-keep-last -->\n```\n"
    start = text.index(mark) + len(mark)
    end = text.index("```\n", start)
    shown = "$ compbench strategies check example-keep-last\n" + out
    if os.environ.get("COMPBENCH_REGEN_GOLDEN"):
        text = text[:start] + shown + text[end:]
        guide.write_text(text, encoding="utf-8")
    assert text[start:end] == shown, "the guide's output is stale: regenerate it (see this test's docstring)"


def test_a_strategy_that_imports_the_engine_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = module(tmp_path, "engine_user", imports="from compbench.replay.trajectories import replay  # the engine")
    code, status, out = check(capsys, monkeypatch, f"{path}:engine-user")
    assert code == 1 and status["imports"] == "fail", out
    assert "engine_user.py:6: imports compbench.replay.trajectories" in out
    assert all(v != "fail" for k, v in status.items() if k != "imports"), out
    assert out.rstrip().endswith("1 of 9 checks failed: imports")


def test_a_strategy_that_imports_the_test_kit_fails(tmp_path: Path) -> None:
    """The kit replays (it stands above the engine, outside the SDK): a strategy module importing it reaches past the
    SDK; the SDK's own modules do not."""
    c = strategy_check.load(f"{module(tmp_path, 'kit_user', imports='from compbench.testing import replay')}:kit-user")
    try:
        found = strategy_check.check_imports(c.info)
        assert found.status == "fail" and found.details == ("kit_user.py:6: imports compbench.testing",)
    finally:
        STRATEGIES.unregister("kit-user")
    assert strategy_check.check_imports(get("example-keep-last")).status == "ok"


def test_a_wake_that_is_not_exact_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = module(tmp_path, "late_waker", late=5_000)  # wakes 5,000 tokens after its trigger
    code, status, out = check(capsys, monkeypatch, path)  # the file registers one strategy: no name needed
    assert code == 1 and status["wake"] == "fail" and status["acts"] == "ok", out
    assert "asked every question" in out and "with its wake" in out


def test_parameters_without_docs_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    plain = "@dataclass(frozen=True)\nclass P:\n    trigger: int = 30_000\n    keep: int = param(6, '')"
    path = module(tmp_path, "undocumented", params=plain)
    code, status, out = check(capsys, monkeypatch, f"{path}:undocumented")
    assert code == 1 and status["parameters"] == "fail", out
    assert "trigger: declared without param(default, doc)" in out and "keep: param() with an empty doc" in out


# --- the other checks, through their functions (each of the command's runs replays the samples 6 times) --------

def test_a_strategy_that_edits_what_it_is_shown_fails(tmp_path: Path) -> None:
    path = module(tmp_path, "view_editor", mutate="s.context_tokens = 0")
    c = strategy_check.load(f"{path}:view-editor")
    data = _claude()
    found = strategy_check.check_actions(c, data, [("own", None)])
    assert found.status == "fail" and "view-editor.before_step changed the view it was shown" in found.details[0]
    ok = strategy_check.check_actions(strategy_check.load("example-keep-last"), data, [("own", None)])
    assert ok.status == "ok"


def _claude() -> list[Transcript]:
    """The three Claude Code samples (the hand-made strategies act on two of them at their own windows)."""
    from compbench.testing import samples

    return [t for t in samples() if t.source == "claude-code"]


def test_a_tool_of_no_real_format_or_an_invalid_sweep_fails(tmp_path: Path) -> None:
    bad = ', tool=Tool("T", ("nosuchformat",), settings=(Setting("trigger", "T_AT", "env", "1", "export T_AT=", ' \
          'sweep=(-5,)),))'
    c = strategy_check.load(f"{module(tmp_path, 'bad_tool', tool=bad)}:bad-tool")
    found = strategy_check.check_tool(c.info)
    assert found.status == "fail"
    assert found.details == ("formats: 'nosuchformat' is no log format compbench reads",
                             "setting T_AT: its line 'export T_AT=' has no {value}",
                             "sweep bad-tool:trigger=-5: strategy 'bad-tool': trigger=-5 is negative; it is a size, "
                             "count or share (expected >= 0)")
    assert strategy_check.check_tool(get("none")).status == "ok"
    assert strategy_check.check_tool(get("langchain")).status == "note"  # no Tool: optional


def test_a_strategy_that_never_acts_says_how_far_the_samples_reach() -> None:
    from compbench.testing import tables

    data = _claude()
    rows = {"at their own windows": [Replayed.of(tid, t) for tid, t in tables("none", data)]}
    found = check_acts(rows, len(data))
    assert found.status == "note" and "never acted on the 3 samples" in found.summary
    assert found.details[0].startswith("at their own windows: the contexts peak at ")
    limits = ModelLimits(32_000, 4_096)
    acting = {"x": [Replayed.of(tid, t) for tid, t in tables("truncate", data, limits=limits)]}
    assert check_acts(acting, len(data)).status == "ok"


def test_presets_that_name_no_preset_fail() -> None:
    from dataclasses import replace

    info = get("example-keep-last")
    assert strategy_check.check_presets(info, ["1.4.0", "2.1"]).status == "ok"
    assert info.tool is not None
    wrong = replace(info, tool=replace(info.tool, newest="3.0", version_preset=lambda v: "9.9"))
    found = strategy_check.check_presets(wrong, ["1.4.0"])
    assert found.status == "fail" and found.details == (
        "Tool(newest='3.0') is no preset of it (presets: seed, 1.2, 2.0)",
        "Tool.version_preset('1.4.0') = '9.9', no preset of it")


# --- a bad SPEC: one line, exit 2 -------------------------------------------------------------------------------

def test_a_bad_spec_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    raising = tmp_path / "raising.py"
    raising.write_text("import compbench.sdk\nraise ValueError('bad configuration\\nsecond line')\n")
    two = tmp_path / "two_strategies.py"
    two.write_text(textwrap.dedent(MODULE).format(name="two-a", imports="", params=PARAMS, mutate="", late=0, tool="")
                   + "\n\n@strategy('two-b', params=P, upstream='t', summary='t')\ndef other(p):\n    return S(p)\n")
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    for spec, said in [
        ("nosuch", "unknown strategy 'nosuch'"),
        (str(tmp_path / "missing.py"), "missing.py: no such file"),
        (str(raising), "raising.py: importing it failed: ValueError: bad configuration"),
        (str(two), "two_strategies.py: name the strategy to check (" + str(two) + ":NAME): it registered two-a, two-b"),
        (str(empty), "empty.py: name the strategy to check"),
        ("nosuch_pkg.mod:x", "nosuch_pkg.mod: no such module"),
        ("pipeline", "a pipeline needs stages"),
        ("openhands-llm-attention", "needs a real model"),
    ]:
        code, _, err = main_cli(capsys, monkeypatch, "strategies", "check", spec)
        assert said in one_line_error(code, err), (spec, err)


def test_the_strategy_import_rule_is_the_layer_checks() -> None:
    spec = importlib.util.spec_from_file_location("compbench_layers_rule", ROOT / "tools" / "layers.py")
    assert spec is not None and spec.loader is not None
    layers = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = layers
    spec.loader.exec_module(layers)
    assert strategy_check.STRATEGY_IMPORTS == layers.STRATEGY_IMPORTS
    assert any(p == "compbench.testing" for _, prefixes in layers.LAYERS[-1:] for p in prefixes)


def test_a_plug_in_package_is_checked_by_its_module_path() -> None:
    """tests/plugin's keep-last, as an author checks it before publishing: package.module, no name needed."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests" / "plugin")}
    code = "import sys; from compbench.cli import main; sys.argv = ['compbench', *sys.argv[1:]]; main()"
    p = subprocess.run([sys.executable, "-c", code, "strategies", "check", "compbench_testplugin.keep_last"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("keep-last: ") and "note  wake          no wake" in p.stdout


@pytest.mark.parametrize(("statuses", "last"), [
    (("ok", "ok", "note"), "every check passed (1 note)"),
    (("ok", "warn", "note"), "every check passed (1 warning: b; 1 note)"),
    (("fail", "warn", "note"), "1 of 3 checks failed: a; 1 warning: b"),
    (("ok", "ok", "ok"), "every check passed")])
def test_the_last_line_says_what_failed_and_what_warned(statuses: tuple[str, ...], last: str) -> None:
    """A warning is not a failure: the command exits 0 on it, and the last line names it."""
    findings = [Finding(name, status, "x") for name, status in zip("abc", statuses, strict=True)]  # type: ignore[arg-type]
    lines = strategy_check.report(strategy_check.load("example-keep-last"), findings)
    assert lines[-1] == last and lines[1].startswith(f"  {statuses[0]:<5} a")

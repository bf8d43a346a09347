"""The strategy registry: specs, presets, strictness, and third-party entry points."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from compbench.errors import UsageError
from compbench.sdk import registry as base
from compbench.strategies import get, names, resolve, strategy


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(UsageError, match=r"unknown strategy 'opencod'; did you mean 'opencode'\?"):
        resolve("opencod")


def test_duplicate_registration_is_an_error() -> None:
    @dataclass(frozen=True)
    class P:
        x: int = 1

    get("none")  # built-ins register on first lookup
    with pytest.raises(UsageError, match="already registered"):
        strategy("none", params=P, source="t", summary="t")(lambda p: None)  # type: ignore[arg-type,return-value]


def test_spec_parsing_types_and_labels() -> None:
    @dataclass(frozen=True)
    class P:
        n: int = 1
        r: float = 0.5
        on: bool = True
        tools: tuple[str, ...] = ("skill",)
        limit: int | None = None

    strategy("test-spec", params=P, source="t", summary="t", presets={"current": {"n": 7}})(
        lambda p: None)  # type: ignore[arg-type,return-value]
    c = resolve("test-spec:tools=a|b,on=false,n=20_000,limit=none,preset=current")
    assert c.params == P(n=20000, r=0.5, on=False, tools=("a", "b"), limit=None)
    assert c.label == "test-spec:preset=current,limit=none,n=20_000,on=false,tools=a|b"
    assert resolve("test-spec:preset=current").params.n == 7
    with pytest.raises(UsageError, match="did you mean 'tools'"):
        resolve("test-spec:tool=a")
    with pytest.raises(UsageError, match="not a valid int"):
        resolve("test-spec:n=lots")
    with pytest.raises(UsageError, match="no preset 'future'"):
        resolve("test-spec:preset=future")
    base._registry.pop("test-spec")


def test_builtins_are_listed_in_canonical_order() -> None:
    assert names()[:10] == ["recorded", "opencode", "codex", "claude-code", "pi", "go-replace", "round-chained",
                            "observation-masking", "truncate", "none"]


def test_a_throwaway_distribution_registers_through_entry_points(tmp_path: Path) -> None:
    (tmp_path / "myplug.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from compbench.strategies import strategy

        @dataclass(frozen=True)
        class P:
            keep: int = 3

        class S:
            name = "my-plugin"
            def before_step(self, s): return ()
            def after_step(self, s, u): return ()

        @strategy("my-plugin", params=P, upstream="a plug-in", summary="third-party strategy")
        def make(p: P) -> S:
            return S()
    '''))
    dist = tmp_path / "myplug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[compbench.strategies]\nmy-plugin = myplug\n")
    code = ("from compbench.strategies import resolve, names; c = resolve('my-plugin:keep=5'); "
            "print(c.info.upstream, c.params.keep, 'my-plugin' in names())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert out.stdout.strip() == "a plug-in 5 True"



def test_show_explains_each_documented_parameter() -> None:
    import dataclasses

    from click.testing import CliRunner

    from compbench.cli import cli
    from compbench.sdk.registry import param, param_doc

    @dataclasses.dataclass(frozen=True)
    class P:
        keep: int = param(3, "Tool uses kept, newest first.")

    (f,) = dataclasses.fields(P)
    assert P().keep == 3 and param_doc(f) == "Tool uses kept, newest first."
    strategy("test-doc", params=P, source="t", summary="t")(lambda p: None)  # type: ignore[arg-type,return-value]
    try:
        out = CliRunner().invoke(cli, ["strategies", "show", "test-doc"])
        assert out.exit_code == 0 and "keep" in out.output and "Tool uses kept, newest first." in out.output
    finally:
        base._registry.pop("test-doc")


def test_every_parameter_of_every_strategy_is_explained() -> None:
    """`strategies show NAME` explains each parameter in a sentence (issue 17)."""
    import dataclasses

    from compbench.sdk.registry import BUILTIN, param_doc
    from compbench.strategies import get

    undocumented = {n: [f.name for f in dataclasses.fields(get(n).params) if not param_doc(f)] for n in BUILTIN}
    assert not {n: fs for n, fs in undocumented.items() if fs}


def test_a_plug_in_written_with_the_old_source_keyword_still_loads() -> None:
    """``upstream=`` was ``source=`` before run format 4: a plug-in that says source= registers, with it as its
    upstream; both, or neither, is the author's mistake, said at once."""
    import dataclasses

    import pytest

    from compbench.sdk.registry import _registry, get, strategy

    @dataclasses.dataclass(frozen=True)
    class P:
        pass

    try:
        strategy("old-keyword-plugin", params=P, source="someone/tool abc123", summary="s")(lambda p: None)  # type: ignore[arg-type,return-value]
        assert get("old-keyword-plugin").upstream == "someone/tool abc123"
        with pytest.raises(TypeError, match="not both"):
            strategy("both-keywords", params=P, source="a", upstream="b", summary="s")
        with pytest.raises(TypeError, match="upstream= must cite"):
            strategy("no-citation", params=P, summary="s")
    finally:
        _registry.pop("old-keyword-plugin", None)

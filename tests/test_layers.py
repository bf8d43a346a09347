"""The layer check (tools/layers.py, run by ``make lint``): the project passes it, and it fails on a hand-made
upward import, a cycle hidden in a function, a type-only upward import and a strategy that reaches past the
SDK."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from helpers import ROOT


@pytest.fixture(scope="module")
def layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compbench_layers_tool", ROOT / "tools" / "layers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module by name
    spec.loader.exec_module(mod)
    return mod


def test_the_project_keeps_its_layers(layers: ModuleType) -> None:
    assert layers.check() == []


def package(tmp_path: Path, files: dict[str, str]) -> Path:
    """A small namespace laid out like compbench's (``compbench`` in ``harness/``, strategies apart)."""
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp_path


LAYOUT = {"compbench": "harness", "compbench.strategies": "strategies"}
SMALL = {
    "harness/__init__.py": "",
    "harness/errors.py": "",
    "harness/data/__init__.py": "",
    "harness/data/transcript.py": "from compbench.errors import *\n",
    "harness/sdk/__init__.py": "from compbench.data.transcript import *\n",
    "harness/replay/__init__.py": "",
    "harness/replay/loop.py": "from compbench.sdk import *\n",
    "strategies/__init__.py": "",
    "strategies/mine.py": "from compbench.sdk import *\n",
}


def test_a_clean_hand_made_package_passes(layers: ModuleType, tmp_path: Path) -> None:
    assert layers.check(LAYOUT, package(tmp_path, SMALL)) == []


def test_an_upward_import_fails_with_its_file_and_line(layers: ModuleType, tmp_path: Path) -> None:
    root = package(tmp_path, {**SMALL, "harness/sdk/__init__.py": "import os\nfrom compbench.replay.loop import x\n"})
    upward, cycle = layers.check(LAYOUT, root)  # replay.loop imports the SDK: the upward import closes a cycle
    assert upward.startswith("harness/sdk/__init__.py:2: compbench.sdk (sdk) imports compbench.replay.loop (replay)")
    assert cycle.startswith("import cycle among compbench.replay.loop, compbench.sdk")


def test_an_upward_import_inside_a_function_or_for_types_only_still_fails(layers: ModuleType, tmp_path: Path) -> None:
    hidden = "def f():\n    from compbench.replay import loop\n"
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from compbench.replay.loop import X\n"
    for text in (hidden, typed):
        problems = layers.check(LAYOUT, package(tmp_path, {**SMALL, "harness/data/transcript.py": text}))
        assert "compbench.data.transcript (data) imports compbench.replay" in problems[0]
        assert len(problems) == 2 and problems[1].startswith("import cycle among compbench.data.transcript")


def test_a_cycle_within_a_layer_fails(layers: ModuleType, tmp_path: Path) -> None:
    root = package(tmp_path, {**SMALL, "harness/replay/loop.py": "def f():\n    from compbench.replay import branch\n",
                              "harness/replay/branch.py": "from compbench.replay.loop import f\n"})
    (problem,) = layers.check(LAYOUT, root)
    assert problem.startswith("import cycle among compbench.replay.branch, compbench.replay.loop")


def test_a_strategy_that_reaches_past_the_sdk_fails(layers: ModuleType, tmp_path: Path) -> None:
    root = package(tmp_path, {**SMALL, "strategies/mine.py": "from compbench.data.transcript import Message\n"})
    (problem,) = layers.check(LAYOUT, root)
    assert "compbench.strategies.mine imports compbench.data.transcript; a strategy imports the SDK only" in problem


def test_a_module_listed_above_its_own_package_fails(layers: ModuleType, tmp_path: Path) -> None:
    """A package cannot reach above its layer through one of its modules listed higher (the author's test kit
    once sat in compbench.sdk, listed with the surface, so the SDK package imported the engine through it)."""
    root = package(tmp_path, {**SMALL, "harness/sdk/testing.py": "from compbench.replay.loop import *\n"})
    listed = (*layers.LAYERS[:-1], ("surface", (*layers.LAYERS[-1][1], "compbench.sdk.testing")))
    (problem,) = layers.check(LAYOUT, root, listed)
    assert problem == ("compbench.sdk.testing (surface) lies inside compbench.sdk (sdk): a package's modules share "
                       "its layer; move the module out of compbench.sdk")
    assert layers.nested(layers.LAYERS) == []  # the root package aside: every layer lies inside compbench


def test_the_sdk_imports_nothing_above_the_data_model(layers: ModuleType) -> None:
    """Every module of compbench.sdk is in the sdk layer, and none imports a layer above it: the test kit, which
    replays, lives outside it (compbench.testing, the surface)."""
    known = layers.modules()
    sdk = [name for name in known if name == "compbench.sdk" or name.startswith("compbench.sdk.")]
    assert len(sdk) >= 9 and "compbench.sdk.testing" not in known and "compbench.testing" in known
    order = [name for name, _ in layers.LAYERS]
    assert {order[layers.layer_of(n)] for n in sdk} == {"sdk"}
    targets = {imp.target for n in sdk for imp in layers.imports(n, known[n], known)}
    assert {order[layers.layer_of(t)] for t in targets} <= {"base", "data", "sdk"}
    assert order[layers.layer_of("compbench.testing")] == "surface"

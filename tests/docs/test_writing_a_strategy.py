"""docs/writing-a-strategy.md cannot drift from the SDK: every code block is marked with what it is and checked as such.

* ``<!-- excerpt: FILE -->``: the block is in FILE as written (``...`` lines stand for lines left out);
* ``<!-- example: FILE -->``: a file of the guide's own plug-in (its tests, its pyproject), run here against the
  example strategy copied into a package of its own as ``mypkg.keep_last`` (pytest, then ``mypy --strict``);
* ``<!-- fields: CLASS ... -->``: the table below it lists every field of each class, and only names it has;
* ``<!-- output: COMMAND -->``: the command's output (tests/cli/test_strategy_check.py compares it).

Every ``Class(field, ...)`` and ``function(parameter, ...)`` the guide's text names from ``compbench.sdk`` or
``compbench.testing`` has those fields or parameters, in that order (``Keep(id)``, never ``Keep(message_id)``).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import compbench.sdk as sdk
import compbench.testing as kit
from helpers import ROOT

GUIDE = ROOT / "docs" / "writing-a-strategy.md"
MARK = re.compile(r"^\s*<!-- (excerpt|example|fields|output): (.+?) -->\s*$")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    kind: str  # excerpt, example, fields, output; "" for a block without a mark
    target: str
    lang: str
    code: str  # dedented by the fence's own indentation
    line: int  # of the fence, 1-based


def blocks(text: str) -> list[Block]:
    """The guide's fenced blocks, each with the mark on the line before it (if any)."""
    lines = text.splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, lang = fence.group(1), fence.group(2)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = [x[len(indent):] if x.startswith(indent) else x.lstrip() for x in lines[i + 1:end]]
        mark = MARK.match(lines[i - 1]) if i else None
        out.append(Block(mark.group(1) if mark else "", mark.group(2) if mark else "", lang, "\n".join(body) + "\n",
                         i + 1))
        i = end + 1
    return out


@pytest.fixture(scope="module")
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def test_every_code_block_says_what_it_is(guide: str) -> None:
    found = blocks(guide)
    assert len(found) >= 12
    unmarked = [b.line for b in found if b.lang in ("python", "toml") and not b.kind]
    assert not unmarked, f"{GUIDE.name}: code blocks at lines {unmarked} have no <!-- excerpt|example: -->"
    assert {b.kind for b in found} >= {"excerpt", "example", "output"}


def _chunks(code: str) -> list[list[str]]:
    """The runs of lines between ``...`` lines, blank lines at their ends trimmed."""
    out: list[list[str]] = [[]]
    for line in code.splitlines():
        if line.strip() == "...":
            out.append([])
        else:
            out[-1].append(line)
    trimmed = []
    for c in out:
        while c and not c[0].strip():
            c = c[1:]
        while c and not c[-1].strip():
            c = c[:-1]
        if c:
            trimmed.append(c)
    return trimmed


def _find(chunk: list[str], lines: list[str], start: int) -> int:
    """Where ``chunk`` starts in ``lines`` at or after ``start`` (-1: nowhere)."""
    for i in range(start, len(lines) - len(chunk) + 1):
        if lines[i:i + len(chunk)] == chunk:
            return i
    return -1


def test_each_excerpt_is_in_its_file_as_written(guide: str) -> None:
    excerpts = [b for b in blocks(guide) if b.kind == "excerpt"]
    assert {b.target for b in excerpts} == {"strategies/example_keep_last.py", "harness/sdk/registry.py"}
    for b in excerpts:
        lines = (ROOT / b.target).read_text(encoding="utf-8").splitlines()
        at = 0
        for chunk in _chunks(b.code):
            found = _find(chunk, lines, at)
            assert found >= 0, f"{GUIDE.name}:{b.line}: not in {b.target} as written:\n" + "\n".join(chunk)
            at = found + len(chunk)


def test_the_excerpts_cover_the_example_s_code(guide: str) -> None:
    """Every line of the example's code below its docstring is in an excerpt: the guide walks through all of it."""
    example = "strategies/example_keep_last.py"
    shown = {line for b in blocks(guide) if b.target == example for line in b.code.splitlines()}
    source = (ROOT / example).read_text(encoding="utf-8")
    body = source[source.index('"""', 3) + 3:]
    missing = [x.strip() for x in body.splitlines() if x.strip() and x not in shown]
    assert missing == ['"""The example every strategy author starts from: copy strategies/example_keep_last.py and',
                       'docs/writing-a-strategy.md."""', "return KeepLast(p)"], missing  # the factory's body


# --- the names the guide gives --------------------------------------------------------------------------------------

CALL = re.compile(r"`([A-Za-z_][A-Za-z_0-9]*)\(([^()`]*)\)`")


def _named(name: str) -> Any:
    return getattr(sdk, name, None) or getattr(kit, name, None)


def _parameters(obj: Any) -> list[str]:
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    return list(inspect.signature(obj).parameters)


def _problem(name: str, args: str) -> str | None:
    """What is wrong with the guide's ``name(args)`` (None: each argument is the field or parameter it says)."""
    obj = _named(name)
    if obj is None or not (dataclasses.is_dataclass(obj) or inspect.isfunction(obj)):
        return None  # not the SDK's or the kit's (a method, a hook)
    names = _parameters(obj)
    for i, raw in enumerate(a.strip() for a in args.split(",") if a.strip()):
        if raw == "...":
            continue
        word = raw.lstrip("*").split("=")[0].strip()
        if not word.isidentifier():
            continue  # a value (``counter("chars4")``), not a name
        if "=" in raw or raw.startswith("*"):
            if word not in names:
                return f"`{name}({args})`: {name} has no {word!r} (it has {', '.join(names)})"
        elif i >= len(names) or names[i] != word:
            said = names[i] if i < len(names) else "nothing"
            return f"`{name}({args})`: argument {i + 1} of {name} is {said}, not {word!r}"
    return None


def test_every_class_and_function_the_guide_names_has_those_fields(guide: str) -> None:
    prose = re.sub(r"```.*?```", "", guide, flags=re.S)
    calls = CALL.findall(prose)
    checked = [(n, a) for n, a in calls if _named(n) is not None]
    assert {"Keep", "Insert", "Compact", "SummaryRequest", "Prune", "Wake", "Setting", "Tool", "view", "replay"} <= {
        n for n, _ in checked}
    problems = [p for n, a in checked if (p := _problem(n, a))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("said", "expected"), [
    ("Keep(message_id)", "argument 1 of Keep is id, not 'message_id'"),
    ("ToolResult(id, name)", "argument 1 of ToolResult is call_id, not 'id'"),
    ("ModelLimits(context_window, max_output, input_limit)", "argument 3 of ModelLimits is max_input"),
    ("view(messages, window=)", "view has no 'window'"),
    ("Keep(id)", None), ("transcript(*messages, id=, source=, **meta)", None), ("Wake(step=0)", None)])
def test_the_name_check_finds_what_the_first_guide_got_wrong(said: str, expected: str | None) -> None:
    name, args = CALL.fullmatch(f"`{said}`").groups()  # type: ignore[union-attr]
    found = _problem(name, args)
    assert (found is None) if expected is None else (found is not None and expected in found), found


def _table(guide: str, mark: str) -> list[list[str]]:
    """The rows of the table after ``<!-- fields: MARK -->``: the cells' backticked names (``x(...)`` as x)."""
    lines = guide.splitlines()
    start = lines.index(f"<!-- fields: {mark} -->") + 3  # the mark, the header, the rule
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append(cells)
    return rows


def _names(cell: str) -> list[str]:
    """The names a cell lists: each backticked name (``count(text)`` as count), asides in parentheses left out
    (``role`` (``system``, ``user``...) lists role)."""
    cell = re.sub(r"\s\([^)]*\)", "", cell)
    return [m.split("(")[0] for m in re.findall(r"`([A-Za-z_]\w*(?:\([^`]*\))?)`", cell)]


def _attributes(cls: Any) -> set[str]:
    if cls is sdk.SessionView:
        return {k for k in vars(kit.view([]))} | {k for k in dir(cls) if not k.startswith("_")}
    return {f.name for f in dataclasses.fields(cls)} | {k for k in dir(cls) if not k.startswith("_")}


def _required(cls: Any) -> set[str]:
    """What a table must list: every field (a view's public attributes and its entries)."""
    if cls is sdk.SessionView:
        return {k for k in vars(kit.view([])) if not k.startswith("_")} | {"entries"}
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("mark", ["SessionView", "Entry", "ModelLimits", "Message Text Reasoning ToolCall ToolResult "
                                                                           "Media Usage"])
def test_the_tables_list_every_field_and_only_real_ones(guide: str, mark: str) -> None:
    rows = _table(guide, mark)
    if " " in mark:  # a class per row, its fields in the second column
        listed = {_names(r[0])[0]: _names(r[1]) for r in rows}
        assert set(listed) == set(mark.split())
    else:
        listed = {mark: [n for r in rows for n in _names(r[0])]}
    for name, fields in listed.items():
        cls = getattr(sdk, name)
        assert set(fields) <= _attributes(cls), (name, set(fields) - _attributes(cls))
        assert _required(cls) <= set(fields), (name, _required(cls) - set(fields))


# --- the guide's plug-in, run ---------------------------------------------------------------------------------------

def _plugin(tmp_path: Path, guide: str) -> Path:
    """The guide's package: the example as ``mypkg.keep_last`` (named ``keep-last``, not an example), the guide's
    tests and pyproject."""
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    example = (ROOT / "strategies" / "example_keep_last.py").read_text(encoding="utf-8")
    plugin = example.replace('NAME = "example-keep-last"', 'NAME = "keep-last"').replace(", example=True)", ")")
    assert plugin.count("keep-last") > example.count("keep-last") - example.count("example-keep-last")
    (pkg / "keep_last.py").write_text(plugin)
    for b in blocks(guide):
        if b.kind == "example":
            path = tmp_path / b.target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(b.code)
    return tmp_path


def test_the_guide_s_pyproject_names_the_guide_s_module(guide: str) -> None:
    (toml,) = [b for b in blocks(guide) if b.target == "pyproject.toml"]
    points = tomllib.loads(toml.code)["project"]["entry-points"]["compbench.strategies"]
    assert points == {"keep-last": "mypkg.keep_last"}


def test_the_guide_s_tests_pass_and_mypy_strict_passes_on_the_plug_in(tmp_path: Path, guide: str) -> None:
    """pytest runs the guide's tests against the plug-in (the samples replayed with and without its wake, every hook
    watched), then ``mypy --strict mypkg tests`` as section 10 says, with compbench laid out as a wheel installs
    it (a tree of links: the checkout's editable install is an import hook mypy cannot follow)."""
    root = _plugin(tmp_path, guide)
    env = {**os.environ, "PYTHONPATH": str(root)}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_keep_last.py"],
                       cwd=root, capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0 and "5 passed" in p.stdout, p.stdout + p.stderr
    site = tmp_path / "site" / "compbench"
    site.mkdir(parents=True)
    for f in (ROOT / "harness").iterdir():
        (site / f.name).symlink_to(f)
    (site / "strategies").symlink_to(ROOT / "strategies")
    (site / "reports").symlink_to(ROOT / "reports")
    command = next(b.code for b in blocks(guide) if "mypy --strict" in b.code and b.lang == "")
    assert "$ mypy --strict mypkg tests\n" in command
    m = subprocess.run([sys.executable, "-m", "mypy", "--strict", "mypkg", "tests"], cwd=root, capture_output=True,
                       text=True, timeout=600, env={**env, "MYPYPATH": str(tmp_path / "site")})
    assert m.returncode == 0, m.stdout + m.stderr
    assert m.stdout.strip() == command.splitlines()[-1], m.stdout  # "Success: no issues found in 3 source files"

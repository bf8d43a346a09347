"""Kilo Code's logs say Kilo Code (issue 40): an export a Kilo Code fork named after itself
(``coderider_kilo_task_<date>.md``), a task in a Kilo fork's extension storage or showing Kilo Code's own tools or
project folder, are ``kilo-code`` logs, named Kilo Code wherever the tool is named and replayed by ``roo-code`` at its
``kilo`` preset; hand-made from the Roo Code fixtures (tests/fixtures/cline-family)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compbench.data.formats import read
from compbench.data.formats.catalog import tool_name
from compbench.data.formats.cline_markdown import tool_of
from helpers import FIXTURES, main_cli

DATA = FIXTURES / "cline-family"
EXPORT = DATA / "exports" / "roo_task_jan-5-2026_10-00-00-am.md"
TASK = DATA / "roo-v1" / "0d0d0d0d-0000-4000-8000-000000000003"
ROO_TEXT = "# Current Mode\n<slug>code</slug>"


@pytest.mark.parametrize(("name", "expected"), [
    ("coderider_kilo_task_x.md", "kilo-code"), ("kilo_task_x.md", "kilo-code"), ("my-kilocode_task_x.md", "kilo-code"),
    ("coderider_task_x.md", "roo-code"), ("kilometer_task_x.md", "roo-code"), ("mykilo_task_x.md", "roo-code"),
])
def test_a_fork_whose_export_names_kilo_is_kilo_code(name: str, expected: str) -> None:
    """The fork's own name in its export's file name says Kilo (a name part "kilo" or "kilocode"), even where its
    text shows none of Kilo Code's tools or a .roo/ folder besides; a name merely containing the letters does
    not."""
    assert tool_of(ROO_TEXT, Path(name))[0] == expected
    assert tool_of(ROO_TEXT + "\n.roo/rules/a.md", Path(name))[0] == expected


def test_a_kilo_forks_export_is_labelled_and_replayed_as_kilo_code(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from compbench.sdk.registry import get, own_strategy

    f = tmp_path / "coderider_kilo_task_jan-5-2026_10-00-00-am.md"
    shutil.copy(EXPORT, f)
    (t,) = read(f)
    assert (t.source, t.meta["fork"]) == ("kilo-code", "coderider_kilo")
    assert t.meta["tool_evidence"] == ("the export's file name (coderider_kilo_task_): a Kilo Code fork's, its "
                                       "content Roo Code's")
    assert tool_name(t.source) == "Kilo Code"
    from compbench.decide.breakdown import group_name

    assert group_name("source", t.source) == "Kilo Code logs"  # compare --by source, the report
    own = own_strategy(t.source)
    tool = get(str(own)).tool
    assert own == "roo-code" and tool is not None
    assert tool.preset_for(t, list(get("roo-code").presets))[0] == "kilo"
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "inspect", f)
    assert code == 0 and " kilo-code " in out.splitlines()[1] and "roo-code" not in out


def _task(tmp: Path, where: str, edit: object = None) -> Path:
    d = tmp / where / TASK.name
    shutil.copytree(TASK, d)
    if edit is not None:
        doc = json.loads((d / "api_conversation_history.json").read_text())
        edit(doc)  # type: ignore[operator]
        (d / "api_conversation_history.json").write_text(json.dumps(doc))
    return d / "api_conversation_history.json"


def test_a_task_in_a_kilo_forks_storage_is_kilo_code(tmp_path: Path) -> None:
    (t,) = read(_task(tmp_path, "Code/User/globalStorage/jihulab.coderider-kilo/tasks"))
    assert (t.source, t.meta["tool_evidence"]) == ("kilo-code", "in jihulab.coderider-kilo's storage: a Kilo Code "
                                                                "fork's")
    (t,) = read(_task(tmp_path, "Code/User/globalStorage/acme.coderider/tasks"))  # a fork that does not name Kilo
    assert t.source == "roo-code"


def test_kilo_codes_own_tool_or_folder_in_a_roo_family_task_is_kilo_code(tmp_path: Path) -> None:
    def call_new_rule(doc: list[dict[str, object]]) -> None:
        doc[1]["content"] = [{"type": "tool_use", "id": "k1", "name": "new_rule", "input": {"path": "r.md"}}]

    def kilocode_folder(doc: list[dict[str, object]]) -> None:
        blocks = doc[0]["content"]
        assert isinstance(blocks, list)
        blocks[1]["text"] = "<environment_details>\n.kilocode/rules/style.md\n# Current Mode\n<slug>code</slug>\n" \
                            "</environment_details>"

    (t,) = read(_task(tmp_path, "a", call_new_rule))
    assert (t.source, t.meta["tool_evidence"]) == (
        "kilo-code", "Kilo Code's own tool (new_rule) in a Roo Code-family task: a Kilo Code fork")
    (t,) = read(_task(tmp_path, "b", kilocode_folder))
    assert t.source == "kilo-code" and ".kilocode/" in t.meta["tool_evidence"]
    (t,) = read(_task(tmp_path, "c"))
    assert t.source == "roo-code"

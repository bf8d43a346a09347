"""The run format's upgrade path (compbench.store.manifest.UPGRADES), step by step, on hand-made old shapes: each
named step gives the spec the options its version added and the tables the columns it added, with what an
older run meant by their absence; a run at this version is read as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from compbench.measure.pricing import DEFAULT_PRICE_MODEL
from compbench.run.spec import RunSpec
from compbench.store.manifest import FORMAT_VERSION, UPGRADES, Manifest, upgrade, upgrade_spec, upgrade_table
from compbench.store.reader import Run
from compbench.store.tables import names


def manifest(version: int, **spec: Any) -> dict[str, Any]:
    """A manifest of ``version`` as an old compbench wrote it: only the keys it knew."""
    return {"format_version": version, "compbench_version": "0.old", "created_at": "",
            "dataset": {"path": "d", ("fingerprint" if version < 4 else "replayed_hash"): "f", "transcripts": 1},
            "spec": {"strategies": ["none"], "limits": None, **spec},
            "strategies": [{"label": "none", "name": "none", "params": {}}]}


def test_every_older_version_has_one_named_step_to_the_next() -> None:
    assert sorted(UPGRADES) == list(range(1, FORMAT_VERSION))
    for version, step in UPGRADES.items():
        assert step.to == version + 1 and step.name


def test_step_1_the_spec_names_its_token_correction() -> None:
    assert UPGRADES[1].spec({"strategies": ["none"]})["token_correction"] == "none"  # counted without one
    assert UPGRADES[1].spec({"token_correction": "auto"})["token_correction"] == "auto"  # a value said is kept
    assert UPGRADES[1].added == {} and UPGRADES[1].dropped == {}  # its tables: as version 2 reads them


def test_step_2_the_spec_names_the_options_added_at_version_2() -> None:
    old = UPGRADES[2].spec({"strategies": ["none"], "token_correction": "none"})
    assert (old["cache_ttl"], old["price_model"], old["keep_empty"], old["settings"]) == (
        "none", DEFAULT_PRICE_MODEL, True, [])  # a cache that never expired, one price, empty ones replayed
    said = {"cache_ttl": "5m", "price_model": None, "keep_empty": False, "settings": ["codex:x=1"]}
    assert {k: UPGRADES[2].spec(dict(said))[k] for k in said} == said  # a version 2 run that said them


def test_step_2_gives_an_old_results_table_the_columns_added_since() -> None:
    old = pd.DataFrame({"transcript_id": ["t"], "strategy": ["none"], "name": ["none"], "source": ["codex"],
                        "refetch_debt_tokens": [3]})
    new = upgrade_table("results", old, 2)
    assert "refetch_debt_tokens" not in new.columns  # dropped since
    assert (new["swept"].iloc[0], new["recorded_inferred"].iloc[0], new["preset"].iloc[0]) == ("", 0, "")
    assert new["reacquired_tokens"].isna().all()  # not measured then: null, never a made-up zero
    assert list(new.columns) == [c for c in names("results") if c in new.columns]  # the declared order
    compactions = upgrade_table("compactions", pd.DataFrame({"transcript_id": ["t"], "seq": [1]}), 2)
    assert (compactions["recorded_next_input"].iloc[0], compactions["recorded_lacks"].iloc[0]) == (-1, "")


def test_step_3_names_the_runs_dataset_hash_replayed_hash() -> None:
    """The value is kept; only its name changes, so it is no longer mistaken for a dataset's fingerprint."""
    read = Manifest.from_json(manifest(3))
    assert read.dataset.replayed_hash == "f" and read.written_as == 3
    assert "fingerprint" not in upgrade(manifest(3))["dataset"]
    assert UPGRADES[3].spec({"strategies": ["none"]}) == {"strategies": ["none"]}
    assert Manifest.from_json(manifest(2)).dataset.replayed_hash == "f"  # through every step
    assert Manifest.from_json(manifest(FORMAT_VERSION)).to_json()["dataset"] == {
        "path": "d", "replayed_hash": "f", "transcripts": 1}


def test_an_old_table_keeps_what_it_has() -> None:
    old = pd.DataFrame({"transcript_id": ["t"], "settings": ["sweep"], "recorded_inferred": [2]})
    new = upgrade_table("results", old, 2)
    assert (new["swept"].iloc[0], new["recorded_inferred"].iloc[0]) == ("sweep", 2)
    assert "settings" not in new.columns  # renamed swept at version 4
    at_3 = upgrade_table("results", pd.DataFrame({"transcript_id": ["t"], "settings": ["sweep"]}), 3)
    assert at_3["swept"].tolist() == ["sweep"] and "settings" not in at_3.columns


def test_a_table_at_this_version_is_untouched() -> None:
    frame = pd.DataFrame({"transcript_id": ["t"], "refetch_debt_tokens": [3]})
    assert upgrade_table("results", frame, FORMAT_VERSION) is frame


def test_version_1_is_brought_through_every_step() -> None:
    spec = Manifest.from_json(manifest(1)).spec
    assert RunSpec.from_manifest(spec) == RunSpec(strategies=("none",), token_correction="none", cache_ttl="none",
                                                  price_model=DEFAULT_PRICE_MODEL, keep_empty=True)
    assert Manifest.from_json(manifest(1)).written_as == 1
    assert upgrade_spec(manifest(1)["spec"], 1) == upgrade(manifest(1))["spec"]


def test_this_version_is_read_as_written() -> None:
    d = manifest(FORMAT_VERSION)
    assert upgrade(d) == d and Manifest.from_json(d).written_as == FORMAT_VERSION


def test_a_hand_made_version_2_run_reads_with_every_column(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps(manifest(2, token_correction="none")), encoding="utf-8")
    pd.DataFrame({"transcript_id": ["t"], "strategy": ["none"], "refetch_debt_tokens": [3]}).to_parquet(
        run / "results.parquet")
    r = Run.open(run)
    assert r.manifest.written_as == 2 and r.manifest.format_version == FORMAT_VERSION
    results = r.results()
    assert results["swept"].tolist() == [""] and "refetch_debt_tokens" not in results.columns
    assert r.table("results", ["strategy", "swept"]).columns.tolist() == ["strategy", "swept"]
    assert list(r.table("steps").columns) == names("steps")  # absent: the declared schema, empty


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1])
def test_a_newer_version_is_refused(version: int) -> None:
    from compbench.errors import UsageError

    with pytest.raises(UsageError, match=f"run format_version {version} is newer"):
        upgrade(manifest(version))

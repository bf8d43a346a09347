"""Structure-aware fuzzing of every importer: each input imports or fails with a clear TranscriptError.

Seeds are real files (read in place from ../shared, never copied) and hand-made fixtures. Hypothesis
mutates their *parsed* records (wrong types, deleted keys, huge strings, deep nesting, unknown record
types) and their bytes (truncated lines, invalid UTF-8). ``make fuzz`` runs 10,000 inputs per format
(``COMPBENCH_FUZZ_EXAMPLES``); ``make test`` a modest number.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import TRANSCRIPTS, shared_present
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import _mutate

from compbench.data.formats import read
from compbench.data.formats.catalog import FORMATS
from compbench.errors import TranscriptError
from helpers import ROOT

EXAMPLES = int(os.environ.get("COMPBENCH_FUZZ_EXAMPLES", "25"))
MAX_RECORDS = 40  # a seed's first records: enough structure, fast to mutate

SEEDS: dict[str, list[str]] = {
    "claude-code": ["claude-code/M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl"],
    "codex": ["codex/TravelBlogs__rollout-2025-12-29T21-39-00-019b6bd5-ed54-7b23-873a-2177ca046ce3.jsonl"],
    "opencode": ["opencode/dark-factory__session__kind-meadow__ses_39b9a333bffeVNXMK6bSZru9Uq.json"],
    "opencode-db": ["opencode/dark-factory__session__kind-meadow__ses_39b9a333bffeVNXMK6bSZru9Uq.json"],
    "pi": ["pi/pi-mono__before-compaction.jsonl"],
    "swe-agent": ["swe-agent/ctf-networking_1.traj"],
    "mini-swe-agent": ["mini-swe-agent/django__django-15104.traj.json"],
}
LOCAL_SEEDS: dict[str, list[str]] = {
    "openai": ["tests/fixtures/openai"], "pi": ["tests/fixtures/pi-current.jsonl"],
    "claude-code": ["tests/fixtures/shapes/claude-hook-chat.json", "tests/fixtures/shapes/claude-2.1-records.jsonl"],
    "copilot": ["tests/fixtures/shapes/copilot/77777777-7777-4777-8777-777777777777/events.jsonl"],
    "gemini-cli": [f"tests/fixtures/gemini-cli/{n}" for n in (
        "session-2025-12-01T10-00-aaaa1111.json", "session-2026-02-10T09-00-bbbb2222.json",
        "session-2026-03-01T08-00-cccc3333.jsonl", "session-2026-06-01T12-00-dddd4444.jsonl",
        "gemini-conversation-1764584000000.json", "checkpoint-price-cache.json")],
    "openhands": ["tests/fixtures/shapes/openhands/v1-export/events.json",
                  "tests/fixtures/shapes/openhands/v1-events.jsonl"],
    "openhands-v0": ["tests/fixtures/shapes/openhands/v0-trajectory.json"],
    "openhands-eval": ["tests/fixtures/shapes/openhands/output.jsonl"],
    "cline": ["tests/fixtures/cline-family/saoudrizwan.claude-dev/tasks/1700000000002/api_conversation_history.json",
              "tests/fixtures/cline-family/rooveterinaryinc.roo-cline/tasks/0d0d0d0d-0000-4000-8000-000000000002/"
              "api_conversation_history.json"],
    "goose": ["tests/fixtures/shapes/goose-session.jsonl"],
}


def seed_records(fmt: str) -> list[tuple[str, Any]]:
    """(kind, parsed) pairs: kind 'jsonl' -> list of records, 'json' -> a document."""
    paths = [TRANSCRIPTS / p for p in SEEDS.get(fmt, []) if shared_present(TRANSCRIPTS / p)]
    for p in LOCAL_SEEDS.get(fmt, []):
        q = ROOT / p
        paths += sorted(q.glob("*.json*")) if q.is_dir() else [q]
    out: list[tuple[str, Any]] = []
    for p in paths:
        if not p.is_file():
            continue
        text = p.read_text(encoding="utf-8")
        try:
            out.append(("json", json.loads(text)))
        except json.JSONDecodeError:
            lines = [json.loads(x) for x in text.splitlines() if x.strip()][:MAX_RECORDS]
            out.append(("jsonl", lines))
    return out


def _shrink(doc: Any, budget: int = 60) -> Any:
    """Cap long lists so one example stays small (the importer's paths are what we fuzz)."""
    if isinstance(doc, list):
        return [_shrink(x, budget) for x in doc[:budget]]
    if isinstance(doc, dict):
        return {k: _shrink(v, budget) for k, v in doc.items()}
    return doc








def _bytes(kind: str, doc: Any, data: st.DataObject) -> bytes:
    if kind == "json":
        raw = json.dumps(doc).encode()
    else:
        raw = b"".join(json.dumps(r).encode() + b"\n" for r in doc) if isinstance(doc, list) else b"{}\n"
    op = data.draw(st.sampled_from(["none", "none", "truncate", "bad-utf8", "garbage-line"]))
    if op == "truncate" and raw:
        raw = raw[: data.draw(st.integers(0, len(raw) - 1))]
    elif op == "bad-utf8":
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + b"\xff\xfe" + raw[at:]
    elif op == "garbage-line":
        raw = raw + b"{not json\n"
    return raw


def _check(path: Path, fmt: str) -> None:
    try:
        for t in read(path, fmt):
            assert t.id and isinstance(t.messages, tuple)
    except TranscriptError as e:
        assert not e.internal, f"importer bug surfaced as an internal error: {e}"
        assert str(e).startswith(str(path))


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "compbench"] + ["compbench"])
def test_importer_survives_mutations(fmt: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from compbench.data.formats.catalog import module

    try:
        module(fmt)
    except ModuleNotFoundError:
        pytest.skip(f"importer {fmt} not present")
    seeds = seed_records(fmt) if fmt != "compbench" else _native_seed()
    if not seeds:
        pytest.skip(f"no seed files for {fmt}")
    d = tmp_path_factory.mktemp(f"fuzz-{fmt}")
    counter = {"n": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        kind, doc = data.draw(st.sampled_from(seeds))
        doc = _mutate(_shrink(json.loads(json.dumps(doc))), data)
        counter["n"] += 1
        if fmt == "opencode-db":
            path = _db_input(d / f"input-{counter['n'] % 8}.db", doc, data)
        else:
            path = d / f"input-{counter['n'] % 8}.{'jsonl' if kind == 'jsonl' else 'json'}"
            path.write_bytes(_bytes(kind, doc, data))
        _check(path, fmt)

    one()
    print(f"{fmt}: {counter['n']} inputs, no unexpected exception")


def _db_input(path: Path, doc: Any, data: st.DataObject) -> Path:
    """A mutated export document stored as OpenCode's SQLite store, then maybe damaged on disk."""
    from helpers import opencode_db

    path.unlink(missing_ok=True)
    schema = data.draw(st.sampled_from(["current", "early"]))
    try:
        opencode_db(path, [doc], schema)
    except UnicodeEncodeError:  # a lone surrogate cannot be stored as SQLite text: write a document only
        path.unlink(missing_ok=True)
        opencode_db(path, [json.loads(json.dumps(doc, ensure_ascii=False).encode("utf-8", "replace"))], schema)
    raw = path.read_bytes()
    op = data.draw(st.sampled_from(["none", "none", "none", "truncate", "flip"]))
    if op == "truncate":
        path.write_bytes(raw[: data.draw(st.integers(0, len(raw) - 1))])
    elif op == "flip":
        at = data.draw(st.integers(0, len(raw) - 1))
        path.write_bytes(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1:])
    return path


def _native_seed() -> list[tuple[str, Any]]:
    from compbench.data.synth import session
    from compbench.data.transcript import to_records

    return [("jsonl", list(to_records(session(0, 0, turns=6))))]

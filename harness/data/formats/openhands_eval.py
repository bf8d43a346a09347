"""``compbench.data.formats.openhands_eval`` — OpenHands V0 evaluation and resolver outputs (``output.jsonl``): one
instance a line, its agent history inside.

From All-Hands-AI/OpenHands @ 156d068: ``evaluation/utils/shared.py`` (``EvalOutput``: instance_id, instruction,
metadata, history of ``event_to_dict`` events, metrics with ``token_usages``; the old history of
``[action, observation]`` pairs is still accepted there) and ``resolver/resolver_output.py`` +
``resolver/issue_resolver.py`` (``ResolverOutput``: issue, instruction, history of ``dataclasses.asdict``
events — flattened: no id, source or tool-call metadata — and ``state.metrics.get()``).

A line is one transcript. Usage: each call's response ``usage`` where the history keeps it; else
``metrics.token_usages`` joined by response id; for a flattened history, the i-th recorded usage is the i-th
model call's only when their numbers agree (else none, with a warning). ``metadata`` gives the model, the
condenser configuration and ``llm_config.max_input_tokens`` / ``max_message_chars``. A history without a
user message starts with the instance's ``instruction``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import iter_jsonl
from compbench.data.formats.openhands_v0 import is_event, transcript
from compbench.data.formats.openhands_v0_events import V0Builder, metrics_usage
from compbench.data.transcript import Message, Text, Transcript
from compbench.errors import TranscriptError

NAME = "openhands-eval"
MULTI_TRANSCRIPT = True
IDENTITY = ("instance_id", "issue")


def _item_ok(x: Any) -> bool:
    """A history item: an event (whole or flattened: an action or observation name), or an old pair."""
    if isinstance(x, list):
        return len(x) == 2 and all(_item_ok(y) for y in x)
    return isinstance(x, dict) and (isinstance(x.get("action"), str) or isinstance(x.get("observation"), str))


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """An instance line: its identity, its instruction or metrics, and a history of V0 events."""
    if first is None or not isinstance(first.get("history"), list) or not any(k in first for k in IDENTITY):
        return False
    if not ("instruction" in first or "metrics" in first):
        return False
    history = first["history"]
    return all(_item_ok(x) for x in history[:20])


def read(path: Path) -> Iterator[Transcript]:
    found = False
    for lineno, obj in iter_jsonl(path):
        if not sniff("", obj):
            raise TranscriptError(path, lineno, "an OpenHands evaluation/resolver instance {instance_id or issue, "
                                                "instruction, history of V0 events, metrics}")
        found = True
        yield _instance(path, lineno, obj)
    if not found:
        raise TranscriptError(path, None, "OpenHands evaluation instances (the file has none)")


def _tid(obj: dict[str, Any], path: Path, lineno: int) -> str:
    if isinstance(obj.get("instance_id"), str | int) and not isinstance(obj.get("instance_id"), bool):
        return str(obj["instance_id"])
    issue = obj.get("issue")
    if isinstance(issue, dict) and isinstance(issue.get("number"), int):
        repo = "/".join(str(issue[k]) for k in ("owner", "repo") if isinstance(issue.get(k), str))
        return f"{repo}#{issue['number']}" if repo else f"issue-{issue['number']}"
    return f"{path.stem}-{lineno}"


def _instance(path: Path, lineno: int, obj: dict[str, Any]) -> Transcript:
    items: list[Any] = []
    for x in obj["history"]:
        items += x if isinstance(x, list) else [x]
    for k, x in enumerate(items):
        if not _item_ok(x):
            raise TranscriptError(path, lineno, f"a V0 event as history item {k}")
    flat = not all(is_event(x) for x in items)
    metrics = obj.get("metrics") if isinstance(obj.get("metrics"), dict) else {}
    assert isinstance(metrics, dict)
    records = [u for u in metrics.get("token_usages") or [] if isinstance(u, dict)]
    by_response = {str(u["response_id"]): metrics_usage(u) for u in records if u.get("response_id")}

    def where(i: int) -> TranscriptError:
        return TranscriptError(path, lineno, f"a readable OpenHands V0 event as history item {i}")

    b = V0Builder(where, flat, by_response)
    meta: dict[str, Any] = {"path": str(path), "line": lineno}
    t = transcript(_tid(obj, path, lineno), items, where, meta, flat, NAME, b)
    messages = list(t.messages)
    warnings = list(t.warnings)
    if flat:
        warnings.append("flattened history (no ids, sources or tool-call metadata): sources inferred, calls rebuilt "
                        "from the action types")
        calls = [i for i, m in enumerate(messages) if m.role == "assistant"]
        if records and b.usage_calls == 0:
            if len(records) == len(calls):
                for i, u in zip(calls, records, strict=True):
                    messages[i] = replace(messages[i], usage=metrics_usage(u))
            else:
                warnings.append(f"{len(records)} recorded token usages for {len(calls)} model calls: not joined")
    compactions = list(t.compactions)
    if not any(m.role == "user" for m in messages) and isinstance(obj.get("instruction"), str):
        messages.insert(next((i for i, m in enumerate(messages) if m.role != "system"), len(messages)),
                        Message("oh-instruction", "user", (Text(obj["instruction"]),), None, {"instruction": True}))
        compactions = [replace(c, index=c.index + 1) for c in compactions]
    out_meta = {**t.meta, **_metadata(obj)}
    return Transcript(t.id, NAME, tuple(messages), out_meta, tuple(compactions), tuple(warnings))


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """The run's configuration, where the output records it."""
    out: dict[str, Any] = {}
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(md, dict)
    llm = md.get("llm_config") if isinstance(md.get("llm_config"), dict) else {}
    assert isinstance(llm, dict)
    model = llm.get("model") or md.get("model_name")
    if isinstance(model, str) and model:
        out["model"] = model
    for key in ("max_input_tokens", "max_output_tokens", "max_message_chars"):
        if isinstance(llm.get(key), int) and not isinstance(llm.get(key), bool) and llm[key] > 0:
            out[key] = llm[key]
    cond = md.get("condenser_config")
    if isinstance(cond, dict) and isinstance(cond.get("type"), str):
        out["condenser"] = {k: v for k, v in cond.items() if not isinstance(v, dict | list)}
    for key in ("agent_class", "git_commit", "dataset"):
        if isinstance(md.get(key), str):
            out[key] = md[key]
    if isinstance(obj.get("success"), bool):
        out["success"] = obj["success"]
    return out

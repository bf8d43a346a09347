"""Model windows and prices from litellm's bundled model table, read as JSON without importing litellm.

``import litellm`` costs about two seconds and would fetch a remote price map; the table ships inside
the package as ``model_prices_and_context_window_backup.json`` and is all compbench needs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.errors import UsageError
from compbench.session import ModelLimits


@functools.cache
def model_table() -> dict[str, dict[str, Any]]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("litellm is not installed; its bundled model table gives model windows")
    path = Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"
    table: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    table.pop("sample_spec", None)
    return table


def lookup(model: str) -> tuple[str, dict[str, Any]]:
    """The table entry for ``model``: exact name, then without a provider prefix, then dated variants."""
    table = model_table()
    candidates = [model, model.split("/", 1)[-1]]
    for c in candidates:
        if c in table:
            return c, table[c]
    for c in candidates:
        dated = sorted(k for k in table if k.startswith(c + "-") or k.endswith("/" + c))
        if dated:
            return dated[0], table[dated[0]]
    raise UsageError(f"model {model!r} is not in litellm's model table; give --context-window and --max-output")


def limits_for(model: str) -> ModelLimits:
    """Window, output limit and (where the table has a distinct one) input limit of ``model``."""
    _, entry = lookup(model)
    max_input = entry.get("max_input_tokens")
    max_output = entry.get("max_output_tokens") or entry.get("max_tokens") or 4096
    window = max_input + max_output if max_input and entry.get("mode") == "responses" else (
        max_input or entry.get("max_tokens") or 0)
    if not window:
        raise UsageError(f"model {model!r} has no context window in litellm's table; give --context-window")
    distinct_input = int(max_input) if max_input and entry.get("mode") == "responses" else None
    return ModelLimits(context_window=int(window), max_output=int(max_output), max_input=distinct_input)


@dataclass(frozen=True, slots=True)
class Prices:
    """Dollars per token."""

    input: float
    output: float
    cache_read: float
    cache_write: float


def prices_for(model: str) -> Prices:
    _, e = lookup(model)
    inp = float(e.get("input_cost_per_token") or 0.0)
    return Prices(
        input=inp,
        output=float(e.get("output_cost_per_token") or 0.0),
        cache_read=float(e.get("cache_read_input_token_cost") or inp),
        cache_write=float(e.get("cache_creation_input_token_cost") or inp),
    )

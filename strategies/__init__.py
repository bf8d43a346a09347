"""``compbench.strategies`` — Compaction strategies, one module each, registered by name (see
:mod:`compbench.sdk.registry`).

Writing one? Read :mod:`compbench.sdk`: the view, the actions, the protocols and the decorator in one place.
"""

from __future__ import annotations

from compbench.sdk.registry import (
    STRATEGIES,
    Configured,
    StrategyInfo,
    configure,
    get,
    names,
    resolve,
    runnable,
    strategy,
)

__all__ = ["STRATEGIES", "Configured", "StrategyInfo", "configure", "get", "names", "resolve", "runnable",
           "strategy"]

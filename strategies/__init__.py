"""Compaction strategies, one module each, registered by name (see :mod:`compbench.strategies.base`)."""

from __future__ import annotations

from compbench.strategies.base import (
    Configured,
    StrategyInfo,
    configure,
    default_names,
    forget_transcript_caches,
    get,
    names,
    resolve,
    strategy,
    transcript_cache,
)

__all__ = ["Configured", "StrategyInfo", "configure", "default_names", "forget_transcript_caches", "get", "names",
           "resolve", "strategy", "transcript_cache"]

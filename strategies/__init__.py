"""Compaction strategies, one module each, registered by name (see :mod:`compbench.strategies.base`)."""

from __future__ import annotations

from compbench.strategies.base import Configured, StrategyInfo, configure, get, names, resolve, strategy

__all__ = ["Configured", "StrategyInfo", "configure", "get", "names", "resolve", "strategy"]

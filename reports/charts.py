"""Charts as inline SVG, drawn by matplotlib (no hand-drawn paths, no JavaScript library, no network).

matplotlib's SVG backend is deterministic once ``svg.hashsalt`` is fixed and the date metadata is
dropped, and a chart weighs a few tens of kilobytes, where a self-contained plotly page weighs ~4.8 MB.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22")


def _plt() -> Any:
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "compbench", "svg.fonttype": "none", "font.size": 9,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    _plt().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML


def colors(names: Sequence[str]) -> dict[str, str]:
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def scatter(points: Mapping[str, tuple[float, float]], frontier: Sequence[str], color: Mapping[str, str]) -> str:
    """Net savings (x) vs needed-fact recall (y) per strategy, the Pareto frontier joined."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, (x, y) in points.items():
        if math.isnan(x) or math.isnan(y):
            continue
        ax.scatter([x], [y], color=color[name], s=40, zorder=3)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    front = [points[n] for n in frontier if not any(math.isnan(v) for v in points[n])]
    if len(front) > 1:
        fs = sorted(front)
        ax.plot([p[0] for p in fs], [p[1] for p in fs], "--", color="#555", lw=1, zorder=2, label="Pareto frontier")
        ax.legend(loc="lower left", frameon=False)
    ax.set_xlabel("net token savings vs none")
    ax.set_ylabel("needed-fact recall (presence)")
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.1%}")
    ax.grid(alpha=0.25)
    return _svg(fig)


def sawtooth(series: Mapping[str, Sequence[tuple[int, int]]], events: Mapping[str, Sequence[tuple[int, str]]],
             window: int, color: Mapping[str, str], title: str) -> str:
    """Context tokens per step for every strategy, compaction (▼) and prune (•) events, the window."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.6, 3.0))
    top = window
    for name, pts in series.items():
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        top = max(top, *ys)
        ax.plot(xs, ys, color=color[name], lw=1.2, label=name, drawstyle="steps-post")
        by_step = dict(pts)
        for step, kind in events.get(name, ()):
            y = by_step.get(step, ys[-1])
            ax.plot([step], [y], marker="v" if kind == "compaction" else "o", ms=5 if kind == "compaction" else 3,
                    color=color[name], zorder=4)
    ax.axhline(window, color="#000", lw=0.8, ls=":")
    ax.text(0, window, " window", va="bottom", fontsize=7)
    ax.set_ylim(0, top * 1.08)
    ax.set_xlabel("step (model call)")
    ax.set_ylabel("context tokens")
    ax.set_title(title, fontsize=9, loc="left")
    ax.yaxis.set_major_formatter(lambda v, _: f"{v / 1000:.0f}k")
    ax.legend(fontsize=7, ncol=3, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.22))
    return _svg(fig)


def kinds(values: Mapping[str, Mapping[str, float]], color: Mapping[str, str]) -> str:
    """Needed-fact recall per fact kind (grouped bars, one colour per strategy)."""
    plt = _plt()
    kinds_ = ["artifact", "recall", "decision", "continuation"]
    names = list(values)
    fig, ax = plt.subplots(figsize=(7.0, 2.8))
    width = 0.8 / max(1, len(names))
    for i, n in enumerate(names):
        ys = [values[n].get(k, math.nan) for k in kinds_]
        ax.bar([j + i * width for j in range(len(kinds_))], [0 if math.isnan(y) else y for y in ys], width,
               color=color[n], label=n)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(kinds_))], kinds_)
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_ylabel("needed-fact recall")
    ax.legend(fontsize=7, ncol=3, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.12))
    return _svg(fig)

"""``compbench.reports.colors`` — A strategy's colour is a property of its name, the same in every report and chart.

Colours assigned by position (the first strategy blue, the second red...) changed whenever a run had
other strategies. Here every known strategy has its own colour from a palette of distinguishable hues
(``none``, the reference, is grey); a strategy this table does not know (a plug-in, a new tool) gets a
hue from a hash of its name, so it is stable too. The configurations of one strategy share its hue: a
configuration label gets a lighter or darker shade, again from a hash of the label.
"""

from __future__ import annotations

import colorsys
import hashlib

# Tableau 20's saturated half, then distinguishable extras (Glasbey-like); grey is kept for none
KNOWN = {
    "none": "#6e7781",
    "opencode": "#1f77b4",
    "codex": "#d62728",
    "claude-code": "#ff7f0e",
    "pi": "#2ca02c",
    "go-replace": "#9467bd",
    "round-chained": "#8c564b",
    "observation-masking": "#e377c2",
    "truncate": "#bcbd22",
    "anthropic-context-editing": "#17becf",
    "anthropic-compaction": "#b35806",
    "langchain": "#1b9e77",
    "langchain-clear-tool-uses": "#66a61e",
    "deepagents": "#e7298a",
    "gemini-cli": "#3366cc",
    "openhands": "#994499",
    "cline": "#22aa99",
    "roo-code": "#aa3311",
    "crush": "#6633cc",
    "aider": "#0099c6",
    "goose": "#b82e2e",
    "kilo-code": "#316395",
    "amp": "#dd4477",
    "continue": "#5574a6",
    "pipeline": "#3b3eac",
}


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def _hex(r: float, g: float, b: float) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in (r, g, b))


def base_color(name: str) -> str:
    """The colour of strategy ``name``: its own when known, else a hue derived from the name."""
    if name in KNOWN:
        return KNOWN[name]
    return _hex(*colorsys.hls_to_rgb((_hash(name) % 360) / 360, 0.42, 0.62))


def color(label: str) -> str:
    """The colour of a configuration label (``NAME[:k=v,...]``): its strategy's, shaded per label."""
    name = label.partition(":")[0]
    base = base_color(name)
    if label == name:
        return base
    r, g, b = (int(base[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, lum, s = colorsys.rgb_to_hls(r, g, b)
    shift = (-0.16, -0.08, 0.08, 0.16)[_hash(label) % 4]
    return _hex(*colorsys.hls_to_rgb(h, max(0.18, min(0.78, lum + shift)), s))


def colors(labels: list[str]) -> dict[str, str]:
    return {label: color(label) for label in labels}

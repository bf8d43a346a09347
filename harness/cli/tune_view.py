"""``compbench.cli.tune_view`` — What ``tune`` prints after its sweep: the frontier, every configuration ranked by
the one rule with its paired change from the strategy's default configuration (with 95% intervals), the
flags, and the best configuration for the objective (the headline objective when none is given) as a block
to paste."""

from __future__ import annotations

import math
from typing import Any

from compbench.cli.compare_view import LEGEND, WIDTH, fit_labels, shared_part, wrap


def report(results: Any, obj: Any, defaulted: bool, default: str, resamples: int) -> list[str]:
    from compbench.cli.compare_view import _diff
    from compbench.decide.bootstrap import batch
    from compbench.decide.compare import fmt
    from compbench.decide.flags import flag_details, identical_configurations
    from compbench.decide.headline import HEADLINE, RECALL
    from compbench.decide.metrics import metric
    from compbench.decide.objective import meets, ranked, words
    from compbench.decide.ranking import frontier, standings
    from compbench.decide.tune import decisive, toml_snippet
    from compbench.textable import table

    head, rec = metric(HEADLINE), metric(RECALL)
    wanted = [HEADLINE, RECALL, "cost", "overflows", obj.metric, *(c[0] for c in obj.constraints)]
    b = batch(results, [metric(n) for n in dict.fromkeys(wanted)], resamples)
    agg = b.estimates
    details = flag_details(results)
    standing = standings(results, details)
    order = ranked(agg, standing, obj)
    thresholds = {k: v for k, _, v in obj.constraints}

    def show(s: str, name: str) -> str:
        v, m = agg[s][name].value, metric(name)
        if math.isnan(v):
            return "–"
        return decisive(v, thresholds[name], m.percent) if name in thresholds else (
            f"{v:.1%}" if m.percent else f"{v:,.3f}")

    out: list[str] = []
    shared, short = shared_part(order)  # configurations named by what differs; the full label where it is pasted
    if shared:
        what = ("(default) is that configuration, the strategy's default" if short[default] == "(default)" else
                f"the strategy's default configuration is {short[default]}")
        out += wrap(f"configurations of {shared}: each row names only the parameters it sets besides; {what}")
    points = {s: (m[HEADLINE].value, m[RECALL].value) for s, m in agg.items()}
    front = frontier(points, standing)
    out.append(f"Pareto frontier ({head.title} vs {rec.title}, configurations with no call over the window and no "
               f"degenerate compacting), {len(front)} of {len(agg)} configurations:")
    pad = min(60, max((len(short[s]) for s in front), default=0))
    for s in front:
        out.append(f"  {short[s]:<{pad}} {head.title} {show(s, HEADLINE):>8}  {rec.title} {show(s, RECALL):>8}"
                   f"  cost ${show(s, 'cost')}/transcript")
    out.append("")

    def change(s: str, name: str) -> str:
        if s == default:
            return "(the default)"
        d = b.diff(s, default, name)
        return "–" if d is None else _diff(d, metric(name))

    rows = [[short[s], standing[s].tier_name + ("" if meets(agg[s], obj) else ", below bar"),
             fmt(agg[s][HEADLINE], head), change(s, HEADLINE), fmt(agg[s][RECALL], rec), change(s, RECALL),
             show(s, "cost")] for s in order]
    headers = ["configuration", "group", f"{head.title} [95%]", "Δ vs default", f"{rec.title} [95%]",
               "Δ vs default", "cost $"]
    lines = table(headers, rows, [False, False, True, True, True, True, True])
    if max(len(x) for x in lines) > WIDTH:  # a long label wraps between its parameters, never inside a value
        lines = table(headers, fit_labels(rows, max(len(x) for x in lines) - WIDTH),
                      [False, False, True, True, True, True, True])
    out += lines
    out += wrap(f"ranked by the rule of '{words(obj)}'; Δ = configuration − {default} (the strategy's default "
                f"configuration) on the same transcripts; {LEGEND}")
    identical = identical_configurations(results)
    all_same = len(agg) > 1 and len(identical) == 1 and len(identical[0]) == len(agg)
    if all_same:  # a tune-level flag: the grid measured one configuration N times
        out += wrap(f"! all {len(agg)} configurations behave identically on every transcript: the swept parameters "
                    "change nothing on this dataset (a wider range, another window or other transcripts may)")
    for label in order:
        fs = [f.text for f in details.get(label, []) if not (all_same and f.kind == "identical")]
        if fs:
            out += wrap(f"! {label}: {'; '.join(fs)}")
    said = words(obj)
    why = " (the default objective; --objective sets another)" if defaulted else ""
    best = next((s for s in order if meets(agg[s], obj)), None)
    out.append("")
    if best is None:
        close = sorted(agg, key=lambda s: -sum(agg[s][k].value if not math.isnan(agg[s][k].value) else -9
                                               for k, _, _ in obj.constraints))[:3]
        near = "; ".join(f"{s}: " + ", ".join(f"{k} {show(s, k)}" for k, _, _ in obj.constraints) for s in close)
        out += wrap(f"no configuration meets {said}{why} (closest: {near})")
        return out
    figures = ", ".join(f"{k} {show(best, k)}" for k in dict.fromkeys([obj.metric, *thresholds]))
    out += wrap(f"best for {said}{why}: {best} ({standing[best].tier_name}; {figures})")
    if not standing[best].sound:
        out.append("  ! no sound configuration meets the objective: this one has calls over the window or "
                   "compacts on most calls")
    if best == default:
        out.append(f"  the default configuration, {default}, is the best: nothing to change")
        return out
    out.append(f"  --strategy '{best}'\n\n{toml_snippet(best)}")
    return out + in_the_tool(best, default)


def in_the_tool(best: str, default: str) -> list[str]:
    """Beside compbench's block, the same change in the tool itself where the tuned parameters are its settings:
    each one's line as its users write it (:func:`compbench.decide.tune.tool_lines`), where it goes, and the tuned
    parameters the tool has no setting for."""
    from compbench.decide.tune import tool_lines

    name, lines, others = tool_lines(best, default)
    if not lines:
        return []
    out = ["", f"in {name} itself (the same change, as its users set it):"]
    for setting, where, line in lines:
        out.append(f"# {setting}: {where}")
        out += line.splitlines()
    if others:
        out += wrap(f"# not a setting of {name}: {', '.join(others)} (compbench's block above sets "
                    f"{'it' if len(others) == 1 else 'them'}; the tool keeps its own value)")
    return out

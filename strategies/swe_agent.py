"""``compbench.strategies.swe_agent`` — ``swe-agent``: SWE-agent's ``LastNObservations`` history processor, in full
(polling, tags, first kept).

Source: SWE-agent/SWE-agent at 3ea751c087f3, ``sweagent/agent/history_processors.py``
(``LastNObservations._get_omit_indices`` and ``__call__``, ``CacheControlHistoryProcessor``) and
``config/`` (``n: 5`` in ``coding_challenge.yaml``, "used in the original paper to elide but the last 5
observations"; ``default.yaml`` uses only ``cache_control``).

Before every query SWE-agent rebuilds the history it sends: of the observations (history items with
``message_type: observation``, demonstrations excluded), those at positions ``1 ..
(len(observations) // polling) * polling - n`` are replaced by ``Old environment output: (N lines
omitted)`` (`` (K images omitted)`` appended when it had images), N the text's ``splitlines()`` count.
The first observation (the instance template, the task) is never elided. With ``polling`` > 1 the cut
moves only every ``polling`` observations, so between ``n`` and ``n + polling - 1`` recent observations
stay whole and the prompt prefix (and its cache) changes less often. An observation tagged
``keep_output`` always stays; one tagged ``remove_output`` is always elided, first or recent.

Observations in compbench: messages whose importer recorded SWE-agent's ``message_type`` use it;
otherwise the first user message (the task) and every message carrying tool results. Tags are read from
``meta["tags"]``. Since the elided set only grows, each elision is a prune mark made once.

``cache_control`` (``CacheControlHistoryProcessor``, ``last_n_messages: 2``) only marks the last two
user/tool messages as Anthropic cache breakpoints; it changes no content. compbench's cache model reads
the longest prefix unchanged since the previous call, which is what breakpoints on the last two
user/tool messages give an append-only history, so it changes nothing compbench measures (it would
matter only against a provider without automatic prefix caching).

``observation-masking`` stays the JetBrains paper's baseline (the last M *turns*, no polling, no tags).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import Action, Entry, Media, Prune, SessionView, Setting, Text, Tool, ToolResult, Usage
from compbench.sdk.registry import param, strategy

PLACEHOLDER = "Old environment output: ({lines} lines omitted)"  # LastNObservations.__call__
IMAGES = " ({images} images omitted)"  # LastNObservations.__call__
N_PAPER = 5  # config/coding_challenge.yaml; the docstring's "last 5 observations"
KEEP_TAGS = ("keep_output",)  # always_keep_output_for_tags
REMOVE_TAGS = ("remove_output",)  # always_remove_output_for_tags


@dataclass(frozen=True)
class SweAgentParams:
    n: int = param(N_PAPER, "Observations kept whole, the newest (SWE-agent's n; the paper used 5).", lo=1)
    polling: int = param(1, "Move the cut only every this many observations: between n and n + polling - 1 stay, "
                            "and the cached prefix changes less often.", lo=1)
    keep_tags: tuple[str, ...] = param(KEEP_TAGS, "Observations with one of these tags are never elided.")
    remove_tags: tuple[str, ...] = param(REMOVE_TAGS, "Observations with one of these tags are always elided.")


def is_observation(e: Entry, first_user: bool) -> bool:
    meta = e.message.meta
    if meta.get("demo"):
        return False
    if "message_type" in meta:
        return bool(meta["message_type"] == "observation")
    if e.origin != "recorded":
        return False
    return first_user or any(isinstance(p, ToolResult) for p in e.message.parts)


def elide(e: Entry) -> list[tuple[str, int, str]]:
    """The whole content becomes the placeholder: the first content part shows it, the others are emptied."""
    parts = e.message.parts
    lines = sum(len(p.text.splitlines()) for p in parts if isinstance(p, Text)) + sum(
        len(p.output.splitlines()) for p in parts if isinstance(p, ToolResult))
    images = sum(1 for p in parts if isinstance(p, Media) and p.kind == "image")
    text = PLACEHOLDER.format(lines=lines) + (IMAGES.format(images=images) if images else "")
    content = [j for j, p in enumerate(parts) if isinstance(p, (Text, ToolResult, Media))]
    return [(e.id, j, text if k == 0 else "") for k, j in enumerate(content)]


class SweAgent:
    """One instance per replay: the observations seen so far, how many of them are elided."""

    name = "swe-agent"

    def __init__(self, p: SweAgentParams) -> None:
        self.p = p
        self.scanned = 0
        self.seen_user = False
        self.observations: list[Entry] = []
        self.done: set[str] = set()  # observations already elided
        self.cut = 1  # observations before this index were already considered for the cut

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        if len(entries) < self.scanned:  # the view was rebuilt by someone else: start over
            self.scanned, self.seen_user, self.observations, self.cut = 0, False, [], 1
        targets: list[tuple[str, int, str]] = []
        for e in entries[self.scanned:]:
            first_user = e.role == "user" and not self.seen_user and "message_type" not in e.message.meta
            if e.role == "user" and not e.message.meta.get("demo"):
                self.seen_user = True
            if not is_observation(e, first_user):
                continue
            self.observations.append(e)
            tags = set(e.message.meta.get("tags", ()))
            if tags & set(self.p.remove_tags) and e.id not in self.done:
                self.done.add(e.id)
                targets += elide(e)
        self.scanned = len(entries)
        obs = self.observations
        last_removed = max(0, (len(obs) // self.p.polling) * self.p.polling - self.p.n)
        for e in obs[self.cut:last_removed]:  # from 1: "we never remove the first observation" (the task)
            if e.id in self.done or set(e.message.meta.get("tags", ())) & set(self.p.keep_tags):
                continue
            self.done.add(e.id)
            targets += elide(e)
        self.cut = max(self.cut, last_removed)
        return (Prune(tuple(targets), "swe-agent: last n observations"),) if targets else ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


# What SWE-agent's users set: the agent config's history_processors (SWE-agent 3ea751c config/*.yaml).
TOOL = Tool(
    "SWE-agent", ("swe-agent",),
    settings=(Setting("n", "last_n_observations n", "the agent config YAML (agent.history_processors)", "5 in the "
                      "paper's configs; default.yaml elides nothing", "agent:\n  history_processors:\n    - type: "
                      "last_n_observations\n      n: {value}", sweep=(3, 10),
                      note="the first observation (the task) is always kept"),))


@strategy("swe-agent", params=SweAgentParams,
          upstream="SWE-agent/SWE-agent 3ea751c087f3 sweagent/agent/history_processors.py (LastNObservations)",
          summary="elide all but the last n observations (the first, the task, kept), with polling and keep/remove "
                  "tags; never summarizes",
          presets={"polling": {"polling": N_PAPER}}, tool=TOOL)
def swe_agent(p: SweAgentParams) -> SweAgent:
    return SweAgent(p)

"""``compbench.strategies.pipeline`` — ``pipeline``: strategies composed in order (mask → prune → summarize), as
OpenHands chains condensers.

A spec names the stages and sets any stage's parameters with the stage's name (or its 1-based
position) as a prefix::

    pipeline:stages=observation-masking>claude-code,observation-masking.keep_last_turns=5
    pipeline:stages=truncate>claude-code,2.preset=current

The loop asks the stages one by one at every hook (before a step, after it, at a user's /compact),
applying each stage's actions before the next stage looks: a later stage sees the view the earlier ones
left, exactly as a chain of condensers does. ``tune`` sweeps a stage's parameter with the same prefix
(``--set stages=a>b --grid a.key=1,2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compbench.errors import UsageError
from compbench.sdk import Action, SessionView, Strategy, Tool, Usage
from compbench.sdk.registry import Configured, get, label, param, resolve, strategy
from compbench.strategies import gemini_cli

NAME = "pipeline"
SEPARATOR = ">"


@dataclass(frozen=True)
class PipelineParams:
    stages: tuple[str, ...] = param((), "The stages in order, each a full strategy spec (set with stages=a>b).")
    until_first: bool = param(False, "Stop a round at the first stage that compacted, as OpenHands' condenser "
                                     "pipeline returns the first Condensation (a masking stage's prune goes on "
                                     "to the next stage, as a masking condenser's View does; else every stage "
                                     "is asked).")


class Pipeline:
    """The stages of one replay; the loop reads ``stages`` and asks each in turn (see loop.stages_of)."""

    def __init__(self, stages: Sequence[Strategy], name: str = NAME, until_first: bool = False) -> None:
        if not stages:
            raise UsageError("pipeline needs at least one stage: pipeline:stages=NAME>NAME,...")
        self.stages = tuple(stages)
        self.name = name
        self.until_first = until_first

    # The loop never calls these on a composed strategy; they exist for the Strategy protocol.
    def before_step(self, s: SessionView) -> Sequence[Action]:
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


@strategy(NAME, params=PipelineParams, upstream="compbench (composition; each stage names its own source)",
          summary="strategies composed in order: each stage acts on the view the previous stages left",
          configurable_only=True, resolver=lambda spec, rest, name: resolve_pipeline(spec, rest, name))
def create(p: PipelineParams) -> Pipeline:
    return Pipeline([resolve(s).create() for s in p.stages], until_first=p.until_first)


COMPOSITION_PRESETS: dict[str, dict[str, str]] = {}  # composition -> preset -> pipeline items it adds


def compose(name: str, stages: str, *, source: str, summary: str, presets: dict[str, str] | None = None,
            tool: Tool | None = None) -> None:
    """Register a named composition: ``name`` resolves to the pipeline ``stages`` (items of a pipeline
    spec: ``stages=a>b,a.param=v,until_first=true``); a spec can still set any stage's parameters
    (``name:a.param=v``) and tune sweeps them. ``presets``: ``name:preset=P`` adds P's items (a tool
    version's stages and their presets) after the composition's own."""

    def factory(p: PipelineParams) -> Pipeline:
        return Pipeline([resolve(s).create() for s in p.stages], name, p.until_first)

    COMPOSITION_PRESETS[name] = dict(presets or {})
    strategy(name, params=PipelineParams, source=source, summary=summary, composition=stages,
             presets={key: {} for key in presets or {}}, resolver=resolve_pipeline, tool=tool)(factory)


def stage_key(key: str, names: Sequence[str]) -> tuple[int, str]:
    """``name.param`` or ``N.param`` -> (stage position, param)."""
    prefix, dot, rest = key.partition(".")
    if not dot or not rest:
        raise UsageError(f"pipeline: {key!r} is not stages=... or STAGE.PARAM=value")
    if prefix.isdigit():
        k = int(prefix) - 1
        if not 0 <= k < len(names):
            raise UsageError(f"pipeline: no stage {prefix} (it has {len(names)})")
        return k, rest
    if prefix not in names:
        raise UsageError(f"pipeline: no stage named {prefix!r} (stages: {', '.join(names)})")
    return names.index(prefix), rest


def resolve_pipeline(spec: str, rest: str, name: str = NAME) -> Configured:
    """Parse ``pipeline:stages=a>b,a.k=v,2.k=v`` into its configured stages; a named composition
    (``name``) starts from its registered items, which the spec's own override."""
    info = get(name)
    given = [x.strip() for x in rest.split(",") if x.strip()]
    own = COMPOSITION_PRESETS.get(name, {})
    chosen = [x.partition("=")[2].strip() for x in given if x.partition("=")[0].strip() == "preset"]
    for preset in chosen:
        if preset not in own and preset != "seed":
            raise UsageError(f"strategy {name!r} has no preset {preset!r} (presets: {', '.join(['seed', *own])})")
    given = [x for x in given if x.partition("=")[0].strip() != "preset"]
    items = [x.strip() for x in (info.composition + "," + ",".join(own.get(p, "") for p in chosen)).split(",")
             if x.strip()] + given
    stages: list[str] = []
    until_first = False
    per_stage: list[tuple[str, str, str]] = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"strategy {spec!r}: expected key=value, got {item!r}")
        if key.strip() == "stages":
            stages = [x.strip() for x in value.split(SEPARATOR) if x.strip()]
        elif key.strip() == "until_first":
            until_first = value.strip().lower() in ("1", "true", "yes", "on")
        else:
            per_stage.append((key.strip(), value.strip(), item))
    if not stages:
        raise UsageError(f"strategy {spec!r}: a pipeline needs stages=NAME>NAME (e.g. "
                         "pipeline:stages=observation-masking>claude-code)")
    for s in stages:
        if s == NAME:
            raise UsageError("a pipeline cannot contain a pipeline")
        get(s)  # unknown stage names fail here, with a did-you-mean
    overrides: list[dict[str, str]] = [{} for _ in stages]
    for key, value, _ in per_stage:
        k, param_name = stage_key(key, stages)
        overrides[k][param_name] = value
    configured = [resolve(label(s, o.pop("preset", ""), o)) for s, o in zip(stages, overrides, strict=True)]
    params = PipelineParams(tuple(c.label for c in configured), until_first)
    if info.composition:  # a named composition's label is its name, its preset and what the spec itself set
        return Configured(info, params, label(name, chosen[-1] if chosen else "", dict(x.split("=", 1) for x in given)))
    canonical = {"stages": SEPARATOR.join(stages)}
    if until_first:
        canonical["until_first"] = "true"
    for k, (s, c) in enumerate(zip(stages, configured, strict=True)):
        prefix = s if stages.index(s) == k else str(k + 1)
        for item in filter(None, c.label.partition(":")[2].split(",")):
            key, _, value = item.partition("=")
            canonical[f"{prefix}.{key}"] = value
    return Configured(info, params, label(NAME, "", canonical))


compose("gemini-cli", "stages=gemini-cli-compression>gemini-cli-masking",
        source="google-gemini/gemini-cli @ 5411f11 core/client.ts processTurn: tryCompressChat, then "
               "tryMaskToolOutputs, before each call (masking on by default from v0.30.0; the version presets "
               "before it compress only)",
        summary="Gemini CLI as it runs: chat compression, then tool-output masking, before every call",
        presets={**{v: f"stages=gemini-cli-compression,gemini-cli-compression.preset={v}" for v in ("0.26", "0.18", "0.17")},
                 # experimental.contextManagement: true (off by default): ContextManager replaces the compression
                 # service in processTurn, tool-output masking still follows it (client.ts @ 5411f11)
                 "context": "stages=gemini-cli-context>gemini-cli-masking"},
        tool=gemini_cli.TOOL)
compose("openhands", "stages=openhands-conversation-window>openhands-browser-output>openhands-llm-summarizing,"
        "openhands-browser-output.preset=server,openhands-llm-summarizing.preset=server,until_first=true",
        source="All-Hands-AI/OpenHands @ 156d068 server/session/session.py: the default condenser pipeline; "
               "memory/condenser/impl/pipeline.py: a Condensation ends the round",
        summary="OpenHands' server default: ConversationWindow, BrowserOutput(2), LLMSummarizing(keep_first 4, "
                "max_size 120); the first condenser that condenses ends the round; observations cut to 30,000 "
                "characters")

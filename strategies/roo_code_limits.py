"""``compbench.strategies.roo_code_limits`` — The output Roo Code reserves below the window:
``getModelMaxOutputTokens`` (RooCodeInc/Roo-Code cb836567180a ``src/shared/api.ts``, the rule since 8a3dcfb593,
2025-07; Kilo-Org/kilocode-legacy 56b73d3bdad4 the same without the hybrid-reasoning clamp).

``Task.attemptApiRequest`` passes ``getModelMaxOutputTokens({modelId, model, settings})`` (no ``format``) as
``maxTokens`` to ``manageContext``, which reserves ``maxTokens || ANTHROPIC_DEFAULT_MAX_TOKENS``:

1. a reasoning budget in use (``requiredReasoningBudget``, or ``supportsReasoningBudget`` with
   ``enableReasoningEffort`` on): ``settings.modelMaxTokens || 16_384``;
2. an Anthropic model (``modelId`` holds ``claude``) that supports a reasoning budget (Claude 3.7 Sonnet,
   the Claude 4 family and later in ``packages/types/src/providers/anthropic.ts``): 8,192, whatever its real
   limit (Kilo Code dropped this clause);
3. an Anthropic model with no output limit: 8,192;
4. a model with an output limit: GPT-5 models their full limit, any other ``min(limit, ceil(20% of the
   window))``;
5. otherwise 8,192.

compbench knows a model's output limit from litellm's table (``ModelLimits.max_output``) and its name from the
transcript (or the strategy's ``model`` parameter); which Anthropic models support a reasoning budget is
Roo Code's table, matched by name here.
"""

from __future__ import annotations

import functools
import math
import re

ANTHROPIC_DEFAULT_MAX_TOKENS = 8_192  # packages/types/src/providers/anthropic.ts
DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS = 16_384  # src/shared/api.ts
# Roo Code's Anthropic models with supportsReasoningBudget: claude-3-7-sonnet (its :thinking variant requires one),
# sonnet/opus/haiku 4 and later, whatever the provider's spelling (anthropic/claude-sonnet-4.5, ...-v1:0, @date).
_HYBRID = re.compile(r"claude-(?:3[-.]7-sonnet|(?:sonnet|opus|haiku)-(?:[4-9]|\d{2}))", re.IGNORECASE)


@functools.cache
def hybrid(model: str) -> bool:
    """Does Roo Code's table give this Anthropic model a reasoning budget (``supportsReasoningBudget``)?"""
    return bool(_HYBRID.search(model))


def reserved_output(model: str, max_output: int, window: int, *, reasoning_budget: bool = False,
                    model_max_tokens: int = 0, hybrid_clamp: bool = True) -> int:
    """``maxTokens || ANTHROPIC_DEFAULT_MAX_TOKENS`` as ``manageContext`` computes it (see the module)."""
    name = model.lower()
    required = name.endswith(":thinking") and hybrid(name)
    if required or (reasoning_budget and hybrid(name)):
        return model_max_tokens or DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS
    anthropic = "claude" in name
    if anthropic and hybrid_clamp and hybrid(name):
        return ANTHROPIC_DEFAULT_MAX_TOKENS
    if anthropic and not max_output:
        return ANTHROPIC_DEFAULT_MAX_TOKENS
    if max_output:
        if "gpt-5" in name:
            return max_output
        return min(max_output, math.ceil(window * 0.2))
    return ANTHROPIC_DEFAULT_MAX_TOKENS

"""``compbench.measure.savings`` — Savings against the ``none`` reference, defined once: the results columns, compare's
metrics and the run summary all compute them here."""

from __future__ import annotations

# What a strategy spends for net savings: the input it sends, and its summarizer's input and output.
NET_SPENT = ("input_tokens", "summarizer_input_tokens", "summarizer_output_tokens")
# ... and for effective savings, also what re-acquiring the content its view lost costs (compbench.measure.reacquire)
EFFECTIVE_SPENT = (*NET_SPENT, "reacquired_tokens")


def saved(value: float, reference: float) -> float:
    """The share of ``reference`` saved by spending ``value`` instead (0 with nothing to save)."""
    return 1.0 - value / reference if reference else 0.0


def net_saved(spent: float, reference: float) -> float:
    """Net savings: the share of the reference's input tokens saved once the summarizer's own tokens are paid
    (``spent``: the :data:`NET_SPENT` columns summed)."""
    return saved(spent, reference)

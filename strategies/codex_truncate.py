"""``compbench.strategies.codex_truncate`` — Codex's byte-based token estimate and middle truncation
(openai/codex ``truncate.rs``, ``codex-rs/utils/output-truncation``): what a kept user message that straddles
the 20k budget looks like after a compaction (:mod:`compbench.strategies.codex`)."""

from __future__ import annotations

import math

APPROX_BYTES_PER_TOKEN = 4  # truncate.rs


def approx_token_count(text: str) -> int:
    """Codex ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode()) / APPROX_BYTES_PER_TOKEN)


def _boundary_down(b: bytes, n: int) -> int:
    """Largest char boundary <= n (Rust ``truncate_on_boundary``)."""
    n = min(n, len(b))
    while 0 < n < len(b) and (b[n] & 0xC0) == 0x80:
        n -= 1
    return n


def _is_boundary(b: bytes, n: int) -> bool:
    return n == 0 or n == len(b) or (0 < n < len(b) and (b[n] & 0xC0) != 0x80)


def truncate_text(text: str, max_tokens: int) -> str:
    """``truncate_text(s, TruncationPolicy::Tokens(n))``: keep head and tail, a marker in the middle.

    Why byte-exact: the truncated message is what the model sees after compaction, and its length
    is part of the rebuilt context Codex sends.
    """
    b = text.encode()
    if not b:
        return ""
    small = (max_tokens // 4) * APPROX_BYTES_PER_TOKEN
    if max_tokens > 0 and small > 0 and len(b) <= small:
        return text
    max_bytes = max_tokens * APPROX_BYTES_PER_TOKEN
    if max_bytes == 0:
        return f"[…{math.ceil(len(b) / 4)} tokens truncated…]"
    if len(b) <= max_bytes:
        return text
    marker = f"[…{math.ceil((len(b) - max_bytes) / 4)} tokens truncated…]".encode()
    if len(marker) >= max_bytes:
        return marker[:_boundary_down(marker, max_bytes)].decode()
    keep = max_bytes - len(marker)
    left, right = keep // 2, keep - keep // 2
    # pick_prefix_end: the last newline inside the head budget, else the budget on a char boundary
    head_nl = b.rfind(b"\n", 0, left) if _is_boundary(b, left) and left <= len(b) else -1
    prefix_end = head_nl + 1 if head_nl >= 0 else _boundary_down(b, left)
    # pick_suffix_start: just after the first newline inside the tail budget, else its char boundary
    start_tail = max(0, len(b) - right)
    tail_nl = b.find(b"\n", start_tail) if _is_boundary(b, start_tail) else -1
    if tail_nl >= 0:
        suffix_start = tail_nl + 1
    else:
        suffix_start = start_tail
        while suffix_start < len(b) and not _is_boundary(b, suffix_start):
            suffix_start += 1
    suffix_start = max(suffix_start, prefix_end)
    out = b[:prefix_end] + marker + b"\n" + b[suffix_start:]
    if len(out) > max_bytes:
        out = out[:_boundary_down(out, max_bytes)]
    return out.decode()

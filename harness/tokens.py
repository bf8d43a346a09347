"""Token counting, offline, counted once per message.

Tokenizers: tiktoken ``o200k_base`` / ``cl100k_base``, whose BPE files are loaded from the copies the
litellm package ships (no network: tiktoken would otherwise download them), and the heuristics the
seeds use: ``chars4`` = ceil(chars / 4) (seed 004's ``estimateTokens``) and ``chars4-round`` =
round(chars / 4) (seed 001's ``Token.estimate``).

A replay counts every part of a transcript once (:meth:`TokenCounter.index`) and afterwards only adds
cached numbers, so the cost of a run is the tokenizer pass plus arithmetic.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.errors import UsageError
from compbench.transcript import Media, Message, Part, Reasoning, Text, ToolCall, ToolResult, Transcript

TOKENIZERS = ("o200k_base", "cl100k_base", "chars4", "chars4-round")
DEFAULT_TOKENIZER = "o200k_base"

# Chat formats wrap each message in a few tokens (role, separators): OpenAI documents 3 per message
# plus 1 for the role name in its cookbook; compbench uses 4 and lets users change it.
DEFAULT_MESSAGE_OVERHEAD = 4
# An image costs roughly (width * height) / 750 tokens on Anthropic, capped near 1,600; we do not decode
# images, so every media part costs this flat figure.
MEDIA_TOKENS = 1_500

_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_lock = threading.Lock()
_encoders: dict[str, Callable[[str], int]] = {}


def litellm_tokenizer_dir() -> Path:
    """litellm's bundled tokenizer folder, found without importing litellm (that costs ~2 s)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("litellm is not installed; it ships the offline tiktoken files")
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


def _load_bpe(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
    path = litellm_tokenizer_dir() / hashlib.sha1(url.encode()).hexdigest()
    if not path.exists():
        raise UsageError(f"offline tokenizer file missing: {path} (for {url})")
    data = path.read_bytes()
    if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
        raise UsageError(f"offline tokenizer file {path} does not match tiktoken's hash for {url}")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def tiktoken_encoding(name: str) -> Any:
    """A ``tiktoken.Encoding`` built with tiktoken's own parameters and the local BPE file."""
    import tiktoken
    import tiktoken_ext.openai_public as op

    with _lock:
        original = op.load_tiktoken_bpe
        op.load_tiktoken_bpe = _load_bpe
        try:
            params = op.ENCODING_CONSTRUCTORS[name]()
        finally:
            op.load_tiktoken_bpe = original
    return tiktoken.Encoding(**params)


def text_counter(name: str) -> Callable[[str], int]:
    """A function counting the tokens of a string with the named tokenizer (memoized per process)."""
    if name in _encoders:
        return _encoders[name]
    if name == "chars4":
        fn: Callable[[str], int] = chars4
    elif name == "chars4-round":
        fn = chars4_round
    elif name in ("o200k_base", "cl100k_base"):
        enc = tiktoken_encoding(name)
        encode = enc.encode_ordinary

        def fn(s: str) -> int:
            return len(encode(s)) if s else 0
    else:
        raise UsageError(f"unknown tokenizer {name!r}; known: {', '.join(TOKENIZERS)}")
    _encoders[name] = fn
    return fn


def chars4(text: str) -> int:
    """Seed 004 ``estimateTokens``: ``Math.ceil(text.length / 4)``."""
    return math.ceil(len(text) / 4)


def chars4_round(text: str) -> int:
    """Seed 001 ``Token.estimate``: ``Math.max(0, Math.round(text.length / 4))`` (JS rounds .5 up)."""
    return max(0, math.floor(len(text) / 4 + 0.5))


def part_text(p: Part) -> str:
    """The text a part contributes to the model's context ('' for reasoning and media)."""
    if isinstance(p, Text):
        return p.text
    if isinstance(p, ToolCall):
        return p.name + p.args
    if isinstance(p, ToolResult):
        return p.output
    return ""


@dataclass(frozen=True, slots=True)
class TranscriptTokens:
    """Per-message and per-part token counts of one transcript, computed once and shared."""

    tokenizer: str
    part_tokens: tuple[tuple[int, ...], ...]
    message_tokens: tuple[int, ...]


class TokenCounter:
    """Counts messages with one tokenizer plus a per-message overhead."""

    def __init__(self, tokenizer: str = DEFAULT_TOKENIZER, message_overhead: int = DEFAULT_MESSAGE_OVERHEAD,
                 media_tokens: int = MEDIA_TOKENS) -> None:
        self.tokenizer = tokenizer
        self.message_overhead = message_overhead
        self.media_tokens = media_tokens
        self.count_text = text_counter(tokenizer)
        self._memo: dict[int, tuple[Part, int]] | None = None

    def scoped(self) -> TokenCounter:
        """A counter for one transcript whose :meth:`index` remembers each part's count.

        A summarizer request is mostly the transcript's own parts (the same objects): counting it as an
        API would then costs lookups, not a second tokenizer pass. The memo is keyed by object identity
        and holds the part, so an id cannot be reused while the memo lives; it dies with the transcript.
        """
        c = TokenCounter(self.tokenizer, self.message_overhead, self.media_tokens)
        c._memo = {}
        return c

    def part(self, p: Part) -> int:
        memo = self._memo
        if memo is not None:
            hit = memo.get(id(p))
            if hit is not None and hit[0] is p:
                return hit[1]
        if isinstance(p, Media):
            return self.media_tokens
        if isinstance(p, Reasoning):
            return 0
        return self.count_text(part_text(p))

    def parts(self, m: Message) -> tuple[int, ...]:
        return tuple(self.part(p) for p in m.parts)

    def message(self, m: Message, part_counts: Sequence[int] | None = None) -> int:
        return self.message_overhead + sum(self.parts(m) if part_counts is None else part_counts)

    def index(self, t: Transcript) -> TranscriptTokens:
        parts = tuple(self.parts(m) for m in t.messages)
        memo = self._memo
        if memo is not None:
            for m, counts in zip(t.messages, parts, strict=True):
                for p, n in zip(m.parts, counts, strict=True):
                    memo[id(p)] = (p, n)
        return TranscriptTokens(self.tokenizer, parts, tuple(self.message_overhead + sum(p) for p in parts))

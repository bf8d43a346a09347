"""``compbench.measure.tokens`` — Token counting, offline, counted once per message, corrected for the model family that
recorded it.

Tokenizers: tiktoken ``o200k_base`` / ``cl100k_base``, whose BPE files are loaded from the copies the
litellm package ships (no network: tiktoken would otherwise download them), and the heuristics the
seeds use: ``chars4`` = ceil(chars / 4) (seed 004's ``estimateTokens``) and ``chars4-round`` =
round(chars / 4) (seed 001's ``Token.estimate``).

A replay counts every part of a transcript once (:meth:`TokenCounter.index`) and afterwards only adds
cached numbers, so the cost of a run is the tokenizer pass plus arithmetic.

Claude's and Gemini's tokenizers are not ours: a :class:`Correction` fitted on the usage their APIs
recorded (:mod:`compbench.measure.token_correction`) scales every count by the family's factor, in integer
arithmetic per part, so a corrected count is still counted once, deterministic and an integer.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import threading
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.data.transcript import Media, Message, Part, Reasoning, Text, ToolCall, ToolResult, Transcript
from compbench.errors import UsageError
from compbench.measure.token_correction import Correction, correction_for
from compbench.memo import Memo
from compbench.sdk.counting import chars4, chars4_round

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


def part_text(p: Part) -> str:
    """The text a part contributes to the model's context ('' for reasoning and media)."""
    if isinstance(p, Text):
        return p.text
    if isinstance(p, ToolCall):
        return p.name + p.args
    if isinstance(p, ToolResult):
        return p.output
    return ""


TEXT_MEMO_CHARS = 32 * 2**20  # characters of distinct texts a transcript's counter remembers counts of


def scale(n: int, per_mille: int) -> int:
    """``n × per_mille / 1000`` rounded half up, in integers: the same count on every platform."""
    return (n * per_mille + 500) // 1000




@dataclass(frozen=True, slots=True)
class TranscriptTokens:
    """Per-message and per-part token counts of one transcript, computed once and shared."""

    tokenizer: str
    part_tokens: tuple[tuple[int, ...], ...]
    message_tokens: tuple[int, ...]


class TokenCounter:
    """Counts messages with one tokenizer plus a per-message overhead, corrected for a model family.

    ``correction`` applies to every count (``count_text``, parts, the message overhead); ``count_raw``
    is the tokenizer alone. ``mode`` (``"none"``, ``"auto"`` or a family name) is what :meth:`scoped`
    uses to pick a transcript's correction.
    """

    def __init__(self, tokenizer: str = DEFAULT_TOKENIZER, message_overhead: int = DEFAULT_MESSAGE_OVERHEAD,
                 media_tokens: int = MEDIA_TOKENS, *, correction: Correction | None = None,
                 mode: str = "none") -> None:
        self.tokenizer = tokenizer
        self.raw_message_overhead = message_overhead
        self.media_tokens = media_tokens
        self.mode = mode
        self.correction = correction
        self.message_overhead = message_overhead if correction is None else scale(message_overhead,
                                                                                  correction.factor)
        self._memo: dict[int, tuple[Part, int]] | None = None
        self._texts: Callable[[str], int] | None = None  # the transcript's counts by text (a scoped counter's)
        self._indexed: tuple[Transcript, TranscriptTokens] | None = None  # a scoped counter's latest index
        self._use_raw(text_counter(tokenizer))

    def _use_raw(self, raw: Callable[[str], int]) -> None:
        """Count with ``raw`` (the tokenizer, or its memo by text), under this counter's correction."""
        self.count_raw = raw
        c = self.correction
        if c is None:
            self.count_text: Callable[[str], int] = raw
        else:
            factor = c.factor
            self.count_text = lambda s: scale(raw(s), factor)

    def scoped(self, t: Transcript | None = None) -> TokenCounter:
        """A counter for one transcript whose :meth:`index` remembers each part's count; with ``t``, and
        a ``mode`` other than ``"none"``, corrected for ``t``'s recorded model family.

        A summarizer request is mostly the transcript's own parts (the same objects): counting it as an
        API would then costs lookups, not a second tokenizer pass. The memo is keyed by object identity
        and holds the part, so an id cannot be reused while the memo lives; it dies with the transcript.
        Each distinct text is tokenized once too (:meth:`_count_texts_once`).
        """
        correction = self.correction
        if t is not None and self.mode != "none":
            correction = correction_for(t, self.tokenizer, self.mode)
        c = TokenCounter(self.tokenizer, self.raw_message_overhead, self.media_tokens, correction=correction,
                         mode=self.mode)
        c._memo = {}
        c._count_texts_once()
        return c

    def _count_texts_once(self) -> None:
        """Tokenize each distinct text once for this transcript: a summary request's system prompt, and the
        instructions and renderings strategies rebuild at every compaction, are the same texts again. A memo by
        value (the same count whatever object holds the text), bounded by :data:`TEXT_MEMO_CHARS`."""
        raw = self.count_raw
        texts: Memo[str, int] = Memo(TEXT_MEMO_CHARS)

        find, add = texts.find, texts.add

        def count(s: str) -> int:
            n = find(s)
            return n if n is not None else add(s, raw(s))

        self._texts = count
        self._use_raw(count)

    def with_correction(self, correction: Correction | None) -> TokenCounter:
        """The same counter under another correction, sharing the memos of tokenizer counts (a second
        correction of an indexed transcript is arithmetic, not a second tokenizer pass; the replay counts with
        the session's rate, :func:`compbench.measure.overhead.rated`)."""
        c = TokenCounter(self.tokenizer, self.raw_message_overhead, self.media_tokens, correction=correction,
                         mode=self.mode)
        c._memo = self._memo
        if self._texts is not None:
            c._texts = self._texts
            c._use_raw(self._texts)
        return c

    def remember(self, m: Message) -> None:
        """Memoize the tokenizer counts of ``m``'s parts (a recorded message when its transcript is indexed,
        a summary the replay made): whatever counts a part again later (a summary request carrying it, a
        second correction) reads the memo instead of tokenizing it again."""
        memo = self._memo
        if memo is None:
            return
        reasoning = self.correction is not None and self.correction.reasoning > 0
        for p in m.parts:
            if not isinstance(p, Media | Reasoning) or (reasoning and isinstance(p, Reasoning) and not p.encrypted):
                memo[id(p)] = (p, self._raw(p))

    @property
    def sections_add_up(self) -> bool:
        """Whether the count of sections joined is the sum of their counts, for sections that each end with
        a newline and begin with a character that is neither whitespace nor a newline (``# USER``): the BPE
        tokenizers split text into pieces before merging and no piece spans such a boundary (checked on the
        samples by tests/measure/test_tokens.py); the character heuristics round per text and do not."""
        return self.tokenizer in ("o200k_base", "cl100k_base")

    def remember_raw(self, p: Part, raw: int) -> None:
        """Memoize a part's tokenizer count found another way (a prompt made of sections already counted):
        whatever counts the part later reads it instead of tokenizing it."""
        if self._memo is not None:
            self._memo[id(p)] = (p, raw)

    def _raw(self, p: Part) -> int:
        """The tokenizer's count of a part's text (a reasoning part's too), from the memo when indexed."""
        memo = self._memo
        if memo is not None:
            hit = memo.get(id(p))
            if hit is not None and hit[0] is p:
                return hit[1]
        return self.count_raw(p.text if isinstance(p, Reasoning) else part_text(p))

    def part(self, p: Part) -> int:
        if isinstance(p, Media):
            return self.media_tokens
        if isinstance(p, Reasoning):
            return 0
        c = self.correction
        return self._raw(p) if c is None else scale(self._raw(p), c.factor)

    def parts(self, m: Message) -> tuple[int, ...]:
        return tuple(self.part(p) for p in m.parts)

    def reasoning_context(self, m: Message, hidden: Container[int] = ()) -> int:
        """What ``m``'s readable reasoning adds to the context under the correction (0 without one); the
        parts in ``hidden`` (pruned: cleared thinking) add nothing."""
        c = self.correction
        if c is None or not c.reasoning:
            return 0
        return sum(scale(self._raw(p), c.reasoning) for j, p in enumerate(m.parts)
                   if isinstance(p, Reasoning) and not p.encrypted and j not in hidden)

    def message(self, m: Message, part_counts: Sequence[int] | None = None) -> int:
        n = self.message_overhead + sum(self.parts(m) if part_counts is None else part_counts)
        return n if self.correction is None else n + self.reasoning_context(m)

    def index(self, t: Transcript) -> TranscriptTokens:
        """Every part's and message's count of ``t``. A scoped counter keeps its transcript's index: the overhead
        fit, the trigger checks and the replay ask it of the same transcript, and get it without another pass."""
        kept = self._indexed
        if kept is not None and kept[0] is t:
            return kept[1]
        # remember(), parts() and message() of every message, in one pass over the parts (the same counts)
        memo = self._memo
        count_raw = self.count_raw
        c = self.correction
        factor = c.factor if c is not None else 0
        reasoning = c.reasoning if c is not None else 0
        media, overhead = self.media_tokens, self.message_overhead
        parts: list[tuple[int, ...]] = []
        messages: list[int] = []
        for m in t.messages:
            counts: list[int] = []
            thought = 0
            for p in m.parts:
                if isinstance(p, Media):
                    counts.append(media)
                    continue
                if isinstance(p, Reasoning):
                    counts.append(0)
                    if not reasoning or p.encrypted:
                        continue
                hit = memo.get(id(p)) if memo is not None else None
                if hit is not None and hit[0] is p:
                    raw = hit[1]
                else:
                    raw = count_raw(p.text if isinstance(p, Reasoning) else part_text(p))
                    if memo is not None:
                        memo[id(p)] = (p, raw)
                if isinstance(p, Reasoning):
                    thought += scale(raw, reasoning)
                else:
                    counts.append(raw if c is None else scale(raw, factor))
            parts.append(tuple(counts))
            n = overhead + sum(counts)
            messages.append(n if c is None else n + thought)
        index = TranscriptTokens(self.tokenizer, tuple(parts), tuple(messages))
        if self._memo is not None:  # scoped: it dies with its transcript
            self._indexed = (t, index)
        return index

"""``compbench.summarizers.llm`` — ``litellm:MODEL`` and ``cache-only:DIR``: real-model summaries with an on-disk
response cache.

Every response is cached under a hash of the whole request (model, system prompt, messages, budget,
temperature), so a rerun costs nothing and gives the same result; ``cache-only`` answers from that
cache and fails clearly on a miss, for reproducible CI. Transient failures (rate limits, timeouts,
5xx, connection errors) are retried with exponential backoff and jitter; after the last attempt the
failure is *returned* (recorded on the compaction event), never raised. API keys are passed to litellm
and nowhere else: not into the cache key, the cache files, or results.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compbench.data.transcript import Media, Message, Text, ToolCall, ToolResult
from compbench.errors import CompbenchError, UsageError
from compbench.sdk.context import ReplayContext
from compbench.sdk.session import SummaryRequest
from compbench.summarizers import SummaryResult, summarizer

DEFAULT_CACHE_DIR = Path(os.environ.get("COMPBENCH_CACHE", Path.home() / ".cache" / "compbench" / "llm"))
DEFAULT_RETRIES = 4
BACKOFF_BASE_S = 1.0
BACKOFF_MAX_S = 30.0
CACHE_FORMAT = 1
_TRANSIENT = ("RateLimitError", "Timeout", "APIConnectionError", "InternalServerError",
              "ServiceUnavailableError", "APIError", "BadGatewayError")
# what a provider says when no key reached it: retrying cannot help (litellm reports it as a server error)
_NO_CREDENTIALS = ("Missing credentials", "api_key client option must be set", "No API key provided")
# sent to a local --api-base when no key is set anywhere: an OpenAI-compatible server ignores it, and the
# OpenAI client litellm uses refuses to call without one
LOCAL_KEY = "no-key-needed"


def transient(error_type: str, message: str) -> bool:
    """Whether a failed call may succeed if retried (a rate limit, a timeout, a 5xx), not a missing key."""
    return error_type in _TRANSIENT and not any(x in message for x in _NO_CREDENTIALS)


def local_call(model: str, api_base: str | None, api_key: str | None) -> tuple[str, str | None]:
    """The model name and key for a call to ``api_base``, an OpenAI-compatible server: a bare model name
    (``llama3``) goes to it as an OpenAI model, and without a key anywhere a placeholder is sent (a local
    server needs none); a model litellm routes (``ollama/llama3``) and any key given or set are kept."""
    if not api_base:
        return model, api_key
    litellm = import_litellm()
    try:
        provider = litellm.get_llm_provider(model)[1]
    except Exception:  # no provider litellm knows for this name: the server speaks OpenAI's API
        model, provider = f"openai/{model}", "openai"
    if api_key:
        return model, api_key
    try:
        env = litellm.validate_environment(model=model)
        missing = isinstance(env, dict) and not env.get("keys_in_environment", True)
    except Exception:
        missing = provider == "openai" and not os.environ.get("OPENAI_API_KEY")
    return model, LOCAL_KEY if missing else None


def import_litellm() -> Any:
    """Import litellm offline-safely: the local cost map, no tokenizer downloads."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.disable_hf_tokenizer_download = True
    litellm.telemetry = False
    return litellm


def to_openai(m: Message) -> list[dict[str, Any]]:
    """One normalized message as OpenAI chat messages (tool results become one message each)."""
    if m.role == "tool":
        return [{"role": "tool", "tool_call_id": p.call_id, "content": p.output}
                for p in m.parts if isinstance(p, ToolResult)] or [{"role": "user", "content": m.text}]
    text = "\n".join(p.text for p in m.parts if isinstance(p, Text))
    media = sum(1 for p in m.parts if isinstance(p, Media))
    if media:
        text += f"\n[{media} attachment(s) omitted]"
    msg: dict[str, Any] = {"role": m.role, "content": text}
    calls = [p for p in m.parts if isinstance(p, ToolCall)]
    if calls and m.role == "assistant":
        msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}}
                             for c in calls]
    out = [msg]
    # Results recorded inside a non-tool message (rare) stay visible as text.
    out += [{"role": "user", "content": p.output} for p in m.parts if isinstance(p, ToolResult)]
    return out


def request_messages(req: SummaryRequest) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": req.system}] if req.system else []
    for m in req.prompt:
        msgs += to_openai(m)
    return msgs


def cache_key(model: str, messages: list[dict[str, Any]], max_tokens: int | None, temperature: float) -> str:
    blob = json.dumps({"v": CACHE_FORMAT, "model": model, "messages": messages, "max_tokens": max_tokens,
                       "temperature": temperature}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """One JSON file per response, written atomically; safe across worker processes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self.path(key)
        try:
            data: dict[str, Any] = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as e:
            raise CompbenchError(f"{p}: unreadable cache entry ({e}); delete it to refetch") from None
        return data

    def put(self, key: str, value: dict[str, Any]) -> None:
        models = cached_models(self.root)
        if value.get("model") and value["model"] not in models:
            self.root.mkdir(parents=True, exist_ok=True)
            _atomic_write(self.root / "models.json", json.dumps(sorted([*models, value["model"]])))
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(p, json.dumps(value, ensure_ascii=False, sort_keys=True))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


class LLMSummarizer:
    """Summaries from a model litellm reaches; ``cache_only`` never calls out."""

    def __init__(self, model: str, cache_dir: Path | None = None, *, cache_only: bool = False,
                 api_base: str | None = None, api_key: str | None = None, retries: int = DEFAULT_RETRIES,
                 temperature: float = 0.0, timeout_s: float = 120.0, mock_response: str | None = None,
                 sleep: Callable[[float], None] = time.sleep, seed: int = 0,
                 completion: Callable[..., Any] | None = None,
                 on_retry: Callable[[int, int, str, float], None] | None = None) -> None:
        self.model = model
        self.name = f"{'cache-only' if cache_only else 'litellm'}:{model}"
        self.cache = ResponseCache(cache_dir or DEFAULT_CACHE_DIR)
        self.cache_only = cache_only
        self.api_base = api_base
        self._api_key = api_key
        self.retries = retries
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.mock_response = mock_response
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._completion = completion
        self.on_retry = on_retry  # (attempt, retries, error, seconds to wait): a retry said, never silent

    def __repr__(self) -> str:  # never shows the key
        return f"LLMSummarizer({self.name!r})"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        messages = request_messages(request)
        key = cache_key(self.model, messages, request.max_output_tokens, self.temperature)
        hit = self.cache.get(key)
        if hit is not None:
            return SummaryResult(hit["text"], hit.get("input_tokens"), hit.get("output_tokens"),
                                 attempts=0, latency_ms=float(hit.get("latency_ms", 0.0)), cached=True)
        if self.cache_only:
            raise CompbenchError(f"cache-only summarizer: no cached response for request {key[:16]}… in "
                                 f"{self.cache.root} (run once with litellm:{self.model} to fill it)")
        return self._call(key, messages, request.max_output_tokens)

    def _call(self, key: str, messages: list[dict[str, Any]], max_tokens: int | None) -> SummaryResult:
        completion = self._completion or import_litellm().completion
        model, api_key = local_call(self.model, self.api_base, self._api_key)
        # max_retries 0: the provider clients' own silent retries would multiply ours (each attempt became three)
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": self.temperature,
                                  "timeout": self.timeout_s, "max_retries": 0}
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if api_key:
            kwargs["api_key"] = api_key
        if self.mock_response is not None:
            kwargs["mock_response"] = self.mock_response
        error = "no attempt made"
        for attempt in range(1, self.retries + 2):
            start = time.perf_counter()
            try:
                response = completion(**kwargs)
                text, inp, out = _parse(response)
            except Exception as e:  # litellm raises many types; classify by name, never crash the run
                error = f"{type(e).__name__}: {_redact(str(e), self._api_key)}"[:500]
                if attempt <= self.retries and transient(type(e).__name__, str(e)):
                    self._backoff(attempt, error)
                    continue
                return SummaryResult("", error=error, attempts=attempt)
            latency = round((time.perf_counter() - start) * 1000, 1)
            if not text.strip():
                return SummaryResult("", inp, out, error="empty summary", attempts=attempt)
            self.cache.put(key, {"text": text, "input_tokens": inp, "output_tokens": out, "latency_ms": latency,
                                 "model": self.model})
            return SummaryResult(text, inp, out, attempts=attempt, latency_ms=latency)
        return SummaryResult("", error=error, attempts=self.retries + 1)

    def _backoff(self, attempt: int, error: str = "") -> None:
        delay = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (attempt - 1))
        wait = delay * (0.5 + self._rng.random() / 2)  # full-jitter variant: 50-100 % of the delay
        if self.on_retry is not None:
            self.on_retry(attempt, self.retries, error, wait)
        self._sleep(wait)


def _parse(response: Any) -> tuple[str, int | None, int | None]:
    """Text and usage of a chat completion; a malformed response raises ValueError."""
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        raise ValueError("malformed response: no choices[0].message.content") from None
    if text is not None and not isinstance(text, str):
        raise ValueError("malformed response: content is not text")
    usage = getattr(response, "usage", None)
    inp = getattr(usage, "prompt_tokens", None)
    out = getattr(usage, "completion_tokens", None)
    return text or "", inp if isinstance(inp, int) else None, out if isinstance(out, int) else None


def _redact(text: str, key: str | None) -> str:
    return text.replace(key, "***") if key else text


def cached_models(root: Path) -> list[str]:
    try:
        models: list[str] = json.loads((root / "models.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    return models


@summarizer("litellm", deterministic=False, usage="litellm:MODEL",
            summary="a real model through litellm (responses cached on disk)")
def create_litellm(arg: str, context: ReplayContext, **options: Any) -> LLMSummarizer:
    return create("litellm", arg, **options)


@summarizer("cache-only", deterministic=False, usage="cache-only:DIR[@MODEL]",
            summary="a real model's recorded answers, from a response cache only")
def create_cache_only(arg: str, context: ReplayContext, **options: Any) -> LLMSummarizer:
    return create("cache-only", arg, **options)


def create(kind: str, arg: str, **options: Any) -> LLMSummarizer:
    """``litellm:MODEL`` (cache in --cache-dir or the default) or ``cache-only:DIR[@MODEL]``."""
    if not arg:
        raise UsageError(f"{kind} needs an argument: " + ("litellm:MODEL" if kind == "litellm" else "cache-only:DIR"))
    if kind == "litellm":
        cache_dir = options.pop("cache_dir", None)
        return LLMSummarizer(arg, Path(cache_dir) if cache_dir else None, **options)
    options.pop("cache_dir", None)
    directory, _, model = arg.partition("@")
    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"cache-only: {root} is not a directory")
    if not model:
        models = cached_models(root)
        if len(models) != 1:
            raise UsageError(f"cache-only: {root} holds responses of {len(models)} models ({', '.join(models)}); "
                             "name one as cache-only:DIR@MODEL")
        model = models[0]
    return LLMSummarizer(model, root, cache_only=True, **options)

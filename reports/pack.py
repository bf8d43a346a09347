"""``compbench.reports.pack`` — How data travels inside the report: small JSON inline, large JSON deflated and
base64-encoded.

A report of 10,000 transcripts × 20 configurations holds hundreds of thousands of rows; as plain JSON
they would weigh tens of megabytes and be parsed before the page shows anything. Deflated (zlib,
deterministic) and base64-encoded they weigh a fifth, sit inert in a ``<script
type="application/octet-stream">`` until the page needs them, and are inflated then by the browser's
own ``DecompressionStream``. base64 has no ``<``, so no transcript text can close the element; the small
inline JSON has ``<``, ``>`` and ``&`` escaped as ``\\u003c`` etc. for the same reason.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from typing import Any

LEVEL = 6  # zlib's default: level 9 takes three times as long for 3% less


def clean(value: Any) -> Any:
    """NaN and infinities become null (JSON has none), recursively; numpy scalars become Python's."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, (str, bytes)):
        return clean(item())
    return value


def _default(value: Any) -> Any:
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} is not JSON serializable")
    return item()


def dumps(value: Any) -> str:
    """Compact JSON; NaN becomes null. The large columns are plain ints, so the whole value is cleaned
    (a recursive walk, slow on millions of items) only when a NaN or infinity is found in it."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default)
    except ValueError:
        return json.dumps(clean(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default)


def inline_json(value: Any) -> str:
    """JSON safe inside a ``<script type="application/json">``: nothing in it can end the element."""
    return dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def packed(value: Any) -> str:
    """Deflated, base64-encoded JSON (the browser inflates it with ``DecompressionStream('deflate')``)."""
    return base64.b64encode(zlib.compress(dumps(value).encode("utf-8"), LEVEL)).decode("ascii")


def unpacked(text: str) -> Any:
    """The inverse of :func:`packed` (tests read the report's data back with it)."""
    return json.loads(zlib.decompress(base64.b64decode(text)).decode("utf-8"))

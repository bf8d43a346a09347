"""``compbench.data.redact`` — Masking of common secret shapes found inside transcripts, for reports (``--redact``).

Patterns follow the prefixes the providers document (OpenAI ``sk-``, Anthropic ``sk-ant-``, GitHub
``ghp_``/``github_pat_``, AWS ``AKIA``, Slack ``xox?-``, Google ``AIza``), JWTs, bearer tokens, PEM
private keys and ``key=value`` assignments whose key names a secret. Each match becomes
``[REDACTED:<kind>]`` so a reader still sees what was there.
"""

from __future__ import annotations

import re

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}")),
    ("github-token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}")),
    ("aws-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("google-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*")),
    ("secret", re.compile(r"(?i)\b((?:api[_-]?key|secret|token|password|passwd|auth)[A-Za-z0-9_]*)(\s*[=:]\s*)"
                          r"([\"']?)[^\s\"',;]{8,}\3")),
)


def redact(text: str) -> str:
    for kind, rx in PATTERNS:
        if kind == "secret":
            text = rx.sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED:secret]", text)
        else:
            text = rx.sub(f"[REDACTED:{kind}]", text)
    return text

"""``compbench.data.formats.catalog`` — The formats compbench reads: each name's importer module, the order detection
tries them in, and the plug-ins added through the ``compbench.formats`` entry-point group.

Kept apart from the package's reading functions so that detection (:mod:`.detect`) can walk the formats
without importing what reads them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from compbench.errors import TranscriptError, UsageError
from compbench.plugins import Registry

# name -> module, in detection order
FORMATS: dict[str, str] = {
    "compbench": "compbench.data.formats.native",
    "cline-markdown": "compbench.data.formats.cline_markdown",
    "claude-code": "compbench.data.formats.claude_code",
    "codex": "compbench.data.formats.codex",
    "opencode": "compbench.data.formats.opencode",
    "opencode-db": "compbench.data.formats.opencode_db",
    "crush-db": "compbench.data.formats.crush_db",
    "aider-chat": "compbench.data.formats.aider_chat",
    "aider-llm": "compbench.data.formats.aider_llm",
    "goose-db": "compbench.data.formats.goose_db",
    "goose": "compbench.data.formats.goose_session",
    "goose-md": "compbench.data.formats.goose_md",
    "pi": "compbench.data.formats.pi",
    "copilot": "compbench.data.formats.copilot",
    "openhands": "compbench.data.formats.openhands",
    "openhands-v0": "compbench.data.formats.openhands_v0",
    "openhands-eval": "compbench.data.formats.openhands_eval",
    "mini-swe-agent": "compbench.data.formats.mini_swe_agent",
    "swe-agent": "compbench.data.formats.swe_agent",
    "gemini-cli": "compbench.data.formats.gemini_cli",
    "cline": "compbench.data.formats.cline",
    "openai": "compbench.data.formats.openai_chat",
}


GENERIC = "openai"  # tried last: any chat-shaped JSON lines match it


ENTRY_POINT_GROUP = "compbench.formats"


# Formats whose files hold many transcripts (each streamed); the others hold one transcript per file.
# (and modules with MULTI_TRANSCRIPT = True)
MULTI_TRANSCRIPT = frozenset({"compbench", "openai", "opencode-db", "openhands-eval"})


def _importer(name: str, obj: object) -> Any:
    """A loaded module (or object) is an importer when it can sniff and read."""
    return obj if callable(getattr(obj, "sniff", None)) and callable(getattr(obj, "read", None)) else None


IMPORTERS: Registry[Any] = Registry("format", ENTRY_POINT_GROUP, FORMATS, adopt=_importer)


def detection_order() -> list[str]:
    """The formats in the order they are tried: built-in specific ones, plug-ins, the generic one."""
    plugins = IMPORTERS.plugins()
    return [n for n in FORMATS if n != GENERIC] + plugins + [GENERIC]


def is_multi(name: str) -> bool:
    """Does a file of this format hold many transcripts?"""
    return name in MULTI_TRANSCRIPT or bool(getattr(module(name), "MULTI_TRANSCRIPT", False))


def module(name: str) -> ModuleType:
    """The importer of format ``name`` (imported now; a plug-in's entry point loaded now)."""
    try:
        found: ModuleType = IMPORTERS.get(name)
    except UsageError:
        raise TranscriptError(name, None, f"a known format ({', '.join(IMPORTERS.names())})") from None
    return found


# The tool that writes each transcript source, as its users call it: what a table or the report names a group
# of logs by ("Claude Code logs"), whether or not a strategy reproduces the tool.
TOOL_NAMES: dict[str, str] = {
    "claude-code": "Claude Code", "codex": "Codex", "opencode": "OpenCode", "pi": "pi", "copilot": "Copilot CLI",
    "gemini-cli": "Gemini CLI", "openhands": "OpenHands", "openhands-v0": "OpenHands", "openhands-eval": "OpenHands",
    "cline": "Cline", "roo-code": "Roo Code", "kilo-code": "Kilo Code", "crush": "Crush", "aider": "aider",
    "goose": "Goose", "swe-agent": "SWE-agent", "mini-swe-agent": "mini-swe-agent", "openai": "OpenAI chat",
    "compbench": "compbench-format",
}


def tool_name(source: str) -> str:
    """The tool that wrote logs of ``source``, in its users' words (the source itself when unknown)."""
    return TOOL_NAMES.get(source, source)

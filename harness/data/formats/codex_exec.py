"""``compbench.data.formats.codex_exec`` — Codex code mode (0.144+): the tool calls an ``exec`` script makes.

In code mode (a model whose catalogue entry says ``tool_mode: code_mode_only``, gpt-5.6-sol/terra/luna) the
model calls one custom tool, ``exec``, whose input is JavaScript run in a V8 isolate; the other tools are
methods of a global ``tools`` object (openai/codex ``codex-rs/code-mode/src/description.rs`` at 01e102ef:
"Nested tool methods take either a string or an object as their input argument"; a freeform tool such as
``apply_patch`` takes the string; names are normalized identifiers, ``tools.mcp__codex_apps__github_fetch_pr``;
an optional first-line pragma ``// @exec: {...}``). The rollout records the script as the ``custom_tool_call``'s
``input`` and what ``text(...)`` printed as its ``custom_tool_call_output``.

What the model saw is the script and its output, so the call stays as recorded; the calls it makes are read
here so that the working set sees a read, an edit or a search inside a script as it sees the same plain
function call (``exec_command`` with ``{"cmd": ...}``, ``apply_patch`` with the patch text). The script is
scanned, not run: string, template and regex literals and comments are tokenized, ``const``/``let``/``var``
bindings of literals (and ``+`` of them) are resolved, and each ``tools.NAME(ARG)`` gives one call whose
argument is the literal object (JSON) or string it was given. An argument the scan cannot resolve (a value
computed at run time) leaves that key out; a template literal keeps an unresolved ``${...}`` as written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

NAME = "exec"  # the code-mode tool (codex-rs/code-mode PUBLIC_TOOL_NAME)

UNKNOWN = object()  # a value the scan cannot know before the script runs

_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_PUNCT = ("...", "=>", "===", "!==", "==", "!=", "&&", "||", "??", "?.", "+=")


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "id", "num", "str" (a resolved string), "tpl" (a template: its parts), "punct", "regex"
    text: str
    parts: tuple[tuple[bool, str], ...] = ()  # a template's (is an expression, text) parts


@dataclass(frozen=True, slots=True)
class InnerCall:
    """One ``tools.NAME(...)`` call of a script: ``args`` is the JSON object text, or the raw string a freeform
    tool (``apply_patch``) is given, as the plain tool call would carry it."""

    name: str
    args: str


def _string(s: str, i: int, quote: str) -> tuple[str, int]:
    """A quoted string literal from just after its opening quote: its value and the index after it."""
    out: list[str] = []
    n = len(s)
    while i < n:
        c = s[i]
        if c == quote:
            return "".join(out), i + 1
        if c == "\\" and i + 1 < n:
            value, i = _escape(s, i + 1)
            out.append(value)
            continue
        if c == "\n" and quote != "`":
            return "".join(out), i  # an unterminated literal ends at its line
        out.append(c)
        i += 1
    return "".join(out), n


def _escape(s: str, i: int) -> tuple[str, int]:
    """The character an escape stands for (``s[i]`` is the character after the backslash)."""
    c = s[i]
    if c in _ESCAPES:
        return _ESCAPES[c], i + 1
    if c == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", s[i + 1:i + 3]):
        return chr(int(s[i + 1:i + 3], 16)), i + 3
    if c == "u":
        m = re.match(r"\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4})", s[i + 1:])
        if m:
            return chr(min(int(m.group(1) or m.group(2), 16), 0x10FFFF)), i + 1 + m.end()
    if c == "\n":
        return "", i + 1  # a line continuation
    return c, i + 1


def _template(s: str, i: int) -> tuple[tuple[tuple[bool, str], ...], int]:
    """A template literal from just after its backtick: its text and ``${...}`` parts (the expression raw)."""
    parts: list[tuple[bool, str]] = []
    text: list[str] = []
    n = len(s)
    while i < n:
        c = s[i]
        if c == "`":
            parts.append((False, "".join(text)))
            return tuple(parts), i + 1
        if c == "\\" and i + 1 < n:
            value, i = _escape(s, i + 1)
            text.append(value)
            continue
        if c == "$" and s.startswith("${", i):
            parts.append((False, "".join(text)))
            text = []
            end = _balanced(s, i + 2)
            parts.append((True, s[i + 2:end - 1]))
            i = end
            continue
        text.append(c)
        i += 1
    parts.append((False, "".join(text)))
    return tuple(parts), n


def _balanced(s: str, i: int) -> int:
    """The index after the ``}`` closing a ``${`` expression that starts at ``i`` (strings inside skipped)."""
    depth, n = 1, len(s)
    while i < n:
        c = s[i]
        if c in "'\"":
            i = _string(s, i + 1, c)[1]
            continue
        if c == "`":
            i = _template(s, i + 1)[1]
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        i += 1
        if depth == 0:
            return i
    return n


def tokenize(s: str) -> list[Token]:
    """The script's tokens; comments dropped, a ``/`` where a value is expected read as a regex literal."""
    out: list[Token] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c.isspace():
            i += 1
        elif s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif s.startswith("/*", i):
            j = s.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "'\"":
            text, i = _string(s, i + 1, c)
            out.append(Token("str", text))
        elif c == "`":
            parts, i = _template(s, i + 1)
            out.append(Token("tpl", "", parts))
        elif c == "/" and _value_expected(out):
            i = _regex_end(s, i + 1)
            out.append(Token("regex", ""))
        elif (m := _IDENT.match(s, i)) is not None:
            out.append(Token("id", m.group(0)))
            i = m.end()
        elif (m := _NUMBER.match(s, i)) is not None:
            out.append(Token("num", m.group(0)))
            i = m.end()
        else:
            p = next((p for p in _PUNCT if s.startswith(p, i)), c)
            out.append(Token("punct", p))
            i += len(p)
    return out


def _value_expected(before: list[Token]) -> bool:
    if not before:
        return True
    t = before[-1]
    if t.kind in ("num", "str", "tpl", "regex"):
        return False
    if t.kind == "id":
        return t.text in ("return", "typeof", "case", "in", "of", "await", "yield", "void", "delete", "new")
    return t.text not in (")", "]", "}")


def _regex_end(s: str, i: int) -> int:
    in_class, n = False, len(s)
    while i < n and s[i] != "\n":
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            i += 1
            while i < n and (s[i].isalnum() or s[i] == "_"):
                i += 1
            return i
        i += 1
    return i


class _Parser:
    """Literal values over the token list: what ``tools.NAME(ARG)`` was given, with bindings resolved."""

    def __init__(self, tokens: list[Token]) -> None:
        self.t = tokens
        self.bindings: dict[str, object] = {}

    def value(self, i: int) -> tuple[object, int]:
        """The expression at ``i`` up to a ``,`` ``)`` ``]`` ``}`` or ``;`` at its depth: its value (UNKNOWN when
        it is not a literal, a binding or a ``+`` of them) and the index of that delimiter."""
        acc, i = self._term(i)
        while i < len(self.t) and self.t[i].text == "+" and self.t[i].kind == "punct":
            right, i = self._term(i + 1)
            acc = acc + right if isinstance(acc, str) and isinstance(right, str) else UNKNOWN
        end = self._skip(i)
        return (acc if end == i else UNKNOWN), end

    def _term(self, i: int) -> tuple[object, int]:
        if i >= len(self.t):
            return UNKNOWN, i
        tok = self.t[i]
        if tok.kind == "str":
            return tok.text, i + 1
        if tok.kind == "tpl":
            return "".join(self._interpolate(x) if expr else x for expr, x in tok.parts), i + 1
        if tok.kind == "num":
            try:
                return json.loads(tok.text.replace("_", "")) if not tok.text.startswith(("0x", "0X")) else int(
                    tok.text, 16), i + 1
            except ValueError:
                return UNKNOWN, i + 1
        if tok.kind == "id":
            if tok.text in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[tok.text], i + 1
            nxt = self.t[i + 1].text if i + 1 < len(self.t) else ""
            if nxt in (".", "(", "[", "?.") and self.t[i + 1].kind == "punct":
                return UNKNOWN, i + 1  # a member or a call: computed at run time
            return self.bindings.get(tok.text, UNKNOWN), i + 1
        if tok.text == "{":
            return self._object(i + 1)
        if tok.text == "[":
            return self._array(i + 1)
        return UNKNOWN, i + 1

    def _interpolate(self, expr: str) -> str:
        name = expr.strip()
        bound = self.bindings.get(name, UNKNOWN) if _IDENT.fullmatch(name) else UNKNOWN
        return bound if isinstance(bound, str) else str(bound) if isinstance(bound, (int, float)) and not isinstance(
            bound, bool) else "${" + expr + "}"

    def _object(self, i: int) -> tuple[object, int]:
        out: dict[str, object] = {}
        while i < len(self.t) and self.t[i].text != "}":
            tok = self.t[i]
            if tok.text == ",":
                i += 1
                continue
            if tok.text == "...":
                i = self._skip(i + 1)
                continue
            key = tok.text if tok.kind in ("id", "str", "num") else None
            if key is not None and i + 1 < len(self.t) and self.t[i + 1].text == ":":
                value, i = self.value(i + 2)
                out[key] = value
            elif tok.kind == "id" and i + 1 < len(self.t) and self.t[i + 1].text in (",", "}"):
                out[key or ""] = self.bindings.get(tok.text, UNKNOWN)  # shorthand {cmd}
                i += 1
            else:
                i = self._skip(i + 1)  # a computed key or a method: passed over
        return out, min(i + 1, len(self.t))

    def _array(self, i: int) -> tuple[object, int]:
        out: list[object] = []
        while i < len(self.t) and self.t[i].text != "]":
            if self.t[i].text == ",":
                i += 1
                continue
            value, i = self.value(i)
            out.append(value)
        return out, min(i + 1, len(self.t))

    def _skip(self, i: int) -> int:
        """The index of the next ``,`` ``)`` ``]`` ``}`` or ``;`` at depth 0 from ``i``."""
        depth = 0
        while i < len(self.t):
            tok = self.t[i]
            if tok.kind == "punct":
                if tok.text in ("(", "[", "{"):
                    depth += 1
                elif tok.text in (")", "]", "}"):
                    if depth == 0:
                        return i
                    depth -= 1
                elif tok.text in (",", ";") and depth == 0:
                    return i
            i += 1
        return i


def _known(value: object) -> object:
    """``value`` with what the scan could not know left out (JSON cannot hold UNKNOWN)."""
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items() if v is not UNKNOWN}
    if isinstance(value, list):
        return [_known(v) for v in value if v is not UNKNOWN]
    return value


def inner_calls(script: str) -> list[InnerCall]:
    """The ``tools.NAME(ARG)`` calls of an ``exec`` script, in the order they are written."""
    if "tools" not in script:
        return []
    tokens = tokenize(script)
    p = _Parser(tokens)
    out: list[InnerCall] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "id" and tok.text in ("const", "let", "var") and i + 2 < len(tokens) \
                and tokens[i + 1].kind == "id" and tokens[i + 2].text == "=":
            value, end = p.value(i + 3)
            p.bindings[tokens[i + 1].text] = value
            i = i + 3 if value is UNKNOWN else end  # an unknown right side may hold calls: scan into it
            continue
        if tok.kind == "id" and tok.text == "tools" and (i == 0 or tokens[i - 1].text not in (".", "?.")):
            name, at = _member(tokens, i + 1)
            if name and at < len(tokens) and tokens[at].text == "(":
                value, _ = p.value(at + 1)
                out.append(InnerCall(name, _args(value)))
                i = at + 1
                continue
        i += 1
    return out


def _member(tokens: list[Token], i: int) -> tuple[str, int]:
    """``.name`` or ``["name"]`` after ``tools``: the tool's name and the index after it."""
    if i + 1 < len(tokens) and tokens[i].text in (".", "?.") and tokens[i + 1].kind == "id":
        return tokens[i + 1].text, i + 2
    if i + 2 < len(tokens) and tokens[i].text == "[" and tokens[i + 1].kind == "str" and tokens[i + 2].text == "]":
        return tokens[i + 1].text, i + 3
    return "", i


def _args(value: object) -> str:
    if isinstance(value, str):
        return value  # a freeform tool's input, as the plain custom tool call carries it
    if isinstance(value, dict):
        return json.dumps(_known(value), ensure_ascii=False)
    return ""  # computed at run time

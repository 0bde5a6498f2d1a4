"""A small JSON5 reader (no dependency) for users' `openclaw.json` files.

Supports what OpenClaw configs use in practice: `//` and `/* */` comments, trailing commas,
unquoted identifier keys, single- or double-quoted strings (with JSON escapes and line
continuations), hex numbers, leading/trailing decimal points, `+` signs, Infinity and NaN.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_NUMBER = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F]+|Infinity|NaN|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
)
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}


class JSON5Error(ValueError):
    """Malformed JSON5, with line and column."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> JSON5Error:
        line = self.text.count("\n", 0, self.pos) + 1
        col = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return JSON5Error(f"{what} at line {line}, column {col}")

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff\u00a0\u2028\u2029":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self) -> Any:
        ch = self.peek()
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.array()
        if ch and ch in "\"'":  # '' is in every string: end of input is not a quote
            return self.string()
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return val
        match = _NUMBER.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return _number(match.group())
        raise self.fail("unexpected character" if ch else "unexpected end of input")

    def obj(self) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            ch = self.peek()
            if ch == "}":
                self.pos += 1
                return out
            if ch and ch in "\"'":  # '' is in every string: end of input is not a quote
                key = self.string()
            else:
                match = _IDENT.match(self.text, self.pos)
                if not match:
                    raise self.fail("expected a key")
                key, self.pos = match.group(), match.end()
            if self.peek() != ":":
                raise self.fail("expected ':'")
            self.pos += 1
            out[key] = self.value()
            if not self.comma_or("}"):
                raise self.fail("expected ',' or '}'")

    def array(self) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while True:
            if self.peek() == "]":
                self.pos += 1
                return out
            out.append(self.value())
            if not self.comma_or("]"):
                raise self.fail("expected ',' or ']'")

    def comma_or(self, close: str) -> bool:
        ch = self.peek()
        if ch == ",":
            self.pos += 1
            return True
        return ch == close

    def string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        parts: list[str] = []
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            self.pos += 1
            if ch == quote:
                return "".join(parts)
            if ch == "\n":
                raise self.fail("newline in string")
            if ch != "\\":
                parts.append(ch)
                continue
            esc = text[self.pos : self.pos + 1]
            self.pos += 1
            if esc == "u":
                parts.append(chr(int(text[self.pos : self.pos + 4], 16)))
                self.pos += 4
            elif esc == "x":
                parts.append(chr(int(text[self.pos : self.pos + 2], 16)))
                self.pos += 2
            elif esc == "\r":
                self.pos += text.startswith("\n", self.pos)  # CRLF line continuation
            elif esc != "\n":  # a lone LF is a line continuation: drop it
                parts.append(_ESCAPES.get(esc, esc))
        raise self.fail("unterminated string")


def _number(token: str) -> int | float:
    sign = -1 if token.startswith("-") else 1
    body = token.lstrip("+-")
    if body == "Infinity":
        return sign * math.inf
    if body == "NaN":
        return math.nan
    if body[:2].lower() == "0x":
        return sign * int(body, 16)
    if any(c in body for c in ".eE"):
        return sign * float(body)
    return sign * int(body)


def loads(text: str) -> Any:
    """Parse JSON5 text. Plain JSON takes the fast path."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    parser = _Parser(text)
    result = parser.value()
    if parser.peek():
        raise parser.fail("unexpected content after the value")
    return result

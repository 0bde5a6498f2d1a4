"""Request normalisation: what is left of a model request once its volatile parts are removed.

Two requests of the same scenario match in replay when their normalised bodies are equal. The
real OpenClaw gateway puts much that changes on every run into its requests (seen on
openclaw@2026.9.6): a "Job ID: <uuid> | Received: <date>" line and a random
`EXTERNAL_UNTRUSTED_CONTENT id="<hex>"` around the hook message, "Current time" and
"Reference UTC" lines, `session=agent:main:cron:<uuid>`, the workspace path in the system
prompt, "[Mon 2026-11-23 09:40 UTC]" in a sub-agent's task, child session keys / run ids in the
`sessions_spawn` tool result, and OpenClaw's install path (its skills' locations). Field names
(ids, timestamps) are dropped wherever they occur; text patterns are replaced by a placeholder;
run-specific paths are replaced literally. Text OpenClaw adds only inside a git checkout (the
`repo=` of the Runtime line, a project-memory instruction) is removed before the patterns apply.
Whatever the clock puts into a prompt (dates, times, weekdays, zones, relative times) is always
volatile, so a recording replays on any day, at any hour, in any time zone.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from clawspec.secrets import mask
from clawspec.traffic.volatile import (
    CLOCK_TEXT,
    DEFAULT_VOLATILE_FIELDS,
    DEFAULT_VOLATILE_PATTERNS,
    ENVIRONMENT_TEXT,
)

PLACEHOLDER = "<volatile>"
CACHED_LENGTH = 512


@dataclass(frozen=True)
class Normalizer:
    """Removes volatile fields, patterns and run-specific literal values (paths) from bodies."""

    fields: frozenset[str] = frozenset(DEFAULT_VOLATILE_FIELDS)
    # all volatile patterns as one alternation: one pass over each string (30 KB system prompts)
    pattern: re.Pattern[str] | None = None
    # (literal, placeholder): e.g. the workspace path -> <workspace>; longest first
    literals: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # text removed outright (present in some environments only), before the patterns
    environment: re.Pattern[str] | None = None

    @classmethod
    def build(
        cls,
        fields: Iterable[str] = DEFAULT_VOLATILE_FIELDS,
        patterns: Iterable[str] = DEFAULT_VOLATILE_PATTERNS,
        literals: dict[str, str] | None = None,
    ) -> Normalizer:
        pairs = sorted(
            ((value, name) for value, name in (literals or {}).items() if value),
            key=lambda pair: len(pair[0]),
            reverse=True,
        )
        joined = "|".join(f"(?:{p})" for p in patterns)
        return cls(
            frozenset(fields),
            re.compile(joined) if joined else None,
            tuple(pairs),
            _ENVIRONMENT,
        )

    def substitute(self, data: Any) -> Any:
        """Run-specific literals (paths) replaced by their placeholders, recursively: what a
        cassette stores, so a recording made in one checkout replays in another."""
        return _map_strings(data, self._literal)

    def restore(self, data: Any) -> Any:
        """The inverse of `substitute` for this run: placeholders back to today's values."""

        def back(text: str) -> str:
            for literal, name in self.literals:
                text = text.replace(name, literal)
            return text

        return _map_strings(data, back)

    def _literal(self, value: str) -> str:
        for literal, name in self.literals:
            value = value.replace(literal, name)
        return value

    def text(self, value: str) -> str:
        if len(value) > CACHED_LENGTH:  # the same system prompt comes with every call of a run
            return _cached_text(self, value)
        return self._text(value)

    def _text(self, value: str) -> str:
        # A cassette holds its texts with every secret masked: a live request is compared as
        # it would be written (a prompt naming a secret matched no recording of itself).
        value = mask(self._literal(value))
        if self.environment is not None:
            value = self.environment.sub("", value)
        value = _CLOCK.sub(PLACEHOLDER, value)
        return self.pattern.sub(PLACEHOLDER, value) if self.pattern else value

    def body(self, data: Any) -> Any:
        """The body with volatile keys dropped and every string normalised (recursively)."""
        if isinstance(data, dict):
            return {k: self.body(v) for k, v in data.items() if k not in self.fields}
        if isinstance(data, list):
            return [self.body(item) for item in data]
        if isinstance(data, str):
            return self.text(data)
        return data

    def key(self, endpoint: str, data: Any) -> str:
        """The match key: endpoint + normalised body, hashed."""
        canonical = json.dumps(
            [endpoint, self.body(data)], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode()).hexdigest()


_ENVIRONMENT = re.compile("|".join(f"(?:{p})" for p in ENVIRONMENT_TEXT))
_CLOCK = re.compile("|".join(f"(?:{p})" for p in CLOCK_TEXT))


@functools.lru_cache(maxsize=256)
def _cached_text(normalizer: Normalizer, value: str) -> str:
    return normalizer._text(value)


def _map_strings(data: Any, change: Callable[[str], str]) -> Any:
    if isinstance(data, dict):
        return {key: _map_strings(value, change) for key, value in data.items()}
    if isinstance(data, list):
        return [_map_strings(item, change) for item in data]
    return change(data) if isinstance(data, str) else data


# -- endpoints -------------------------------------------------------------------------------
ENDPOINTS = ("chat/completions", "responses", "messages")


def endpoint_of(path: str) -> str | None:
    """Which provider API a request path speaks (`/v1/chat/completions` -> chat/completions)."""
    clean = path.split("?", 1)[0].rstrip("/")
    for endpoint in ENDPOINTS:
        if clean.endswith("/" + endpoint) or clean == endpoint:
            return endpoint
    return None


# -- a readable view of the conversation, for diffs -----------------------------------------
@dataclass(frozen=True)
class Item:
    """One labelled part of a request: `messages[1] (user)`, `system`, `input[2] (...)`."""

    label: str
    text: str


def conversation(endpoint: str, body: Any) -> list[Item]:
    """The request's messages as labelled text items, in the order the model reads them."""
    if not isinstance(body, dict):
        return []
    items: list[Item] = []
    if endpoint == "messages":  # Anthropic: a top-level system, then messages
        if body.get("system") is not None:
            items.append(Item("system", render(body["system"])))
        items += _listed("messages", body.get("messages"))
    elif endpoint == "responses":
        if body.get("instructions") is not None:
            items.append(Item("instructions", render(body["instructions"])))
        raw = body.get("input")
        items += [Item("input", raw)] if isinstance(raw, str) else _listed("input", raw)
    else:
        items += _listed("messages", body.get("messages"))
    return items


def _listed(name: str, entries: Any) -> list[Item]:
    if not isinstance(entries, list):
        return []
    out = []
    for index, entry in enumerate(entries):
        kind = ""
        if isinstance(entry, dict):
            kind = str(entry.get("role") or entry.get("type") or "")
        label = f"{name}[{index}]" + (f" ({kind})" if kind else "")
        out.append(Item(label, render(entry)))
    return out


def render(value: Any) -> str:
    """Text of a message or content: strings as they are, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) <= {"role", "content"} and "content" in value:
        return render(value["content"])
    if isinstance(value, list) and all(
        isinstance(part, dict) and part.get("type") == "text" for part in value
    ):
        return "\n".join(str(part.get("text", "")) for part in value)
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)

"""Why a replayed request matched nothing: the closest recording and what changed against it.

The closest recording is the one of the same endpoint that shares the most conversation items
(messages) at the same positions, then the most top-level fields. The diff names each changed
item (`messages[1] (user) changed`) with a short unified diff of its normalised text, so a
changed prompt shows up as the line that changed, not as a hash.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clawspec.text import cut
from clawspec.traffic.normalize import Item, conversation

MAX_DIFF_LINES = 12
CONVERSATION_FIELDS = ("messages", "input", "system", "instructions")


@dataclass(frozen=True)
class Candidate:
    """A recorded request, normalised, and where it came from (a cassette file name)."""

    name: str
    endpoint: str
    body: Any  # normalised


def closest(endpoint: str, body: Any, candidates: Sequence[Candidate]) -> Candidate | None:
    """The recorded request most like `body` (same endpoint first)."""
    if not candidates:
        return None
    items = conversation(endpoint, body)

    def score(candidate: Candidate) -> tuple[int, int, int]:
        theirs = conversation(candidate.endpoint, candidate.body)
        same_items = sum(1 for a, b in zip(items, theirs, strict=False) if a == b)
        same_fields = _same_fields(body, candidate.body)
        return (int(candidate.endpoint == endpoint), same_items, same_fields)

    return max(candidates, key=score)


def _same_fields(a: Any, b: Any) -> int:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return 0
    return sum(1 for key in a if key not in CONVERSATION_FIELDS and a.get(key) == b.get(key))


def explain(endpoint: str, body: Any, recorded: Candidate) -> list[str]:
    """Readable lines: what differs between the request (`body`) and the recording."""
    lines: list[str] = []
    if recorded.endpoint != endpoint:
        lines.append(f"endpoint: recorded '{recorded.endpoint}', now '{endpoint}'")
    lines += _field_changes(body, recorded.body)
    mine, theirs = conversation(endpoint, body), conversation(recorded.endpoint, recorded.body)
    for index in range(max(len(mine), len(theirs))):
        now = mine[index] if index < len(mine) else None
        then = theirs[index] if index < len(theirs) else None
        if now == then:
            continue
        if now is None and then is not None:
            lines.append(f"{then.label} is missing (recorded, not sent now)")
        elif then is None and now is not None:
            lines.append(f"{now.label} is new (sent now, not recorded)")
        elif now is not None and then is not None:
            lines += _item_diff(now, then)
    return lines or ["no difference after normalisation (the request was already answered)"]


def _field_changes(now: Any, then: Any) -> list[str]:
    if not isinstance(now, dict) or not isinstance(then, dict):
        return [] if now == then else ["the request body differs"]
    out = []
    for key in sorted(set(now) | set(then)):
        if key in CONVERSATION_FIELDS or now.get(key) == then.get(key):
            continue
        if key == "tools":
            out.append(_tools_change(now.get(key), then.get(key)))
        elif key not in now:
            out.append(f"{key}: recorded {_short(then[key])}, not sent now")
        elif key not in then:
            out.append(f"{key}: sent now {_short(now[key])}, not recorded")
        else:
            out.append(f"{key}: recorded {_short(then[key])}, now {_short(now[key])}")
    return out


def _tools_change(now: Any, then: Any) -> str:
    def by_name(tools: Any) -> dict[str, Any]:
        found = {}
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict):
                fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
                found[str(fn.get("name"))] = tool
        return found

    a, b = by_name(now), by_name(then)
    added, removed = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    changed = sorted(name for name in set(a) & set(b) if a[name] != b[name])
    parts = [
        f"{label} {', '.join(repr(n) for n in names[:5])}"
        for label, names in (("added", added), ("removed", removed), ("changed", changed))
        if names
    ]
    return "tools: " + ("; ".join(parts) if parts else "order changed")


def _item_diff(now: Item, then: Item) -> list[str]:
    label = now.label if now.label == then.label else f"{then.label} -> {now.label}"
    head = f"{label} changed:"
    body = list(
        difflib.unified_diff(
            then.text.splitlines(), now.text.splitlines(), "recorded", "now", n=1, lineterm=""
        )
    )[2:]  # drop the ---/+++ header
    body = [line for line in body if not line.startswith("@@")]
    if len(body) > MAX_DIFF_LINES:
        body = [*body[:MAX_DIFF_LINES], f"  … {len(body) - MAX_DIFF_LINES} more diff lines"]
    return [head, *(f"  {line}" for line in body)]


def _short(value: Any, limit: int = 80) -> str:
    return cut(json.dumps(value, ensure_ascii=False), limit)

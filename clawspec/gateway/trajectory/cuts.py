"""What OpenClaw cut or redacted in what it recorded.

What OpenClaw itself cut or redacted in a call's arguments is found by its markers
(`args_cuts`), never taken as the value; a text it kept only as its marker (a reply, a prompt or
a message sent over its 32,768-character limit) is None beside a `TextCut` saying so, and the
rest of the run is read as usual.

OpenClaw (2026.9.x, dist/runtime-*.mjs `sanitizeTrajectoryPayload`) bounds an event's data
before writing it (`limitTrajectoryPayloadValue`): a string over 32,768 characters, a value 6
levels deep, the 65th key of an object (`_truncated`) and the 65th item of a list become a
marker `{"truncated": true, "reason": "trajectory-…-limit", …}`; an event still over 256 KiB
keeps only such a marker as its data. It then redacts (`sanitizeDiagnosticPayload`,
`redactSecrets`): credential-like keys are left out, secrets in text become `<redacted>` (or
`abcdef…wxyz`, `***`), binary data `{"redacted": "<redacted>", …}`, text it takes for broken
JSON "[Malformed diagnostic JSON redacted]". The rest is as the model sent it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawspec.gateway.trajectory.values import ArgsCut, TextCut

EVENT_SIZE_LIMIT = "trajectory-event-size-limit"
OBJECT_SIZE_LIMIT = "trajectory-object-size-limit"
ARRAY_SIZE_LIMIT = "trajectory-array-size-limit"
TRUNCATED_KEY = "_truncated"  # where an object cut at its key limit says so
# Keys of an object, items of a list OpenClaw records. Its redaction, run after the bound, keeps
# only the first 64 keys of anything: the `_truncated` key and a list's 65th item (the marker)
# are dropped again, so a recorded object of 64 keys or list of 64 items may have been longer
# (checked on a real gateway: 66 keys sent, the first 64 recorded, no marker).
OPENCLAW_MAX_ITEMS = 64
REDACTED = "redacted"  # an ArgsCut's reason for a value OpenClaw redacted
# Whole values OpenClaw writes in place of one it would not record.
_PLACEHOLDERS = frozenset(
    {
        "[Malformed diagnostic JSON redacted]",
        "[Oversized diagnostic JSON redacted]",
        "[Truncated]",
        "[Circular]",
        "[Unserializable]",
        "***",
    }
)
_REDACTED_PARTS = ("<redacted>", "<redacted-jwt>", "\u2026redacted\u2026")
# A token masked as its first 6 and last 4 characters (redactSecrets' maskToken).
_MASKED_TOKEN = re.compile(
    r"(?:^|(?<=[\s\"'=:(\[{,]))[^\s\u2026]{6}\u2026[^\s\u2026]{4}(?=$|[\s\"';,&)\]}])"
)
# Keys OpenClaw leaves out of what it records (credential-like names, as it normalises them).
_CREDENTIAL_KEY = re.compile(
    r"(?:apikey|cookie|credential|passphrase|passwd|password|privatekey|secret|"
    r"secret(?:access)?key|signingkey|token)$"
)
_NOT_CREDENTIAL = frozenset(
    {"passwordfile", "tokenbudget", "tokencount", "tokenfield", "tokenlimit", "tokens"}
)
_MAX_WALK = 100_000  # values looked at in one call's arguments


def _number(value: Any) -> str:
    return f"{value:,}" if type(value) is int else "?"


def _count(value: Any, unit: str) -> str:
    return f"{_number(value)} {unit}"


def bound_marker(value: Any) -> str | None:
    """OpenClaw's reason, when `value` is one of its markers for a value it did not record
    (`{"truncated": true, "reason": "trajectory-…"}`, redacted binary data), else None."""
    if not isinstance(value, dict):
        return None
    reason = value.get("reason")
    if (
        value.get("truncated") is True
        and isinstance(reason, str)
        and reason.startswith("trajectory-")
    ):
        return reason
    if value.get("redacted") == "<redacted>" and set(value) <= {"redacted", "bytes", "sha256"}:
        return REDACTED
    return None


def bound_detail(reason: str, marker: dict[str, Any]) -> str:
    """What a marker of OpenClaw's says, in words."""
    get = marker.get
    if reason == "trajectory-field-size-limit":
        return (
            f"cut at its {_number(get('limitChars'))}-character limit "
            f"({_count(get('originalChars'), 'characters')} sent)"
        )
    if reason == "trajectory-depth-limit":
        return f"cut at its nesting limit of {_count(get('limitDepth'), 'levels')}"
    if reason == ARRAY_SIZE_LIMIT:
        return (
            f"cut at its limit of {_count(get('limitItems'), 'items')} "
            f"({_count(get('originalLength'), 'items')} sent)"
        )
    if reason == OBJECT_SIZE_LIMIT:
        return (
            f"cut at its limit of {_count(get('limitKeys'), 'keys')} "
            f"({_count(get('originalKeys'), 'keys')} sent)"
        )
    if reason == "trajectory-circular-reference":
        return "replaced by its marker for a circular reference"
    if reason == EVENT_SIZE_LIMIT:
        return (
            f"over its {_number(get('limitBytes'))}-byte limit "
            f"({_count(get('originalBytes'), 'bytes')}), kept without its data"
        )
    if reason == REDACTED:
        return "replaced by its redaction of binary or media data"
    return f"cut ({_plain_reason(reason)})"


def text_cut(marker: Any) -> TextCut:
    """What OpenClaw's marker in place of a text says of it (`bound_marker(marker)` is set)."""
    reason = bound_marker(marker) or "unknown"
    if reason != "trajectory-field-size-limit":
        return TextCut(reason, bound_detail(reason, marker))
    chars = marker.get("originalChars")
    size = f"{_count(chars, 'characters')}, over" if type(chars) is int else "over"
    return TextCut(reason, f"{size} its trajectory limit of {_number(marker.get('limitChars'))}")


def _plain_reason(reason: str) -> str:
    return "".join(c for c in reason[:80] if c.isprintable())


def redacted_text(text: str) -> bool:
    """Whether OpenClaw replaced `text` or part of it (a secret, broken JSON) before recording."""
    return (
        text in _PLACEHOLDERS
        or any(part in text for part in _REDACTED_PARTS)
        or ("\u2026" in text and _MASKED_TOKEN.search(text) is not None)
    )


def container_cut(value: Any) -> str | None:
    """What OpenClaw may have cut of an object or a list (keys or items past its limit of 64),
    in words, else None."""
    if isinstance(value, dict):
        marker = value.get(TRUNCATED_KEY)
        if bound_marker(marker) == OBJECT_SIZE_LIMIT:
            return bound_detail(OBJECT_SIZE_LIMIT, marker)
        if len(value) >= OPENCLAW_MAX_ITEMS:
            return (
                f"with {len(value)} keys, its limit: any keys past them were left out of its record"
            )
    if isinstance(value, list) and value:
        if bound_marker(value[-1]) == ARRAY_SIZE_LIMIT:
            return bound_detail(ARRAY_SIZE_LIMIT, value[-1])
        if len(value) >= OPENCLAW_MAX_ITEMS:
            return (
                f"with {len(value)} items, its limit: any items past them were left "
                "out of its record"
            )
    return None


def placeholder(text: str | None) -> bool:
    """Whether OpenClaw recorded its placeholder in place of a whole text (a reply holding
    text it takes for broken JSON is recorded as "[Malformed diagnostic JSON redacted]")."""
    return text in _PLACEHOLDERS


def cut_detail(value: Any) -> str | None:
    """What OpenClaw did to `value`, in words, when it is one of its markers or text it
    redacted (the value sent is then not known), else None."""
    reason = bound_marker(value)
    if reason is not None:
        return bound_detail(reason, value)
    if isinstance(value, str) and redacted_text(value):
        if value in _PLACEHOLDERS:
            return f"replaced by its placeholder {json.dumps(value)}"
        return "with a part it redacted (a secret)"
    return None


def credential_key(key: str) -> bool:
    """Whether OpenClaw leaves a key of this name out of what it records."""
    name = re.sub(r"[^a-z0-9]", "", key.lower())
    if not name or name in _NOT_CREDENTIAL:
        return False
    return name in ("authorization", "proxyauthorization") or bool(_CREDENTIAL_KEY.search(name))


def args_cuts(args: Any) -> tuple[ArgsCut, ...]:
    """The parts of recorded arguments that OpenClaw cut or redacted (see above), in order.
    An object cut at its key limit, and a list at its item limit, are named by their own path;
    a walk of a hostile value stops after _MAX_WALK values (the rest taken as cut)."""
    cuts: list[ArgsCut] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), args)]
    seen = 0
    while stack:
        path, value = stack.pop()
        seen += 1
        if seen > _MAX_WALK:
            cuts.append(ArgsCut(path, "too-large", "too large to look through"))
            break
        reason = bound_marker(value)
        if reason is not None:
            cuts.append(ArgsCut(path, reason, bound_detail(reason, value)))
            continue
        if isinstance(value, str):
            detail = cut_detail(value)
            if detail is not None:
                cuts.append(ArgsCut(path, REDACTED, detail))
            continue
        children: list[tuple[tuple[str | int, ...], Any]] = []
        bulk = container_cut(value)
        if bulk is not None:
            kind = OBJECT_SIZE_LIMIT if isinstance(value, dict) else ARRAY_SIZE_LIMIT
            cuts.append(ArgsCut(path, kind, bulk))
        if isinstance(value, dict):
            for key, item in value.items():
                if key == TRUNCATED_KEY and bound_marker(item) == OBJECT_SIZE_LIMIT:
                    continue
                children.append(((*path, str(key)), item))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if index == len(value) - 1 and bound_marker(item) == ARRAY_SIZE_LIMIT:
                    continue
                children.append(((*path, index), item))
        stack.extend(reversed(children))
    return tuple(cuts)

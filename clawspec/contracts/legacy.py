"""Recognise a legacy ClawSpec file that is not a contract of this version by its top-level keys.

The contract loader asks this before validating, so `clawspec validate` on an unmigrated legacy
ClawSpec handoff, pipeline, coverage ledger or baselines file says what it is and how to migrate
it, instead of "unknown field 'handoff'". In `contracts`, below `migration`: the loader imports it.
"""

from __future__ import annotations

from typing import Any

# top-level key → what legacy ClawSpec called such a file
KINDS = (
    ("handoff", "handoff"),
    ("pipeline", "pipeline"),
    ("waves", "coverage ledger"),
    ("baselines", "baselines"),
)


def legacy_kind(data: Any) -> tuple[str, str] | None:
    """(key, kind) when `data` is a legacy non-contract document, else None."""
    if not isinstance(data, dict) or "scenarios" in data:
        return None
    for key, kind in KINDS:
        if key in data:
            return key, kind
    return None

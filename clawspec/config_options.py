"""Legacy ClawSpec options in `clawspec.yaml`: adopted with a deprecation warning, never refused.

The configuration model forbids unknown options (a typo must not pass silently), so the options
of legacy ClawSpec are listed here explicitly: each either moves to its current place or, when it
has no meaning any more, is dropped. Both say so once, with the line.
`clawspec migrate clawspec.yaml` rewrites the file with the same table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clawspec.inputs.source import Loc, SourceDoc

log = logging.getLogger("clawspec.config")


@dataclass(frozen=True)
class LegacyOption:
    """One legacy option: where it was, where it goes now (None: nowhere) and why."""

    loc: Loc
    target: Loc | None
    note: str
    convert: Callable[[Any], Any] | None = None


def _per_mtok(prices: Any) -> Any:
    """Legacy ClawSpec priced per thousand tokens (`input_per_1k`); we price per million."""
    if not isinstance(prices, dict):
        return prices
    converted = {}
    for model, price in prices.items():
        if isinstance(price, dict) and {"input_per_1k", "output_per_1k"} & set(price):
            converted[model] = {
                "input_per_mtok": float(price.get("input_per_1k", 0)) * 1000,
                "output_per_mtok": float(price.get("output_per_1k", 0)) * 1000,
            }
        else:
            converted[model] = price
    return converted


LEGACY_OPTIONS: tuple[LegacyOption, ...] = (
    LegacyOption(
        ("ledger_path",),
        None,
        "coverage has no ledger file any more: `clawspec coverage` reads the workspace's "
        "skills, agents and contracts",
    ),
    LegacyOption(("observability_backend",), ("observability", "backend"), "moved"),
    LegacyOption(("trace_poll_delay_ms",), ("observability", "trace_poll_delay_ms"), "moved"),
    LegacyOption(("opik_project_name",), ("observability", "project"), "moved"),
    LegacyOption(("opik_workspace",), ("observability", "workspace"), "moved"),
    LegacyOption(
        ("time_window_padding_ms",),
        None,
        "traces are found by run correlation; the time window needs no padding",
    ),
    LegacyOption(
        ("observability", "time_window_padding_ms"),
        None,
        "traces are found by run correlation; the time window needs no padding",
    ),
    LegacyOption(("observability", "opik", "project_name"), ("observability", "project"), "moved"),
    LegacyOption(("observability", "opik", "workspace"), ("observability", "workspace"), "moved"),
    LegacyOption(
        ("observability", "model_pricing"),
        ("model_pricing",),
        "moved; prices per 1k tokens become per million (`input_per_mtok`)",
        _per_mtok,
    ),
    LegacyOption(
        ("model_pricing",),
        ("model_pricing",),
        "prices per 1k tokens become per million (`input_per_mtok`)",
        _per_mtok,
    ),
)


def _get(data: Any, loc: Loc) -> tuple[bool, Any]:
    for part in loc:
        if not isinstance(data, dict) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _pop(data: dict[str, Any], loc: Loc) -> None:
    parent = data
    for part in loc[:-1]:
        parent = parent[part]
    del parent[loc[-1]]
    # An emptied legacy sub-section (`observability.opik: {}`) would itself be unknown.
    if len(loc) > 1 and parent == {}:
        _pop(data, loc[:-1])


def _set(data: dict[str, Any], loc: Loc, value: Any) -> bool:
    """Set `loc` unless the current option is already given there (the new place wins)."""
    target = data
    for part in loc[:-1]:
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            return False
    if loc[-1] in target and target[loc[-1]] != value:
        return False
    target[loc[-1]] = value
    return True


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: _copy(value) for key, value in data.items()}
    return data


def rewrite_legacy_options(data: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[Loc, str]]]:
    """Return the data with every legacy option moved or dropped, and what changed where."""
    data = _copy(data)
    changes: list[tuple[Loc, str]] = []
    for option in LEGACY_OPTIONS:
        present, value = _get(data, option.loc)
        if not present:
            continue
        old = ".".join(map(str, option.loc))
        converted = option.convert(value) if option.convert else value
        if option.target == option.loc:
            if converted == value:
                continue
            _set_in_place(data, option.loc, converted)
            changes.append((option.loc, f"'{old}': {option.note}"))
            continue
        _pop(data, option.loc)
        if option.target is None:
            changes.append((option.loc, f"'{old}' (legacy ClawSpec) is ignored: {option.note}"))
        elif _set(data, option.target, converted):
            new = ".".join(option.target)
            changes.append((option.loc, f"'{old}' (legacy ClawSpec) is now '{new}': {option.note}"))
        else:
            new = ".".join(option.target)
            changes.append((option.loc, f"'{old}' (legacy ClawSpec) is ignored: '{new}' is set"))
    return data, changes


def _set_in_place(data: dict[str, Any], loc: Loc, value: Any) -> None:
    target = data
    for part in loc[:-1]:
        target = target[part]
    target[loc[-1]] = value


def adopt_legacy_options(doc: SourceDoc, data: dict[str, Any]) -> dict[str, Any]:
    """Apply `rewrite_legacy_options` while loading; warn once per option with its position."""
    adopted, changes = rewrite_legacy_options(data)
    for loc, message in changes:
        mark = doc.key_mark(loc)
        log.warning(
            "%s:%d:%d: deprecated: %s (run `clawspec migrate %s` to update the file)",
            doc.path,
            mark.line,
            mark.column,
            message,
            doc.path,
        )
    return adopted

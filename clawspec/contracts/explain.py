"""Contract problems as messages: where each is (`file:line:column`) and what it is about
("scenario 'smoke', then[2] (tool_was_called): "), from pydantic's errors or the checks'."""

from __future__ import annotations

import difflib
from typing import Any

from clawspec.assertions import REGISTRY
from clawspec.contracts.problems import Problem
from clawspec.inputs.source import Loc, Mark, SourceDoc
from clawspec.text import UNSHOWABLE

# The parts of a scenario that hold assertions (a message names them: "then[2]").
PHASES = ("given", "then")


def shown_name(name: str) -> str:
    """A name as a message shows it: what cannot be shown written as its escape (`\\n`)."""
    return UNSHOWABLE.sub(lambda found: found.group().encode("unicode_escape").decode(), name)


def format_at(
    shown: str,
    doc: SourceDoc,
    loc: Loc,
    message: str,
    at_key: bool = False,
    *,
    environment_only: bool = False,
) -> Problem:
    """The problem `message` at `loc` (its key with `at_key`), named as `describe` names it."""
    mark: Mark = doc.key_mark(loc) if at_key else doc.value_mark(loc)
    said = f"{describe(doc, loc)}{message}"
    return Problem.at(shown, mark.line, mark.column, said, environment_only=environment_only)


def describe(doc: SourceDoc, loc: Loc, row: str | None = None) -> str:
    """Name the item at `loc`: "scenario 'smoke', then[2] (tool_was_called): " (with the
    outline's `row` after the scenario)."""
    if len(loc) >= 2 and loc[0] in ("target", "defaults"):
        return f"{loc[0]}: "  # 'type' alone would read like an assertion's type
    if len(loc) < 2 or loc[0] != "scenarios" or not isinstance(loc[1], int):
        return ""
    scenarios = doc.data.get("scenarios") if isinstance(doc.data, dict) else None
    item = scenarios[loc[1]] if isinstance(scenarios, list) and loc[1] < len(scenarios) else None
    name = item.get("name") if isinstance(item, dict) else None
    parts = [f"scenario '{shown_name(name)}'" if isinstance(name, str) else f"scenarios[{loc[1]}]"]
    if row is not None:
        parts.append(f"row '{row}'")
    holder, rest = item, loc[2:]
    if len(rest) >= 2 and rest[0] == "turns" and isinstance(rest[1], int):
        # Text counts turns from 1 ("turn 2" is index 1).
        parts.append(f"turn {rest[1] + 1}")
        turns = item.get("turns") if isinstance(item, dict) else None
        holder = turns[rest[1]] if isinstance(turns, list) and rest[1] < len(turns) else None
        rest = rest[2:]
    if len(rest) >= 2 and rest[0] in PHASES and isinstance(rest[1], int):
        items = holder.get(rest[0]) if isinstance(holder, dict) else None
        raw = items[rest[1]] if isinstance(items, list) and rest[1] < len(items) else None
        kind = raw.get("type") if isinstance(raw, dict) else None
        parts.append(f"{rest[0]}[{rest[1]}]" + (f" ({kind})" if isinstance(kind, str) else ""))
    return ", ".join(parts) + ": "


def explain(errors: list[Any], doc: SourceDoc) -> list[tuple[Loc, str, bool]]:
    """Turn pydantic errors into (location, message, at_key) triples (unknown or
    wrongly typed fields point at the key; missing fields and rules at the item's start)."""
    out: list[tuple[Loc, str, bool]] = []
    for err in errors:
        loc = tuple(err["loc"])
        kind, field = err["type"], loc[-1] if loc else None
        if kind == "missing":
            out.append((loc[:-1], f"missing field '{field}'", False))
        elif kind == "extra_forbidden":
            out.append((loc, f"unknown field '{field}'{_allowed(doc, loc)}", True))
        elif kind == "union_tag_invalid":
            tag = err["ctx"]["tag"]
            near = difflib.get_close_matches(tag, REGISTRY, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            out.append(((*loc, "type"), f"unknown assertion type '{tag}'{hint}", True))
        elif kind == "union_tag_not_found":
            out.append((loc, "missing field 'type'", False))
        elif kind == "value_error":
            out.append((loc, err["msg"].removeprefix("Value error, "), False))
        elif kind == "too_short" and field in PHASES:
            out.append((loc, f"'{field}' needs at least one assertion", True))
        elif kind == "too_short" and field == "turns":
            out.append((loc, "'turns' needs at least one turn (a 'say')", True))
        elif kind == "too_short" and field == "scenarios":
            out.append((loc, "'scenarios' needs at least one scenario", True))
        elif (
            kind in ("model_attributes_type", "dict_type", "model_type")
            and len(loc) >= 2
            and loc[-2] in PHASES
            and isinstance(err.get("input"), str)
        ):
            # `then: [run_completed]`: the type written where the assertion's mapping goes.
            given = err["input"]
            example = f"{{type: {given}}}" if given in REGISTRY else "{type: …, …}"
            out.append(
                (loc, f"an assertion is a mapping, such as {example}; found '{given}'", False)
            )
        elif kind == "model_type" and _is_turn(loc):
            out.append((loc, _turn_shape(err.get("input")), False))
        elif kind == "model_type" and isinstance(field, str):
            shape = f"{_mapping_expected(loc)}, found {_found(err)}"
            out.append((loc, f"field '{field}': {shape}", True))
        elif kind == "model_type":
            out.append((loc, f"{_mapping_expected(loc)}, found {_found(err)}", False))
        elif kind == "literal_error" and field == "version":
            out.append((loc, f'unsupported version {err["input"]!r}: expected "1.0"', True))
        elif isinstance(field, str):
            out.append((loc, f"field '{field}': {_expected(err)}", True))
        else:
            out.append((loc, _expected(err), False))
    return out


def _allowed(doc: SourceDoc, loc: Loc) -> str:
    parent = loc[:-1]
    raw = None
    if len(parent) == 4 and parent[2] in PHASES:
        raw = doc.data["scenarios"][parent[1]][parent[2]][parent[3]]
    elif len(parent) == 6 and parent[2] == "turns" and parent[4] in PHASES:
        raw = doc.data["scenarios"][parent[1]]["turns"][parent[3]][parent[4]][parent[5]]
    if raw is not None:
        spec = REGISTRY.get(raw.get("type")) if isinstance(raw, dict) else None
        if spec:
            return f" (allowed: {', '.join(spec.fields) or 'none'})"
        return ""
    fields = _fields_at(parent)
    return f" (allowed: {', '.join(fields)})" if fields else ""


def _fields_at(loc: Loc) -> list[str]:
    """The fields of the contract's mapping at `loc` (the file, its target, defaults, a
    scenario, its `when`, a turn); [] for any other place."""
    from clawspec.contracts import models

    shape: dict[Loc, type[models.BaseModel]] = {
        (): models.Contract,
        ("target",): models.Target,
        ("defaults",): models.Defaults,
    }
    model = shape.get(loc)
    if len(loc) >= 2 and loc[0] == "scenarios" and isinstance(loc[1], int):
        rest = loc[2:]
        if rest == ():
            model = models.Scenario
        elif rest == ("when",):
            model = models.When
        elif _is_turn(loc):
            model = models.Turn
    return list(model.model_fields) if model is not None else []


def _is_turn(loc: Loc) -> bool:
    """Whether `loc` is a turn of a conversation (scenarios[i].turns[j])."""
    return len(loc) == 4 and loc[0] == "scenarios" and loc[2] == "turns" and isinstance(loc[3], int)


def _turn_shape(found: Any) -> str:
    """A turn that is not a mapping: what a turn is, and the item rewritten as one."""
    say = found if isinstance(found, str) and found.strip() else "<what the user says>"
    return (
        f"a turn is a mapping with 'say' (and optionally {', '.join(_optional_turn_fields())}), "
        f"found {_found({'input': found})}: write - say: {_yaml_string(say)}"
    )


def _optional_turn_fields() -> list[str]:
    from clawspec.contracts.models import Turn

    return [name for name in Turn.model_fields if name != "say"]


def _yaml_string(text: str) -> str:
    """`text` as a double-quoted YAML string (JSON's quoting is YAML's)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _mapping_expected(loc: Loc) -> str:
    fields = _fields_at(loc)
    if fields:
        return f"expected a mapping (fields: {', '.join(fields)})"
    return "expected a mapping"


def _found(err: Any) -> str:
    found = err.get("input")
    return repr(found) if not isinstance(found, dict | list) else type(found).__name__


def _expected(err: Any) -> str:
    return f"{err['msg'][0].lower()}{err['msg'][1:]}, found {_found(err)}"

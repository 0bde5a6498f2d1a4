"""Discover, parse and validate contracts; collect every error with `file:line:column`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawspec.assertions import REGISTRY
from clawspec.contracts import templates
from clawspec.contracts.discovery import display_path
from clawspec.contracts.legacy import legacy_kind
from clawspec.contracts.models import Contract, Scenario
from clawspec.contracts.parse_ahead import Parsed, parsed_here, read_contract
from clawspec.errors import ContractError, UsageError
from clawspec.identity import contract_path
from clawspec.inputs.limits import DEFAULT_LIMITS, ContractLimits
from clawspec.inputs.paths import escapes_workspace
from clawspec.inputs.source import Loc, Mark, SourceDoc, parse_yaml

PHASES = ("given", "then")


@dataclass(frozen=True)
class LoadedContract:
    """A validated contract with its source positions."""

    path: Path
    display: str  # the path as shown in messages (relative to the current folder when inside it)
    contract: Contract
    doc: SourceDoc
    identity_path: str  # the path in scenario identities: relative to the workspace root

    def scenario_line(self, index: int) -> int:
        return self.doc.value_mark(("scenarios", index)).line

    def assertion_line(self, scenario: int, phase: str, index: int) -> int:
        return self.doc.value_mark(("scenarios", scenario, phase, index)).line


def load_contracts(
    files: Sequence[Path],
    workspace: Path,
    environ: Mapping[str, str],
    parsed: Iterable[tuple[int, Parsed]] | None = None,
    limits: ContractLimits = DEFAULT_LIMITS,
) -> list[LoadedContract]:
    """Load and validate every file; raise ContractError listing all problems found.

    `parsed` yields each file's index and result, in any order (`parse_ahead`); by default the
    files are read and parsed here, one after another. Contracts and errors come in file order.
    `limits` bound each file's size, nesting and aliases (inputs/limits.py).
    """
    outcomes: list[LoadedContract | list[str]] = [[] for _ in files]
    for index, result in parsed_here(files, limits) if parsed is None else parsed:
        outcomes[index] = load_contract(files[index], workspace, environ, result, limits)
    loaded = [outcome for outcome in outcomes if isinstance(outcome, LoadedContract)]
    errors = [error for outcome in outcomes if isinstance(outcome, list) for error in outcome]
    if errors:
        raise ContractError(errors)
    return loaded


def load_contract(
    path: Path,
    workspace: Path,
    environ: Mapping[str, str],
    parsed: Parsed | None = None,
    limits: ContractLimits = DEFAULT_LIMITS,
) -> LoadedContract | list[str]:
    """Load one contract file: the contract, or the list of error messages."""
    shown = display_path(path)
    key = contract_path(path, workspace)
    first = parsed if parsed is not None else read_contract(path, shown, limits)
    if isinstance(first, list):
        return first
    text, doc = first
    if not isinstance(doc.data, dict):
        found = "an empty file" if doc.data is None else type(doc.data).__name__
        return [
            f"{shown}:1:1: a contract must be a mapping with 'version', 'target' and "
            f"'scenarios'; found {found}"
        ]
    legacy = legacy_kind(doc.data)
    if legacy is not None:
        mark = parse_yaml(text, path, alias_nodes=limits.alias_nodes).key_mark((legacy[0],))
        return [
            f"{shown}:{mark.line}:{mark.column}: this looks like a ClawSpec 0.1 {legacy[1]} file "
            f"('{legacy[0]}' at the top, no 'scenarios'): run `clawspec migrate {shown}`"
        ]
    try:
        return LoadedContract(
            path, shown, _validate(shown, doc, workspace, environ, text), doc, key
        )
    except ContractError:
        pass
    # every position, to point at each problem exactly
    doc = parse_yaml(text, path, alias_nodes=limits.alias_nodes)
    try:
        return LoadedContract(
            path, shown, _validate(shown, doc, workspace, environ, text), doc, key
        )
    except ContractError as exc:
        return exc.messages


def _validate(
    shown: str, doc: SourceDoc, workspace: Path, environ: Mapping[str, str], text: str
) -> Contract:
    """The validated contract; ContractError lists every problem, in file order."""
    # The semantic checks run whether or not the structure is valid: every error, at once.
    errors = _check_semantics(shown, doc, workspace, environ, _may_hold_templates(text))
    try:
        contract = Contract.model_validate(doc.data)
    except ValidationError as exc:
        errors += [_format(shown, doc, loc, msg, key) for loc, msg, key in _explain(exc, doc)]
    if errors:
        # Deduplicated in the order found, then sorted by position; the sort is stable, so
        # errors at one position keep that order (a set's order changes with PYTHONHASHSEED).
        unique = dict.fromkeys(errors)
        raise ContractError(sorted(unique, key=lambda e: _position(shown, e)))
    return contract


def _position(shown: str, error: str) -> tuple[int, int]:
    line, column = error[len(shown) + 1 :].split(":", 2)[:2]
    return int(line), int(column)


def _format(shown: str, doc: SourceDoc, loc: Loc, message: str, at_key: bool = False) -> str:
    mark: Mark = doc.key_mark(loc) if at_key else doc.value_mark(loc)
    return f"{shown}:{mark.line}:{mark.column}: {_describe(doc, loc)}{message}"


def _describe(doc: SourceDoc, loc: Loc) -> str:
    """Name the item at `loc`: "scenario 'smoke', then[2] (tool_was_called): "."""
    if len(loc) >= 2 and loc[0] in ("target", "defaults"):
        return f"{loc[0]}: "  # 'type' alone would read like an assertion's type
    if len(loc) < 2 or loc[0] != "scenarios" or not isinstance(loc[1], int):
        return ""
    scenarios = doc.data.get("scenarios") if isinstance(doc.data, dict) else None
    item = scenarios[loc[1]] if isinstance(scenarios, list) and loc[1] < len(scenarios) else None
    name = item.get("name") if isinstance(item, dict) else None
    parts = [f"scenario '{name}'" if isinstance(name, str) else f"scenarios[{loc[1]}]"]
    if len(loc) >= 4 and loc[2] in PHASES and isinstance(loc[3], int):
        raw = item.get(loc[2])[loc[3]] if isinstance(item, dict) else None
        kind = raw.get("type") if isinstance(raw, dict) else None
        parts.append(f"{loc[2]}[{loc[3]}]" + (f" ({kind})" if isinstance(kind, str) else ""))
    return ", ".join(parts) + ": "


def _explain(exc: ValidationError, doc: SourceDoc) -> list[tuple[Loc, str, bool]]:
    """Turn pydantic errors into (location, message, at_key) triples (unknown or
    wrongly typed fields point at the key; missing fields and rules at the item's start)."""
    out: list[tuple[Loc, str, bool]] = []
    for err in exc.errors(include_url=False):
        loc = _strip_union_tag(tuple(err["loc"]))
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
        elif kind == "too_short" and field == "scenarios":
            out.append((loc, "'scenarios' needs at least one scenario", True))
        elif kind == "literal_error" and field == "version":
            out.append((loc, f'unsupported version {err["input"]!r}: expected "1.0"', True))
        elif isinstance(field, str):
            out.append((loc, f"field '{field}': {_expected(err)}", True))
        else:
            out.append((loc, _expected(err), False))
    return out


def _strip_union_tag(loc: Loc) -> Loc:
    """Drop the discriminator tag pydantic inserts after an assertion's list index."""
    for i in range(3, len(loc) - 1):
        if loc[i - 1] in PHASES and isinstance(loc[i], int) and loc[i + 1] in REGISTRY:
            return loc[: i + 1] + loc[i + 2 :]
    return loc


def _allowed(doc: SourceDoc, loc: Loc) -> str:
    parent = loc[:-1]
    if len(parent) == 4 and parent[2] in PHASES:
        raw = doc.data["scenarios"][parent[1]][parent[2]][parent[3]]
        spec = REGISTRY.get(raw.get("type")) if isinstance(raw, dict) else None
        if spec:
            return f" (allowed: {', '.join(spec.fields) or 'none'})"
    return ""


def _expected(err: Any) -> str:
    found = err.get("input")
    shown = repr(found) if not isinstance(found, dict | list) else type(found).__name__
    return f"{err['msg'][0].lower()}{err['msg'][1:]}, found {shown}"


def _may_hold_templates(text: str) -> bool:
    r"""False when no string of a YAML document can hold '{{' (a template): YAML makes one only
    from a literal '{{' or, in a double-quoted string, from an escape (`\x7b`, `\` + line break);
    folded lines are joined with a space."""
    return "{{" in text or "\\" in text


def _check_semantics(
    shown: str,
    doc: SourceDoc,
    workspace: Path,
    environ: Mapping[str, str],
    templated: bool,
) -> list[str]:
    """Checks pydantic cannot make (unique names, template variables, workspace paths); they
    read the raw data so they report even when the structure has other errors. `templated` is
    False when no string of the file can hold a template: the variable check is skipped."""
    errors: list[str] = []
    seen: set[str] = set()
    scenarios = doc.data.get("scenarios")
    for s_index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
        if not isinstance(scenario, dict):
            continue
        name = scenario.get("name")
        if isinstance(name, str) and name in seen:
            # Point at the second occurrence of the name itself.
            loc = ("scenarios", s_index, "name")
            errors.append(_format(shown, doc, loc, f"duplicate scenario name '{name}'", True))
        seen.add(name) if isinstance(name, str) else None
        when = scenario.get("when")
        if templated and isinstance(when, dict):
            loc = ("scenarios", s_index, "when")
            errors.extend(_check_strings(shown, doc, loc, when, environ))
        for phase in PHASES:
            items = scenario.get(phase)
            for a_index, raw in enumerate(items if isinstance(items, list) else []):
                if not isinstance(raw, dict):
                    continue
                loc = ("scenarios", s_index, phase, a_index)
                if templated:
                    errors.extend(_check_strings(shown, doc, loc, raw, environ))
                errors.extend(_check_paths(shown, doc, loc, raw))
    return errors


def _check_strings(
    shown: str, doc: SourceDoc, loc: Loc, data: dict[str, Any], environ: Mapping[str, str]
) -> list[str]:
    errors = []
    for sub_loc, text in _templated(data, loc, []):
        try:
            templates.check_variables(text, environ)
        except templates.TemplateError as exc:
            errors.append(_format(shown, doc, sub_loc, str(exc)))
    return errors


def _check_paths(shown: str, doc: SourceDoc, loc: Loc, raw: dict[str, Any]) -> list[str]:
    errors = []
    kind = raw.get("type")
    spec = REGISTRY.get(kind) if isinstance(kind, str) else None  # e.g. `type: [x]`: unhashable
    for name in spec.path_fields if spec else ():
        value = raw.get(name)
        # Templates never introduce '..' except through env values, which are known now.
        if isinstance(value, str) and escapes_workspace(value):
            errors.append(
                _format(
                    shown,
                    doc,
                    (*loc, name),
                    f"field '{name}': path '{value}' climbs out of the workspace",
                )
            )
    return errors


def _templated(
    data: dict[str, Any] | list[Any], loc: Loc, found: list[tuple[Loc, str]]
) -> list[tuple[Loc, str]]:
    """Add each string under `data` that holds '{{' (only those can name template variables)
    to `found`, with its location, in file order; other strings cost no location."""
    for key, item in data.items() if isinstance(data, dict) else enumerate(data):
        if isinstance(item, str):
            if "{{" in item:
                found.append(((*loc, key), item))
        elif isinstance(item, dict | list):
            _templated(item, (*loc, key), found)
    return found


def select_scenarios(
    contracts: Sequence[LoadedContract],
    names: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
) -> list[tuple[LoadedContract, int, Scenario]]:
    """Return (contract, index, scenario) in contract order after the name/tag filters."""
    chosen = []
    for loaded in contracts:
        for index, scenario in enumerate(loaded.contract.scenarios):
            if names and scenario.name not in names:
                continue
            if tags and not set(tags) & set(scenario.tags):
                continue
            if set(exclude_tags) & set(scenario.tags):
                continue
            chosen.append((loaded, index, scenario))
    known = {s.name for c in contracts for s in c.contract.scenarios}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--scenario: no scenario named {', '.join(map(repr, unknown))}")
    return chosen

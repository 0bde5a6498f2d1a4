"""Discover, parse and validate contracts; collect every error with `file:line:column`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawspec.assertions import REGISTRY
from clawspec.contracts import templates
from clawspec.contracts.discovery import display_path
from clawspec.contracts.legacy import legacy_kind
from clawspec.contracts.models import Contract, Scenario
from clawspec.contracts.outlines import (
    ExampleRow,
    Problem,
    RawRow,
    holds_placeholder,
    placeholders,
    read_rows,
    sole_placeholder,
    substitute,
)
from clawspec.contracts.parse_ahead import Parsed, parsed_here, read_contract
from clawspec.errors import ContractError, UsageError
from clawspec.identity import ScenarioIdentity, contract_path
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
    # A contract with outlines: for each entry of `contract.scenarios` (an outline's rows are
    # entries of their own, the outline none), the index of the scenario written in the file
    # and the row. None: no outline, entry i is the i-th scenario written.
    entries: tuple[tuple[int, ExampleRow | None], ...] | None = None

    def written_index(self, index: int) -> int:
        """Where entry `index` of `contract.scenarios` is written: its (outline's) position."""
        return index if self.entries is None else self.entries[index][0]

    def example(self, index: int) -> ExampleRow | None:
        """The outline row entry `index` runs, if it is one."""
        return None if self.entries is None else self.entries[index][1]

    def scenario_line(self, index: int) -> int:
        row = self.example(index)
        if row is not None:
            return row.line
        return self.doc.value_mark(("scenarios", self.written_index(index))).line

    def assertion_line(self, scenario: int, phase: str, index: int) -> int:
        """The line of an assertion as written (a row's are its outline's)."""
        written = self.written_index(scenario)
        return self.doc.value_mark(("scenarios", written, phase, index)).line


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
        contract, entries = _validate(shown, doc, path, workspace, environ, text, limits)
        return LoadedContract(path, shown, contract, doc, key, entries)
    except ContractError:
        pass
    # every position, to point at each problem exactly
    doc = parse_yaml(text, path, alias_nodes=limits.alias_nodes)
    try:
        contract, entries = _validate(shown, doc, path, workspace, environ, text, limits)
        return LoadedContract(path, shown, contract, doc, key, entries)
    except ContractError as exc:
        return exc.messages


def _validate(
    shown: str,
    doc: SourceDoc,
    path: Path,
    workspace: Path,
    environ: Mapping[str, str],
    text: str,
    limits: ContractLimits,
) -> tuple[Contract, tuple[tuple[int, ExampleRow | None], ...] | None]:
    """The validated contract (each outline row an entry of its own) and its entries
    (LoadedContract.entries); ContractError lists every problem, in file order."""
    # The semantic checks run whether or not the structure is valid: every error, at once.
    errors = _check_semantics(shown, doc, workspace, environ, _may_hold_templates(text))
    # Outline errors may be in a data file: they sort where the outline is.
    order: dict[str, tuple[int, int]] = {}
    expansion = _expand(shown, doc, path, workspace, environ, limits.max_bytes)
    for problem in expansion.problems:
        errors.append(problem.text)
        order.setdefault(problem.text, problem.order)
    try:
        contract = Contract.model_validate(expansion.data)
    except ValidationError as exc:
        for message, position in _explain_entries(shown, doc, exc, expansion):
            errors.append(message)
            if position is not None:
                order.setdefault(message, position)
    if errors:
        # Deduplicated in the order found, then sorted by position; the sort is stable, so
        # errors at one position keep that order (a set's order changes with PYTHONHASHSEED).
        unique = dict.fromkeys(errors)
        raise ContractError(sorted(unique, key=lambda e: order.get(e) or _position(shown, e)))
    if expansion.entries is None:
        return contract, None
    lines = {i: doc.value_mark(("scenarios", i)).line for i, _ in expansion.entries}
    entries = tuple(
        (i, row.example(lines[i]) if row is not None else None) for i, row in expansion.entries
    )
    return contract, entries


@dataclass
class _Expansion:
    """The contract's data with each outline replaced by its rows' scenarios."""

    data: Any
    entries: list[tuple[int, RawRow | None]] | None = None  # None: no outline
    problems: list[Problem] = field(default_factory=list)
    dropped: bool = False  # an outline whose rows could not be read is left out


def _expand(
    shown: str,
    doc: SourceDoc,
    path: Path,
    workspace: Path,
    environ: Mapping[str, str],
    max_bytes: int,
) -> _Expansion:
    """Substitute each row of each outline into the outline's raw data (before validation,
    so that a value keeps its type), and check the rows."""
    scenarios = doc.data.get("scenarios")
    if not isinstance(scenarios, list) or not any(
        isinstance(s, dict) and "examples" in s for s in scenarios
    ):
        return _Expansion(doc.data)
    out = _Expansion({**doc.data, "scenarios": []}, [])
    expanded: list[Any] = out.data["scenarios"]
    assert out.entries is not None
    for index, raw in enumerate(scenarios):
        if not (isinstance(raw, dict) and "examples" in raw):
            expanded.append(raw)
            out.entries.append((index, None))
            continue
        at = ("scenarios", index, "examples")
        rows = read_rows(raw["examples"], doc, at, shown, path, workspace, max_bytes)
        body = {k: v for k, v in raw.items() if k != "examples"}
        name = body.get("name")
        label = f"scenario '{name}'" if isinstance(name, str) else f"scenarios[{index}]"
        for problem in rows.problems:  # "file:line:column: message": name the outline
            where, message = problem.text.split(": ", 1)
            out.problems.append(Problem(f"{where}: {label}: {message}", problem.order))
        used = dict.fromkeys(n for _, _, n in placeholders({**body, "name": None}))
        before = len(expanded)
        for row in rows.rows:
            data = _row_scenario(shown, doc, index, body, used, row, label, environ, out)
            if data is not None:
                expanded.append(data)
                out.entries.append((index, row))
        out.dropped |= len(expanded) == before
    return out


def _row_scenario(
    shown: str,
    doc: SourceDoc,
    index: int,
    body: dict[str, Any],
    used: dict[str, None],
    row: RawRow,
    label: str,
    environ: Mapping[str, str],
    out: _Expansion,
) -> dict[str, Any] | None:
    """The raw scenario of one row, or None (its problems added to `out`)."""
    order = _row_order(doc, index, row)
    problems = []
    defines = ", ".join(row.values) or "no variables"
    for name in used:
        if name not in row.values:
            problems.append(
                f"{row.where()}: {label}, row '{row.id}': '{{{{vars.{name}}}}}' is not defined "
                f"by this row (it defines {defines})"
            )
    for key, value in row.values.items():
        for _, text, _ in _strings_with_templates(value):
            try:
                templates.check_variables(text, environ)
            except templates.TemplateError as exc:
                problems.append(f"{row.where(key)}: {label}, row '{row.id}', '{key}': {exc}")
    if not problems:
        data = substitute(body, row.values)
        data["name"] = body.get("name")
        tags = body.get("tags", [])
        if isinstance(tags, list) and row.tags:
            data["tags"] = [*tags, *(t for t in row.tags if t not in tags)]
        if row.description is not None:
            data["description"] = row.description
        for phase in PHASES:
            items = data.get(phase)
            for a_index, item in enumerate(items if isinstance(items, list) else []):
                if isinstance(item, dict):
                    for _, message in _path_problems(item):
                        problems.append(
                            f"{row.where()}: {label}, row '{row.id}', {phase}[{a_index}]: {message}"
                        )
    for text in problems:
        out.problems.append(Problem(text, order))
    return None if problems else data


def _row_order(doc: SourceDoc, index: int, row: RawRow) -> tuple[int, int]:
    """Where a row's errors sort: at the row when it is in the contract, else its outline."""
    if row.source is None:
        return row.line, row.column
    mark = doc.value_mark(("scenarios", index))
    return mark.line, mark.column


def _strings_with_templates(value: Any) -> list[tuple[Loc, str, None]]:
    if isinstance(value, str):
        return [((), value, None)] if "{{" in value else []
    if isinstance(value, dict | list):
        return [(loc, text, None) for loc, text in _templated(value, (), [])]
    return []


def _explain_entries(
    shown: str, doc: SourceDoc, exc: ValidationError, expansion: _Expansion
) -> list[tuple[str, tuple[int, int] | None]]:
    """The validation errors of the expanded contract, each at the place that causes it: an
    outline's own mistake at the outline (once), a row's substituted value at the row."""
    plain: list[Any] = []
    caused: list[tuple[Any, RawRow, str | None]] = []
    entries = expansion.entries
    for err in exc.errors(include_url=False):
        loc = _strip_union_tag(tuple(err["loc"]))
        if (
            entries is not None
            and len(loc) >= 2
            and loc[0] == "scenarios"
            and isinstance(loc[1], int)
        ):
            written, row = entries[loc[1]]
            loc = ("scenarios", written, *loc[2:])
            if row is not None:
                found, variable = _from_row(doc.data["scenarios"][written], loc[2:], err["type"])
                if found:
                    caused.append(({**err, "loc": loc}, row, variable))
                    continue
        elif entries is not None and loc == ("scenarios",) and expansion.dropped:
            continue  # the only scenarios were outlines whose rows have errors (reported)
        plain.append({**err, "loc": loc})
    out: list[tuple[str, tuple[int, int] | None]] = [
        (_format(shown, doc, loc, msg, key), None) for loc, msg, key in _explain(plain, doc)
    ]
    for err, row, variable in caused:
        for loc, msg, _ in _explain([err], doc):
            about = _describe(doc, loc, row.id)
            out.append((f"{row.where(variable)}: {about}{msg}", _row_order(doc, loc[1], row)))
    return out


def _has(node: Any, key: str | int) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)


def _from_row(raw: Any, rest: Loc, kind: str) -> tuple[bool, str | None]:
    """Whether the value a validation error is about came from a row's placeholder, and the
    variable when the value was exactly one placeholder."""
    if kind in ("missing", "extra_forbidden", "union_tag_not_found"):
        return False, None  # substitution adds and removes no key
    if kind == "union_tag_invalid":
        rest = (*rest, "type")
    node = raw
    for key in rest:
        if isinstance(node, str):
            break  # a placeholder that became a list or mapping
        if not _has(node, key):
            return False, None
        node = node[key]
    if not holds_placeholder(node):
        return False, None
    return True, sole_placeholder(node)


def _position(shown: str, error: str) -> tuple[int, int]:
    line, column = error[len(shown) + 1 :].split(":", 2)[:2]
    return int(line), int(column)


def _format(shown: str, doc: SourceDoc, loc: Loc, message: str, at_key: bool = False) -> str:
    mark: Mark = doc.key_mark(loc) if at_key else doc.value_mark(loc)
    return f"{shown}:{mark.line}:{mark.column}: {_describe(doc, loc)}{message}"


def _describe(doc: SourceDoc, loc: Loc, row: str | None = None) -> str:
    """Name the item at `loc`: "scenario 'smoke', then[2] (tool_was_called): " (with the
    outline's `row` after the scenario)."""
    if len(loc) >= 2 and loc[0] in ("target", "defaults"):
        return f"{loc[0]}: "  # 'type' alone would read like an assertion's type
    if len(loc) < 2 or loc[0] != "scenarios" or not isinstance(loc[1], int):
        return ""
    scenarios = doc.data.get("scenarios") if isinstance(doc.data, dict) else None
    item = scenarios[loc[1]] if isinstance(scenarios, list) and loc[1] < len(scenarios) else None
    name = item.get("name") if isinstance(item, dict) else None
    parts = [f"scenario '{name}'" if isinstance(name, str) else f"scenarios[{loc[1]}]"]
    if row is not None:
        parts.append(f"row '{row}'")
    if len(loc) >= 4 and loc[2] in PHASES and isinstance(loc[3], int):
        raw = item.get(loc[2])[loc[3]] if isinstance(item, dict) else None
        kind = raw.get("type") if isinstance(raw, dict) else None
        parts.append(f"{loc[2]}[{loc[3]}]" + (f" ({kind})" if isinstance(kind, str) else ""))
    return ", ".join(parts) + ": "


def _explain(errors: list[Any], doc: SourceDoc) -> list[tuple[Loc, str, bool]]:
    """Turn pydantic errors into (location, message, at_key) triples (unknown or
    wrongly typed fields point at the key; missing fields and rules at the item's start)."""
    out: list[tuple[Loc, str, bool]] = []
    for err in errors:
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
        outline = "examples" in scenario
        if templated:
            errors.extend(_check_outline_strings(shown, doc, s_index, scenario, outline))
        when = scenario.get("when")
        if templated and isinstance(when, dict):
            loc = ("scenarios", s_index, "when")
            errors.extend(_check_strings(shown, doc, loc, when, environ, outline))
        for phase in PHASES:
            items = scenario.get(phase)
            for a_index, raw in enumerate(items if isinstance(items, list) else []):
                if not isinstance(raw, dict):
                    continue
                loc = ("scenarios", s_index, phase, a_index)
                if templated:
                    errors.extend(_check_strings(shown, doc, loc, raw, environ, outline))
                errors.extend(_check_paths(shown, doc, loc, raw))
    return errors


def _check_outline_strings(
    shown: str, doc: SourceDoc, s_index: int, scenario: dict[str, Any], outline: bool
) -> list[str]:
    """Row placeholders where they cannot be: in a name (a row is named `name[row id]`), and
    outside `when`/`given`/`then` of a scenario without rows (those are checked with the
    other templates)."""
    errors = []
    loc = ("scenarios", s_index)
    for key, item in scenario.items():
        if key in ("when", "examples", *PHASES) or (outline and key != "name"):
            continue
        for sub_loc, _, variable in placeholders(item):
            where = (*loc, key, *sub_loc)
            if key == "name":
                message = (
                    f"'name' cannot hold a placeholder ('{{{{vars.{variable}}}}}'): each row "
                    "runs as 'name[row id]'"
                )
            else:
                message = (
                    f"'{{{{vars.{variable}}}}}' is a row variable, but this scenario has no "
                    "'examples' (add the rows that define it, or remove the placeholder)"
                )
            errors.append(_format(shown, doc, where, message))
    return errors


def _check_strings(
    shown: str,
    doc: SourceDoc,
    loc: Loc,
    data: dict[str, Any],
    environ: Mapping[str, str],
    outline: bool = False,
) -> list[str]:
    errors = []
    for sub_loc, text in _templated(data, loc, []):
        try:
            templates.check_variables(text, environ, outline)
        except templates.TemplateError as exc:
            errors.append(_format(shown, doc, sub_loc, str(exc)))
    return errors


def _check_paths(shown: str, doc: SourceDoc, loc: Loc, raw: dict[str, Any]) -> list[str]:
    return [_format(shown, doc, (*loc, name), message) for name, message in _path_problems(raw)]


def _path_problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each path field of an assertion that climbs out of the workspace."""
    problems = []
    kind = raw.get("type")
    spec = REGISTRY.get(kind) if isinstance(kind, str) else None  # e.g. `type: [x]`: unhashable
    for name in spec.path_fields if spec else ():
        value = raw.get(name)
        # Templates never introduce '..' except through env values, which are known now (and
        # an outline's row values, checked on each row's scenario).
        if isinstance(value, str) and escapes_workspace(value):
            problems.append((name, f"field '{name}': path '{value}' climbs out of the workspace"))
    return problems


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
    """Return (contract, index, scenario) in contract order after the name/tag filters.

    A name selects a scenario, every row of an outline (`drafts`) or one row (`drafts[easter]`,
    the row's identity name); a row's tags are its outline's and its own."""
    chosen = []
    wanted = set(names)
    known: set[str] = set()
    for loaded in contracts:
        for index, scenario in enumerate(loaded.contract.scenarios):
            row = loaded.example(index)
            example = row.id if row is not None else None
            full = ScenarioIdentity(loaded.identity_path, scenario.name, example).name
            if names:
                known.add(scenario.name)
                known.add(full)
                if scenario.name not in wanted and full not in wanted:
                    continue
            if tags and not set(tags) & set(scenario.tags):
                continue
            if set(exclude_tags) & set(scenario.tags):
                continue
            chosen.append((loaded, index, scenario))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--scenario: no scenario named {', '.join(map(repr, unknown))}")
    return chosen

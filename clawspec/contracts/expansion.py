"""Outline expansion: each row of an outline becomes a scenario of its own, substituted into
the outline's raw data before validation (so that a value keeps its type), and the validation
errors of the expanded contract are said where they come from (the outline or the row).

Reading the rows (inline or from a data file) and the placeholders is `outlines.py`."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawspec.contracts import templates
from clawspec.contracts.checks import path_problems, template_strings
from clawspec.contracts.explain import PHASES, describe, explain, format_at
from clawspec.contracts.outlines import (
    RawRow,
    holds_placeholder,
    placeholders,
    read_rows,
    sole_placeholder,
    substitute,
)
from clawspec.contracts.problems import Problem
from clawspec.inputs.source import Loc, SourceDoc


@dataclass
class Expansion:
    """The contract's data with each outline replaced by its rows' scenarios."""

    data: Any
    entries: list[tuple[int, RawRow | None]] | None = None  # None: no outline
    problems: list[Problem] = field(default_factory=list)
    dropped: bool = False  # an outline whose rows could not be read is left out


def expand(
    shown: str,
    doc: SourceDoc,
    path: Path,
    workspace: Path,
    environ: Mapping[str, str],
    max_bytes: int,
) -> Expansion:
    """Substitute each row of each outline into the outline's raw data (before validation,
    so that a value keeps its type), and check the rows."""
    scenarios = doc.data.get("scenarios")
    if not isinstance(scenarios, list) or not any(
        isinstance(s, dict) and "examples" in s for s in scenarios
    ):
        return Expansion(doc.data)
    out = Expansion({**doc.data, "scenarios": []}, [])
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
        for problem in rows.problems:  # name the outline before what is wrong with its rows
            out.problems.append(
                Problem(problem.where, f"{label}: {problem.message}", problem.order)
            )
        used = dict.fromkeys(n for _, _, n in placeholders({**body, "name": None}))
        # A name no row defines is the contract's mistake (a typo, or a column the data file
        # lacks): said once, where the template uses it, rather than once per row.
        unknown = [n for n in used if rows.rows and all(n not in r.values for r in rows.rows)]
        for name in unknown:
            out.problems.append(_unknown_variable(shown, doc, index, body, name, rows.rows))
        used = {n: None for n in used if n not in unknown}
        before = len(expanded)
        for row in rows.rows:
            # With an unknown name the outline cannot be expanded; its rows' own problems
            # are still checked and said.
            data = _row_scenario(
                shown, doc, index, body, used, row, label, environ, out, bool(unknown)
            )
            if data is not None:
                expanded.append(data)
                out.entries.append((index, row))
        out.dropped |= len(expanded) == before
    out.problems += _one_id_each(shown, doc, scenarios, out.entries)
    return out


def _one_id_each(
    shown: str, doc: SourceDoc, scenarios: list[Any], entries: list[tuple[int, RawRow | None]]
) -> list[Problem]:
    """A plain scenario named like a row of an outline (`smoke[1]` beside the outline `smoke`
    with a row `1`): two scenarios with one id, which every report, baseline and `--scenario`
    would take for one. Said at the plain scenario's name."""
    rows: dict[str, int] = {}
    for index, row in entries:
        name = scenarios[index].get("name")
        if row is not None and isinstance(name, str):
            rows.setdefault(f"{name}[{row.id}]", index)
    found = []
    for index, row in entries:
        name = scenarios[index].get("name")
        if row is None and isinstance(name, str) and name in rows:
            loc = ("scenarios", index, "name")
            mark = doc.value_mark(loc)
            outline = scenarios[rows[name]]["name"]
            message = (
                f"{describe(doc, loc)}the scenario name '{name}' is the id of a row of the "
                f"outline '{outline}' (line {doc.value_mark(('scenarios', rows[name])).line}): "
                "rename one of them"
            )
            found.append(Problem.at(shown, mark.line, mark.column, message))
    return found


def _unknown_variable(
    shown: str, doc: SourceDoc, index: int, body: dict[str, Any], name: str, rows: list[RawRow]
) -> Problem:
    """One problem for `{{vars.NAME}}` that no row of the outline defines, at its first use."""
    uses = [loc for loc, _, n in placeholders({**body, "name": None}) if n == name]
    loc = ("scenarios", index, *uses[0])
    mark = doc.value_mark(loc)
    defined = list(dict.fromkeys(k for row in rows for k in row.values))
    source = rows[0].source
    # A data file's rows share its columns: name the file, so the fix is plain.
    where = f"{rows[0].shown} has the columns" if source else "the rows define"
    available = ", ".join(defined) or "no variables"
    count = f"{len(rows)} row" + ("" if len(rows) == 1 else "s")
    hint = difflib.get_close_matches(name, defined, n=1)
    also = sorted({doc.value_mark(("scenarios", index, *u)).line for u in uses[1:]} - {mark.line})
    message = (
        f"'{{{{vars.{name}}}}}' is not defined by any of the outline's {count} ({where}: "
        f"{available})"
        + (f"; did you mean '{{{{vars.{hint[0]}}}}}'?" if hint else "")
        + (f" (also used on line {', '.join(map(str, also))})" if also else "")
    )
    return Problem.at(shown, mark.line, mark.column, f"{describe(doc, loc)}{message}")


def _row_scenario(
    shown: str,
    doc: SourceDoc,
    index: int,
    body: dict[str, Any],
    used: dict[str, None],
    row: RawRow,
    label: str,
    environ: Mapping[str, str],
    out: Expansion,
    blocked: bool = False,
) -> dict[str, Any] | None:
    """The raw scenario of one row, or None (its problems added to `out`; `blocked`: the
    outline uses a name no row defines, so only the row's values are checked)."""
    order = _row_order(doc, index, row)
    problems: list[Problem] = []
    defines = ", ".join(row.values) or "no variables"
    for name in used:
        if name not in row.values:
            problems.append(
                Problem(
                    row.where(),
                    f"{label}, row '{row.id}': '{{{{vars.{name}}}}}' is not defined by this row "
                    f"(it defines {defines})",
                    order,
                )
            )
    for key, value in row.values.items():
        for _, text, _ in _strings_with_templates(value):
            try:
                templates.check_variables(text, environ)
            except templates.TemplateError as exc:
                said = f"{label}, row '{row.id}', '{key}': {exc}"
                problems.append(Problem(row.where(key), said, order, exc.environment_only))
    if blocked:
        out.problems.extend(problems)
        return None
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
                    for _, message in path_problems(item):
                        said = f"{label}, row '{row.id}', {phase}[{a_index}]: {message}"
                        problems.append(Problem(row.where(), said, order))
    out.problems.extend(problems)
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
        return [(loc, text, None) for loc, text in template_strings(value, (), [])]
    return []


def explain_entries(
    shown: str, doc: SourceDoc, exc: ValidationError, expansion: Expansion
) -> list[tuple[str, tuple[int, int] | None]]:
    """The validation errors of the expanded contract, each at the place that causes it: an
    outline's own mistake at the outline (once), a row's substituted value at the row."""
    plain: list[Any] = []
    caused: list[tuple[Any, RawRow, str | None]] = []
    entries = expansion.entries
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
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
    out = [format_at(shown, doc, loc, msg, key) for loc, msg, key in explain(plain, doc)]
    for err, row, variable in caused:
        for loc, msg, _ in explain([err], doc):
            about = describe(doc, loc, row.id)
            out.append(Problem(row.where(variable), f"{about}{msg}", _row_order(doc, loc[1], row)))
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

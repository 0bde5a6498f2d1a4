"""Scenario outlines: an outline's rows, read inline or from a data file, and the substitution
of a row's `{{vars.NAME}}` values into the outline.

An outline never runs itself: the loader turns each row into a scenario of its own (the row's
values substituted into the raw data before validation), named `name[row id]`. Everything
here reads raw data and reports problems with the position of the row that causes them: its
line in the contract, or its line in the data file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawspec.contracts.discovery import display_path
from clawspec.contracts.problems import Place, Problem
from clawspec.identity import contract_path
from clawspec.inputs.paths import PathEscapeError, resolve_in_workspace
from clawspec.inputs.source import DuplicateKeys, Loc, Mark, SourceDoc, SourceError, parse_yaml

RESERVED = ("id", "tags", "description")
SUFFIXES = (".csv", ".yaml", ".yml", ".json", ".jsonl")
NOT_A_LIST = "the data file must hold a list of rows (mappings)"
DUPLICATE_ID = "duplicate row id"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# The same shape as a template variable (contracts/templates.py), `vars.` first.
_PLACEHOLDER = re.compile(r"\{\{\s*vars\.([A-Za-z_][\w.]*)\s*\}\}")


@dataclass(frozen=True, slots=True)
class ExampleRow:
    """A loaded row of an outline, as its scenario carries it."""

    id: str
    line: int  # the result's line: the row's own line, or the scenario's for a data-file row
    source: str | None = None  # a data-file row: "<file relative to the workspace>:<line>"


@dataclass
class RawRow:
    """A row as read, before substitution, with what is needed to point at it."""

    position: int  # 1-based
    values: dict[str, Any]  # the variables (reserved keys removed)
    id: str
    tags: list[str]
    description: str | None
    shown: str  # the file the row is in, as shown in messages
    line: int
    column: int
    source: str | None = None  # data-file rows: "<file>:<line>" for the report
    doc: SourceDoc | None = None  # YAML rows: the document and the row's location in it
    loc: Loc = ()
    marks: dict[str, Mark] = field(default_factory=dict)  # CSV: each column's cell

    def where(self, variable: str | None = None) -> Place:
        """`file:line:column` of the row, or of its value for `variable` when known."""
        if variable is not None and self.doc is not None and variable in self.values:
            mark = self.doc.value_mark((*self.loc, variable))
            return Place(self.shown, mark.line, mark.column)
        if variable is not None and variable in self.marks:
            mark = self.marks[variable]
            return Place(self.shown, mark.line, mark.column)
        return Place(self.shown, self.line, self.column)

    def example(self, scenario_line: int) -> ExampleRow:
        return ExampleRow(self.id, scenario_line if self.source else self.line, self.source)


@dataclass
class Rows:
    """What reading an outline's rows gave: the rows, or the problems that stop them."""

    rows: list[RawRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def add(self, where: Place, message: str, order: tuple[int, int]) -> None:
        self.problems.append(Problem(where, message, order))


def placeholders(data: Any) -> Iterator[tuple[Loc, str, str]]:
    """Every `{{vars.NAME}}` under `data`: (location below `data`, the string, NAME)."""
    stack: list[tuple[Loc, Any]] = [((), data)]
    while stack:
        loc, item = stack.pop()
        if isinstance(item, str):
            if "{{" in item:
                for name in _PLACEHOLDER.findall(item):
                    yield loc, item, name
        elif isinstance(item, dict):
            for key in item:  # a key is a string of the scenario too (at its value's place)
                if isinstance(key, str) and "{{" in key:
                    for name in _PLACEHOLDER.findall(key):
                        yield (*loc, key), key, name
            stack.extend(((*loc, k), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(item))))


def holds_placeholder(data: Any) -> bool:
    return next(placeholders(data), None) is not None


def sole_placeholder(text: Any) -> str | None:
    """NAME when `text` is exactly one `{{vars.NAME}}` (then the value keeps its type)."""
    if not isinstance(text, str):
        return None
    match = _PLACEHOLDER.fullmatch(text.strip()) if text.strip() == text else None
    return match.group(1) if match else None


def substitute(data: Any, values: dict[str, Any]) -> Any:
    """`data` with each `{{vars.NAME}}` replaced by the row's value.

    A string that is one placeholder becomes the value itself, with its type; inside longer
    text a scalar renders as written and a list or mapping as compact JSON. A mapping key is
    always text (`expected_fields: {"{{vars.field}}": ok}`). Other templates (`{{run_id}}`,
    ...) stay for the run. Every name must be defined (checked before)."""
    if isinstance(data, str):
        if "{{" not in data:
            return data
        sole = sole_placeholder(data)
        if sole is not None:
            return values[sole]
        return _PLACEHOLDER.sub(lambda m: _as_text(values[m.group(1)]), data)
    if isinstance(data, list):
        return [substitute(item, values) for item in data]
    if isinstance(data, dict):
        return {_key(key, values): substitute(item, values) for key, item in data.items()}
    return data


def _key(key: Any, values: dict[str, Any]) -> Any:
    if not isinstance(key, str) or "{{" not in key:
        return key
    return _PLACEHOLDER.sub(lambda m: _as_text(values[m.group(1)]), key)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, float | list | dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def read_rows(
    examples: Any,
    doc: SourceDoc,
    loc: Loc,
    shown: str,
    contract: Path,
    workspace: Path,
    max_bytes: int,
) -> Rows:
    """The rows of the outline whose `examples` value is `examples`, at `loc` in `doc`."""
    mark = doc.value_mark(loc)
    order = (mark.line, mark.column)
    out = Rows()

    def problem(where: Place, message: str) -> Rows:
        out.problems.append(Problem(where, message, order))
        return out

    at = Place(shown, mark.line, mark.column)
    if isinstance(examples, list):
        if not examples:
            return problem(at, "'examples' is an empty table: give at least one row")
        for index, item in enumerate(examples):
            item_mark = doc.value_mark((*loc, index))
            row_at = Place(shown, item_mark.line, item_mark.column)
            _add_row(out, item, index + 1, row_at, order, shown, item_mark, doc, (*loc, index))
        return _check_ids(out, order)
    if not (isinstance(examples, dict) and set(examples) == {"file"}):
        return problem(
            at, "'examples' must be a list of rows (mappings) or {file: PATH} (a data file)"
        )
    value = examples["file"]
    file_mark = doc.value_mark((*loc, "file"))
    file_at = Place(shown, file_mark.line, file_mark.column)
    if not isinstance(value, str) or not value:
        return problem(file_at, f"examples: 'file' must be a path, found {value!r}")
    if not value.lower().endswith(SUFFIXES):
        return problem(
            file_at,
            f"examples: data file '{value}' must end in {', '.join(SUFFIXES)} (found "
            f"'{Path(value).suffix or 'no suffix'}')",
        )
    full = contract.parent / value
    try:
        relative = os.path.relpath(full, workspace)
        path = resolve_in_workspace(relative, workspace)
    except (PathEscapeError, ValueError):
        return problem(
            file_at,
            f"examples: data file '{value}' is outside the workspace ({workspace}); keep it "
            "beside the contract",
        )
    data_shown = display_path(path)
    text = _read_text(path, max_bytes)
    if not isinstance(text, str):
        return problem(file_at, f"examples: data file '{value}' {text[0]}")
    source = contract_path(path, workspace)
    suffix = path.suffix.lower()
    reader = (
        _csv_rows
        if suffix == ".csv"
        else _jsonl_rows
        if suffix == ".jsonl"
        else _json_rows
        if suffix == ".json"
        else _yaml_rows
    )
    reader(out, text, path, data_shown, source, order)
    if not out.rows and not out.problems:
        return problem(Place(data_shown, 1, 1), "the data file has no rows: give at least one")
    return _check_ids(out, order)


def _read_text(path: Path, max_bytes: int) -> str | tuple[str]:
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return ("does not exist",)
    except OSError as exc:
        return (f"cannot be read: {exc.strerror or exc}",)
    if len(data) > max_bytes:
        return (f"is over the limit of {max_bytes:,} bytes (limits.contract_max_bytes)",)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return (f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _add_row(
    out: Rows,
    item: Any,
    position: int,
    at: Place,
    order: tuple[int, int],
    shown: str,
    mark: Mark,
    doc: SourceDoc | None = None,
    loc: Loc = (),
    source: str | None = None,
    marks: dict[str, Mark] | None = None,
    split_tags: bool = False,
) -> None:
    """Check one row and add it to `out` (its problems when it is not a valid row)."""
    if not isinstance(item, dict):
        found = "nothing" if item is None else type(item).__name__
        out.add(at, f"row {position} must be a mapping, found {found}", order)
        return
    bad = False
    for key in item:
        if key not in RESERVED and not (isinstance(key, str) and _KEY.match(key)):
            where = at
            if doc is not None:
                key_mark = doc.key_mark((*loc, key))
                where = Place(shown, key_mark.line, key_mark.column)
            out.problems.append(
                Problem(
                    where,
                    f"row {position}: '{key}' is not a variable name (letters, digits "
                    "and '_', not starting with a digit)",
                    order,
                )
            )
            bad = True
    raw_id = item.get("id")
    if raw_id is None or (raw_id == "" and split_tags):  # CSV: an empty cell
        row_id = str(position)
    elif isinstance(raw_id, int | str) and not isinstance(raw_id, bool) and str(raw_id).strip():
        row_id = str(raw_id)
    else:
        out.add(at, f"row {position}: 'id' must be a text or an integer, found {raw_id!r}", order)
        bad = True
        row_id = str(position)
    tags = item.get("tags", [])
    if split_tags and isinstance(tags, str):
        tags = [t for t in re.split(r"[\s,]+", tags) if t]
    if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        out.problems.append(
            Problem(at, f"row {position}: 'tags' must be a list of texts, found {tags!r}", order)
        )
        bad = True
    description = item.get("description")
    if description is not None and not isinstance(description, str):
        out.add(at, f"row {position}: 'description' must be a text, found {description!r}", order)
        bad = True
    if bad:
        return
    values = {k: v for k, v in item.items() if k not in RESERVED}
    out.rows.append(
        RawRow(
            position,
            values,
            row_id,
            list(tags),
            description or None,
            shown,
            mark.line,
            mark.column,
            f"{source}:{mark.line}" if source else None,
            doc,
            loc,
            marks or {},
        )
    )


def _check_ids(out: Rows, order: tuple[int, int]) -> Rows:
    seen: dict[str, RawRow] = {}
    for row in out.rows:
        first = seen.setdefault(row.id, row)
        if first is not row:
            out.problems.append(
                Problem(
                    row.where(),
                    f"{DUPLICATE_ID} '{row.id}' (row {first.position} at "
                    f"{first.where()} has it; ids default to the row's position)",
                    order,
                )
            )
    if any(p.message.startswith(DUPLICATE_ID) for p in out.problems):
        out.rows = []
    return out


def _csv_rows(
    out: Rows, text: str, path: Path, shown: str, source: str, order: tuple[int, int]
) -> None:
    """A header row, then one row per record; every value is a text."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    position = 0
    try:
        while True:
            start = reader.line_num + 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            if not cells:
                continue  # a blank line
            if header is None:
                header = cells
                for cell in cells:
                    if cells.count(cell) > 1:
                        out.problems.append(
                            Problem(Place(shown, start, 1), f"column '{cell}' appears twice", order)
                        )
                        return
                continue
            position += 1
            at = Place(shown, start, 1)
            if len(cells) != len(header):
                out.problems.append(
                    Problem(
                        at,
                        f"row {position} has {len(cells)} cells, the header has "
                        f"{len(header)} ({', '.join(header)})",
                        order,
                    )
                )
                continue
            item = dict(zip(header, cells, strict=True))
            marks = _cell_marks(text, start, header)
            _add_row(
                out, item, position, at, order, shown, Mark(start, 1),
                source=source, marks=marks, split_tags=True,
            )  # fmt: skip
    except csv.Error as exc:
        out.problems.append(Problem(Place(shown, reader.line_num, 1), f"invalid CSV: {exc}", order))


def _cell_marks(text: str, line: int, header: list[str]) -> dict[str, Mark]:
    """Where each cell of a one-line record starts (quoted or multi-line records: none)."""
    raw = text.split("\n", line)[line - 1] if line >= 1 else ""
    if '"' in raw:
        return {}
    marks, column = {}, 1
    for name, cell in zip(header, raw.split(","), strict=False):
        marks[name] = Mark(line, column)
        column += len(cell) + 1
    return marks


class _Keys:
    """A JSON decoder's `object_pairs_hook` that keeps each key's first value, as the YAML
    reader does, and notes every key an object gives twice (JSON's own reader keeps the last,
    silently: a row would run with a value its author did not see)."""

    def __init__(self) -> None:
        self.twice: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                self.twice.append(key)
            else:
                result[key] = value
        return result

    def report(self, out: Rows, at: Place, order: tuple[int, int]) -> None:
        """Each key noted since the last report, as a problem of the row at `at`."""
        for key in dict.fromkeys(self.twice):
            out.add(at, f"duplicate key '{key}': remove or rename one of them", order)
        self.twice.clear()


def _jsonl_rows(
    out: Rows, text: str, path: Path, shown: str, source: str, order: tuple[int, int]
) -> None:
    """One JSON mapping per line; blank lines are skipped."""
    position = 0
    keys = _Keys()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        position += 1
        at = Place(shown, number, 1)
        try:
            item = json.loads(line, object_pairs_hook=keys)
        except json.JSONDecodeError as exc:
            where = Place(shown, number, exc.colno)
            out.problems.append(Problem(where, f"invalid JSON: {exc.msg}", order))
            continue
        keys.report(out, at, order)
        _add_row(out, item, position, at, order, shown, Mark(number, 1), source=source)


def _json_rows(
    out: Rows, text: str, path: Path, shown: str, source: str, order: tuple[int, int]
) -> None:
    """A JSON list of mappings, each row's line read from where it starts."""
    keys = _Keys()
    decoder = json.JSONDecoder(object_pairs_hook=keys)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = Place(shown, exc.lineno, exc.colno)
        out.problems.append(Problem(where, f"invalid JSON: {exc.msg}", order))
        return
    if not isinstance(data, list):
        found = type(data).__name__
        out.add(Place(shown, 1, 1), f"{NOT_A_LIST}, found {found}", order)
        return
    index = text.index("[") + 1
    for position in range(1, len(data) + 1):
        while text[index] in " \t\n,":
            index += 1
        item, end = decoder.raw_decode(text, index)
        line = text.count("\n", 0, index) + 1
        column = index - (text.rfind("\n", 0, index) + 1) + 1
        at = Place(shown, line, column)
        keys.report(out, at, order)
        _add_row(out, item, position, at, order, shown, Mark(line, column), source=source)
        index = end


def _yaml_rows(
    out: Rows, text: str, path: Path, shown: str, source: str, order: tuple[int, int]
) -> None:
    """A YAML list of mappings."""
    try:
        doc = parse_yaml(text, path)
    except DuplicateKeys as exc:  # every one, and the rows' own problems
        doc = exc.doc
        for dup in doc.duplicates:
            out.add(Place(shown, dup.mark.line, dup.mark.column), dup.message, order)
    except SourceError as exc:
        out.problems.append(Problem(Place(shown, exc.mark.line, exc.mark.column), str(exc), order))
        return
    if not isinstance(doc.data, list):
        found = "nothing" if doc.data is None else type(doc.data).__name__
        if doc.data is None:
            return  # an empty file: no rows
        out.add(Place(shown, 1, 1), f"{NOT_A_LIST}, found {found}", order)
        return
    for index, item in enumerate(doc.data):
        mark = doc.value_mark((index,))
        at = Place(shown, mark.line, mark.column)
        _add_row(out, item, index + 1, at, order, shown, mark, doc, (index,), source)

"""Load contract files: parse, expand outlines, validate; collect every error with
`file:line:column`. The checks (`checks.py`), the expansion (`expansion.py`) and the
messages (`explain.py`) have their own modules; which scenarios run is the selection's
(`clawspec.selection.filters`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from clawspec.contracts.checks import check_semantics, may_hold_templates
from clawspec.contracts.discovery import display_path
from clawspec.contracts.expansion import expand, explain_entries
from clawspec.contracts.legacy import legacy_kind
from clawspec.contracts.models import Contract
from clawspec.contracts.outlines import ExampleRow
from clawspec.contracts.problems import Problem
from clawspec.contracts.reading import Parsed, parsed_here, read_contract
from clawspec.errors import ContractError
from clawspec.identity import contract_path
from clawspec.inputs.limits import DEFAULT_LIMITS, ContractLimits
from clawspec.inputs.source import DuplicateKeys, SourceDoc, parse_yaml


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

    def assertion_line(self, scenario: int, phase: str, index: int, turn: int | None = None) -> int:
        """The line of an assertion as written (a row's are its outline's); `turn`: an
        assertion of that turn's `then`."""
        written = self.written_index(scenario)
        if turn is not None:
            return self.doc.value_mark(("scenarios", written, "turns", turn, phase, index)).line
        return self.doc.value_mark(("scenarios", written, phase, index)).line

    def turn_line(self, scenario: int, turn: int) -> int:
        """The line of a conversation's turn as written (its `say`)."""
        written = self.written_index(scenario)
        return self.doc.value_mark(("scenarios", written, "turns", turn)).line


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
    outcomes: list[LoadedContract | list[Problem]] = [[] for _ in files]
    for index, result in parsed_here(files, limits) if parsed is None else parsed:
        outcomes[index] = load_contract(files[index], workspace, environ, result, limits)
    loaded = [outcome for outcome in outcomes if isinstance(outcome, LoadedContract)]
    errors = [p.text for outcome in outcomes if isinstance(outcome, list) for p in outcome]
    if errors:
        raise ContractError(errors)
    return loaded


def load_contract(
    path: Path,
    workspace: Path,
    environ: Mapping[str, str],
    parsed: Parsed | None = None,
    limits: ContractLimits = DEFAULT_LIMITS,
) -> LoadedContract | list[Problem]:
    """Load one contract file: the contract, or its problems in file order."""
    shown = display_path(path)
    key = contract_path(path, workspace)
    first = parsed if parsed is not None else read_contract(path, shown, limits)
    if isinstance(first, list):
        return first
    text, doc = first
    # Keys stated twice are reported together, and with the file's other problems (the data
    # holds each key's first value): one run of `validate` shows what to fix.
    duplicates = [
        Problem.at(shown, dup.mark.line, dup.mark.column, dup.message) for dup in doc.duplicates
    ]
    if not isinstance(doc.data, dict):
        found = "an empty file" if doc.data is None else type(doc.data).__name__
        message = (
            f"a contract must be a mapping with 'version', 'target' and 'scenarios'; found {found}"
        )
        return [Problem.at(shown, 1, 1, message), *duplicates]
    legacy = legacy_kind(doc.data)
    if legacy is not None:
        mark = _every_position(text, path, limits).key_mark((legacy[0],))
        message = (
            f"this looks like a legacy ClawSpec {legacy[1]} file ('{legacy[0]}' at the top, no "
            f"'scenarios'): run `clawspec migrate {shown}`"
        )
        return [Problem.at(shown, mark.line, mark.column, message), *duplicates]
    if not duplicates:
        valid = _validate(shown, doc, path, workspace, environ, text, limits)
        if not isinstance(valid, list):
            contract, entries = valid
            return LoadedContract(path, shown, contract, doc, key, entries)
    # every position, to point at each problem exactly
    doc = _every_position(text, path, limits)
    valid = _validate(shown, doc, path, workspace, environ, text, limits, duplicates)
    if isinstance(valid, list):
        return valid
    contract, entries = valid
    return LoadedContract(path, shown, contract, doc, key, entries)


def _every_position(text: str, path: Path, limits: ContractLimits) -> SourceDoc:
    """The document with the position of every key and value (its duplicates in it)."""
    try:
        return parse_yaml(text, path, alias_nodes=limits.alias_nodes)
    except DuplicateKeys as exc:
        return exc.doc


def _validate(
    shown: str,
    doc: SourceDoc,
    path: Path,
    workspace: Path,
    environ: Mapping[str, str],
    text: str,
    limits: ContractLimits,
    found: Sequence[Problem] = (),
) -> tuple[Contract, tuple[tuple[int, ExampleRow | None], ...] | None] | list[Problem]:
    """The validated contract (each outline row an entry of its own) and its entries
    (LoadedContract.entries), or every problem, `found` (problems already known) among them,
    in file order."""
    # The semantic checks run whether or not the structure is valid: every error, at once.
    problems = [*found, *check_semantics(shown, doc, workspace, environ, may_hold_templates(text))]
    # Outline errors may be in a data file: they sort where the outline is.
    expansion = expand(shown, doc, path, workspace, environ, limits.max_bytes)
    problems += expansion.problems
    try:
        contract = Contract.model_validate(expansion.data)
    except ValidationError as exc:
        problems += explain_entries(shown, doc, exc, expansion)
    if problems:
        # Deduplicated in the order found (each text where it first sorts), then sorted by
        # position; the sort is stable, so errors at one position keep that order (a set's
        # order changes with PYTHONHASHSEED).
        unique: dict[str, Problem] = {}
        for problem in problems:
            unique.setdefault(problem.text, problem)
        return sorted(unique.values(), key=lambda problem: problem.order)
    if expansion.entries is None:
        return contract, None
    lines = {i: doc.value_mark(("scenarios", i)).line for i, _ in expansion.entries}
    entries = tuple(
        (i, row.example(lines[i]) if row is not None else None) for i, row in expansion.entries
    )
    return contract, entries

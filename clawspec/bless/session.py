"""`clawspec bless`: read (or make) K attempts of a scenario, propose what held in every good
one, print it, and with `--write` append it to the contract."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawspec.bless.digest import scenario_digest
from clawspec.bless.invariants import Item, Observed, Proposal, Settings, propose
from clawspec.bless.write import Insert, flow
from clawspec.errors import ClawSpecError, ExitCode, UsageError
from clawspec.reports.model import RunReport, ScenarioResult
from clawspec.status import Status

MIN_RUNS = 2
TOO_FEW = (
    "nothing can be shown to hold in every run from fewer than 2 runs: give --runs 2 or more "
    "(5 by default)"
)


class NotEnoughGoodRuns(ClawSpecError):
    """Fewer than two good runs: nothing to propose."""

    exit_code = ExitCode.FAILED


@dataclass(frozen=True)
class Target:
    """The contract and scenario bless works on, as read at the start."""

    path: Path
    display: str
    identity_path: str  # the contract as reports name it
    original: bytes  # the file's bytes when read: --write refuses if they changed
    scenario: str
    digest: str | None
    conversation: bool
    turns: int
    row_vars: Mapping[str, Mapping[str, str]]  # an outline's inline rows: id -> vars


@dataclass
class Group:
    """The attempts of one row / variant of the scenario."""

    label: str  # "" for a plain scenario, "row easter", "variant haiku", ...
    runs: list[Observed] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    recordings: set[str | None] = field(default_factory=set)
    replayed: bool = False
    repeated: int = 0  # attempts given more than once (the same report twice): counted once

    @property
    def good(self) -> int:
        return sum(1 for r in self.runs if r.good)


def collect(target: Target, reports: Sequence[tuple[str, RunReport]]) -> list[Group]:
    """Every attempt of the scenario in the reports, by row and variant, each once (a report
    given twice, or two copies of it, do not make more runs); a report without per-attempt
    evidence or of another version of the scenario is refused. An outline's row no report has
    an attempt of is a group without runs: what holds across the rows cannot be known."""
    groups: dict[tuple[str | None, str | None], Group] = {}
    seen: set[tuple[Any, ...]] = set()
    for name, report in reports:
        results = [
            r
            for r in report.scenarios
            if r.contract == target.identity_path and (r.scenario or r.name) == target.scenario
        ]
        if not results:
            raise UsageError(
                f"{name} has no result of scenario '{target.scenario}' of {target.display}"
            )
        for result in results:
            _check(name, result, target)
            key = (result.example, result.variant)
            label = ", ".join(
                part
                for part in (
                    f"row {result.example}" if result.example is not None else "",
                    f"variant {result.variant}" if result.variant is not None else "",
                )
                if part
            )
            group = groups.setdefault(key, Group(label))
            vars_ = target.row_vars.get(result.example or "", {})
            assert result.attempts is not None  # _check
            if result.model_traffic is not None and result.model_traffic.mode == "replay":
                group.replayed = True
            for number, run in enumerate(result.attempts.runs, start=1):
                where = f"attempt {number} of {name}"
                # An attempt's identity: its own run id (unique per attempt), else its place
                # in its run (a report without attempt ids).
                identity = (
                    (result.id, result.variant, run.run_id, run.gateway_run_id)
                    if run.run_id is not None
                    else (report.run_id, report.started_at, result.id, result.variant, number)
                )
                if identity in seen:
                    group.repeated += 1
                    continue
                seen.add(identity)
                group.recordings.add(run.recording)
                observed = Observed(where, run.status, run.duration_ms, run.evidence, vars_)
                group.runs.append(observed)
                if run.status not in (Status.PASS, Status.WARN):
                    why = f": {run.message}" if run.message else ""
                    group.left_out.append(f"{where} ({run.status.value}{why})")
    rows_seen = {example for example, _ in groups}
    if rows_seen != {None}:
        for row in target.row_vars:
            if row not in rows_seen:
                groups[(row, None)] = Group(f"row {row}")
    return list(groups.values())


def _check(name: str, result: ScenarioResult, target: Target) -> None:
    if result.contract_digest is None:
        raise UsageError(
            f"{name} was written without the contract's digest (by an older ClawSpec): run the "
            "scenario again with repeat, or let bless run it (--runs)"
        )
    if target.digest is not None and result.contract_digest != target.digest:
        raise UsageError(
            f"{name} is of another version of scenario '{target.scenario}' (its definition "
            "changed since that run: contract digest differs); run it again"
        )
    runs = result.attempts.runs if result.attempts is not None else []
    # An attempt that never got to run the agent (a failed precondition) has none: it is left
    # out like any bad run; a good one without it cannot be read.
    good = [run for run in runs if run.status in (Status.PASS, Status.WARN)]
    if not runs or any(run.evidence is None for run in good):
        # A scenario run once keeps no per-attempt evidence; neither did older versions.
        raise UsageError(
            f"{name}: '{result.name}' has no per-attempt evidence (it ran once, or was written "
            "by an older ClawSpec): run it with --repeat 2 or more, or let bless run it (--runs)"
        )


Done = list[tuple[Group, list[Proposal] | None]]


def proposals_of(groups: Sequence[Group], settings: Settings) -> Done:
    """Each group with its proposals (None: fewer than 2 good runs); NotEnoughGoodRuns when
    no group has 2."""
    done: Done = []
    for group in groups:
        if group.replayed and len(group.recordings) < 2:
            raise UsageError(
                f"{_named(group)}every attempt replayed one recording: they are one run, not "
                f"{len(group.runs)}; record one per attempt first (clawspec run --model-traffic "
                "record --repeat K keeps one recording per attempt). " + TOO_FEW
            )
        enough = group.good >= MIN_RUNS
        done.append((group, propose(group.runs, settings) if enough else None))
    if all(proposals is None for _, proposals in done):
        raise NotEnoughGoodRuns(
            "fewer than 2 good runs (pass or warn) to propose from (" + _counts(groups)
        )
    return done


def too_few(done: Done, write: bool) -> NotEnoughGoodRuns | None:
    """The error to end with when some row or variant has fewer than 2 good runs (its
    proposal, and so what holds across all of them, cannot be known): nothing is written."""
    short = [group for group, proposals in done if proposals is None]
    if not short:
        return None
    written = "nothing was written; " if write else ""
    return NotEnoughGoodRuns(
        "fewer than 2 good runs (pass or warn) of every row and variant ("
        + _counts(short)
        + f"; what holds across all of them cannot be known: {written}give each row and "
        "variant 2 good runs or more"
    )


def _counts(groups: Sequence[Group]) -> str:
    """`N good of M` per group, and then the first attempts left out (after the parenthesis
    the caller closes)."""
    shown = "; ".join(
        f"{_named(g)}{g.good} good of {len(g.runs)}"
        if g.runs
        else f"{_named(g)}no attempt in the reports"
        for g in groups
    )
    left = [line for g in groups for line in g.left_out]
    more = f"); left out: {'; '.join(left[:5])}" if left else ")"
    return one_line(shown + more)


def _named(group: Group) -> str:
    return f"{group.label}: " if group.label else ""


_BREAKS = {"\n": "\\n", "\r": "\\r", "\x85": "\\x85", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line(text: str) -> str:
    """`text` on one line of a YAML comment: its line breaks, and the characters YAML does not
    allow in a file, written as escapes."""
    return "".join(_one_char(char) for char in text)


def _one_char(char: str) -> str:
    if char in _BREAKS:
        return _BREAKS[char]
    code = ord(char)
    if (code < 0x20 and char != "\t") or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
        return f"\\u{code:04x}"
    return char


def pooled(groups: Sequence[Group], settings: Settings) -> list[Proposal]:
    """What holds across every selected row and variant: the proposal over all their good runs
    together (each row's values were already written as its variables)."""
    return propose([r for g in groups for r in g.runs], settings)


# -- printing -------------------------------------------------------------------------------


def render(
    target: Target,
    done: Done,
    write_set: Sequence[Proposal] | None,
    sources: str,
    existing: Callable[[int | None], list[dict[str, Any]]],
) -> list[str]:
    """The proposal as YAML blocks with a comment per item (every comment on one line)."""
    out = [f"# clawspec bless: {target.display}, scenario '{target.scenario}'"]
    out.append(f"# attempts from {sources}")
    for group, proposals in done:
        header = f"{group.label}: " if group.label else ""
        if not group.runs:
            out.append(f"# {header}no attempt in the reports: nothing proposed")
            continue
        short = "" if proposals is not None else ": fewer than 2, nothing proposed"
        out.append(f"# {header}{group.good} good runs of {len(group.runs)} (pass or warn){short}")
        if group.repeated:
            out.append(
                f"#   {group.repeated} attempt(s) given more than once (the same report twice) "
                "counted once"
            )
        for line in group.left_out:
            out.append(f"#   left out: {line}")
        for proposal in proposals or ():
            out += _block(proposal, existing)
    short = [group for group, proposals in done if proposals is None]
    if short:
        out.append("")
        out.append(
            "# nothing across every row and variant (nothing is written): "
            + "; ".join(g.label for g in short)
            + " without 2 good runs"
        )
    elif write_set is not None:
        out.append("")
        out.append("# across every row and variant above (what --write writes):")
        for proposal in write_set:
            out += _block(proposal, existing)
    return [line if not line.startswith("#") else "#" + one_line(line[1:]) for line in out]


def _block(proposal: Proposal, existing: Callable[[int | None], list[dict[str, Any]]]) -> list[str]:
    where = "the scenario's then" if proposal.turn is None else f"turn {proposal.turn + 1}'s then"
    lines = ["", f"# {where}:", "then:"]
    present = existing(proposal.turn)
    for item in proposal.items:
        note = _presence(item, present)
        lines.append(f"  - {flow(item.mapping)}  # {one_line(item.comment)}{note}")
    if not proposal.items:
        lines.append("  []  # nothing held in every run")
    if proposal.unstable:
        lines.append("# not held in every run (not proposed):")
        for item in proposal.unstable:
            lines.append(f"#   - {flow(item.mapping)}  # {item.comment}")
    if proposal.left_out:
        lines.append("# held, but cannot be written as it was seen (not proposed):")
        for item in proposal.left_out:
            lines.append(f"#   - {flow(item.mapping)}  # {item.comment}")
    if proposal.over_limit:
        lines.append("# held in every run, but over a limit (not proposed):")
        for item in proposal.over_limit:
            lines.append(f"#   - {flow(item.mapping)}  # {item.comment}")
    for what, count in proposal.unlisted.items():
        lines.append(f"# ... and {count} more {what}, not listed")
    return lines


# -- what is already there --------------------------------------------------------------------

# One per scope: a second would only restate the first with another limit.
_SINGLE = ("token_budget", "tool_not_permitted", "run_completed", "trace_duration")
# The field that makes two items of a type the same check.
_IDENTITY = {
    "tool_was_called": "tool",
    "delegation_occurred": "to_agent",
    "artifact_exists": "path",
}


def _presence(item: Item, present: Sequence[dict[str, Any]]) -> str:
    """The note after a proposed item the contract already has: the same, or its own value
    (a `token_budget` or `tool_not_permitted` the contract states otherwise is kept, never
    replaced, and must not read as if it agreed)."""
    if not _present(item, present):
        return ""
    same = any(item.mapping == other for other in present)
    if same or item.mapping.get("type") not in _SINGLE:
        return "  (already in the contract)"
    theirs = next(o for o in present if o.get("type") == item.mapping.get("type"))
    return f"  (the contract has its own, kept: {flow(theirs)})"


def _present(item: Item, present: Sequence[dict[str, Any]]) -> bool:
    kind = item.mapping.get("type")
    for other in present:
        if other.get("type") != kind:
            continue
        if kind in _SINGLE:
            return True
        field_name = _IDENTITY.get(str(kind))
        if field_name is not None and other.get(field_name) == item.mapping.get(field_name):
            return True
        if (
            kind == "reply_contains"
            and str(other.get("text", "")).casefold()
            == str(item.mapping.get("text", "")).casefold()
        ):
            return True
        if other == item.mapping:
            return True
    return False


def inserts(
    proposals: Sequence[Proposal], existing: Callable[[int | None], list[dict[str, Any]]]
) -> list[Insert]:
    """The items not already present, per scope."""
    found = []
    for proposal in proposals:
        present = existing(proposal.turn)
        lines = [(i.mapping, i.comment) for i in proposal.items if not _present(i, present)]
        found.append(Insert(proposal.turn, lines))
    return found


def read_reports(files: Sequence[str]) -> list[tuple[str, RunReport]]:
    """The JSON reports, each validated against the report model; a file named twice (as
    the same path or another path to it) is read once."""
    read: list[tuple[str, RunReport]] = []
    paths: dict[Path, str] = {}
    for name in files:
        path = Path(name)
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            resolved = path.absolute()
        if resolved in paths:
            say(f"note: --from-report {name} is {paths[resolved]} again: read once")
            continue
        paths[resolved] = name
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"--from-report {name}: {exc.strerror or exc}") from None
        try:
            read.append((name, RunReport.model_validate_json(data)))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            said = f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
            raise UsageError(
                f"--from-report {name} is not a JSON report of this ClawSpec version ({said})"
            ) from None
    return read


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def digest_of(data: Any, written_index: int, folder: Path | None = None) -> str | None:
    return scenario_digest(data, written_index, folder)

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


def collect(target: Target, reports: Sequence[tuple[str, RunReport]]) -> list[Group]:
    """Every attempt of the scenario in the reports, by row and variant; a report without
    per-attempt evidence or of another version of the scenario is refused."""
    groups: dict[tuple[str | None, str | None], Group] = {}
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
                group.recordings.add(run.recording)
                observed = Observed(where, run.status, run.duration_ms, run.evidence, vars_)
                group.runs.append(observed)
                if run.status not in (Status.PASS, Status.WARN):
                    why = f": {run.message}" if run.message else ""
                    group.left_out.append(f"{where} ({run.status.value}{why})")
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


def proposals_of(groups: Sequence[Group], settings: Settings) -> list[tuple[Group, list[Proposal]]]:
    """Each group with enough good runs and its proposals; NotEnoughGoodRuns when none has."""
    done: list[tuple[Group, list[Proposal]]] = []
    for group in groups:
        if group.replayed and len(group.recordings) < 2:
            raise UsageError(
                f"{_named(group)}every attempt replayed one recording: they are one run, not "
                f"{len(group.runs)}; record one per attempt first (clawspec run --model-traffic "
                "record --repeat K keeps one recording per attempt). " + TOO_FEW
            )
        good = [r for r in group.runs if r.good]
        if len(good) >= MIN_RUNS:
            done.append((group, propose(group.runs, settings)))
    if not done:
        shown = "; ".join(
            f"{_named(g)}{sum(1 for r in g.runs if r.good)} good of {len(g.runs)}" for g in groups
        )
        left = [line for g in groups for line in g.left_out]
        more = f"; left out: {'; '.join(left[:5])}" if left else ""
        raise NotEnoughGoodRuns(
            f"fewer than 2 good runs (pass or warn) to propose from ({shown}){more}"
        )
    return done


def _named(group: Group) -> str:
    return f"{group.label}: " if group.label else ""


def pooled(groups: Sequence[Group], settings: Settings) -> list[Proposal]:
    """What holds across every selected row and variant: the proposal over all their good runs
    together (each row's values were already written as its variables)."""
    return propose([r for g in groups for r in g.runs], settings)


# -- printing -------------------------------------------------------------------------------


def render(
    target: Target,
    done: Sequence[tuple[Group, list[Proposal]]],
    write_set: Sequence[Proposal] | None,
    sources: str,
    existing: Callable[[int | None], list[dict[str, Any]]],
) -> list[str]:
    """The proposal as YAML blocks with a comment per item."""
    out = [f"# clawspec bless: {target.display}, scenario '{target.scenario}'"]
    out.append(f"# attempts from {sources}")
    for group, proposals in done:
        good = sum(1 for r in group.runs if r.good)
        header = f"{group.label}: " if group.label else ""
        out.append(f"# {header}{good} good runs of {len(group.runs)} (pass or warn)")
        for line in group.left_out:
            out.append(f"#   left out: {line}")
        for proposal in proposals:
            out += _block(proposal, existing)
    if write_set is not None:
        out.append("")
        out.append("# across every row and variant above (what --write writes):")
        for proposal in write_set:
            out += _block(proposal, existing)
    return out


def _block(proposal: Proposal, existing: Callable[[int | None], list[dict[str, Any]]]) -> list[str]:
    where = "the scenario's then" if proposal.turn is None else f"turn {proposal.turn + 1}'s then"
    lines = ["", f"# {where}:", "then:"]
    present = existing(proposal.turn)
    for item in proposal.items:
        note = "  (already in the contract)" if _present(item, present) else ""
        lines.append(f"  - {flow(item.mapping)}  # {item.comment}{note}")
    if not proposal.items:
        lines.append("  []  # nothing held in every run")
    if proposal.unstable:
        lines.append("# held in only some runs (not proposed):")
        for item in proposal.unstable:
            lines.append(f"#   - {flow(item.mapping)}  # {item.comment}")
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
    """The JSON reports, each validated against the report model."""
    read: list[tuple[str, RunReport]] = []
    for name in files:
        path = Path(name)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"--from-report {name}: {exc.strerror or exc}") from None
        try:
            read.append((name, RunReport.model_validate_json(data)))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise UsageError(
                f"--from-report {name} is not a JSON report of this ClawSpec version "
                f"({where}: {first.get('msg')})"
            ) from None
    return read


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def digest_of(data: Any, written_index: int) -> str | None:
    return scenario_digest(data, written_index)

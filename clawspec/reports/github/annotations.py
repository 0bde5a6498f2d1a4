"""Annotations: one workflow command per failed, errored or warned assertion.

`select_annotations` is pure: it turns the report into annotations within GitHub's per-step
limits (the runner keeps only the first 10 errors, 10 warnings and 10 notices of a step) and
ends with one notice saying how many more are in the job summary. Files are given relative to
the repository root (`$GITHUB_WORKSPACE`), which is what the runner needs to place them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from clawspec.ci_context import CIContext, ci_system
from clawspec.reports.github.commands import Annotation, GitHubRunner
from clawspec.reports.model import RunReport, ScenarioResult, TurnResult
from clawspec.reports.turns import check_label, failing_turn, shown, turn_label
from clawspec.status import PASSING, Status
from clawspec.text import FileWarning, one_line, pluralize

DEFAULT_LIMITS: Mapping[str, int] = {"error": 10, "warning": 10, "notice": 10}
_LEVEL = {Status.FAIL: "error", Status.ERROR: "error", Status.WARN: "warning"}
_SAID_CHARS = 300  # a failing turn's reply in its annotation: enough to recognise it


@dataclass(frozen=True)
class Selection:
    """The annotations to write and how many were left out per level."""

    annotations: list[Annotation]
    omitted: dict[str, int]

    @property
    def omitted_total(self) -> int:
        return sum(self.omitted.values())


def repo_relative(contract: str, repo_root: str | Path | None, base: Path | None = None) -> str:
    """Return the contract path relative to the repository root, with '/' separators.

    `contract` is the path as the report has it: relative to `base` (a report's contract paths
    are relative to the workspace root; None: the current folder), or absolute.
    A path outside the repository is returned as written: GitHub then shows the annotation on the
    run without a file, which is better than pointing at a wrong file.
    """
    path = Path(contract)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if repo_root:
        try:
            return (
                Path(os.path.normpath(path))
                .relative_to(Path(os.path.normpath(Path(repo_root).resolve())))
                .as_posix()
            )
        except ValueError:
            try:
                return path.resolve().relative_to(Path(repo_root).resolve()).as_posix()
            except ValueError:
                pass
    return Path(contract).as_posix()


def candidate_annotations(
    report: RunReport, repo_root: str | Path | None = None, workspace: Path | None = None
) -> list[Annotation]:
    """Return every annotation the report calls for, in contract order. `workspace`: the
    workspace root the report's contract paths are relative to (None: the current folder)."""
    found: list[Annotation] = []
    if report.merged is not None and report.merged.missing:
        found.append(
            Annotation(
                "error",
                f"{report.merged.missing_message()}: the merged report is incomplete",
                "ClawSpec: shard report missing",
            )
        )
    for scenario, regressed, flaky, advisory in failure_roles(report):
        file = repo_relative(scenario.identity.contract, repo_root, workspace)
        found.extend(_of_scenario(scenario, file, regressed, flaky, advisory))
    return found


def assertion_line(scenario: ScenarioResult, line: int) -> int:
    """Where a finding about one of the scenario's assertions is placed: an outline's row is
    placed on its row (the assertion's line is shared by every row; the row says which case
    failed), any other scenario on the assertion's line."""
    if scenario.example is not None or not line:
        return scenario.line
    return line


def failure_roles(report: RunReport) -> Iterator[tuple[ScenarioResult, bool, bool, bool]]:
    """Each scenario with whether it regressed against the baseline, whether its failures
    count as flaky, and whether it ran on an advisory variant (`required: false`). A flaky
    scenario's failures are warnings (the next attempt may pass) unless they fail the run: it
    regressed, or its pass rate is below min_pass_rate uncompared. An advisory variant's
    failures are warnings too: they never fail the job. Annotations and the GitLab Code
    Quality findings rank failures by the same rule."""
    comparison = report.comparison
    compared = comparison is not None and comparison.baseline_missing is None
    changes = {c.key: c.change for c in comparison.scenarios} if comparison else {}
    advisory = {v.name for v in report.variants if not v.required}
    for scenario in report.scenarios:
        soft = scenario.variant in advisory
        regressed = not soft and changes.get(scenario.identity.key) == "regressed"
        flaky = scenario.flaky and not regressed and (compared or scenario.status in PASSING)
        yield scenario, regressed, flaky, soft


def _of_scenario(
    scenario: ScenarioResult, file: str, regressed: bool, flaky: bool, advisory: bool = False
) -> Iterable[Annotation]:
    identity = scenario.identity
    name = identity.name_label
    where = f"scenario '{name}' ({identity.contract}:{scenario.line})"
    label = "REGRESSED" if regressed else "FLAKY" if flaky else "ADVISORY" if advisory else None
    if advisory:
        where += f"; variant '{identity.variant}' is advisory: it never fails the job"
    if scenario.flaky and scenario.attempts is not None:
        where += f"; flaky: {scenario.attempts.describe()}"
    flagged = False
    turns = {t.index: t for t in scenario.turns or ()}
    for result in scenario.checks():  # a conversation's turns' checks too, each at its line
        level = _LEVEL.get(result.status)
        if level is None:
            continue
        if (flaky or advisory) and level == "error":
            level = "warning"
        flagged = flagged or level == "error" or flaky or advisory
        title = f"ClawSpec {label or result.status.upper()}: {name} / {result.type}"
        line = assertion_line(scenario, result.line)
        at = f" (line {result.line})" if line != result.line and result.line else ""
        said = ""
        if result.turn is None:
            head = f"{result.phase}[{result.index}]{at} {result.type}"
        else:
            head = f"{check_label(result)}{at} ({result.type})"
            if result.turn in turns:
                said = _turn_said(turns[result.turn])
        yield Annotation(level, f"{head}: {result.message}{said}\n{where}", title, file, line)
    if flaky and not flagged:
        yield Annotation(
            "warning",
            f"{scenario.message or 'some attempts failed'}\n{where}",
            f"ClawSpec FLAKY: {name}",
            file,
            scenario.line,
        )
        return
    if scenario.status in (Status.FAIL, Status.ERROR) and not flagged:
        # No assertion says why (the invocation failed, or a precondition stopped it): point at
        # the scenario itself so the failure is still visible on the file; a conversation
        # stopped by a turn (no reply) at that turn.
        turn = failing_turn(scenario)
        at_turn = turn is not None and turn.status in (Status.FAIL, Status.ERROR)
        said = _turn_said(turn) if at_turn and turn is not None else ""
        yield Annotation(
            "warning" if advisory else "error",
            f"{scenario.message or scenario.status.upper()}{said}\n{where}",
            f"ClawSpec {label or scenario.status.upper()}: {name}",
            file,
            assertion_line(scenario, turn.line) if at_turn and turn is not None else scenario.line,
        )
    elif scenario.status == Status.SKIP:
        yield Annotation(
            "notice",
            f"skipped: {scenario.message or 'no assertion could be evaluated'}\n{where}",
            f"ClawSpec SKIP: {name}",
            file,
            scenario.line,
        )


def _turn_said(turn: TurnResult) -> str:
    """A failing turn's reply, short, on its own line of the annotation's message (the
    runner's escaping keeps a reply's `%`, CR and LF from ending the command)."""
    if turn.reply is None:
        return f"\n{turn_label(turn.index)}: no reply"
    return f"\n{turn_label(turn.index)} replied: {one_line(shown(turn.reply), _SAID_CHARS)}"


def select_annotations(
    report: RunReport,
    limits: Mapping[str, int] = DEFAULT_LIMITS,
    repo_root: str | Path | None = None,
    workspace: Path | None = None,
) -> Selection:
    """Keep the first annotations of each level within `limits`; add one closing notice.

    The closing notice needs a notice slot of its own, so when anything is cut the notices are
    limited to one less than their limit.
    """
    return cap_annotations(candidate_annotations(report, repo_root, workspace), limits)


def cap_annotations(
    candidates: list[Annotation],
    limits: Mapping[str, int] = DEFAULT_LIMITS,
    where: str = (
        "All results are in the JSON and JUnit reports (the job summary lists as many as its "
        "size limit allows)."
    ),
) -> Selection:
    """Keep the first `candidates` of each level within `limits`, plus one closing notice
    saying how many were cut and `where` the rest can be read (also used by `clawspec lint`)."""
    counts = {level: 0 for level in limits}
    for item in candidates:
        counts[item.level] = counts.get(item.level, 0) + 1
    overflow = any(counts[level] > limits.get(level, 0) for level in counts)
    room = dict(limits)
    if overflow or counts.get("notice", 0) > room.get("notice", 0):
        room["notice"] = max(0, room.get("notice", 0) - 1)
    kept: list[Annotation] = []
    used = {level: 0 for level in counts}
    omitted = {level: 0 for level in counts}
    for item in candidates:
        if used[item.level] < room.get(item.level, 0):
            used[item.level] += 1
            kept.append(item)
        else:
            omitted[item.level] += 1
    omitted = {level: n for level, n in omitted.items() if n}
    if omitted:
        parts = [
            pluralize(omitted[level], level)
            for level in ("error", "warning", "notice")
            if omitted.get(level)
        ]
        kept.append(
            Annotation(
                "notice",
                f"{pluralize(sum(omitted.values()), 'more annotation')} not shown "
                f"({', '.join(parts)}): GitHub keeps only "
                f"{limits.get('error', 0)} errors, {limits.get('warning', 0)} warnings and "
                f"{limits.get('notice', 0)} notices per step. {where}",
                "ClawSpec: more results in the job summary",
            )
        )
    return Selection(kept, omitted)


def write_annotations(
    runner: GitHubRunner,
    report: RunReport,
    limits: Mapping[str, int] = DEFAULT_LIMITS,
    workspace: Path | None = None,
) -> Selection:
    """Select and write the annotations; return the selection."""
    selection = select_annotations(report, limits, runner.context.github.workspace, workspace)
    for annotation in selection.annotations:
        runner.annotate(annotation)
    return selection


def warn_on_github(
    message: str,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """On GitHub Actions, a warning about files (`FileWarning`, e.g. a contract no scenario
    pattern matches) as one `::warning file=…::` annotation per file, which the runner shows on
    the file, in the log and on the run's page; True when written. Elsewhere (GitLab CI,
    Jenkins, a terminal) the caller prints its plain `warning:` line: those read the log."""
    environ = os.environ if environ is None else environ
    if not isinstance(message, FileWarning) or ci_system(environ) != "github":
        return False
    context = CIContext.from_environ(environ)
    runner = GitHubRunner(context, stream)
    for path, text in message.files:
        file = repo_relative(path, context.repository_root)
        runner.annotate(Annotation("warning", text, title="ClawSpec: not loaded", file=file))
    return True


# A contract error as the loader words it: `path:line:column: what is wrong`.
_AT = re.compile(r"^(?P<path>[^\n]+?):(?P<line>\d+):(?P<col>\d+): (?P<text>.+)$", re.DOTALL)


def contract_errors_on_github(
    messages: Iterable[str],
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """On GitHub Actions, the contract errors that stopped the run as `::error` annotations on
    their lines (the first ones GitHub keeps: DEFAULT_LIMITS), so a pull request that breaks a
    contract shows where, as a failing assertion would. Elsewhere nothing: the log has them."""
    environ = os.environ if environ is None else environ
    if ci_system(environ) != "github":
        return
    context = CIContext.from_environ(environ)
    runner = GitHubRunner(context, stream)
    for message in list(messages)[: DEFAULT_LIMITS["error"]]:
        found = _AT.match(message)
        if found is None:
            continue
        file = repo_relative(found["path"], context.repository_root)
        annotation = Annotation(
            "error",
            found["text"],
            "ClawSpec: contract error",
            file,
            int(found["line"]),
            int(found["col"]),
        )
        runner.annotate(annotation)

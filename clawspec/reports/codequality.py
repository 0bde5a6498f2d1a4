"""GitLab Code Quality report: one finding per assertion that did not pass.

GitLab reads `artifacts: reports: codequality: FILE`: a JSON array of findings, each with
`description`, `check_name`, `fingerprint`, `severity` (info, minor, major, critical, blocker),
`location.path` (relative to the repository root) and `location.lines.begin`. The merge request
widget compares the fingerprints with the target branch's pipeline: a fingerprint only in the
merge request is "new", one only in the target branch "fixed". So a fingerprint names *which*
check it is, never what it said (messages carry run ids and measured numbers that change on
every run): the scenario's identity (`clawspec.identity`: the contract's repository-relative
path, the identity name, the variant when there is one), then phase, index and type, and a
conversation's turn for a turn's check. It does not depend on the folder ClawSpec ran from.

Severity follows what the finding means for the run: an assertion that regressed against the
baseline is `blocker`, `error` is `critical`, `fail` is `major`, a failure of a flaky scenario
(as the annotations treat it: it does not fail the run by itself) is `minor`, a warning `info`.
Skipped scenarios are not findings. A scenario that failed or errored without a failing assertion
(the invocation failed) is one finding at the scenario's line, `clawspec/scenario`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawspec.ci_context import CIContext
from clawspec.reports.atomic import write_atomic
from clawspec.reports.github.annotations import assertion_line, failure_roles, repo_relative
from clawspec.reports.model import RunReport, ScenarioResult
from clawspec.reports.turns import check_label, failing_turn
from clawspec.status import Status
from clawspec.text import cleaner, one_line

SEVERITIES = ("info", "minor", "major", "critical", "blocker")
_BY_STATUS = {Status.WARN: "info", Status.FAIL: "major", Status.ERROR: "critical"}
_DESCRIPTION_LIMIT = 1000
_FAILING = (Status.FAIL, Status.ERROR)


def fingerprint(
    path: str,
    scenario: str,
    phase: str,
    index: int | str,
    kind: str,
    variant: str | None = None,
    turn: int | None = None,
) -> str:
    """Return the sha256 hex of what identifies a check across runs (never its message).
    Without a variant and a turn the key is the one fingerprints always had: findings of
    existing scenarios keep their fingerprints. A conversation's turn (0-based) is part of
    its checks' key: turn 1's then[0] and turn 2's then[0] are two findings."""
    parts: list[Any] = [path, scenario, phase, index, kind]
    if variant is not None:
        parts.append({"variant": variant})
    if turn is not None:
        parts.append({"turn": turn})
    key = json.dumps(parts)  # ASCII: any name hashes
    return hashlib.sha256(key.encode("ascii")).hexdigest()


def _severity(status: Status, regressed: bool, flaky: bool, advisory: bool = False) -> str:
    if status in _FAILING and regressed:
        return "blocker"
    if status in _FAILING and (flaky or advisory):
        return "minor"
    return _BY_STATUS[status]


def _printable(text: str) -> str:
    """Replace lone surrogates (UTF-8 cannot hold them) with U+FFFD; keep proper pairs."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _finding(
    description: str, check: str, key: dict[str, Any], severity: str, path: str, line: int
) -> dict[str, Any]:
    return {
        "description": description,
        "check_name": check,
        "fingerprint": fingerprint(**key),
        "severity": severity,
        "location": {"path": path, "lines": {"begin": line if line > 0 else 1}},
    }


def _of_scenario(
    scenario: ScenarioResult, path: str, regressed: bool, flaky: bool, advisory: bool = False
) -> Iterator[tuple[str, str, dict[str, Any], str, str, int]]:
    """(description, check_name, fingerprint key, severity, path, line) per finding."""
    identity = scenario.identity
    name = identity.name_label
    scenario_key = {"path": path, "scenario": identity.name, "variant": identity.variant}
    label = " [regressed against the baseline]" if regressed else ""
    if flaky:
        rate = scenario.attempts.describe() if scenario.attempts else "some attempts failed"
        label = f" [flaky: {rate}]"
    if advisory:
        label += f" [advisory variant '{identity.variant}': never fails the job]"
    failing = False
    for a in scenario.checks():  # a conversation's turns' checks too
        if a.status not in _BY_STATUS:
            continue
        failing = failing or a.status in _FAILING
        turn = {} if a.turn is None else {"turn": a.turn}
        yield (
            f"{name}: {check_label(a)} {a.message}{label}",
            f"clawspec/{a.type}",
            {**scenario_key, "phase": a.phase, "index": a.index, "kind": a.type, **turn},
            _severity(a.status, regressed, flaky, advisory),
            path,
            assertion_line(scenario, a.line),
        )
    if failing:
        return
    status = scenario.status
    if status in _FAILING or flaky:
        # No assertion says why (the invocation failed, a precondition stopped it, a turn got
        # no reply, or only other attempts failed): the scenario itself is the finding, at
        # the turn that stopped a conversation.
        message = scenario.message or ("some attempts failed" if flaky else status.upper())
        stopped = failing_turn(scenario)
        at_turn = stopped is not None and stopped.status in _FAILING
        yield (
            f"{name}: {message}{label}",
            "clawspec/scenario",
            {**scenario_key, "phase": "scenario", "index": "", "kind": "scenario"},
            _severity(status if status in _FAILING else Status.FAIL, regressed, flaky, advisory),
            path,
            assertion_line(scenario, stopped.line) if at_turn and stopped else scenario.line,
        )


def findings(
    report: RunReport,
    repo_root: str | Path | None = None,
    workspace: Path | None = None,
) -> list[dict[str, Any]]:
    """Return the report's findings in report order, texts cleaned and masked, then cut.
    `workspace`: the workspace root the report's contract paths are relative to (None: the
    current folder)."""
    clean = cleaner()
    found: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for scenario, regressed, flaky, advisory in failure_roles(report):
        path = repo_relative(scenario.identity.contract, repo_root, workspace)
        for text, check, key, severity, file, line in _of_scenario(
            scenario, path, regressed, flaky, advisory
        ):
            description = _printable(one_line(clean(text), _DESCRIPTION_LIMIT))
            shown = [_printable(clean(value)) for value in (check, file)]
            item = _finding(description, shown[0], key, severity, shown[1], line)
            # Fingerprints must be unique in a file; the same key twice (two scenarios of one
            # name in one contract) gets its occurrence number, still stable between runs.
            count = seen.get(item["fingerprint"], 0)
            seen[item["fingerprint"]] = count + 1
            if count:
                item["fingerprint"] = fingerprint(**{**key, "kind": f"{key['kind']}#{count + 1}"})
            found.append(item)
    return found + _missing_shards(report, repo_root, workspace)


def _missing_shards(
    report: RunReport, repo_root: str | Path | None, workspace: Path | None
) -> list[dict[str, Any]]:
    """One finding per shard a merge lacks, on the first contract merged (GitLab needs a file):
    the merge request shows the report is incomplete, not only fewer findings."""
    merged = report.merged
    if merged is None or not merged.missing or not report.scenarios:
        return []
    path = repo_relative(report.scenarios[0].identity.contract, repo_root, workspace)
    message = f"{merged.missing_message()}: the merged report is incomplete"
    return [
        _finding(
            _printable(one_line(cleaner()(message), _DESCRIPTION_LIMIT)),
            "clawspec/merge",
            {"path": "", "scenario": "", "phase": "merge", "index": index, "kind": "shard"},
            "critical",
            _printable(path),
            1,
        )
        for index in merged.missing
    ]


def render_codequality(
    report: RunReport,
    repo_root: str | Path | None = None,
    workspace: Path | None = None,
) -> bytes:
    """Render the report as a GitLab Code Quality report (a JSON array, UTF-8)."""
    text = json.dumps(findings(report, repo_root, workspace), indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def repository_root(context: CIContext, cwd: Path | None = None) -> Path | None:
    """The repository root: GitLab's `CI_PROJECT_DIR`, GitHub's `GITHUB_WORKSPACE` (the
    context's `repository_root`), else the nearest folder above `cwd` holding `.git` (Jenkins,
    local runs); None when there is none."""
    if context.repository_root:
        return Path(context.repository_root)
    here = Path(os.path.abspath(cwd or Path.cwd()))
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def write_codequality(
    report: RunReport,
    path: Path,
    repo_root: str | Path | None = None,
    workspace: Path | None = None,
) -> Path:
    """Write the Code Quality report atomically; return its path."""
    return write_atomic(path, render_codequality(report, repo_root, workspace))

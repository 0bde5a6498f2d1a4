"""Golden files: fixed reports rendered to every output ClawSpec writes, compared byte for byte.

Each report below (`REPORTS`) is rendered by the pure render function of every output
(`OUTPUTS`) with fixed arguments (repository root, working folder, PR comment marker) and one
registered secret: nothing comes from the clock, the environment or the machine. The expected
bytes are the files in `tests/reports/golden/<report>/<output>`.

After an intended change of an output (or of report.css/report.js, which the HTML embeds),
regenerate the files and review the diff before committing it:

    .venv/bin/python -m tests.reports.test_golden
    git diff tests/reports/golden/
"""

from __future__ import annotations

import difflib
import io
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from clawspec import secrets as registry
from clawspec.ci_context import CIContext
from clawspec.reports.codequality import render_codequality
from clawspec.reports.github.annotations import write_annotations
from clawspec.reports.github.check_run import check_annotations, render_output
from clawspec.reports.github.commands import GitHubRunner
from clawspec.reports.github.outputs import write_outputs
from clawspec.reports.github.pr_comment import render_pr_comment
from clawspec.reports.github.summary import render_summary
from clawspec.reports.html import render_html
from clawspec.reports.json_report import render_json, schema_path
from clawspec.reports.junit import render_junit
from clawspec.reports.model import (
    AttemptRun,
    AttemptStats,
    BaselineRef,
    Comparison,
    MergeInfo,
    ModelTrafficResult,
    RunReport,
    RunSource,
    ScenarioChange,
    ScenarioEvidence,
    ScenarioResult,
    TokenTotals,
    ToolCallRecord,
    Totals,
    TraceRef,
)
from clawspec.reports.outcome import Policy, decide
from clawspec.reports.terminal import TerminalReporter
from clawspec.status import Status
from tests.reports.factory import assertion
from tests.reports.rich_report import rich_report

GOLDEN = Path(__file__).resolve().parent / "golden"
REGENERATE = "python -m tests.reports.test_golden"
# A repository root that exists on no machine (nothing resolves through a symlink), also the
# working folder relative contract paths are read from, and $GITHUB_WORKSPACE.
ROOT = "/clawspec-golden/repo"
MARKER = "<!-- clawspec:CI:clawspec -->"
SECRET = "sk-golden-0123456789abcdef"  # registered for every renderer; the outputs show ***


def compared_report() -> RunReport:
    """A run compared with a found baseline: every kind of change, total deltas over tolerance,
    behaviour changes, a flaky pass, hermetic model traffic, a secret, Markdown and HTML
    characters, non-ASCII names, a contract inside the root given absolute and one outside it."""
    router = f"{ROOT}/agents/router/tests/scenarios.yml"
    shared = "../shared/contracts/greeter.yaml"  # outside ROOT: kept as written
    tools = [
        ToolCallRecord(name="memory_search", agent="router"),
        ToolCallRecord(name="sessions_spawn", agent="router"),
    ]
    scenarios = [
        ScenarioResult(
            id=f"{router}::routes | billing <b>@team</b>",
            contract=router,
            line=3,
            name="routes | billing <b>@team</b>",
            scenario="routes | billing <b>@team</b>",
            target="agents/router",
            status=Status.FAIL,
            message=f"invocation failed: HTTP 401\nAuthorization: Bearer {SECRET}",
            run_id="run-r1",
            gateway_run_id="gw-r1",
            duration_ms=3_250,
            trace=TraceRef(backend="phoenix", id="tr-r1", url="https://phoenix.example/tr-r1"),
            tags=["billing", "#42"],
            assertions=[
                assertion(
                    "fail",
                    "tool 'billing_lookup' was not called; saw [memory_search]",
                    type="tool_was_called",
                    line=8,
                    details=["called: memory_search, sessions_spawn", "`code` *em* _u_"],
                ),
                assertion(
                    "warn",
                    "trace took 3.2 s > 3 s",
                    type="trace_duration",
                    index=1,
                    line=11,
                    value=3.25,
                    limit=3,
                ),
            ],
            evidence=ScenarioEvidence(
                tools=tools,
                delegations=["billing"],
                tokens=TokenTotals(
                    input=1320, output=410, total=1730, cost_usd=0.0121, source="log"
                ),
            ),
            model_traffic=ModelTrafficResult(
                mode="replay",
                cassette="cassettes/agents/router/routes-billing",
                calls=2,
                used=[1, 2],
                unmatched=1,
                diff=["- messages[1].content: 'bill me'", "+ messages[1].content: 'billing'"],
            ),
        ),
        ScenarioResult(
            id=f"{shared}::greets 👋 in 日本語",
            contract=shared,
            line=12,
            name="greets 👋 in 日本語",
            scenario="greets 👋 in 日本語",
            target="skills/greeter",
            status=Status.PASS,
            message="",
            run_id="run-g1",
            duration_ms=1_800,
            flaky=True,
            attempts=AttemptStats(
                attempts=3,
                passes=2,
                pass_rate=0.667,
                ci_low=0.21,
                ci_high=0.94,
                duration_ms_median=1800,
                duration_ms_p90=2100,
                runs=[
                    AttemptRun(run_id="g1", status=Status.PASS, duration_ms=1700),
                    AttemptRun(
                        run_id="g2",
                        gateway_run_id="gw-g2",
                        status=Status.ERROR,
                        duration_ms=2100,
                        message="gateway closed the connection",
                    ),
                    AttemptRun(run_id="g3", status=Status.PASS, duration_ms=1800),
                ],
            ),
            assertions=[
                assertion("pass", "'reply.md' contains 'こんにちは'", type="artifact_contains")
            ],
            model_traffic=ModelTrafficResult(mode="record", cassette="cassettes/greeter", calls=3),
        ),
        ScenarioResult(
            id=f"{router}::escalates",
            contract=router,
            line=30,
            name="escalates",
            scenario="escalates",
            target="agents/router",
            status=Status.FAIL,
            message="",
            run_id="run-r2",
            duration_ms=2_000,
            assertions=[
                assertion(
                    "fail",
                    "decision routed to 'sales', not 'support'",
                    type="decision_routed_to",
                    line=34,
                    value="sales",
                    limit="support",
                )
            ],
        ),
        ScenarioResult(
            id=f"{router}::new-route",
            contract=router,
            line=50,
            name="new-route",
            scenario="new-route",
            target="agents/router",
            status=Status.ERROR,
            message="",
            run_id=None,
            duration_ms=0,
        ),
        ScenarioResult(
            id=f"{router}::uses-memory",
            contract=router,
            line=60,
            name="uses-memory",
            scenario="uses-memory",
            target="agents/router",
            status=Status.PASS,
            message="",
            run_id="run-r4",
            duration_ms=1_100,
            assertions=[assertion("pass", "tool 'memory_search' was called")],
            evidence=ScenarioEvidence(tools=tools[::-1], delegations=[]),
        ),
    ]
    ids = [s.id for s in scenarios]
    changes = [
        ScenarioChange(
            id=ids[0],
            change="regressed",
            status=Status.FAIL,
            baseline_status=Status.PASS,
            details={
                "pass_rate": {"baseline": 1.0, "current": 0.0},
                "behaviour": {
                    "tools_added": ["memory_search"],
                    "tools_removed": ["billing_lookup"],
                    "delegations_added": ["billing"],
                },
            },
        ),
        ScenarioChange(id=ids[1], change="flaky", status=Status.PASS, baseline_status=Status.PASS),
        ScenarioChange(
            id=ids[2], change="still_failing", status=Status.FAIL, baseline_status=Status.FAIL
        ),
        ScenarioChange(id=ids[3], change="new", status=Status.ERROR),
        ScenarioChange(
            id=ids[4],
            change="fixed",
            status=Status.PASS,
            baseline_status=Status.ERROR,
            details={
                "behaviour": {
                    "tools_reordered": {
                        "baseline": ["memory_search", "sessions_spawn"],
                        "current": ["sessions_spawn", "memory_search"],
                    },
                    "tools_calls": {"memory_search": [2, 1]},
                    "tools_args_changed": {
                        "memory_search": [
                            {
                                "call": 1,
                                "changed": {
                                    "query": {"baseline": "refund <policy>", "current": "refunds"},
                                    "limit": {"current": 5},
                                },
                            }
                        ]
                    },
                }
            },
        ),
        ScenarioChange(id=f"{router}::retired", change="removed", baseline_status=Status.PASS),
    ]
    totals = {
        "significance": 0.05,
        "tokens": {
            "baseline": 1320,
            "current": 2010,
            "delta": 690,
            "ratio": 0.5227,
            "tolerance": 0.15,
            "over": True,
            "scenarios": 2,
        },
        "cost_usd": {
            "baseline": 0.0121,
            "current": 0.0101,
            "delta": -0.002,
            "ratio": -0.1653,
            "tolerance": None,
            "over": False,
            "scenarios": 2,
        },
        "duration_ms": {
            "baseline": 0,
            "current": 4350,
            "delta": 4350,
            "ratio": None,
            "tolerance": 0.5,
            "over": False,
            "scenarios": 2,
        },
    }
    return RunReport(
        version="0.1.0",
        run_id="run-0002",
        started_at="2026-11-23T08:15:30.250000+00:00",
        duration_ms=5_125,
        totals=Totals.of(scenarios),
        scenarios=scenarios,
        source=RunSource(
            commit="c0ffee0123456789",
            branch="feature/billing",
            base_branch="main",
            pull_request=7,
            event="pull_request",
            ci="gitlab",
            repository="acme/agents",
            job_url="https://gitlab.example/acme/-/jobs/9",
            gateway_url="http://127.0.0.1:18789/",
            gateway_mode="target",
        ),
        baseline=BaselineRef(
            source="s3://acme-history/clawspec",
            branch="main",
            commit="0ff1ce0ff1ce",
            created_at="2026-11-22T03:00:00+00:00",
            run_id="run-0001",
            location="s3://acme-history/clawspec/run-0001",
        ),
        comparison=Comparison(
            scenarios=changes,
            counts={
                "regressed": 1,
                "fixed": 1,
                "still_failing": 1,
                "new": 1,
                "removed": 1,
                "flaky": 1,
                "unchanged": 0,
            },
            details=totals,
            regressions=[
                f"{ids[0]}: pass → fail",
                f"{ids[3]}: new scenario errors",
                "total tokens 1,320 → 2,010 (+52%, tolerance 15%)",
            ],
        ),
    )


def variants_report() -> RunReport:
    """Three variants side by side: a required one regressing against the reference, an
    advisory one failing too, an outline row, a cost that is not known."""
    from tests.reports.test_variants_side_by_side import three_variants

    return three_variants()


def empty_report() -> RunReport:
    """An interrupted merged run in which nothing ran, and no baseline was found."""
    return RunReport(
        version="0.1.0",
        run_id="run-0003",
        started_at="2026-11-24T00:00:00+00:00",
        duration_ms=0,
        interrupted=True,
        totals=Totals(),
        scenarios=[],
        merged=MergeInfo(total=2, present=[1, 2], fingerprint="fp-empty", selected=0),
        comparison=Comparison(baseline_missing="no stored run of branch 'main' in dir:history"),
    )


def conversation_golden() -> RunReport:
    """Two conversations: turn 2 of three fails with a hostile reply (Markdown, HTML, a lone
    surrogate, control characters, the secret), turn 3's reply is over the cut; the other
    stops at a turn that got no reply."""
    from tests.reports.conversation_report import conversation_report

    return conversation_report(SECRET)


REPORTS: dict[str, Callable[[], RunReport]] = {
    "rich": rich_report,
    "compared": compared_report,
    "empty": empty_report,
    "variants": variants_report,
    "conversation": conversation_golden,
}


def _json(report: RunReport) -> bytes:
    return render_json(report).encode("utf-8")


def _junit(report: RunReport) -> bytes:
    return render_junit(report, ROOT, Path(ROOT))


def _junit_strict(report: RunReport) -> bytes:
    return render_junit(report, ROOT, Path(ROOT), strict=True)


def _summary(report: RunReport) -> bytes:
    return render_summary(report).encode("utf-8")


def _pr_comment(report: RunReport) -> bytes:
    return render_pr_comment(report, MARKER).encode("utf-8")


def _annotations(report: RunReport) -> bytes:
    """The workflow commands written to stdout: the masks, then the annotations."""
    stream = io.StringIO()
    runner = GitHubRunner(CIContext.from_environ({"GITHUB_WORKSPACE": ROOT}), stream)
    runner.mask_secrets()
    write_annotations(runner, report, workspace=Path(ROOT))
    return stream.getvalue().encode("utf-8")


def _check_run(report: RunReport) -> bytes:
    """What the check run is created with (its conclusion and output), before it is sent."""
    annotations = check_annotations(report, ROOT, Path(ROOT))
    output = render_output(report, annotations)
    payload = {
        "conclusion": decide(report, Policy()).conclusion,
        "output": {**output, "annotations": annotations},
    }
    return (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _codequality(report: RunReport) -> bytes:
    return render_codequality(report, ROOT, Path(ROOT))


def _html(report: RunReport) -> bytes:
    return render_html(report).encode("utf-8")


def _terminal(report: RunReport) -> bytes:
    """A line per scenario as it finishes, then the summary; colour off."""
    stream = io.StringIO()
    reporter = TerminalReporter(stream, colour=False, total=len(report.scenarios))
    for scenario in report.scenarios:
        reporter.on_scenario_done(scenario)
    reporter.summary(report)
    return stream.getvalue().encode("utf-8")


def _outputs(report: RunReport) -> bytes:
    """The step outputs appended to $GITHUB_OUTPUT."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "github_output"
        context = CIContext.from_environ({"GITHUB_OUTPUT": str(path), "GITHUB_WORKSPACE": ROOT})
        runner = GitHubRunner(context)
        write_outputs(
            runner,
            report,
            f"{ROOT}/reports/clawspec-report.json",
            f"{ROOT}/reports/junit.xml",
            new_delimiter=lambda: "ghadelimiter_golden",
        )
        return path.read_bytes()


OUTPUTS: dict[str, Callable[[RunReport], bytes]] = {
    "report.json": _json,
    "junit.xml": _junit,
    "junit-strict.xml": _junit_strict,
    "summary.md": _summary,
    "pr-comment.md": _pr_comment,
    "annotations.txt": _annotations,
    "check-run.json": _check_run,
    "codequality.json": _codequality,
    "report.html": _html,
    "terminal.txt": _terminal,
    "outputs.txt": _outputs,
}
CASES = [f"{report}/{output}" for report in REPORTS for output in OUTPUTS]


def render(case: str) -> bytes:
    """The bytes of one case, `<report>/<output>`."""
    report, output = case.split("/")
    with registry.scope() as active:  # as a command's: the outputs mask what it holds
        active.add(SECRET)
        return OUTPUTS[output](REPORTS[report]())


def _difference(expected: bytes, actual: bytes) -> str:
    """Where the bytes first differ, then the first lines of a unified diff (long lines cut:
    the HTML report holds the whole report on one line)."""
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    around = slice(max(at - 60, 0), at + 60)
    lines = difflib.unified_diff(
        expected.decode("utf-8", "replace").splitlines(),
        actual.decode("utf-8", "replace").splitlines(),
        "golden",
        "rendered",
        lineterm="",
    )
    shown = [line if len(line) <= 200 else line[:200] + "…" for line in lines]
    return "\n".join(
        [
            f"first difference at byte {at} (golden {len(expected)} bytes, rendered "
            f"{len(actual)}):",
            f"  golden:   {expected[around]!r}",
            f"  rendered: {actual[around]!r}",
            *shown[:40],
        ]
    )


@pytest.mark.parametrize("case", CASES)
def test_output_matches_its_golden_file(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no output may depend on the working folder
    path = GOLDEN / case
    assert path.is_file(), f"no golden file {path}: run `{REGENERATE}`"
    expected, actual = path.read_bytes(), render(case)
    if actual != expected:
        pytest.fail(
            f"{case} differs from its golden file. If the change is intended, run "
            f"`{REGENERATE}` and review `git diff tests/reports/golden/`.\n"
            + _difference(expected, actual),
            pytrace=False,
        )


def test_every_golden_file_is_rendered() -> None:
    files = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*") if p.is_file())
    assert files == sorted(CASES), f"stale or missing golden files: run `{REGENERATE}`"


@pytest.mark.parametrize("report", list(REPORTS))
def test_golden_json_report_validates_against_the_shipped_schema(report: str) -> None:
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    data = json.loads((GOLDEN / report / "report.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)


def regenerate() -> list[Path]:
    """Write every golden file and remove those no case renders any more; return the changed."""
    changed = []
    for case in CASES:
        path = GOLDEN / case
        data = render(case)
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            changed.append(path)
    for path in list(GOLDEN.rglob("*")):
        if path.is_file() and path.relative_to(GOLDEN).as_posix() not in CASES:
            path.unlink()
            changed.append(path)
    return changed


if __name__ == "__main__":
    written = regenerate()
    for changed_path in written:
        print(f"updated {changed_path.relative_to(GOLDEN.parents[2])}")
    print(f"{len(CASES)} golden files, {len(written)} changed", file=sys.stderr)

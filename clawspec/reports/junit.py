"""JUnit XML (SPEC §7): one testsuite per contract file, one testcase per scenario.

Built with `junit-xml`, then completed with what that package cannot express (per-testcase
`properties`, the `skipped` total on `testsuites`). Every text is cleaned first (ANSI codes,
control characters XML 1.0 forbids, secrets), so the file always re-parses. GitLab shows the
*body* of failure/error/skipped and Jenkins the `message`, so both carry the reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from junit_xml import TestCase, TestSuite

from clawspec.assertions.base import Status
from clawspec.reports.model import AssertionResult, RunReport, ScenarioResult
from clawspec.text import clean, one_line

_MESSAGE_LIMIT = 1000


def _assertion_line(scenario: ScenarioResult, a: AssertionResult) -> str:
    return (
        f"{a.status.upper()} {a.phase}[{a.index}] {a.type} "
        f"({scenario.contract}:{a.line}): {one_line(a.message, _MESSAGE_LIMIT)}"
    )


def _reason(scenario: ScenarioResult) -> str:
    """One line: the scenario's own message, else its first non-passing assertion."""
    if scenario.message:
        return one_line(scenario.message, _MESSAGE_LIMIT)
    for a in scenario.assertions:
        if a.status == scenario.status:
            return one_line(f"{a.phase}[{a.index}] {a.type}: {a.message}", _MESSAGE_LIMIT)
    return scenario.status.upper()


def _body(scenario: ScenarioResult, statuses: tuple[Status, ...]) -> str:
    lines = [_reason(scenario)]
    lines += [_assertion_line(scenario, a) for a in scenario.assertions if a.status in statuses]
    return "\n".join(dict.fromkeys(lines))  # drop a repeated first line, keep order


def _stdout(scenario: ScenarioResult) -> str:
    lines = []
    warned = [a for a in scenario.assertions if a.status == Status.WARN]
    lines += [f"warning: {_assertion_line(scenario, a)}" for a in warned]
    lines += [_assertion_line(scenario, a) for a in scenario.assertions if a not in warned]
    if scenario.trace is not None and scenario.trace.url:
        lines.append(f"trace: {scenario.trace.url}")
    return "\n".join(lines)


def _testcase(scenario: ScenarioResult) -> TestCase:
    case = TestCase(
        name=scenario.name,
        classname=scenario.target,
        elapsed_sec=scenario.duration_ms / 1000,
        stdout=_stdout(scenario) or None,
        file=scenario.contract,
        line=scenario.line,
    )
    if scenario.status == Status.FAIL:
        case.add_failure_info(
            _reason(scenario), _body(scenario, (Status.FAIL, Status.ERROR)), "clawspec.fail"
        )
    elif scenario.status == Status.ERROR:
        case.add_error_info(
            _reason(scenario), _body(scenario, (Status.ERROR, Status.FAIL)), "clawspec.error"
        )
    elif scenario.status == Status.SKIP:
        case.add_skipped_info(_reason(scenario), _body(scenario, (Status.SKIP,)))
    return case


def _properties(pairs: Iterable[tuple[str, str | None]]) -> ET.Element | None:
    present = [(name, value) for name, value in pairs if value]
    if not present:
        return None
    element = ET.Element("properties")
    for name, value in present:
        ET.SubElement(element, "property", {"name": name, "value": str(value)})
    return element


def _regression_properties(
    scenario: ScenarioResult, change: str | None
) -> list[tuple[str, str | None]]:
    """Repeats and comparison (issue 12): pass rate, attempts, flaky, change since the baseline."""
    stats = scenario.attempts
    return [
        ("pass_rate", f"{stats.pass_rate:.4f}" if stats else None),
        ("attempts", f"{stats.passes}/{stats.attempts}" if stats else None),
        ("flaky", "true" if scenario.flaky else ("false" if stats else None)),
        ("change", change),
    ]


def _clean_tree(element: ET.Element, secrets: list[str]) -> None:
    """Clean every attribute and text node (after junit-xml, which copies what it is given)."""
    for node in element.iter():
        for key, value in node.attrib.items():
            node.set(key, clean(value, secrets))
        if node.text:
            node.text = clean(node.text, secrets)
        if node.tail:
            node.tail = clean(node.tail, secrets)


def _suites(report: RunReport) -> list[tuple[str, list[ScenarioResult]]]:
    by_contract: dict[str, list[ScenarioResult]] = {}
    for scenario in report.scenarios:
        by_contract.setdefault(scenario.contract, []).append(scenario)
    return list(by_contract.items())


def render_junit(report: RunReport, secrets: Iterable[str] = ()) -> bytes:
    """Render the report as JUnit XML (UTF-8 bytes with an XML declaration)."""
    secrets = list(secrets)
    root = ET.Element("testsuites", {"name": "clawspec"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    duration = 0.0
    changes = {c.id: c.change for c in report.comparison.scenarios} if report.comparison else {}
    for contract, scenarios in _suites(report):
        suite = TestSuite(
            name=contract,
            test_cases=[_testcase(s) for s in scenarios],
            timestamp=report.started_at,
            properties={"run_id": report.run_id, "clawspec_version": report.version},
            file=contract,
        )
        element = suite.build_xml_doc()
        element.set("skipped", str(sum(1 for s in scenarios if s.status == Status.SKIP)))
        for case_element, scenario in zip(element.iter("testcase"), scenarios, strict=True):
            props = _properties(
                [
                    ("run_id", scenario.run_id),
                    ("gateway_run_id", scenario.gateway_run_id),
                    ("trace_url", scenario.trace.url if scenario.trace else None),
                    ("trace_id", scenario.trace.id if scenario.trace else None),
                    *_regression_properties(scenario, changes.get(scenario.id)),
                ]
            )
            if props is not None:
                case_element.insert(0, props)
        for key in totals:
            totals[key] += int(element.get(key, "0"))
        duration += float(element.get("time", "0"))
        root.append(element)
    if report.merged is not None and report.merged.missing:
        element = _missing_shards(report)
        totals["tests"] += int(element.get("tests", "0"))
        totals["errors"] += int(element.get("errors", "0"))
        root.append(element)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{duration:.3f}")
    _clean_tree(root, secrets)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _missing_shards(report: RunReport) -> ET.Element:
    """One errored test case per missing shard: CI test views show the gap, not a smaller pass."""
    from clawspec.sharding.merge import missing_message

    assert report.merged is not None
    message = f"{missing_message(report.merged)}: the merged report is incomplete"
    cases = []
    for index in report.merged.missing:
        case = TestCase(name=f"shard {index}/{report.merged.total}", classname="clawspec.merge")
        case.add_error_info(message=message, output=message)
        cases.append(case)
    return TestSuite(name="clawspec merge", test_cases=cases).build_xml_doc()


def write_junit(report: RunReport, path: Path, secrets: Iterable[str] = ()) -> Path:
    """Write the JUnit file atomically; return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(render_junit(report, secrets))
    partial.replace(path)
    return path

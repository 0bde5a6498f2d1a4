"""JUnit XML (SPEC §7): one testsuite per contract file, one testcase per scenario.

The document is the one `junit-xml` + `xml.etree` used to write (same elements, attribute order,
counts and indentation: `_xml` says how), written directly as text: for a 10,000-scenario report
building and re-walking an element tree took seconds. What `junit-xml` could not express is
here too (per-testcase `properties`, the `skipped` total on `testsuites`). Every text and
attribute is cleaned before it is escaped (ANSI codes, control characters XML 1.0 forbids,
secrets), so the file always re-parses. GitLab shows the *body* of failure/error/skipped and
Jenkins the `message`, so both carry the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from clawspec.assertions.base import Status
from clawspec.reports._xml import XmlText
from clawspec.reports.model import AssertionResult, RunReport, ScenarioResult
from clawspec.text import cleaner, one_line

_MESSAGE_LIMIT = 1000
_OUTCOME = {  # element, its type attribute, and the statuses its body lists
    Status.FAIL: ("failure", "clawspec.fail", (Status.FAIL, Status.ERROR)),
    Status.ERROR: ("error", "clawspec.error", (Status.ERROR, Status.FAIL)),
    Status.SKIP: ("skipped", "skipped", (Status.SKIP,)),
}
_SUITE, _CASE = 1, 2  # indentation levels


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


def _properties(xml: XmlText, level: int, pairs: Iterable[tuple[str, object]]) -> list[str]:
    """A properties element (as a list of none or one) with a property per pair."""
    present = [
        xml.element("property", {"name": name, "value": str(value)}, level + 1)
        for name, value in pairs
    ]
    return [xml.element("properties", {}, level, present)] if present else []


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


def _outcome(xml: XmlText, tag: str, kind: str, message: str, body: str) -> list[str]:
    """failure/error only with a message or body; skipped always (as junit-xml wrote them)."""
    if tag != "skipped" and not (message or body):
        return []
    attrs = {"type": kind, "message": message} if message else {"type": kind}
    return [xml.element(tag, attrs, _CASE + 1, text=body or None)]


def _testcase(xml: XmlText, scenario: ScenarioResult, change: str | None) -> tuple[str, str]:
    """The testcase element and the tag of its outcome ("" when it passed)."""
    attrs = {"name": scenario.name}
    if scenario.duration_ms:
        attrs["time"] = "%f" % (scenario.duration_ms / 1000)
    if scenario.target:
        attrs["classname"] = scenario.target
    if scenario.contract:
        attrs["file"] = scenario.contract
    if scenario.line:
        attrs["line"] = str(scenario.line)
    trace = scenario.trace
    pairs = [
        ("run_id", scenario.run_id),
        ("gateway_run_id", scenario.gateway_run_id),
        ("trace_url", trace.url if trace else None),
        ("trace_id", trace.id if trace else None),
        *_regression_properties(scenario, change),
    ]
    children = _properties(xml, _CASE + 1, [(name, value) for name, value in pairs if value])
    outcome = ""
    if scenario.status in _OUTCOME:
        tag, kind, statuses = _OUTCOME[scenario.status]
        element = _outcome(xml, tag, kind, _reason(scenario), _body(scenario, statuses))
        outcome = tag if element else ""
        children += element
    stdout = _stdout(scenario)
    if stdout:
        children.append(xml.element("system-out", {}, _CASE + 1, text=stdout))
    return xml.element("testcase", attrs, _CASE, children), outcome


def _suite(
    xml: XmlText,
    name: str,
    cases: list[tuple[str, str]],
    seconds: list[float],
    extra: dict[str, str],
    head: list[str],
) -> tuple[str, dict[str, str]]:
    """A testsuite and its attributes, with junit-xml's counts: a failure/error counts when it
    has a message or body, every skipped element counts (one per skipped scenario); `time`
    sums the non-zero durations."""
    outcomes = [outcome for _, outcome in cases]
    attrs = {
        "disabled": "0",
        "errors": str(outcomes.count("error")),
        "failures": str(outcomes.count("failure")),
        "name": name,
        "skipped": str(outcomes.count("skipped")),
        "tests": str(len(cases)),
        "time": str(sum(s for s in seconds if s)),
        **extra,
    }
    children = [*head, *(case for case, _ in cases)]
    return xml.element("testsuite", attrs, _SUITE, children), attrs


def _suites(report: RunReport) -> list[tuple[str, list[ScenarioResult]]]:
    by_contract: dict[str, list[ScenarioResult]] = {}
    for scenario in report.scenarios:
        by_contract.setdefault(scenario.contract, []).append(scenario)
    return list(by_contract.items())


def render_junit(report: RunReport, secrets: Iterable[str] = ()) -> bytes:
    """Render the report as JUnit XML (UTF-8 bytes with an XML declaration)."""
    xml = XmlText(cleaner(secrets))
    changes = {c.id: c.change for c in report.comparison.scenarios} if report.comparison else {}
    # a suite's properties: both, even when empty (as junit-xml wrote them)
    head = _properties(
        xml, _SUITE + 1, [("run_id", report.run_id), ("clawspec_version", report.version)]
    )
    extra = {"timestamp": report.started_at} if report.started_at else {}
    suites: list[tuple[str, dict[str, str]]] = []
    for contract, scenarios in _suites(report):
        cases = [_testcase(xml, s, changes.get(s.id)) for s in scenarios]
        seconds = [s.duration_ms / 1000 for s in scenarios]
        suites.append(_suite(xml, contract, cases, seconds, {**extra, "file": contract}, head))
    if report.merged is not None and report.merged.missing:
        suites.append(_missing_shards(xml, report))
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    duration = 0.0
    for _, attrs in suites:
        for key in totals:
            totals[key] += int(attrs[key])
        duration += float(attrs["time"])
    root = {"name": "clawspec", **{k: str(v) for k, v in totals.items()}, "time": f"{duration:.3f}"}
    return xml.document(xml.element("testsuites", root, 0, [suite for suite, _ in suites]))


def _missing_shards(xml: XmlText, report: RunReport) -> tuple[str, dict[str, str]]:
    """One errored test case per missing shard: CI test views show the gap, not a smaller pass."""
    from clawspec.sharding.merge import missing_message

    assert report.merged is not None
    message = f"{missing_message(report.merged)}: the merged report is incomplete"
    cases = []
    for index in report.merged.missing:
        attrs = {"name": f"shard {index}/{report.merged.total}", "classname": "clawspec.merge"}
        error = _outcome(xml, "error", "error", message, message)
        cases.append((xml.element("testcase", attrs, _CASE, error), "error"))
    return _suite(xml, "clawspec merge", cases, [], {}, [])


def write_junit(report: RunReport, path: Path, secrets: Iterable[str] = ()) -> Path:
    """Write the JUnit file atomically; return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(render_junit(report, secrets))
    partial.replace(path)
    return path

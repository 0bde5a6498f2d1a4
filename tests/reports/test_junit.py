"""JUnit XML: structure, counts, texts, properties, and validity with hostile characters."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from clawspec import secrets as registry
from clawspec.reports.junit import render_junit, write_junit
from tests.reports.factory import CONTRACT, assertion, mixed_report, report, scenario


def _cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in root.iter("testcase")}


def test_junit_has_one_suite_per_contract_and_one_case_per_scenario() -> None:
    root = ET.fromstring(render_junit(mixed_report()))
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
    }
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [CONTRACT, "agents/router/tests/scenarios.yaml"]
    first = suites[0]
    assert {k: first.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
    }
    props = {p.get("name"): p.get("value") for p in first.iterfind("properties/property")}
    assert props["run_id"] == "run-0001"
    case = _cases(root)["tool-check"]
    assert case.get("classname") == "skills/newsletter/tests/scenarios"
    case_props = {p.get("name"): p.get("value") for p in case.iterfind("properties/property")}
    assert case_props["target"] == "skills/newsletter"
    assert case.get("file") == CONTRACT
    assert case.get("line") == "17"
    assert float(case.get("time", "0")) == 1.5


def test_junit_failure_error_and_skipped_carry_the_reason_in_message_and_body() -> None:
    cases = _cases(ET.fromstring(render_junit(mixed_report())))
    failure = cases["tool-check"].find("failure")
    assert failure is not None
    assert failure.get("message") == "tool-check is fail"
    assert f"FAIL then[1] tool_was_called ({CONTRACT}:22): tool 'send_email' was not called" in (
        failure.text or ""
    )
    error = cases["broken"].find("error")
    assert error is not None
    assert error.get("message") == error.text == "gateway unreachable: POST /hooks/agent"
    skipped = cases["traces"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "no observability backend configured"
    assert "no observability backend configured" in (skipped.text or "")


def test_junit_warned_scenario_passes_with_the_warning_in_system_out() -> None:
    case = _cases(ET.fromstring(render_junit(mixed_report())))["judged"]
    assert [child.tag for child in case] == ["properties", "system-out"]
    out = case.findtext("system-out") or ""
    assert out.startswith(f"warning: WARN then[0] trace_cost ({CONTRACT}:52): no cost data")


def test_junit_testcase_properties_carry_run_id_and_trace_url() -> None:
    case = _cases(ET.fromstring(render_junit(mixed_report())))["smoke"]
    props = {p.get("name"): p.get("value") for p in case.iterfind("properties/property")}
    assert props["run_id"] == "run-smoke"
    assert props["gateway_run_id"] == "gw-smoke"
    assert props["trace_url"] == "http://127.0.0.1:6006/trace/t-1"


def test_junit_stays_valid_xml_with_ansi_and_control_characters() -> None:
    hostile = 'bad \x00null \x1b[31mred\x1b[0m bell\x07 <tag> & "quote" \x0b\x1f end'
    data = report(
        scenario(f"name \x1b[1m{hostile}", "fail", assertion("fail", hostile), message=hostile),
        scenario("skipper", "skip", assertion("skip", hostile), message=hostile),
        scenario("boom", "error", message=hostile, target="t\x07arget"),
    )
    rendered = render_junit(data)
    root = ET.fromstring(rendered)  # must parse
    for forbidden in (b"\x00", b"\x1b", b"\x07", b"\x0b", b"\x1f"):
        assert forbidden not in rendered
    failure = root.find(".//failure")
    assert failure is not None
    assert failure.get("message") == 'bad null red bell <tag> & "quote" end'
    assert root.find(".//testcase/properties/property[@value='target']") is not None


def test_junit_masks_secrets() -> None:
    data = report(scenario("leak", "fail", assertion("fail", "token s3cr3t-value seen")))
    with registry.scope() as active:
        active.add("s3cr3t-value")
        rendered = render_junit(data)
    assert b"s3cr3t-value" not in rendered
    assert b"token *** seen" in rendered


def test_junit_names_are_stable_across_renders(tmp_path: Path) -> None:
    first = write_junit(mixed_report(), tmp_path / "a" / "junit.xml").read_bytes()
    second = render_junit(mixed_report())
    assert first == second
    assert first.startswith(b"<?xml version='1.0' encoding='utf-8'?>")


def test_junit_of_an_empty_report_is_valid() -> None:
    root = ET.fromstring(render_junit(report()))
    assert root.get("tests") == "0"
    assert root.findall("testsuite") == []


def test_junit_text_is_what_elementtree_writes_for_the_same_tree() -> None:
    """The writer builds text directly: it must be the document ElementTree would write for
    the tree it parses back to (escaping, indentation, `<a />`), hostile characters included."""
    hostile = 'x \x1b[31mred\x1b[0m <tag> & "quote"\ttab\nline s3cr3t-value é \U0001f600'
    data = report(
        scenario(f"n {hostile}", "fail", assertion("fail", hostile), message=hostile),
        scenario("skipper", "skip", assertion("skip", hostile), target=hostile),
        scenario("boom", "error", message=hostile, duration_ms=0, line=0),
        scenario("quiet", "pass", run_id=None, gateway_run_id=None),
    )
    with registry.scope() as active:
        active.add("s3cr3t-value")
        masked = render_junit(data)
    for rendered in (render_junit(mixed_report()), masked):
        root = ET.fromstring(rendered)
        ET.indent(root)
        assert ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n" == rendered


def test_a_scenario_with_thousands_of_failing_checks_lists_the_first_hundred() -> None:
    """Each failing check with its message made one testcase's body half a megabyte, and a
    suite of them a file past what GitLab reads (30 MB); the body says how many it left out."""
    from clawspec.reports.junit import MAX_BODY_CHECKS

    checks = [assertion("fail", "m" * 500, index=i) for i in range(3000)]
    root = ET.fromstring(render_junit(report(scenario("many", "fail", *checks))))
    body = _cases(root)["many"].find("failure").text or ""
    listed = [line for line in body.splitlines() if line.startswith("FAIL then[")]
    assert len(listed) == MAX_BODY_CHECKS == 100
    assert body.splitlines()[-1] == "... and 2,900 more (every check is in the JSON report)"
    assert len(body) < 120_000


def test_a_changed_only_run_says_in_each_suite_what_it_left_out() -> None:
    from clawspec.reports.model import SelectionInfo

    selection = SelectionInfo(
        changed_since="HEAD~1", commit="fa3947d0aa11", changed_files=1, selected=2, total=18,
        left_out=[f"c.yaml::s{i}" for i in range(16)],
    )  # fmt: skip
    found = report(scenario("a", "pass")).model_copy(update={"selection": selection})
    root = ET.fromstring(render_junit(found))
    said = {
        p.get("name"): p.get("value") for p in root.iter("property") if p.get("name") == "selection"
    }
    assert said == {"selection": "ran 2 of 18 scenarios: 16 unaffected by changes since fa3947d"}


def test_an_interrupted_run_says_so_in_each_suite() -> None:
    def said(interrupted: bool) -> list[tuple[str | None, str | None]]:
        found = report(scenario("a", "error"), scenario("b", "skip"), interrupted=interrupted)
        suites = ET.fromstring(render_junit(found)).iter("testsuite")
        return [
            (p.get("name"), p.get("value"))
            for suite in suites
            for p in suite.iter("property")
            if p.get("name") == "interrupted"
        ]

    assert said(True) == [("interrupted", "true")]
    assert said(False) == []


def test_a_failing_check_is_in_the_body_once_not_again_in_system_out() -> None:
    """GitLab shows the failure's body and then `System Out`: the same lines twice before."""
    failing = scenario(
        "broken", "fail", assertion("pass", "fine", index=0), assertion("fail", "nope", index=1)
    )
    case = ET.fromstring(render_junit(report(failing))).find(".//testcase")
    assert case is not None
    body, out = case.findtext("failure") or "", case.findtext("system-out") or ""
    assert "FAIL then[1]" in body and "FAIL then[1]" not in out
    assert "PASS then[0]" in out

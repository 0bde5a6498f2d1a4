"""JUnit XML as its consumers read it: junitparser, the Surefire/Jenkins schema, GitLab's
identity (classname + name), repository-relative files, times, reruns, and hostile text."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from junitparser.xunit2 import JUnitXml, TestCase

from clawspec.assertions.base import Status
from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.reports._xml import XmlText
from clawspec.reports.codequality import repository_root
from clawspec.reports.github.annotations import select_annotations
from clawspec.reports.junit import classnames, render_junit, seconds, write_junit
from clawspec.reports.model import AttemptRun, AttemptStats, RunReport, ScenarioResult
from clawspec.reports.publish import publish
from clawspec.reports.terminal import TerminalReporter
from tests.reports.factory import assertion, mixed_report, report, scenario
from tests.reports.rich_report import rich_report

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit-jenkins.xsd")
# Every kind of text XML 1.0 cannot hold, or that breaks naive escaping.
CONTROLS = "".join(chr(c) for c in range(0x20))
HOSTILE = (
    f"a{CONTROLS}b \ufffe \uffff lone \ud83d and \udcff, pair \ud83d\ude00, "
    'cdata ]]> <tag a="1"> & &amp; \x1b[31mred\x1b[0m end'
)
TIME = re.compile(r"^\d+\.\d{3}$")


def _cases(data: bytes) -> list[TestCase]:
    return [case for suite in JUnitXml.fromstring(data) for case in suite]


def _valid(data: bytes) -> ET.Element:
    """Parse with ElementTree and junitparser, validate against the schema; return the root."""
    root = ET.fromstring(data)
    JUnitXml.fromstring(data)
    SCHEMA.validate(data.decode("utf-8"))
    return root


def _as_elementtree_writes_it(data: bytes) -> None:
    """The text writer's document is the one ElementTree writes for the tree it parses to."""
    tree = ET.fromstring(data)
    ET.indent(tree)
    assert ET.tostring(tree, encoding="utf-8", xml_declaration=True) + b"\n" == data


def _repeated(name: str, status: str, runs: list[str], **kw: object) -> ScenarioResult:
    attempts = [
        AttemptRun(
            run_id=f"{name}-{n}",
            gateway_run_id=f"gw-{name}-{n}",
            status=Status(s),
            duration_ms=1000 + n,
            message="" if s == "pass" else f"{s} on attempt {n}",
        )
        for n, s in enumerate(runs, 1)
    ]
    passes = runs.count("pass")
    stats = AttemptStats(
        attempts=len(runs),
        passes=passes,
        pass_rate=round(passes / len(runs), 4),
        ci_low=0.0,
        ci_high=1.0,
        runs=attempts,
    )
    flaky = passes > 0 and passes < len(runs)
    return scenario(name, status, assertion(status), attempts=stats, flaky=flaky, **kw)


def _hostile_report() -> RunReport:
    trace = {"backend": "phoenix", "id": HOSTILE, "url": f"http://127.0.0.1/{HOSTILE}"}
    return report(
        scenario(
            f"name {HOSTILE}",
            "fail",
            assertion("fail", HOSTILE, details=[HOSTILE]),
            assertion("warn", HOSTILE, index=1),
            message=HOSTILE,
            target=f"target {HOSTILE}",
            run_id=HOSTILE,
            gateway_run_id=HOSTILE,
            trace=trace,
            contract=f"skills/{HOSTILE}/tests/scenarios.yaml",
        ),
        scenario("skipper", "skip", assertion("skip", HOSTILE), message=HOSTILE),
        scenario("boom", "error", message=HOSTILE),
        _repeated(f"flaky {HOSTILE}", "pass", ["fail", "pass", "error"]),
    )


def test_hostile_text_in_every_field_gives_a_well_formed_valid_file() -> None:
    data = render_junit(_hostile_report())
    root = _valid(data)
    for raw in (
        "\ufffe",
        "\uffff",
        *CONTROLS.replace("\t", "").replace("\n", "").replace("\r", ""),
    ):
        assert raw.encode("utf-8") not in data
    assert b"&#" not in data.replace(b"&#10;", b"").replace(b"&#09;", b"").replace(b"&#13;", b"")
    failure = root.find(".//failure")
    assert failure is not None
    # controls and ANSI codes stripped (tab, LF and CR kept where the text is not one line),
    # the other forbidden characters become U+FFFD, a surrogate pair its character; markup
    # characters survive as text
    rest = (
        "b \ufffd \ufffd lone \ufffd and \ufffd, pair \U0001f600, "
        'cdata ]]> <tag a="1"> & &amp; red end'
    )
    assert failure.get("message") == f"a  {rest}"  # one line: whitespace runs became spaces
    cases = _cases(data)
    assert cases[0].name == f"name a\t\n\r{rest}"
    assert cases[0].system_out is not None and f"a  {rest}" in cases[0].system_out
    props = {p.name: p.value for p in cases[0].properties()}
    assert props["target"] == f"target a\t\n\r{rest}"
    assert props["run_id"] == f"a\t\n\r{rest}"


def test_the_xml_writer_alone_keeps_the_document_well_formed() -> None:
    """Even with no cleaning at all before it (every control, surrogate and noncharacter)."""
    xml = XmlText(lambda text: text)
    child = xml.element("b", {"v": HOSTILE}, 1, text=HOSTILE)
    data = xml.document(xml.element("a", {"v": HOSTILE}, 0, [child]))
    root = ET.fromstring(data)
    assert root.get("v", "").startswith("a" + "\ufffd" * 9 + "\t\n\ufffd\ufffd\r")
    assert "\ufffe" not in (root.findtext("b") or "") and "\U0001f600" in root.get("v", "")


def test_a_lone_surrogate_is_replaced_where_text_enters_the_report() -> None:
    made = scenario("s", "fail", assertion("fail", "cut \ud83d", value={"k\udcff": ["\ud83d"]}))
    assert made.assertions[0].message == "cut \ufffd"
    assert made.assertions[0].value == {"k\ufffd": ["\ufffd"]}
    back = ScenarioResult.model_validate(json.loads(json.dumps(made.model_dump(mode="json"))))
    assert back == made
    assert json.loads(made.model_dump_json())["assertions"][0]["message"] == "cut \ufffd"


def test_every_report_of_a_run_is_written_when_agent_text_holds_lone_surrogates(
    tmp_path: Path,
) -> None:
    text = " cut \ud83d emoji \udcff"
    data = rich_report(text).model_copy(update={"shard": None})
    out_dir = tmp_path / "r"
    settings = Settings(
        report_dir=str(out_dir),
        junit=str(out_dir / "junit.xml"),
        report_html=str(out_dir / "report.html"),
        codequality=str(out_dir / "codequality.json"),
    )
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    stdout, stderr = io.StringIO(), io.StringIO()
    written = publish(data, settings, environ, stdout=stdout, stderr=stderr)
    assert "not written" not in stderr.getvalue()
    assert {p.name for p in written} == {
        "clawspec-report.json",
        "junit.xml",
        "report.html",
        "codequality.json",
    }
    assert "cut \ufffd emoji \ufffd" in json.dumps(
        json.loads((out_dir / "clawspec-report.json").read_text(encoding="utf-8")),
        ensure_ascii=False,
    )
    _valid((out_dir / "junit.xml").read_bytes())
    json.loads((out_dir / "codequality.json").read_text(encoding="utf-8"))
    assert "cut \ufffd emoji" in (out_dir / "report.html").read_text(encoding="utf-8")
    assert "cut \ufffd emoji" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "cut \ufffd emoji" in stdout.getvalue()  # annotations
    stdout.getvalue().encode("utf-8")  # what the runner's stdout must be able to take
    # the terminal prints each scenario as it finishes: a strict UTF-8 stream takes it
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    terminal = TerminalReporter(stream, colour=False)
    for result in data.scenarios:
        terminal.on_scenario_done(result)
    terminal.summary(data)
    stream.flush()
    assert "cut \ufffd emoji".encode() in stream.buffer.getvalue()  # type: ignore[attr-defined]


def test_scenarios_of_the_same_target_and_name_in_two_contracts_stay_two_tests() -> None:
    data = report(
        scenario("smoke", "pass", contract="skills/news/tests/a.yaml", target="skills/news"),
        scenario("smoke", "fail", contract="skills/news/tests/b.yaml", target="skills/news"),
        scenario("smoke", "pass", contract="tests/news.yaml", target="skills/news"),
        scenario("smoke", "pass", contract="tests/news.yml", target="skills/news"),
    )
    cases = _cases(render_junit(data))
    identities = [(case.classname, case.name) for case in cases]
    assert len(set(identities)) == 4
    assert identities[:2] == [
        ("skills/news/tests/a", "smoke"),
        ("skills/news/tests/b", "smoke"),
    ]
    # x.yaml beside x.yml: both keep their whole path rather than meet
    assert identities[2:] == [("tests/news.yaml", "smoke"), ("tests/news.yml", "smoke")]
    # and the same contracts always give the same classnames (GitLab compares runs by them)
    assert _cases(render_junit(data))[1].classname == "skills/news/tests/b"


def test_classnames_stay_distinct_for_any_paths() -> None:
    paths = ["x.yaml", "x.yml", "x", "x.yaml.yaml", ".yaml", "a/b.yaml", "a/b"]
    names = classnames(paths)
    assert len(set(names.values())) == len(paths)
    assert names["a/b.yaml"] == "a/b.yaml" and names[".yaml"] == ".yaml"


def test_file_is_repository_relative_like_the_annotations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace (working_directory) is a folder of the repository: `file` names the
    contract from the repository root, the way annotations do."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    workspace = repo / "project"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    contract = "skills/news/tests/scenarios.yaml"
    data = report(scenario("smoke", "fail", assertion("fail"), contract=contract))
    # found from git (Jenkins, local runs)
    root = repository_root(CIContext.from_environ({}), workspace)
    assert root == repo
    case = _cases(render_junit(data, repo_root=root))[0]
    assert case._elem.get("file") == f"project/{contract}"
    assert case.classname == "skills/news/tests/scenarios"  # as the report names the contract
    annotation = select_annotations(data, repo_root=root).annotations[0]
    assert annotation.file == case._elem.get("file")
    # through the path every run takes, on GitHub (GITHUB_WORKSPACE)
    settings = Settings(report_dir=str(workspace / "r"), junit=str(workspace / "r" / "j.xml"))
    publish(data, settings, {"GITHUB_WORKSPACE": str(repo)}, stdout=io.StringIO())
    written = ET.parse(workspace / "r" / "j.xml").getroot()
    assert written.find("testsuite/testcase").get("file") == f"project/{contract}"  # type: ignore[union-attr]
    assert written.find("testsuite").get("file") == f"project/{contract}"  # type: ignore[union-attr]
    assert written.find("testsuite").get("name") == contract  # type: ignore[union-attr]
    # outside any repository the path stays as the report has it
    assert _cases(render_junit(data))[0]._elem.get("file") == contract


def test_times_have_three_decimals_and_the_root_is_the_wall_time() -> None:
    durations = [100_100, 55_300, 150_000, 127_601]  # 100.1 + 55.3 is 155.39999999999998
    data = report(
        *[scenario(f"s{i}", "pass", duration_ms=ms) for i, ms in enumerate(durations[:2])],
        *[
            scenario(f"t{i}", "pass", duration_ms=ms, contract="tests/other.yaml")
            for i, ms in enumerate(durations[2:])
        ],
    ).model_copy(update={"duration_ms": 115_250})  # concurrent: far less than the sum
    root = _valid(render_junit(data))
    times = [element.get("time", "") for element in root.iter() if "time" in element.attrib]
    assert len(times) == 1 + 2 + 4
    assert all(TIME.match(t) for t in times), times
    assert root.get("time") == "115.250"
    assert [s.get("time") for s in root.findall("testsuite")] == ["155.400", "277.601"]
    assert [c.get("time") for c in root.iter("testcase")] == [
        "100.100",
        "55.300",
        "150.000",
        "127.601",
    ]
    assert seconds(0) == "0.000" and seconds(7) == "0.007" and seconds(3_600_000) == "3600.000"


def test_flaky_and_failed_after_retries_carry_surefire_rerun_elements() -> None:
    data = report(
        _repeated("wobbly", "pass", ["fail", "pass", "error", "pass"]),
        _repeated("broken", "fail", ["fail", "error", "fail"]),
        _repeated("steady", "pass", ["pass", "pass"]),
    )
    rendered = render_junit(data)
    root = _valid(rendered)
    _as_elementtree_writes_it(rendered)
    by_name = {case.name: case for case in _cases(rendered)}
    wobbly = by_name["wobbly"]
    assert wobbly.is_passed and wobbly.is_flaky and not wobbly.is_rerun
    assert [f.message for f in wobbly.flaky_failures()] == ["attempt 1 of 4: fail on attempt 1"]
    assert [e.message for e in wobbly.flaky_errors()] == ["attempt 3 of 4: error on attempt 3"]
    assert wobbly.flaky_failures()[0].type == "clawspec.fail"
    assert "run_id: wobbly-1" in (wobbly.flaky_failures()[0].stack_trace or "")
    broken = by_name["broken"]
    assert not broken.is_passed and broken.is_rerun and not broken.is_flaky
    assert [r.type for r in broken.result] == ["clawspec.fail"]
    # the failure is the first failing attempt; the others are its reruns
    assert [f.message for f in broken.rerun_failures()] == ["attempt 3 of 3: fail on attempt 3"]
    assert [e.message for e in broken.rerun_errors()] == ["attempt 2 of 3: error on attempt 2"]
    steady = by_name["steady"]
    assert not steady.is_flaky and not steady.is_rerun
    # the properties stay
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["flaky"] in ("true", "false") and "pass_rate" in props
    wobbly_props = {p.name: p.value for p in wobbly.properties()}
    assert (wobbly_props["flaky"], wobbly_props["attempts"]) == ("true", "2/4")


def test_the_schema_accepts_every_shape_we_write_and_rejects_what_jenkins_skips(
    tmp_path: Path,
) -> None:
    for data in (mixed_report(), rich_report(), rich_report("<b>\ud83d"), report()):
        _valid(write_junit(data, tmp_path / "j.xml").read_bytes())
    # the schema can fail: a time with four decimals, as junit-xml's float sums wrote them
    good = render_junit(mixed_report()).decode("utf-8")
    bad = good.replace('time="1.500"', 'time="155.39999999999998"', 1)
    assert bad != good
    assert not SCHEMA.is_valid(bad)
    assert not SCHEMA.is_valid(good.replace('<failure type="clawspec.fail" ', "<failure ", 1))


def _xunit_schema() -> xmlschema.XMLSchema:
    """The schema without ClawSpec's additions: what the Jenkins xUnit plugin accepts."""
    text = (Path(__file__).parent / "data" / "junit-jenkins.xsd").read_text("utf-8")
    case = text.index('<xs:complexType name="testcase">')
    end = text.index("</xs:complexType>", case)
    body = text[case:end]
    for line in (
        '<xs:element name="properties" type="properties" minOccurs="0"/>',
        '<xs:attribute name="file" type="xs:string"/>',
        '<xs:attribute name="line" type="xs:positiveInteger"/>',
    ):
        assert line in body
        body = body.replace(line, "", 1)
    text = text[:case] + body + text[end:]
    roots = text.index('<xs:element name="testsuites">')
    skipped = '<xs:attribute name="skipped" type="count"/>'
    assert skipped in text[roots:]
    text = text[:roots] + text[roots:].replace(skipped, "", 1)
    return xmlschema.XMLSchema(text)


def test_strict_junit_is_what_the_jenkins_xunit_plugin_accepts() -> None:
    """`junit_strict`: the xUnit plugin checks a file against its own schema and skips it on
    anything more; the strict file keeps the outcomes, reruns and times, drops the extras."""
    strict_schema = _xunit_schema()
    for data in (mixed_report(), rich_report(), _hostile_report()):
        extended = render_junit(data)
        assert not strict_schema.is_valid(extended)  # the extras really are outside it
        strict = render_junit(data, strict=True)
        strict_schema.validate(strict)
        SCHEMA.validate(strict)
        assert [c.name for c in _cases(strict)] == [c.name for c in _cases(extended)]
        root = ET.fromstring(strict)
        assert root.find("testsuite/testcase/properties") is None
        assert all("file" not in c.attrib for c in root.iter("testcase"))
        assert root.find("testsuite/properties") is not None  # a suite's properties are fine


def test_junit_strict_is_a_setting(tmp_path: Path) -> None:
    from clawspec.config.settings import Settings
    from clawspec.reports.publish import publish

    settings = Settings(report_dir=str(tmp_path), junit=str(tmp_path / "j.xml"), junit_strict=True)
    publish(mixed_report(), settings, {})
    _xunit_schema().validate((tmp_path / "j.xml").read_bytes())


def test_a_conversation_names_the_turn_and_keeps_what_was_said_parseable(tmp_path: Path) -> None:
    from clawspec.reports.turns import REPLY_CHARS
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    data = conversation_report()  # the secret unmasked in it: the writer masks it
    with secret_registered():
        rendered = render_junit(data)
        strict = render_junit(data, strict=True)
    text = rendered.decode("utf-8")
    assert_inert(text)
    root = _valid(rendered)  # ElementTree, junitparser, the Surefire/Jenkins schema
    _as_elementtree_writes_it(rendered)
    SCHEMA.validate(strict.decode("utf-8"))
    cases = {case.get("name"): case for case in root.iter("testcase")}
    failure = cases["remembers the name"].find("failure")
    assert failure is not None
    message = "turn 2, then[0] (reply_contains): the reply does not contain 'Zed'"
    assert failure.get("message") == message
    body = (failure.text or "").splitlines()
    assert body[0] == message
    assert body[1].startswith("FAIL turn 2, then[0] reply_contains (")
    assert body[2] == "turn 2 said: What is my name? **bold** <b>tag</b>"
    assert body[3].startswith("turn 2 replied: I don't know **x** <script>alert(1)</script>")
    assert "\ufffd surrogate" in body[3] and "token *** second line" in body[3]
    # system-out: every check with its turn, then the conversation turn by turn, each reply
    # cut to REPLY_CHARS (the JSON report keeps it whole).
    out = (cases["remembers the name"].findtext("system-out") or "").splitlines()
    assert "PASS turn 3, then[0] reply_contains (" in "\n".join(out)
    long = next(line for line in out if line.startswith("turn 3 replied: "))
    assert len(long) == len("turn 3 replied: ") + REPLY_CHARS and long.endswith("…")
    assert "b THE END" not in text  # the end of the long reply was cut
    error = cases["books a table"].find("error")
    assert error is not None
    assert error.get("message") == "turn 2: the gateway closed the chat before a reply (HTTP 502)"
    assert "turn 2 replied: (no reply)" in (error.text or "")
    parsed = {case.name: case for case in _cases(rendered)}
    assert parsed["remembers the name"].result[0].message == message


def test_limits_reply_chars_sets_the_cut_of_what_was_said_and_replied(tmp_path: Path) -> None:
    from tests.reports.conversation_report import conversation_report, secret_registered

    settings = Settings.model_validate(
        {
            "report_dir": str(tmp_path),
            "junit": str(tmp_path / "j.xml"),
            "limits": {"reply_chars": 500},
        }
    )
    with secret_registered():
        publish(conversation_report(), settings, {})
    root = ET.parse(tmp_path / "j.xml").getroot()
    case = next(c for c in root.iter("testcase") if c.get("name") == "remembers the name")
    out = (case.findtext("system-out") or "").splitlines()
    long = next(line for line in out if line.startswith("turn 3 replied: "))
    assert len(long) == len("turn 3 replied: ") + 500 and long.endswith("…")

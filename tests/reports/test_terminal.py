"""The terminal reporter: the line per scenario and the closing list of failures."""

from __future__ import annotations

import io

import pytest

from clawspec.reports.model import CheckRef, ScenarioResult
from clawspec.reports.terminal import TerminalReporter
from tests.reports.factory import CONTRACT, assertion, report, scenario


def _line(result: ScenarioResult) -> str:
    stream = io.StringIO()
    TerminalReporter(stream, colour=False).on_scenario_done(result)
    return stream.getvalue()


def test_a_scenario_that_did_not_pass_shows_its_tags() -> None:
    out = _line(scenario("sends", "fail", tags=["demo-failure", "slow"]))
    assert out.splitlines()[0].endswith("::sends (1.5 s) [tags: demo-failure, slow]")
    assert out.splitlines()[1].strip() == "sends is fail"


def test_a_passing_scenario_or_one_without_tags_shows_none() -> None:
    assert "tags" not in _line(scenario("draft", "pass", tags=["smoke"]))
    assert "tags" not in _line(scenario("draft", "error"))


def test_failures_list_every_scenario_that_did_not_pass_under_its_own_status() -> None:
    """An errored scenario is listed as ERROR (a failed precondition too), one without any
    check is listed by its message, and a failure the scenario's message restates is shown once."""
    given = assertion(
        "fail", "not set or empty: 'TOKEN'", phase="given", type="env_present", line=7
    )
    then = assertion("fail", "no file 'out.md'", index=1, line=12)
    stream = io.StringIO()
    TerminalReporter(stream, colour=False).summary(
        report(
            scenario(
                "needs-token",
                "error",
                given,
                message="precondition given[0] (env_present) failed: not set or empty: 'TOKEN'",
                restates=CheckRef(phase="given", index=0),
                line=5,
            ),
            scenario(
                "greets",
                "error",
                message="invocation failed: gateway unreachable: POST "
                "http://127.0.0.1:9/hooks/agent: connection refused",
                line=20,
            ),
            scenario(
                "writes",
                "fail",
                assertion("pass", "ok"),
                then,
                message="then[1] (artifact_exists): no file 'out.md'",
                restates=CheckRef(phase="then", index=1),
                line=9,
            ),
            scenario("fine", "pass", assertion("pass", "ok")),
        )
    )
    failures = stream.getvalue().split("Failures:\n", 1)[1].split("\n\n", 1)[0]
    assert failures.splitlines() == [
        f"  ERROR {CONTRACT}:7 needs-token > given[0] env_present: not set or empty: 'TOKEN'",
        f"  ERROR {CONTRACT}:20 greets: invocation failed: gateway unreachable: POST "
        "http://127.0.0.1:9/hooks/agent: connection refused",
        f"  FAIL  {CONTRACT}:12 writes > then[1] artifact_exists: no file 'out.md'",
    ]


def test_a_message_that_only_reads_like_a_check_is_still_shown() -> None:
    """Which check a message restates is the result's `restates`, never found in its text: a
    scenario's own message naming a check (here a replay miss) is still said."""
    own = "replay miss: then[0] (artifact_exists) read a file the recording lacks"
    stream = io.StringIO()
    TerminalReporter(stream, colour=False).summary(
        report(scenario("replays", "error", assertion("fail", "'out.md' not found"), message=own))
    )
    failures = stream.getvalue().split("Failures:\n", 1)[1].split("\n\n", 1)[0]
    # The check keeps its own verdict (as in every other output); the scenario's line says
    # why the scenario is an error.
    assert failures.splitlines() == [
        f"  ERROR {CONTRACT}:5 replays: {own}",
        f"  FAIL  {CONTRACT}:12 replays > then[0] artifact_exists: 'out.md' not found",
    ]


def test_a_conversation_names_its_failing_turn_and_what_was_said_and_replied() -> None:
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    data = conversation_report()  # built before the secret is known: the output masks it
    stream = io.StringIO()
    with secret_registered():
        reporter = TerminalReporter(stream, colour=False, total=len(data.scenarios))
        for result in data.scenarios:
            reporter.on_scenario_done(result)
        reporter.summary(data)
    out = stream.getvalue()
    assert_inert(out)
    failures = out.split("Failures:", 1)[1]
    lines = failures.splitlines()
    where = "agents/concierge/tests/conversation.yaml"
    # The restated message is said once, with its check, at the check's line inside turn 2.
    assert f"  FAIL  {where}:14 remembers the name > turn 2, then[0] reply_contains: " in failures
    assert failures.count("the reply does not contain 'Zed'") == 1
    said = next(line for line in lines if line.startswith("      turn 2 said: "))
    replied = next(line for line in lines if line.startswith("      turn 2 replied: "))
    assert said == "      turn 2 said: What is my name? **bold** <b>tag</b>"
    assert "token *** second line" in replied  # one line, the secret masked
    assert "\x1b" not in replied and "\ufffd surrogate" in replied
    # A turn that got no reply: the scenario's own message, at the scenario.
    assert f"  ERROR {where}:27 books a table: turn 2: the gateway closed" in failures
    assert "      turn 2 replied: (no reply)" in lines
    assert "b THE END" not in out  # turn 3 passed: its long reply is not shown


def test_a_name_or_message_with_line_breaks_never_starts_a_line_of_its_own(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On GitHub Actions a line starting `::` is a workflow command: a scenario name (anyone
    opening a pull request writes contracts) must not forge an annotation or stop them."""
    hostile = "stop\n::stop-commands::zzz\r\n::error file=x.yaml,line=1::FORGED"
    failing = assertion(
        "fail", "no file\n::error::FORGED-TOO; reply: ##[stop-commands]tok ##vso[task.x]y \u202eok",
        index=0, line=9,
    )  # fmt: skip
    result = scenario(hostile, "fail", failing, message="why\n::set-output name=x::1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    stream = io.StringIO()
    reporter = TerminalReporter(stream, colour=False)
    reporter.on_scenario_done(result)
    reporter.on_warning("a warning\n::error::FORGED-WARNING")
    reporter.summary(report(result))
    lines = stream.getvalue().splitlines() + capsys.readouterr().err.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::")], lines
    assert "warning: a warning ::error::FORGED-WARNING" in lines, lines
    assert any("stop ::stop-commands::zzz" in line for line in lines), lines
    assert any("no file ::error::FORGED-TOO" in line for line in lines), lines
    # Commands a runner finds anywhere in a line (GitHub's legacy form, Azure's) are inert.
    assert not [line for line in lines if "##[" in line or "##vso[" in line], lines
    assert any("reply: ## [stop-commands]tok ## vso[task.x]y" in line for line in lines), lines
    # A text-direction control would show the line in another order than it is written.
    assert not [line for line in lines if "\u202e" in line], lines

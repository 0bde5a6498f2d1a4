"""The terminal reporter's line per scenario."""

from __future__ import annotations

import io

from clawspec.reports.model import ScenarioResult
from clawspec.reports.terminal import TerminalReporter
from tests.reports.factory import scenario


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

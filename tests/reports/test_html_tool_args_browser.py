"""Tool calls with their arguments in the HTML report, in real headless Chromium: the timeline in
order with lanes, status and duration, each call's arguments as pretty JSON (inert text, cut for
display with a marker, a cut in the report said), and the same in a conversation's turns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.reports.html import write_html
from clawspec.reports.model import ScenarioEvidence, ToolCallRecord
from tests.reports.chat_report import chat_report
from tests.reports.factory import report, scenario
from tests.support.browser import (
    chromium,
    console_messages,
    network_requests,
    open_report,
    require_chromium,
)

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
LONG = "word " * 1000  # 5,000 characters: over the page's 2,000


@pytest.fixture(autouse=True, scope="module")
def _chromium_installed() -> None:
    require_chromium()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _tools() -> list[ToolCallRecord]:
    at = "2026-11-22T10:00:0{}.000+00:00"
    return [
        ToolCallRecord(
            name="write", agent="main", run_id="r1", started_at=at.format(1),
            ended_at=at.format(2), args={"path": "notes.md", "content": HOSTILE},
        ),
        ToolCallRecord(
            name="sessions_spawn", agent="main", run_id="r1", started_at=at.format(2),
            args={"agentId": "reviewer", "task": LONG},
        ),
        ToolCallRecord(
            name="write", agent="reviewer", run_id="r2", started_at=at.format(3),
            ended_at=at.format(5), error=True, args='{"path":"review.md","content":"abc',
            args_cut=True, args_bytes=70000,
        ),
        ToolCallRecord(name="read", agent="reviewer", run_id="r2", started_at=at.format(6)),
    ]  # fmt: skip


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    data = report(scenario("args", "pass", evidence=ScenarioEvidence(tools=_tools())))
    open_report(
        browser,
        write_html(data, tmp_path / "report.html"),
        "#skills/newsletter/tests/scenarios.yaml/args",
    )
    yield browser
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []
    assert network_requests(browser) == []
    assert browser.execute_script("return window.__pwned") is None


def _calls(browser: Any, scope: str) -> list[dict[str, Any]]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(function (li) {"
        " var d = li.querySelector('.tool-args'); return {"
        " name: li.dataset.tool, lane: li.querySelector('.lane-tag').textContent,"
        " error: li.classList.contains('error'), text: li.textContent,"
        " summary: d ? d.querySelector('summary').textContent : null,"
        " args: d ? d.querySelector('pre').textContent : null,"
        " open: d ? d.open : null }; });",
        scope,
    )


def test_each_call_in_order_with_lane_status_duration_and_arguments(page: Any) -> None:
    calls = _calls(page, ".detail:not([hidden]) .timeline .tool-list > li")
    assert [(c["name"], c["lane"], c["error"]) for c in calls] == [
        ("write", "main", False),
        ("sessions_spawn", "main", False),
        ("write", "reviewer", True),
        ("read", "reviewer", False),
    ]
    assert calls[0]["text"].startswith("write main +0 ms \u00b7 1.0 s")  # offset, duration
    assert calls[2]["text"].startswith("write reviewer +2.0 s \u00b7 2.0 s \u26a0 error")
    # Pretty JSON as text: the hostile content is shown, never run (the fixture checks).
    assert calls[0]["args"] == json.dumps({"path": "notes.md", "content": HOSTILE}, indent=2)
    assert calls[0]["summary"] == "arguments" and calls[0]["open"] is False
    assert page.execute_script("return document.querySelectorAll('.detail img').length") == 0
    # Long arguments cut for display, with a marker saying how much.
    whole = json.dumps({"agentId": "reviewer", "task": LONG}, indent=2)
    assert calls[1]["args"] == whole[:2000] + "\u2026"
    assert f"first 2,000 of {len(whole):,} characters shown" in calls[1]["summary"]
    # Cut in the report: the start of the JSON text, and the whole size said.
    assert calls[2]["args"] == '{"path":"review.md","content":"abc\u2026'
    assert "cut in the report: 70,000 bytes in all" in calls[2]["summary"]
    # No record read: no arguments, and nothing pretends there were.
    assert calls[3]["summary"] is None


def test_the_arguments_open_on_a_click(page: Any) -> None:
    summary = page.find_element(
        "css selector", ".detail:not([hidden]) .timeline .tool-list > li .tool-args summary"
    )
    summary.click()
    pre = page.find_element(
        "css selector", ".detail:not([hidden]) .timeline .tool-list > li .tool-args pre"
    )
    assert pre.is_displayed() and '"path": "notes.md"' in pre.text


def test_a_turn_lists_its_calls_with_their_arguments(browser: Any, tmp_path: Path) -> None:
    data = chat_report()
    talk = data.scenarios[0]
    first = talk.turns[0]
    assert first.evidence is not None
    tools = [t.model_copy(update={"args": {"path": f"{t.name}.md"}}) for t in first.evidence.tools]
    turn = first.model_copy(update={"evidence": first.evidence.model_copy(update={"tools": tools})})
    talk = talk.model_copy(update={"turns": [turn, *talk.turns[1:]]})
    data = data.model_copy(update={"scenarios": [talk, *data.scenarios[1:]]})
    open_report(
        browser,
        write_html(data, tmp_path / "report.html"),
        "#agents/helpdesk/tests/chat.yaml/order-chat",
    )
    calls = _calls(browser, ".detail:not([hidden]) .turn-work .tool-list > li")
    assert [(c["name"], c["args"]) for c in calls[: len(tools)]] == [
        (t.name, json.dumps({"path": f"{t.name}.md"}, indent=2)) for t in tools
    ]
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []

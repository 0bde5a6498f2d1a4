"""A conversation in the HTML report, in real headless Chromium: the chat in order, each turn's
work and verdicts between the bubbles, the failing turn marked and open, hostile replies inert,
long replies cut with a marker, no overflow at phone width, no console error, no network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.reports.html import write_html
from tests.reports.chat_report import HOSTILE_SHOWN, LONG_REPLY, chat_report
from tests.support.browser import (
    chromium,
    console_messages,
    network_requests,
    open_report,
    require_chromium,
)

CHAT = "#agents/helpdesk/tests/chat.yaml/order-chat"
SILENT = "#agents/helpdesk/tests/chat.yaml/silent"


@pytest.fixture(autouse=True, scope="module")
def _chromium_installed() -> None:
    require_chromium()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture
def chat(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """The conversation opened by its deep link; no console error and no request meanwhile."""
    open_report(browser, write_html(chat_report(), tmp_path / "report.html"), CHAT)
    yield browser.find_element("css selector", ".detail:not([hidden]) .conversation")
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []
    assert network_requests(browser) == []
    assert browser.execute_script("return window.__pwned") is None


def _bubbles(browser: Any) -> list[list[str]]:
    """(role, text, shown?) of every bubble of the open scenario, in page order."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.detail:not([hidden]) .bubble'))"
        ".map(function (b) { var r = b.getBoundingClientRect();"
        " return [b.dataset.role, b.querySelector('.text').textContent,"
        " r.width > 0 && r.height > 0]; })"
    )


def test_the_chat_shows_every_message_in_order(chat: Any, browser: Any) -> None:
    bubbles = _bubbles(browser)
    assert [b[0] for b in bubbles] == ["user", "agent"] * 3
    assert all(b[2] for b in bubbles)  # every bubble is visible, not only the open turn's
    assert [b[1] for b in bubbles[:3]] == [
        "Hi! Where is order 42?",
        "Order 42 shipped on Monday.\n\nTracking: ZX-1.",
        "And the invoice? <b>now</b>",
    ]
    assert bubbles[3][1] == HOSTILE_SHOWN  # the reply as written: inert text, lines kept
    # user bubbles on the right, agent bubbles on the left
    sides = browser.execute_script(
        "var b = document.querySelectorAll('.detail:not([hidden]) .bubble');"
        "return [b[0].getBoundingClientRect().right, b[1].getBoundingClientRect().left,"
        " b[0].parentNode.getBoundingClientRect().right]"
    )
    assert sides[0] > sides[2] - 20 and sides[1] < sides[0] - 300
    # line breaks and the tab are kept on screen, not only in the text
    style = browser.execute_script(
        "return getComputedStyle(document.querySelectorAll("
        "'.detail:not([hidden]) .bubble .text')[3]).whiteSpace"
    )
    assert style == "pre-wrap"


def test_the_failing_turn_is_marked_and_open_and_the_others_closed(chat: Any, browser: Any) -> None:
    turns = chat.find_elements("css selector", ".chat > .turn")
    assert [t.get_attribute("data-status") for t in turns] == ["pass", "fail", "pass"]
    opened = browser.execute_script(
        "return Array.from(arguments[0]).map(function (t) {"
        " return Array.from(t.querySelectorAll('details')).map(function (d) { return d.open; });"
        "})",
        turns,
    )
    assert opened == [[False, False], [True, True], [False, False]]
    failing = turns[1]
    head = failing.find_element("css selector", ".turn-head").text
    assert head.splitlines() == [
        "Turn 2",
        "✗ failed",
        "900 ms · 800 tokens",
        "agents/helpdesk/tests/chat.yaml:12",
    ]
    assert "reply does not contain 'invoice attached'" in failing.text  # the turn's message
    border = browser.execute_script(
        "return getComputedStyle(arguments[0]).borderLeftColor", failing
    )
    assert border == "rgb(207, 34, 46)"  # the page's colour for a failure
    assert "turn 2 failed" in chat.find_element("css selector", "p.muted").text
    # the failing turn's verdicts: status, type, contract line, message
    checks = failing.find_elements("css selector", ".turn-checks .assertion")
    assert [c.get_attribute("data-type") for c in checks] == ["reply_contains", "no_tool_loop"]
    assert checks[0].text.splitlines() == [
        "✗ failed",
        "then[0] reply_contains",
        "agents/helpdesk/tests/chat.yaml:14",
        "reply does not contain 'invoice attached'",
    ]
    # a closed turn still says what it holds
    summaries = [s.text for s in turns[0].find_elements("css selector", "details > summary")]
    assert summaries == ["2 tool calls · 1,500 tokens", "1 check: ✓ 1 passed"]


def test_each_turns_work_sits_between_its_bubbles(chat: Any, browser: Any) -> None:
    order = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.chat > .turn > *'))"
        ".map(function (n) { return n.dataset.role || n.classList[n.classList.length - 1]; })",
        chat,
    )
    turn = ["turn-head", "user", "turn-work", "agent", "turn-checks"]
    assert order == [*turn, "turn-head", "turn-message", *turn[1:], *turn]
    browser.execute_script(
        "arguments[0].querySelectorAll('details').forEach(function (d) { d.open = true; })", chat
    )
    turns = chat.find_elements("css selector", ".chat > .turn")
    tools = [
        [li.get_attribute("data-tool") for li in t.find_elements("css selector", ".tool-list li")]
        for t in turns
    ]
    assert tools == [["read", "exec"], [], ["sessions_spawn"]]
    assert "⚠ error" in turns[0].find_element("css selector", "li.error").text
    assert "Delegated to: billing" in turns[2].find_element("css selector", ".turn-work").text
    assert "Tokens (plugin): 700 in / 100 out / 800 total" in turns[1].text
    # the turn's run and trace; a trace URL that is not a web address stays text
    assert "Gateway run id chat-2 · Trace local t-2 (javascript:window.__pwned=1)" in turns[1].text
    assert turns[1].find_elements("css selector", ".turn-work a") == []
    # the verdicts on the whole conversation come after the chat, the tokens per turn too
    sections = [
        s.get_attribute("aria-label")
        for s in browser.find_elements("css selector", ".detail:not([hidden]) section.block")
    ]
    assert sections == [
        "Preconditions (1)",
        "Conversation (3 turns)",
        "Checks on the whole conversation (1)",
        "Tokens and cost",
    ]
    tokens = browser.find_element("css selector", ".detail:not([hidden]) table.tokens").text
    assert "Turn 1 (plugin) 1,400 100 1,500 $0.002" in tokens
    # the row of the scenario sums its turns' tokens
    assert "4,700 tok" in browser.find_element("css selector", "#scenario-list > li").text


def test_a_long_reply_is_cut_with_a_marker_and_scrolls_in_its_bubble(
    chat: Any, browser: Any
) -> None:
    bubble = chat.find_elements("css selector", ".bubble-agent")[2]
    text = bubble.find_element("css selector", ".text")
    shown = text.get_attribute("textContent")
    assert len(shown) == 4_000 and shown.endswith("…") and LONG_REPLY.startswith(shown[:-1])
    marker = bubble.find_element("css selector", ".cut")
    assert marker.is_displayed()
    assert marker.text == (
        f"✂ cut: the first 4,000 of {len(LONG_REPLY):,} characters are shown; the JSON report "
        "has the whole text"
    )
    # it scrolls inside the bubble (reachable with the keyboard), so turn 3's checks stay near
    assert text.get_attribute("tabindex") == "0"
    heights = browser.execute_script(
        "return [arguments[0].clientHeight, arguments[0].scrollHeight]", text
    )
    assert heights[0] < heights[1] and heights[0] < 700


def test_a_turn_without_a_reply_says_so(browser: Any, tmp_path: Path) -> None:
    open_report(browser, write_html(chat_report(), tmp_path / "report.html"), SILENT)
    turn = browser.find_element("css selector", ".detail:not([hidden]) .turn")
    assert turn.get_attribute("data-status") == "error"
    agent = turn.find_element("css selector", ".bubble-agent")
    assert agent.text == "Agent\nno reply"
    assert "no log or trace evidence" in turn.text and "no check on this turn" in turn.text
    assert "the agent sent no reply" in turn.text


def test_opening_everything_runs_no_injected_script(browser: Any, tmp_path: Path) -> None:
    open_report(browser, write_html(chat_report(), tmp_path / "report.html"))
    browser.execute_script(
        "document.querySelectorAll('.row').forEach(function (b) { b.click(); });"
        "document.querySelectorAll('details').forEach(function (d) { d.open = true; });"
    )
    assert browser.execute_script("return window.__pwned") is None
    assert browser.execute_script("return document.querySelectorAll('script').length") == 3
    assert (
        browser.execute_script(
            "return document.querySelectorAll('img, .conversation b, .conversation strong,"
            ' [onerror], a[href^="javascript"]\').length'
        )
        == 0
    )
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []


def test_the_chat_fits_a_phone_screen(tmp_path: Path) -> None:
    path = write_html(chat_report(), tmp_path / "report.html")
    with chromium(tmp_path / "profile", 390, 1400) as driver:
        open_report(driver, path, CHAT)
        widths = driver.execute_script(
            "return [document.documentElement.clientWidth, document.documentElement.scrollWidth]"
        )
        assert widths[1] <= widths[0], f"horizontal overflow at 390px: {widths}"
        assert console_messages(driver) == [] and network_requests(driver) == []

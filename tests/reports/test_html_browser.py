"""The HTML report in real headless Chromium: totals, filters, deep links, timeline, waterfall,
keyboard, dark mode, layout at 1280 and 390 px, no console error, no network, and no XSS."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.reports.html import write_html
from clawspec.reports.model import RunReport
from tests.reports.factory import assertion, report, scenario
from tests.reports.rich_report import rich_report
from tests.support.browser import (
    chromium,
    console_messages,
    network_requests,
    open_report,
    page_totals,
    require_chromium,
    screenshot_variance,
    visible_rows,
)


@pytest.fixture(autouse=True, scope="module")
def _chromium_installed() -> None:
    require_chromium()


DELEGATES = "agents/orchestrator/tests/scenarios.yaml/delegates-review"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """The rich report opened in the browser; no console error and no request on the way."""
    path = write_html(rich_report(), tmp_path / "report.html")
    open_report(browser, path)
    yield browser
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []
    assert network_requests(browser) == []


def _open_detail(driver: Any, timeout_s: float = 10.0) -> list[str]:
    """Names of the scenarios whose detail is open, once one is: a link opens it from the
    `hashchange` event, which the browser fires after the click returns (slow on a busy CI)."""
    script = (
        "return Array.from(document.querySelectorAll('.detail'))"
        ".filter(function (d) { return !d.hidden; })"
        ".map(function (d) { return d.querySelector('h2').textContent; })"
    )
    deadline = time.monotonic() + timeout_s
    while not (names := driver.execute_script(script)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return names


def test_totals_match_the_report(page: Any) -> None:
    assert page_totals(page) == {"all": 5, "pass": 1, "fail": 1, "error": 1, "warn": 1, "skip": 1}
    text = page.find_element("id", "totals").text
    assert "5 scenarios" in text and "1 failed" in text and "✗" in text  # icon and word


def test_status_tag_and_text_filters_change_thevisible_rows(page: Any) -> None:
    everything = ["delegates-review", "writes-draft", "provider-down", "judged", "verbose"]
    assert visible_rows(page) == everything
    page.find_element("css selector", "[data-filter-status='pass']").click()
    assert "writes-draft" not in visible_rows(page)
    assert page.find_element("id", "shown").text == "Showing 4 of 5 scenarios"
    page.find_element("css selector", "[data-filter-status='pass']").click()
    page.find_element("css selector", "[data-filter-tag='nightly']").click()
    assert visible_rows(page) == ["delegates-review", "verbose"]
    page.find_element("css selector", "[data-filter-tag='nightly']").click()
    search = page.find_element("id", "search")
    search.send_keys("HTTP 500")
    assert visible_rows(page) == ["provider-down"]
    search.clear()
    search.send_keys("x")
    search.send_keys("\ue00c")  # Escape clears the search
    assert visible_rows(page) == everything


def test_changes_come_first_and_link_to_the_scenarios(page: Any) -> None:
    sections = page.execute_script(
        "return Array.from(document.querySelectorAll('main > section')).map(s => s.id)"
    )
    assert sections == ["changes", "scenarios"]
    regressed = page.find_element("css selector", "[data-change='regressed']")
    assert "regressed (1)" in regressed.text and "pass → fail" in regressed.text
    regressed.find_element("css selector", "a").click()
    assert _open_detail(page) == ["✗ failed delegates-review"]
    assert "flaky (0)" in page.find_element("css selector", "[data-change='flaky']").text
    changes = page.find_element("id", "changes").text
    assert "pass rate 66.7 % (was 100 %) · p = 0.040" in changes
    assert "What fails a regression run\ntotal tokens 1 → 2 (+100%, tolerance 15%)" in changes
    assert (
        "shards 1 of 2; missing 2; 5 scenarios in no report"
        in page.find_element("tag name", "header").text
    )


def test_deep_link_opens_the_right_scenario(browser: Any, tmp_path: Path) -> None:
    path = write_html(rich_report(), tmp_path / "report.html")
    open_report(browser, path, "#skills/newsletter/tests/scenarios.yaml/provider-down")
    assert _open_detail(browser) == ["! errored provider-down"]
    assert browser.switch_to.active_element.text == "! errored provider-down"
    browser.execute_script(f"location.hash = '{DELEGATES}'")
    assert "✗ failed delegates-review" in _open_detail(browser)
    # every row links to itself: the link of one row is its own deep link
    href = browser.find_element("css selector", "#scenario-list > li .permalink")
    assert href.get_attribute("href").endswith("#" + DELEGATES)


def test_timeline_lists_the_tools_in_order_in_agent_lanes(page: Any) -> None:
    page.execute_script(f"location.hash = '{DELEGATES}'")
    detail = page.find_element("css selector", "#scenario-list > li .detail")
    tools = [
        li.get_attribute("data-tool")
        for li in detail.find_elements("css selector", ".tool-list li")
    ]
    assert tools == ["sessions_spawn", "write", "exec"]
    lanes = [el.text for el in detail.find_elements("css selector", ".lane-name")]
    assert lanes == ["main", "brand"]
    error = detail.find_elements("css selector", ".tool-list li.error")
    assert len(error) == 1 and "⚠ error" in error[0].text
    assert "Delegated to: brand" in detail.text


def test_waterfall_has_one_bar_per_span_nested_with_llm_and_error_facts(page: Any) -> None:
    page.execute_script(f"location.hash = '{DELEGATES}'")
    detail = page.find_element("css selector", "#scenario-list > li .detail")
    bars = detail.find_elements("css selector", ".span-bar")
    assert [bar.get_attribute("data-span-id") for bar in bars] == [
        "s1",
        "s2",
        "s3",
        "s4",
        "s5",
        "s6",
    ]
    rows = detail.find_elements("css selector", ".span-row")
    assert "claude-sonnet" in rows[2].text and "800 in / 60 out" in rows[2].text
    assert "⚠ error: exec denied" in rows[5].text and "error" in rows[5].get_attribute("class")
    indents = [
        page.execute_script("return getComputedStyle(arguments[0]).paddingLeft", label)
        for label in detail.find_elements("css selector", ".span-label")
    ]
    assert indents[0] == "0px" and indents[1] != "0px"  # children are indented under parents
    # bars are placed by start time: the root starts first and spans the whole trace
    left = [float(bar.value_of_css_property("left").rstrip("px")) for bar in bars]
    assert left[0] == min(left) and left[5] > left[3]
    assert "3 more spans left out" in detail.text


def test_golden_diff_judge_tokens_attempts_and_trend(page: Any) -> None:
    page.execute_script(f"location.hash = '{DELEGATES}'")
    detail = page.find_element("css selector", "#scenario-list > li .detail")
    golden = detail.find_element("css selector", "[data-type='artifact_matches_golden']")
    assert "ROUGE-L F1 score 0.41 (threshold 0.7)" in golden.text
    assert [
        e.get_attribute("textContent") for e in golden.find_elements("css selector", ".dl-del")
    ] == ["removed: -On brand."]
    assert [
        e.get_attribute("textContent") for e in golden.find_elements("css selector", ".dl-add")
    ] == ["added: +Off brand."]
    judge = detail.find_element("css selector", "[data-type='llm_judge']")
    assert "Score 1-5: is it on brand?" in judge.find_element("css selector", ".rubric").text
    calls = [li.text for li in judge.find_elements("css selector", ".judge-calls li")]
    assert calls == ["call 1: score 4 — Clear and on brand.", "call 2: score 5 — Persuasive."]
    tokens = detail.find_element("css selector", "table.tokens").text
    assert "Agent run (plugin) 2,100 116 2,216 $0.0051" in tokens
    assert "Judge: then[2] claude-judge 900 120 1,020 $0.0045" in tokens
    assert "2 of 3 attempts passed" in detail.text
    assert detail.find_elements("css selector", "svg.spark polyline")
    assert "100 %, 100 %, 66.7 %" in detail.text


def test_a_token_count_the_plugin_disagrees_with_is_said_under_the_table(
    browser: Any, tmp_path: Path
) -> None:
    """Tokens counted from OpenClaw's run record where ClawSpec's plugin counted otherwise: the
    page says what the plugin counted, as the terminal and the job summary do."""
    rich = rich_report()
    differ = "the plugin's events count input 2,000, total 2,116 (the run record: input 2,100)"
    scenarios = []
    for s in rich.scenarios:
        ev = s.evidence
        if ev is None or ev.tokens is None:
            scenarios.append(s)
            continue
        tokens = ev.tokens.model_copy(update={"source": "run record", "disagreement": differ})
        evidence = ev.model_copy(update={"tokens": tokens})
        scenarios.append(s.model_copy(update={"evidence": evidence}))
    path = write_html(rich.model_copy(update={"scenarios": scenarios}), tmp_path / "report.html")
    open_report(browser, path)
    browser.execute_script(f"location.hash = '{DELEGATES}'")
    detail = browser.find_element("css selector", "#scenario-list > li .detail")
    tokens = detail.find_element("css selector", "table.tokens").text
    assert "Agent run (run record) 2,100 116 2,216 $0.0051" in tokens
    said = [p.text for p in detail.find_elements("css selector", ".token-disagreement")]
    assert said == [f"Counted from the run record; {differ}"]


def test_keyboard_alone_filters_and_opens_a_scenario(page: Any) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page.find_element("tag name", "h1").click()
    ActionChains(page).send_keys("/").perform()
    assert page.switch_to.active_element.get_attribute("id") == "search"
    ActionChains(page).send_keys("verbose").perform()
    assert visible_rows(page) == ["verbose"]
    ActionChains(page).send_keys(Keys.TAB).perform()  # hidden rows are skipped
    focused = page.switch_to.active_element
    assert focused.get_attribute("aria-expanded") == "false"
    ActionChains(page).send_keys(Keys.ENTER).perform()
    assert focused.get_attribute("aria-expanded") == "true"
    assert _open_detail(page) == ["⚠ warned verbose"]


def test_dark_mode_follows_the_system_setting(browser: Any, tmp_path: Path) -> None:
    path = write_html(rich_report(), tmp_path / "report.html")
    background = "return getComputedStyle(document.body).backgroundColor"
    try:
        browser.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
        )
        open_report(browser, path)
        assert browser.execute_script(background) == "rgb(13, 17, 23)"
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    open_report(browser, path)
    assert browser.execute_script(background) == "rgb(255, 255, 255)"


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots_are_not_blank_and_nothing_overflows(tmp_path: Path, width: int) -> None:
    path = write_html(rich_report(), tmp_path / "report.html")
    with chromium(tmp_path / "profile", width, 1400) as driver:
        open_report(driver, path, "#" + DELEGATES)
        driver.execute_script("window.scrollTo(0, 0)")
        shot = tmp_path / f"report-{width}.png"
        assert driver.save_screenshot(str(shot))
        assert screenshot_variance(shot) > 200, f"blank screenshot {shot}"
        widths = driver.execute_script(
            "return [document.documentElement.clientWidth, document.documentElement.scrollWidth]"
        )
        assert widths[1] <= widths[0], f"horizontal overflow at {width}px: {widths}"
        assert console_messages(driver) == [] and network_requests(driver) == []


PAYLOADS = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "\"'><svg onload=window.__pwned=1>",
    "javascript:window.__pwned=1",
    "<!--<script>window.__pwned=1//-->\u2028\u2029&lt;",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_injected_markup_in_every_field_never_runs(
    browser: Any, tmp_path: Path, payload: str
) -> None:
    data = rich_report(payload)
    path = write_html(data, tmp_path / "report.html")
    open_report(browser, path)
    # open every scenario and every <details>, so every field is rendered
    browser.execute_script(
        "document.querySelectorAll('.row').forEach(function (b) { b.click(); });"
        "document.querySelectorAll('details').forEach(function (d) { d.open = true; });"
    )
    assert browser.execute_script("return window.__pwned") is None
    # the report data, the judge types from the registry, the page's script: no injected one
    assert browser.execute_script("return document.querySelectorAll('script').length") == 3
    assert (
        browser.execute_script(
            "return document.querySelectorAll("
            "'img, svg[onload], [onerror], a[href^=\"javascript\"]').length"
        )
        == 0
    )
    text = browser.execute_script("return document.body.textContent")
    assert text.count(payload) >= 20  # shown as text, in names, messages, tools, spans, ...
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []
    # the deep link of a scenario named with the payload opens it
    row = browser.find_element("css selector", "#scenario-list > li .permalink")
    browser.execute_script("location.hash = arguments[0]", row.get_attribute("hash"))
    assert payload in _open_detail(browser)[0]
    assert browser.execute_script("return window.__pwned") is None


def test_thousands_of_scenarios_render_and_filter(browser: Any, tmp_path: Path) -> None:
    many: RunReport = report(
        *(
            scenario(
                f"s{i}", "fail" if i % 10 == 0 else "pass", assertion("pass"), tags=[f"t{i % 3}"]
            )
            for i in range(2000)
        )
    )
    path = write_html(many, tmp_path / "report.html")
    open_report(browser, path)
    assert len(visible_rows(browser)) == 2000
    browser.find_element("css selector", "[data-filter-status='pass']").click()
    assert len(visible_rows(browser)) == 200


def test_the_header_says_what_a_changed_only_run_left_out(browser: Any, tmp_path: Path) -> None:
    from clawspec.reports.model import SelectionInfo

    selection = SelectionInfo(
        changed_since="auto",
        commit="1a2b3c4d5e6f",
        changed_files=3,
        selected=2,
        total=140,
        left_out=[f"c.yaml::s{i}" for i in range(138)],
    )
    path = write_html(
        rich_report().model_copy(update={"selection": selection}), tmp_path / "r.html"
    )
    open_report(browser, path)
    header = browser.find_element("tag name", "header").text
    assert "Selection\nran 2 of 140 scenarios: 138 unaffected by changes since 1a2b3c4" in header
    open_report(browser, write_html(rich_report(), tmp_path / "plain.html"))
    assert "Selection" not in browser.find_element("tag name", "header").text


def test_variants_show_side_by_side_and_link_to_their_runs(browser: Any, tmp_path: Path) -> None:
    from tests.reports.test_variants_side_by_side import three_variants

    path = write_html(three_variants(), tmp_path / "report.html")
    open_report(browser, path)
    block = browser.find_element("id", "variants")
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#variants tr'))"
        ".map(r => Array.from(r.children).map(c => c.textContent))"
    )
    assert rows[0] == ["Scenario", "sonnet (reference)", "haiku", "mini (advisory)"]
    tools = next(r for r in rows if r[0].startswith("tools"))
    assert tools[1:] == ["✓ pass", "✗ fail ↘ regressed", "✗ fail ↘ regressed"]
    assert ["cost", "$0.06", "$0.012", "unknown (3 runs unpriced)"] in rows
    assert "haiku against sonnet: 1 regressed, 2 unchanged; fails the job" in block.text
    cell = block.find_element("css selector", "td[data-change='regressed'] a")
    cell.click()
    assert _open_detail(browser) == ["✗ failed tools @ haiku"]
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []


def test_the_header_says_spend_and_a_missing_baseline_as_every_other_output(
    browser: Any, tmp_path: Path
) -> None:
    """Tokens as the run counted them (every attempt; a run without usage makes it `at
    least`, never a smaller total read as complete), and a baseline asked for but not found
    said as such, with no empty "changes" block that would read as "nothing changed"."""
    from clawspec.reports.model import BudgetReport, Comparison

    spent = BudgetReport(planned=4, runs=4, tokens=296, unmetered_runs=1, unpriced_runs=4)
    found = report(scenario("a", "pass"), scenario("b", "fail")).model_copy(
        update={"budget": spent, "comparison": Comparison(baseline_missing="none stored")}
    )
    open_report(browser, write_html(found, tmp_path / "r.html"))
    header = browser.find_element("tag name", "header").text
    assert "Tokens\nat least 296 tokens (1 run without usage)" in header
    assert "Cost\nunknown (4 runs unpriced)" in header
    assert "Baseline\nnone: none stored" in header
    assert browser.execute_script("return document.getElementById('changes')") is None


def test_a_tag_named_like_an_object_property_filters_like_any_other(
    browser: Any, tmp_path: Path
) -> None:
    found = report(
        scenario("a", "pass", tags=["constructor", "__proto__"]),
        scenario("b", "pass", tags=["smoke"]),
        scenario("c", "pass", tags=["toString"]),
    )
    open_report(browser, write_html(found, tmp_path / "r.html"))
    chips = browser.execute_script(
        "return Array.from(document.querySelectorAll('.tag-chip'))"
        ".map(function (b) { return b.textContent; })"
    )
    assert chips == ["#__proto__ (1)", "#constructor (1)", "#smoke (1)", "#toString (1)"]
    browser.find_element("css selector", "[data-filter-tag='smoke']").click()
    assert visible_rows(browser) == ["b"]

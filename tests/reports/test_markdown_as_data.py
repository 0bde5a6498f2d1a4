"""Text from contracts, agents and state files shows as data on GitHub, never as markup.

The job summary, the PR comment (posted to a local REST API), the trend table and the check run
(likewise) are built from hostile text and rendered with cmark-gfm, GitHub's renderer, with the
extensions GitHub uses and raw HTML kept, so that HTML getting through would show. What GitHub
adds after rendering (mentions, issue and commit references) is checked on the rendered text
outside code, where GitHub looks for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from clawspec.ci_context import CIContext
from clawspec.config.settings import RegressionSettings
from clawspec.errors import ExitCode
from clawspec.regression.apply import with_regression
from clawspec.reports.github.check_run import publish_check_run
from clawspec.reports.github.markdown import (
    code_block,
    code_span,
    inline,
    link,
    link_target,
    table_cell,
)
from clawspec.reports.github.pr_comment import publish_pr_comment
from clawspec.reports.github.summary import render_summary
from clawspec.reports.model import BaselineRef, RunReport, ScenarioTrend, TraceRef
from clawspec.reports.outcome import RunOutcome
from tests.regression.test_compare import evidence
from tests.reports.factory import assertion, report, scenario
from tests.support.github_api import GitHubApiServer, pull_request_environ

TOKEN = "ghs_markdown_token_0123456789"
SHA = "3f2c1ab9d0e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4"
# Input → what a reader must see (the same text, on one line, without control characters).
HOSTILE = {
    "![x](https://evil.example/x.png)": None,
    "[click](https://evil.example)": None,
    "<img src=x onerror=alert(1)>": None,
    "<details><summary>open</summary>": None,
    "<!-- hidden": None,
    "<script>alert(1)</script>": None,
    "@someone and @org/team": None,
    "#12 owner/repo#3 GH-1": None,
    "https://evil.example www.evil.example alice@evil.example": None,
    f"commit {SHA} or {SHA[:7]}": None,
    "``a```b` ticks": None,
    "a|b | c": None,
    "r&d &amp; &#64;x &copy;": None,
    "back\\slash \\| \\* end\\": None,
    "*em* _em_ __strong__ ~~del~~ $x^2$": None,
    "[^1] :tada: - [ ] task": None,
    "1. list": None,
    "# heading": None,
    "> quote": None,
    "line one\nline two\r\n| --- |": "line one line two | --- |",
    "ctl\x1b[31mred\x1b[0m\x07bell": "ctlredbell",
    "lone \ud800 surrogate": "lone \ufffd surrogate",
}
SEEN = {raw: seen or raw for raw, seen in HOSTILE.items()}
TRACE = "http://127.0.0.1:6006/trace/{}?a=1&b=(2)"
ODD_URL = "http://127.0.0.1:6006/x y|z<w>"
# The links ClawSpec puts there: the trace links, unsafe characters percent-encoded.
HREFS = {f"http://127.0.0.1:6006/trace/{n}?a=1&b=%282%29" for n in range(len(HOSTILE))} | {
    "http://127.0.0.1:6006/x%20y%7Cz%3Cw%3E"
}
ALLOWED_TAGS = {
    "h2",
    "h3",
    "p",
    "strong",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "li",
    "code",
    "blockquote",
    "sub",
    "a",
}
ZERO_WIDTH = "\u200b"
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9-]+")
ISSUE = re.compile(r"(?<!\w)#[0-9]+|[\w.-]+/[\w.-]+#[0-9]+|(?i:\bgh-[0-9]+)")
COMMIT = re.compile(r"(?<![0-9A-Za-z])(?=[a-fA-F]*[0-9])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")
AUTOLINK = re.compile(r"://|(?i:www\.)|[\w.+-]@[\w-]")


def render(markdown: str) -> str:
    """HTML as GitHub's renderer makes it: its extensions, footnotes, and raw HTML kept."""
    options = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options)


class Page(HTMLParser):
    """The parts of rendered HTML the assertions look at."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.hrefs: list[str] = []
        self.comments: list[str] = []
        self.prose: list[str] = []  # text outside code: where GitHub links and mentions
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._code = 0
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")
        elif tag == "code":
            self._code += 1
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "code":
            self._code -= 1
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).replace(ZERO_WIDTH, ""))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if not self._code:
            self.prose.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    @property
    def visible(self) -> str:
        return "".join(self.text).replace(ZERO_WIDTH, "")


def hostile_report() -> RunReport:
    """Every text field a report shows, each scenario with one hostile text in all of them."""
    current, baseline = [], []
    for number, raw in enumerate(HOSTILE):
        usage = {"model": raw, "calls": 1, "input_tokens": 10, "output_tokens": 1, "cost_usd": 0.1}
        trace = TraceRef(backend=raw, id=raw, url=TRACE.format(number))
        current.append(
            scenario(
                raw,
                "fail",
                assertion("fail", raw, type=raw, usage=usage),
                contract=f"tests/{raw}",
                message=raw,
                trace=trace,
                evidence=evidence(),
            )
        )
        baseline.append(scenario(raw, "pass", contract=f"tests/{raw}", evidence=evidence(raw)))
    current.append(
        scenario("bad links", "fail", trace=TraceRef(backend="js", id="1", url="javascript:x()"))
    )
    current.append(scenario("odd url", "fail", trace=TraceRef(backend="o", id="2", url=ODD_URL)))
    ref = BaselineRef(source="dir:h", branch="[b](https://evil.example) @dev #7", commit=SHA)
    done = with_regression(
        report(*current), RegressionSettings(), baseline=report(*baseline), ref=ref
    )
    trends = [
        ScenarioTrend(
            id=f"c::{raw}", name=raw, runs=[raw, "this run"], pass_rates=[1.0, 0.5], tokens=[1, 2]
        )
        for raw in HOSTILE
    ]
    return done.model_copy(update={"trends": trends, "run_id": "run <b>@x</b>", "version": "1 #2"})


def assert_shown_as_data(markdown: str, comments: tuple[str, ...] = ()) -> Page:
    page = Page(render(markdown))
    assert page.tags <= ALLOWED_TAGS, page.tags - ALLOWED_TAGS
    assert set(page.hrefs) <= HREFS
    assert [c.strip() for c in page.comments] == list(comments)
    prose = "".join(page.prose)
    for pattern in (MENTION, ISSUE, COMMIT, AUTOLINK):
        assert not pattern.search(prose), (pattern.pattern, pattern.findall(prose))
    return page


def test_the_job_summary_shows_hostile_text_as_data() -> None:
    page = assert_shown_as_data(render_summary(hostile_report()))
    assert len(page.hrefs) == len(HOSTILE) + 1  # the trace links, and only those
    assert set(page.hrefs) == HREFS
    tables = {}
    header: list[str] = []
    for row in page.rows:
        if not row or row[0] in ("Status", "Model", "Scenario", "Total", "Scenarios"):
            header = row
            tables[row[0]] = []
            continue
        assert len(row) == len(header), (header, row)  # no pipe split a row
        tables[header[0]].append(row)
    scenarios = {row[1]: row for row in tables["Status"]}
    for seen in SEEN.values():
        assert scenarios[seen][2] == f"tests/{seen}:5"
        assert scenarios[seen][4] == (seen if len(seen) <= 40 else seen[:39] + "…")  # label
    assert scenarios["bad links"][4] == "1 (js)"  # no link (not an http(s) URL): the id
    assert sorted(row[0] for row in tables["Model"]) == sorted([*SEEN.values(), "total"])
    assert sorted(row[0] for row in tables["Scenario"]) == sorted(SEEN.values())


def test_the_visible_text_reads_as_the_input() -> None:
    text = render_summary(hostile_report())
    visible = Page(render(text)).visible
    for seen in SEEN.values():
        assert f"{seen} (tests/{seen}:5): {seen}" in visible  # scenario, contract, message
        assert f"then[0] {seen}: {seen} (tests/{seen}:12)" in visible  # type, message
        assert f"tool removed: '{seen}'" in visible
    assert "Regressions since [b](https://evil.example) @dev #7 @ 3f2c1ab: " in visible
    assert "ClawSpec 1 #2 · run run <b>@x</b>" in visible
    assert "r&d &amp; &#64;x &copy;" in visible and "r&amp;d" not in visible
    assert "a|b | c" in visible and "a\\|b" not in visible  # no escape shows


def test_a_missing_baseline_reason_is_data_too() -> None:
    current = report(scenario("s", "fail", assertion("fail", "x")))
    reason = "no run of '@lead' on [main](https://evil.example) #4 <b>"
    text = render_summary(with_regression(current, RegressionSettings(), missing=reason))
    page = assert_shown_as_data(text)
    assert f"No baseline found: {reason}; judged by the normal exit policy." in page.visible


@pytest.fixture
def api() -> Iterator[GitHubApiServer]:
    with GitHubApiServer(TOKEN) as server:
        yield server


def test_the_pr_comment_shows_hostile_text_as_data(api: GitHubApiServer, tmp_path: Path) -> None:
    environ = pull_request_environ(api.url, tmp_path)
    result = publish_pr_comment(
        hostile_report(), CIContext.from_environ(environ), TOKEN, sleep=lambda s: None
    )
    assert result is not None and result.action == "created"
    (comment,) = api.comments(7)
    body = comment["body"]
    fingerprint = re.search(r"<!-- (clawspec-verdicts:[0-9a-f]{16}) -->", body)
    assert fingerprint is not None
    page = assert_shown_as_data(body, ("clawspec:CI:test", fingerprint.group(1)))
    assert len(page.hrefs) == len(HOSTILE) + 1
    for seen in SEEN.values():
        assert f"{seen} (tests/{seen}:5): {seen}" in page.visible


def test_the_check_run_summary_and_text_show_hostile_text_as_data(
    api: GitHubApiServer, tmp_path: Path
) -> None:
    environ = {**pull_request_environ(api.url, tmp_path), "GITHUB_SHA": "d" * 40}
    context = CIContext.from_environ(environ)
    publish_check_run(
        hostile_report(),
        context,
        TOKEN,
        RunOutcome(ExitCode.FAILED, "failure"),
        sleep=lambda s: None,
    )
    (run,) = api.check_runs()
    output = run["output"]
    summary = assert_shown_as_data(output["summary"])
    assert summary.hrefs == []
    assert "Regressions since [b](https://evil.example) @dev #7 @ 3f2c1ab: " in summary.visible
    text = assert_shown_as_data(output["text"])
    assert len(text.hrefs) == len(HOSTILE) + 1
    assert "<" not in output["title"] and "[" not in output["title"]


def test_inline_text_and_table_cells() -> None:
    assert inline("a|b") == "a|b"  # a pipe matters only in a table
    assert table_cell("a|b") == "a\\|b"
    assert inline("r&d") == "r&amp;d"
    assert inline("snake_case_name _em_") == "snake_case_name \\_em\\_"
    assert inline("@team #12 GH-3") == "@&#8203;team #&#8203;12 GH-&#8203;3"
    assert inline("1. first") == "1\\. first"
    assert inline("- item") == "\\- item"
    assert inline("0.1.0 - a") == "0.1.0 - a"
    assert inline("x" * 20, 10) == "x" * 9 + "…"
    assert inline("a\ufdd0b") == "a\ufffdb"  # the internal mark never comes from the input


def test_code_spans_take_a_longer_fence_and_no_entities() -> None:
    assert code_span("r&d <b>") == "`r&d <b>`"
    assert code_span("a ``b`` c") == "```a ``b`` c```"
    assert code_span("`tick") == "`` `tick ``"
    assert code_span("a|b") == "`a|b`"
    assert code_span("a|b", table=True) == "`a\\|b`"
    assert code_span("") == ""
    for raw in ("r&d", "`x`", "a ``b``", "&amp;"):
        assert Page(render(code_span(raw))).visible == raw + "\n"


def test_code_blocks_keep_lines_and_outlast_backtick_fences() -> None:
    raw = "line 1\n```\n<img src=x>\n````"
    block = code_block(raw, "text")
    assert block.startswith("`````text\n") and block.endswith("\n`````")
    page = Page(render(block))
    assert page.tags == {"pre", "code"}
    assert page.visible.rstrip("\n") == raw


def test_links_only_to_http_urls_with_the_label_as_data() -> None:
    assert link("phoenix", "http://h/t?a=1&b=2") == "[phoenix](http://h/t?a=1&amp;b=2)"
    assert link("x", "javascript:alert(1)") == "x"
    assert link("x", "https:///no-host") == "x"
    assert link("![i](y)", None) == "!\\[i\\](y)"
    assert link("a|b", "http://h/(p) q|r", table=True) == "[a\\|b](http://h/%28p%29%20q%7Cr)"
    assert link_target("http://[::1]:8/x") == "http://[::1]:8/x"
    page = Page(render(link("[x](http://evil.example)", "http://h/?q=&amp;")))
    assert page.hrefs == ["http://h/?q=&amp;"]
    assert page.visible.strip() == "[x](http://evil.example)"


def test_lint_and_coverage_summaries_show_hostile_text_as_data() -> None:
    """`clawspec lint` and `clawspec coverage` write job-summary sections too: the linted files'
    paths and messages, and the workspace's target names, are data there as well."""
    from clawspec.authoring.coverage import CoverageReport, TargetCoverage
    from clawspec.authoring.coverage_output import render_summary as coverage_summary
    from clawspec.authoring.workspace import Target
    from clawspec.lint.engine import Finding, LintReport
    from clawspec.lint.output import render_summary as lint_summary

    findings = [Finding("rule-x", "error", f"skills/{raw}/SKILL.md", 3, 1, raw) for raw in HOSTILE]
    page = assert_shown_as_data(lint_summary(LintReport(["SKILL.md"], findings), strict=False))
    for raw in HOSTILE:
        assert SEEN[raw] in page.visible
    targets = [TargetCoverage(Target("skill", raw, raw), scenarios=1) for raw in HOSTILE]
    unknown = [f"skills/{raw}/tests/scenarios.yaml" for raw in HOSTILE]
    page = assert_shown_as_data(coverage_summary(CoverageReport(targets, unknown=unknown)))
    for raw in HOSTILE:
        assert SEEN[raw] in page.visible


def test_ids_and_addresses_are_code_that_copies_as_written() -> None:
    """A SHA-like id, a URL and a www. host in running text are code spans: GitHub links none
    of them, and the text copied from the page is the text, without zero-width spaces."""
    raw = (
        f"run bc51bde4d0a1 (POST http://127.0.0.1:18789/hooks/agent), commit {SHA[:7]}; "
        "see www.example.org. uuid 123e4567-e89b-12d3-a456-426614174000"
    )
    assert inline(raw) == (
        "run `bc51bde4d0a1` (POST `http://127.0.0.1:18789/hooks/agent`), "
        f"commit `{SHA[:7]}`; see `www.example.org`. uuid "
        "`123e4567-e89b-12d3-a456-426614174000`"
    )
    page = assert_shown_as_data(inline(raw))
    assert "".join(page.text) == raw + "\n"  # no zero-width space anywhere
    # Backticks and pipes in an id: a longer fence, and the pipe escaped only in a table.
    assert inline("id `abc1234|x`") == "id `` `abc1234|x` ``"
    assert table_cell("id abc1234|x") == "id `abc1234\\|x`"
    for hostile in ("id `abc1234|x`", "a ``http://h/x`` b"):
        assert Page(render(inline(hostile))).visible == hostile + "\n"
    # A word that only contains hex inside a longer word, or no digit, stays text.
    assert inline("deadbeefcafe xabc1234") == "deadbeefcafe xabc1234"

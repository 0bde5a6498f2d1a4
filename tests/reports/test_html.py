"""The HTML report as a file: self-contained, data embedded safely, secrets masked, written by
the publish step (so also for interrupted runs and `merge`). The browser tests are next door."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from clawspec import secrets as registry
from clawspec.cli import build_parser
from clawspec.commands.options import run_flags
from clawspec.config.settings import Settings
from clawspec.reports.html import embed_json, render_html
from clawspec.reports.json_report import dumps_clean, render_json
from clawspec.reports.model import RunReport
from clawspec.reports.publish import publish
from tests.reports.factory import mixed_report, report, scenario
from tests.reports.rich_report import rich_report

DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def _embedded(page: str) -> dict:
    match = DATA.search(page)
    assert match is not None
    return json.loads(match.group(1))


def test_embedded_json_cannot_end_its_element_and_means_the_same() -> None:
    text = "</script><!-- & \u2028\u2029 <script>"
    embedded = embed_json({"k": text})
    assert not set("<>&\u2028\u2029") & set(embedded)
    assert json.loads(embedded) == {"k": text}


def test_the_page_holds_the_report_model_and_nothing_from_elsewhere() -> None:
    data = rich_report()
    page = render_html(data)
    assert RunReport.model_validate(_embedded(page)) == data  # one source of truth
    # the report, its context (the judge's assertion types, from the registry; sentences built
    # in Python), the page's own script
    assert page.count("<script") == 3 and page.count("<style>") == 1
    context = re.search(r'id="report-context">(.*?)</script>', page).group(1)
    assert json.loads(context) == {
        "judge": ["agent_identity_consistent", "llm_judge"],
        "selection": None,
        "variants": None,  # no variants: no side-by-side table
        # the header's spend, as the terminal and the summary say it
        "spend": {"cost": "at least $0.0096 (1 run unpriced)", "tokens": "6,076 tokens"},
    }
    assert not re.search(r"\b(src|href)=\"(?!data:|#)", page)  # no external file or CDN
    assert "<link" in page and 'href="data:,"' in page  # no favicon request either


def test_the_content_security_policy_allows_only_this_script_and_style_and_no_network() -> None:
    page = render_html(mixed_report())
    policy = re.search(r'Content-Security-Policy" content="([^"]+)"', page).group(1)
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(script)}'" in policy
    assert f"style-src 'sha256-{digest(style)}'" in policy
    assert policy.startswith("default-src 'none';")
    assert "connect-src" not in policy and "unsafe-inline" not in policy


def test_secrets_and_control_characters_never_reach_the_page() -> None:
    data = report(
        scenario("leak-s3cr3t-token", "fail", message="Authorization: s3cr3t-token\x1b[31m")
    )
    with registry.scope() as active:
        active.add("s3cr3t-token")
        page = render_html(data)
    assert "s3cr3t-token" not in page and "\x1b" not in page
    assert _embedded(page)["scenarios"][0]["name"] == "leak-***"


def test_run_id_in_the_title_is_escaped() -> None:
    data = rich_report("<b>")
    page = render_html(data)
    assert "<title>ClawSpec report run-0001&lt;b&gt;</title>" in page


def test_publish_writes_it_when_configured_also_for_an_interrupted_run(tmp_path: Path) -> None:
    settings = Settings(report_dir=str(tmp_path), report_html=str(tmp_path / "html/r.html"))
    interrupted = report(scenario("a", "error"), scenario("b", "skip"), interrupted=True)
    written = publish(interrupted, settings, {})
    assert written == [tmp_path / "clawspec-report.json", tmp_path / "html/r.html"]
    assert _embedded(written[1].read_text("utf-8"))["interrupted"] is True
    assert not list(tmp_path.rglob("*.partial"))


def test_no_html_unless_asked_for(tmp_path: Path) -> None:
    assert publish(mixed_report(), Settings(report_dir=str(tmp_path)), {}) == [
        tmp_path / "clawspec-report.json"
    ]


def test_flag_sets_the_report_html_setting_for_run_and_merge() -> None:
    parser = build_parser()
    args = parser.parse_args(["run", ".", "--report-html", "out/r.html"])
    assert run_flags(args)["report_html"] == "out/r.html"
    merged = parser.parse_args(["merge", "a.json", "--report-html", "m.html"])
    assert merged.report_html == "m.html"


def test_the_bundled_examples_fit_easily_under_two_megabytes() -> None:
    # the real examples' report is measured in the e2e test; this is the rich built one
    assert len(render_html(rich_report()).encode()) < 100_000


def test_secrets_with_json_escapes_and_control_characters_are_cleaned_on_every_path() -> None:
    secret = 'pa"ss\\word'
    leaky = report(scenario("a", "fail", message=f"token={secret} end"))
    with registry.scope() as active:
        active.add(secret)
        for page in (render_html(leaky), render_json(leaky)):
            assert 'pa\\"ss' not in page and "word end" not in page.replace("*** end", "")
        assert "token=*** end" in render_json(leaky)
    # no secret in the text and no control character: the fast path keeps the text as is
    plain = report(scenario("b", "fail", message="tab\there, line\nbreak"))
    with registry.scope() as active:
        active.add("absent-secret")
        assert dumps_clean(plain.model_dump(mode="json")) == json.dumps(
            plain.model_dump(mode="json"), ensure_ascii=False
        )
    # a control character or ANSI code anywhere sends every string through `clean`
    coloured = report(scenario("c", "fail", message="\x1b[31mred\x1b[0m \x07bell \x85"))
    data = json.loads(dumps_clean(coloured.model_dump(mode="json")))
    assert data["scenarios"][0]["message"] == "red bell "

"""A conversation in the HTML report, as the page's data: every turn there, hostile replies
inert in the page, long says and replies cut for the page only (the JSON report keeps them
whole). How the chat looks and behaves is tested in Chromium: test_html_conversation_browser.py.
"""

from __future__ import annotations

import json
import re

from clawspec.reports.html import render_html
from clawspec.reports.json_report import render_json
from tests.reports.chat_report import HOSTILE_SHOWN, LONG_REPLY, chat_report
from tests.reports.rich_report import rich_report

DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)
CONTEXT = re.compile(r'<script type="application/json" id="report-context">(.*?)</script>', re.S)


def _page(reply_chars: int = 4_000) -> tuple[str, dict, dict]:
    page = render_html(chat_report(), reply_chars)
    return page, json.loads(DATA.search(page).group(1)), json.loads(CONTEXT.search(page).group(1))


def test_every_turn_reaches_the_page_with_its_evidence_and_verdicts() -> None:
    _, data, _ = _page()
    turns = data["scenarios"][0]["turns"]
    assert [t["index"] for t in turns] == [0, 1, 2]
    assert [t["status"] for t in turns] == ["pass", "fail", "pass"]
    assert [t["name"] for t in turns[0]["evidence"]["tools"]] == ["read", "exec"]
    assert turns[2]["evidence"]["delegations"] == ["billing"]
    assert [(a["turn"], a["type"], a["status"]) for a in turns[1]["assertions"]] == [
        (1, "reply_contains", "fail"),
        (1, "no_tool_loop", "pass"),
    ]
    # the scenario's own verdicts: `given` and the scenario-level `then`, no turn's
    assert [(a["phase"], a["turn"]) for a in data["scenarios"][0]["assertions"]] == [
        ("given", None),
        ("then", None),
    ]
    assert data["scenarios"][1]["turns"][0]["reply"] is None  # no reply stays null


def test_a_hostile_reply_is_data_only_with_its_line_breaks_and_without_controls() -> None:
    page, data, _ = _page()
    # nothing of the reply can end the data element or become markup: only the page's three
    # scripts, no image, and `<` only ever escaped inside the data
    assert page.count("<script") == 3 and page.count("</script>") == 3
    assert "<img" not in page and "<b>" not in page
    data_text = DATA.search(page).group(1)
    assert "<" not in data_text and ">" not in data_text and "&" not in data_text
    # the page's copy means the same: the reply as written, line breaks and tab kept, the
    # bell and the ANSI colour dropped, the lone surrogate a replacement character
    assert data["scenarios"][0]["turns"][1]["reply"] == HOSTILE_SHOWN
    assert data["scenarios"][0]["turns"][1]["say"] == "And the invoice? <b>now</b>"
    assert "\x07" not in page and "\x1b" not in page and "\ud83d" not in page
    page.encode("utf-8")  # strict: a lone surrogate would raise here


def test_a_long_reply_is_cut_on_the_page_and_whole_in_the_json_report() -> None:
    _, data, context = _page()
    shown = data["scenarios"][0]["turns"][2]["reply"]
    assert len(shown) == 4_000 and shown.endswith("…") and LONG_REPLY.startswith(shown[:-1])
    assert context["cut"] == {
        "limit": 4_000,
        "texts": [{"scenario": 0, "turn": 2, "field": "reply", "chars": len(LONG_REPLY)}],
    }
    whole = json.loads(render_json(chat_report()))
    assert whole["scenarios"][0]["turns"][2]["reply"] == LONG_REPLY  # the JSON report: whole


def test_the_limit_applies_to_says_and_replies_alike() -> None:
    _, data, context = _page(reply_chars=20)
    turns = data["scenarios"][0]["turns"]
    assert len(turns[0]["say"]) == 20 and turns[0]["say"].endswith("…")
    assert turns[1]["say"] == "And the invoice? <b…"
    cut = {(c["scenario"], c["turn"], c["field"]) for c in context["cut"]["texts"]}
    assert cut == {(0, t, f) for t in (0, 1, 2) for f in ("say", "reply")}
    assert data["scenarios"][1]["turns"][0]["say"] == "Hello?"  # under the limit: as it is


def test_a_page_without_conversations_says_nothing_about_cuts() -> None:
    context = json.loads(CONTEXT.search(render_html(rich_report())).group(1))
    assert "cut" not in context

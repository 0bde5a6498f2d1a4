"""The HTML report: one self-contained file (inline CSS and vanilla JS, the report as data)."""

from __future__ import annotations

import base64
import hashlib
import html
from functools import cache
from pathlib import Path
from typing import Any

from clawspec.reports.atomic import write_atomic
from clawspec.reports.json_report import dumps_clean
from clawspec.reports.model import RunReport
from clawspec.reports.turns import REPLY_CHARS
from clawspec.reports.variants import table_data, variant_table
from clawspec.text import clean, cut

_ASSETS = Path(__file__).resolve().parent
# JSON inside <script type="application/json">: these would end the element, open a comment
# or an entity, or end a JavaScript line; escaped as \uXXXX the JSON means the same.
_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(data: object) -> str:
    """JSON, cleaned, safe to place inside a `<script type="application/json">` element."""
    text = dumps_clean(data, separators=(",", ":"))
    for char, escaped in _UNSAFE.items():  # str.replace: far quicker than translate on MBs
        text = text.replace(char, escaped)
    return text


@cache
def _assets() -> tuple[str, str]:
    css = (_ASSETS / "report.css").read_text(encoding="utf-8")
    js = (_ASSETS / "report.js").read_text(encoding="utf-8")
    return css, js


@cache
def _judge_types() -> list[str]:
    """Assertion types the judge decides (the page shows their rubric and scores): from the
    registry, so a new judge type needs no change here or in report.js."""
    import clawspec.assertions  # noqa: F401  registers every type (builds the models)
    from clawspec.assertions.base import Need
    from clawspec.assertions.registry import types_needing

    return types_needing(Need.JUDGE)


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _cut_turns(data: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """Cut every turn's `say` and `reply` in `data` (the page's copy of the report) to `limit`
    characters, as every output but the JSON report shows them (it keeps them whole); return
    each cut text's place and whole length, for the page to mark the cut."""
    cuts: list[dict[str, Any]] = []
    for position, scenario in enumerate(data["scenarios"]):
        for turn in scenario.get("turns") or ():
            for field in ("say", "reply"):
                text = turn.get(field)
                if isinstance(text, str) and len(text) > limit:
                    turn[field] = cut(text, limit)
                    place = {"scenario": position, "turn": turn["index"], "field": field}
                    cuts.append({**place, "chars": len(text)})
    return cuts


def _spend(report: RunReport) -> dict[str, str] | None:
    """The header's tokens, cost and budget, as the other outputs say them (every attempt,
    `at least` / `unknown` for runs without usage or price, never 0); None: nothing spent."""
    from clawspec.reports.spend import cost_text, spend_line, spend_of, tokens_text, worth_saying

    spend = spend_of(report)
    if not worth_saying(spend):
        return None
    said = {"tokens": tokens_text(spend), "cost": cost_text(spend)}
    if spend.limited:
        said["budget"] = spend_line(spend)
    return said


def render_html(report: RunReport, reply_chars: int = REPLY_CHARS) -> str:
    """The report as one HTML page; every string passes through `clean` (controls, secrets).
    A conversation's `say` and `reply` texts are cut to `reply_chars` characters on the page.

    The page's Content-Security-Policy allows only its own style and script (by hash) and no
    network at all, so even a rendering bug cannot run injected script or fetch anything.
    """
    css, js = _assets()
    dumped = report.model_dump(mode="json")
    cuts = _cut_turns(dumped, reply_chars)
    data = embed_json(dumped)
    # Beside the report: the judge's assertion types (from the registry) and the sentences the
    # other renderers build in Python, written once and shown as they are.
    said = report.selection.describe() if report.selection else None
    variants = table_data(variant_table(report))  # the variants side by side, if any
    context = {"judge": _judge_types(), "selection": said, "variants": variants}
    context["spend"] = _spend(report)
    if cuts:  # only then: the pages of runs without conversations stay as they were
        context["cut"] = {"limit": reply_chars, "texts": cuts}
    embedded_context = embed_json(context)
    policy = (
        "default-src 'none'; "
        f"style-src 'sha256-{_sha256(css)}'; "
        f"script-src 'sha256-{_sha256(js)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>ClawSpec report {html.escape(clean(report.run_id))}</title>\n"
        f"<style>{css}</style>\n"
        "</head><body>\n"
        '<a class="skip" href="#scenarios">Skip to the scenarios</a>\n'
        '<main id="app" aria-live="polite"><p>Loading the report…</p>'
        "<noscript>This report needs JavaScript; the same data is in the JSON report."
        "</noscript></main>\n"
        f'<script type="application/json" id="report-data">{data}</script>\n'
        f'<script type="application/json" id="report-context">{embedded_context}</script>\n'
        f"<script>{js}</script>\n"
        "</body></html>\n"
    )


def write_html(report: RunReport, path: Path, reply_chars: int = REPLY_CHARS) -> Path:
    """Write the HTML report atomically (a reader never sees half a file)."""
    return write_atomic(path, [render_html(report, reply_chars)])

"""The JSON report is written one scenario at a time (a 10,000-scenario report is
never one tree of dicts); the text is exactly what serialising the whole report gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec import secrets as registry
from clawspec.reports.json_report import clean_data, render_json, write_json
from clawspec.reports.model import Comparison, RunReport
from tests.reports.factory import assertion, mixed_report, report, scenario

SECRET = 's3cret-"token"\\value'  # JSON escapes it: found in its escaped form too


def _whole(value: RunReport) -> str:
    data = clean_data(value.model_dump(mode="json"))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize(
    "value",
    [
        report(),
        mixed_report(),
        report(
            scenario("one", "fail", assertion("fail", f'leaks {SECRET} "scenarios": []\n\x1b[31m'))
        ),
        report(scenario("a", "pass")).model_copy(update={"comparison": Comparison()}),
        report(scenario("del", "fail", assertion("fail", "del \x7f and c1 \x85 removed"))),
        report(scenario("tab", "fail", assertion("fail", "tab\tnewline\nkept"))),
        report(scenario("del", "fail", assertion("fail", "only del \x7f in ascii"))),
        report(scenario("c1", "fail", assertion("fail", "caf\xe9 and c1 \x9b only"))),
        report(scenario("c0", "fail", assertion("fail", "bell \x07 and \x0c feed"))),
    ],
    ids=[
        "empty",
        "mixed",
        "secret-and-controls",
        "nested-empty-scenarios",
        "del-c1",
        "kept",
        "del-only",
        "c1-only",
        "c0-only",
    ],
)
def test_streamed_report_is_the_whole_report_serialised(value: RunReport, tmp_path: Path) -> None:
    with registry.scope() as active:  # a command's registry, holding the secret
        active.add(SECRET)
        want = _whole(value)
        assert render_json(value) == want
        written = write_json(value, tmp_path / "r.json")
        assert written.read_text(encoding="utf-8") == want
    assert SECRET not in want
    assert len(json.loads(want)["scenarios"]) == len(value.scenarios)


def test_numbers_keep_their_values(tmp_path: Path) -> None:
    value = report(scenario("n", "pass", assertion("pass", value=0.00001, limit=1e16)))
    got = json.loads(render_json(value))
    assert got == json.loads(_whole(value))
    assert got["scenarios"][0]["assertions"][0]["value"] == 0.00001

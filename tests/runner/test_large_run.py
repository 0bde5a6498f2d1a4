"""A run large enough to keep its finished results compact (more than `kept.COMPACT_FROM`
scenarios), through the real CLI against a local server speaking the hooks API (127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports import kept
from clawspec.reports.json_report import schema_path
from clawspec.runner import run
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-large-5e4d3c"
SCENARIO = """  - name: s{i}
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then: [{{type: artifact_exists, path: out/{path}.md}}]
"""


def _failing(i: int) -> bool:
    return i % 7 == 3


def test_a_run_past_the_compact_threshold_reports_every_scenario_in_order(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    total = kept.COMPACT_FROM + 1
    body = "".join(
        SCENARIO.format(i=i, path=f"missing{i}" if _failing(i) else f"s{i}") for i in range(total)
    )
    (workspace / "large.clawspec.yaml").write_text(
        f'version: "1.0"\ntarget: {{type: skill, path: skills/s}}\nscenarios:\n{body}', "utf-8"
    )
    made: list[kept.KeptResults] = []

    class Recorded(kept.KeptResults):  # the runner's own class, remembered to look inside
        def __init__(self, size: int) -> None:
            super().__init__(size)
            made.append(self)

    monkeypatch.setattr(run, "KeptResults", Recorded)
    with HooksServer(TOKEN, workspace) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        code = main(["run", ".", "--concurrency", "16"])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]

    (results,) = made
    assert results._blocks and not results._models  # every result was kept compact
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    jsonschema.validate(report, json.loads(schema_path().read_text("utf-8")))
    scenarios = report["scenarios"]
    assert [s["name"] for s in scenarios] == [f"s{i}" for i in range(total)]
    assert [s["line"] for s in scenarios] == [4 + 3 * i for i in range(total)]
    expected = ["fail" if _failing(i) else "pass" for i in range(total)]
    assert [s["status"] for s in scenarios] == expected
    failed = [s for s in scenarios if s["status"] == "fail"]
    assert all(
        s["assertions"][0]["message"] == f"'out/missing{s['name'][1:]}.md' not found"
        for s in failed
    )
    assert len({s["run_id"] for s in scenarios}) == total
    assert report["totals"]["failed"] == expected.count("fail")
    assert report["totals"]["passed"] == expected.count("pass")

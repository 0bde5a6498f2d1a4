"""Scenario outlines through the real `clawspec run` CLI, against the local hooks server
(127.0.0.1, OpenClaw's hooks wire format): each row runs as a scenario of its own, one row
failing while the others pass, and rows work with selection, repeats, shards and merge, and
baselines."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports.json_report import schema_path
from tests.support.hooks_api import HooksServer, serving_cli

TOKEN = "hook-token-outlines-7c6b5a"
CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: drafts
    tags: [news]
    examples:
      - {id: easter, topic: Easter, action: "[write:out/{{run_id}}.md]"}
      - {id: advent, topic: Advent, action: "[write:out/{{run_id}}.md]", tags: [slow]}
      - {id: silent, topic: Lent, action: nothing written}
    when: {invoke: "/send-newsletter {{vars.topic}} {{vars.action}}"}
    then:
      - type: artifact_exists
        path: "out/{{run_id}}.md"
  - name: seasonal
    examples: {file: seasons.csv}
    when: {invoke: "/send-newsletter {{vars.season}} [write:out/{{run_id}}.md]"}
    then:
      - type: artifact_exists
        path: "out/{{run_id}}.md"
"""
SEASONS = "id,season\nspring,Spring\nautumn,Autumn\n"
ALL = [
    "drafts[easter]",
    "drafts[advent]",
    "drafts[silent]",
    "seasonal[spring]",
    "seasonal[autumn]",
]


@pytest.fixture
def hooks(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with serving_cli(TOKEN, workspace, monkeypatch) as server:
        yield server


@pytest.fixture
def suite(workspace: Path, write_contract: Callable[..., Path]) -> Path:
    (workspace / "seasons.csv").write_text(SEASONS, encoding="utf-8")
    return write_contract(CONTRACT)


def _report(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


def _default(workspace: Path) -> dict[str, Any]:
    return _report(workspace / "reports" / "clawspec-report.json")


@pytest.mark.usefixtures("suite")
def test_each_row_runs_as_a_scenario_of_its_own_and_one_row_fails(
    workspace: Path, hooks: HooksServer
) -> None:
    assert main(["run", ".", "--junit", "reports/junit.xml"]) == 1
    scenarios = _default(workspace)["scenarios"]
    assert [s["name"] for s in scenarios] == ALL
    assert scenarios[0]["id"] == "case.clawspec.yaml::drafts[easter]"
    assert [s["example"] for s in scenarios] == ["easter", "advent", "silent", "spring", "autumn"]
    assert [s["status"] for s in scenarios] == ["pass", "pass", "fail", "pass", "pass"]
    # A row's line is its own; a data-file row's is the outline's, its file line reported.
    assert [s["line"] for s in scenarios] == [8, 9, 10, 15, 15]
    assert [s["example_source"] for s in scenarios] == [
        None,
        None,
        None,
        "seasons.csv:2",
        "seasons.csv:3",
    ]
    assert [a["line"] for s in scenarios for a in s["assertions"]] == [13, 13, 13, 19, 19]
    assert [s["tags"] for s in scenarios][:3] == [["news"], ["news", "slow"], ["news"]]
    assert len({s["run_id"] for s in scenarios}) == 5
    assert "out/" in scenarios[2]["message"] and "artifact_exists" in scenarios[2]["message"]
    # Each row sent its own message, with its values and its own run id.
    messages = [r["body"]["message"] for r in hooks.requests]
    assert sorted(messages) == sorted(
        [
            f"/send-newsletter Easter [write:out/{scenarios[0]['run_id']}.md]",
            f"/send-newsletter Advent [write:out/{scenarios[1]['run_id']}.md]",
            "/send-newsletter Lent nothing written",
            f"/send-newsletter Spring [write:out/{scenarios[3]['run_id']}.md]",
            f"/send-newsletter Autumn [write:out/{scenarios[4]['run_id']}.md]",
        ]
    )
    cases = ET.parse(workspace / "reports" / "junit.xml").getroot().iter("testcase")
    assert [c.get("name") for c in cases] == ALL


@pytest.mark.usefixtures("suite")
def test_scenario_and_tag_filters_select_an_outline_or_one_row(
    workspace: Path, hooks: HooksServer
) -> None:
    assert main(["run", ".", "--scenario", "drafts[easter]"]) == 0
    assert [s["name"] for s in _default(workspace)["scenarios"]] == ["drafts[easter]"]
    assert main(["run", ".", "--scenario", "drafts"]) == 1
    assert [s["name"] for s in _default(workspace)["scenarios"]] == ALL[:3]
    assert main(["run", ".", "--scenario", "seasonal[autumn]", "--scenario", "drafts[advent]"]) == 0
    assert [s["name"] for s in _default(workspace)["scenarios"]] == [
        "drafts[advent]",
        "seasonal[autumn]",
    ]
    assert main(["run", ".", "--tag", "slow"]) == 0
    assert [s["name"] for s in _default(workspace)["scenarios"]] == ["drafts[advent]"]
    assert main(["run", ".", "--scenario", "drafts[nope]"]) == 2
    assert len(hooks.requests) == 1 + 3 + 2 + 1


@pytest.mark.usefixtures("suite")
def test_repeats_count_per_row(workspace: Path, hooks: HooksServer) -> None:
    assert main(["run", ".", "--repeat", "2"]) == 1
    scenarios = _default(workspace)["scenarios"]
    assert [s["name"] for s in scenarios] == ALL
    assert [(s["attempts"]["attempts"], s["attempts"]["passes"]) for s in scenarios] == [
        (2, 2),
        (2, 2),
        (2, 0),
        (2, 2),
        (2, 2),
    ]
    assert len(hooks.requests) == 10


@pytest.mark.usefixtures("suite", "hooks")
def test_shards_split_rows_and_merge_gives_the_unsharded_verdicts(workspace: Path) -> None:
    assert main(["run", ".", "--report-json", "reports/whole.json"]) == 1
    whole = _report(workspace / "reports" / "whole.json")
    parts = []
    for index in (1, 2):
        path = f"reports/shards/shard-{index}.json"
        assert main(["run", ".", "--shard", f"{index}/2", "--report-json", path]) in (0, 1)
        parts.append(_report(workspace / path))
    names = [s["name"] for part in parts for s in part["scenarios"]]
    assert sorted(names) == sorted(ALL)  # every row in exactly one shard
    assert all(part["scenarios"] for part in parts)
    assert main(["merge", "reports/shards", "--report-json", "reports/merged.json"]) == 1
    merged = _report(workspace / "reports" / "merged.json")

    def verdicts(report: dict[str, Any]) -> list[tuple[str, str, str | None, int]]:
        return [(s["id"], s["status"], s["example"], s["line"]) for s in report["scenarios"]]

    assert verdicts(merged) == verdicts(whole)


@pytest.mark.usefixtures("suite", "hooks")
def test_a_baseline_compares_row_by_row(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    assert main(["run", ".", "--report-json", "reports/before.json"]) == 1
    # The silent row now writes its draft; a new row appears; autumn's row is gone.
    write_contract(
        CONTRACT.replace(
            "action: nothing written}", 'action: "[write:out/{{run_id}}.md]"}'
        ).replace("id: advent, topic: Advent", "id: advent, topic: Advent2")
    )
    (workspace / "seasons.csv").write_text("id,season\nspring,Spring\nwinter,Winter\n", "utf-8")
    assert main(["run", ".", "--baseline", "reports/before.json"]) == 0
    comparison = _default(workspace)["comparison"]["scenarios"]
    changes = {c["id"].split("::", 1)[1]: c["change"] for c in comparison}
    assert changes == {
        "drafts[easter]": "unchanged",
        "drafts[advent]": "unchanged",
        "drafts[silent]": "fixed",
        "seasonal[spring]": "unchanged",
        "seasonal[winter]": "new",
        "seasonal[autumn]": "removed",
    }

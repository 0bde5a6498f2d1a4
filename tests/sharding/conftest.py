"""A generated suite against the local hooks server, and helpers to run shards through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports.json_report import schema_path
from tests.support.hooks_api import HooksServer, serving_cli

TOKEN = "hook-token-shards-5a4b3c"
CONTRACTS = 6
PER_CONTRACT = 8


def scenario_yaml(contract: int, index: int, failing: bool) -> str:
    """Every 5th scenario fails an assertion and every 7th errors (when `failing`)."""
    number = contract * PER_CONTRACT + index
    name = f"case-{contract}-{index}"
    tags = "[manual]" if number % 11 == 10 else ("[smoke]" if index % 2 else "[]")
    invoke = f"[write:out/{name}-{{{{run_id}}}}.md]"
    path = f"out/{name}-{{{{run_id}}}}.md"
    if failing and number % 7 == 6:
        invoke = "[status:error]"
    elif failing and number % 5 == 4:
        path = "out/never-written.md"
    return (
        f'  - name: {name}\n    tags: {tags}\n    when: {{invoke: "{invoke}"}}\n'
        f"    then:\n      - type: artifact_exists\n        path: {path}\n"
    )


def write_suite(root: Path, failing: bool = True) -> list[Path]:
    """CONTRACTS contract files of PER_CONTRACT scenarios each, in nested folders."""
    files = []
    for contract in range(CONTRACTS):
        body = "".join(scenario_yaml(contract, i, failing) for i in range(PER_CONTRACT))
        path = root / "skills" / f"skill-{contract}" / "tests" / "scenarios.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            'version: "1.0"\n'
            f"target: {{type: skill, path: skills/skill-{contract}}}\n"
            "defaults: {timeout: 5, poll_interval: 0.02}\n"
            f"scenarios:\n{body}",
            encoding="utf-8",
        )
        files.append(path)
    return files


def read_report(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


def verdicts(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What must not change between one run and its shards merged: ids, verdicts, order."""
    return [
        (s["id"], s["status"], [(a["type"], a["status"]) for a in s["assertions"]])
        for s in report["scenarios"]
    ]


@pytest.fixture
def hooks(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with serving_cli(TOKEN, workspace, monkeypatch) as server:
        yield server


RunShards = Callable[..., list[Path]]


@pytest.fixture
def run_shards(workspace: Path, hooks: HooksServer) -> RunShards:
    """Run `clawspec run . --shard i/n` for each i; return the report paths (in `folder`)."""

    def run(
        total: int = 3,
        *extra: str,
        folder: str = "reports/shards",
        only: tuple[int, ...] = (),
    ) -> list[Path]:
        paths = []
        for index in only or range(1, total + 1):
            path = workspace / folder / f"shard-{index}.json"
            code = main(
                [
                    *("run", ".", "--exclude-tag", "manual", "--concurrency", "8"),
                    *("--shard", f"{index}/{total}", "--report-json", str(path), *extra),
                ]
            )
            assert code in (0, 1), f"shard {index}/{total} exited {code}"
            paths.append(path)
        return paths

    return run

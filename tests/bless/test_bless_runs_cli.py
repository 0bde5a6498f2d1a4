"""`clawspec bless --runs K` through the real CLI against a local hooks server: K attempts of
the scenario, each with its own evidence, and a proposal from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.support.hooks_api import HooksServer

CONTRACT = """version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: writes
    when: {invoke: "draft [write:out/{{run_id}}.md][nth:draft:ok,ok,quiet]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
"""


def test_runs_runs_the_scenario_k_times_and_proposes_from_the_good_ones(
    workspace: Path, write_contract, server: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(CONTRACT)
    assert main(["bless", str(contract), "--scenario", "writes", "--runs", "3"]) == 0
    captured = capsys.readouterr()
    assert len(server.requests) == 3
    assert "2 good runs of 3" in captured.out
    data = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    (scenario,) = data["scenarios"]
    assert len(scenario["contract_digest"]) == 64
    runs = scenario["attempts"]["runs"]
    assert [r["evidence"] is not None for r in runs] == [True, True, True]
    assert {r["evidence"]["variables"]["run_id"] for r in runs} == {r["run_id"] for r in runs}
    # The same report read back proposes the same.
    report = "reports/clawspec-report.json"
    assert "left out: attempt 3 of reports/clawspec-report.json (fail: then[0]" in captured.out
    assert "[]  # nothing held in every run" in captured.out  # no tool or run evidence here
    assert main(["bless", str(contract), "--scenario", "writes", "--from-report", report]) == 0
    again = capsys.readouterr().out
    assert again.split("\n", 2)[2] == captured.out.split("\n", 2)[2]


def test_fewer_than_two_good_runs_exit_1_with_the_reason(
    workspace: Path, write_contract, server: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(CONTRACT.replace("ok,ok,quiet", "quiet,quiet,ok"))
    assert main(["bless", str(contract), "--scenario", "writes", "--runs", "3"]) == 1
    err = capsys.readouterr().err
    assert "fewer than 2 good runs (pass or warn) to propose from (1 good of 3)" in err


def test_an_unreachable_gateway_is_exit_3(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", "hook-token-unreachable-1b2c")
    contract = write_contract(CONTRACT)
    args = ["bless", str(contract), "--scenario", "writes", "--runs", "2"]
    assert main([*args, "--gateway-base-url", f"http://127.0.0.1:{port}"]) == 3
    err = capsys.readouterr().err
    assert f"error: nothing answers at http://127.0.0.1:{port}" in err
    assert "Traceback" not in err

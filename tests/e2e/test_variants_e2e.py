"""Variants on real OpenClaw gateways through the real `clawspec run` CLI (bring-up), driven by
the scripted provider on 127.0.0.1 whose answers depend on the requested model.

The contracts in tests/e2e/contracts/variants run one scenario on three variants: two model
variants on one gateway (per-request `model` overrides; `fake-model-b` is neither in the
OpenClaw config's provider models nor in its model policy: bring-up makes it usable) whose
scripted behaviour differs (model B reads a file the contract forbids; it runs as an advisory
variant and as a required one, which the `fail_on: regression` gate fails on), and a config variant
(`tools.toolSearch: false`) on a gateway of its own. One CLI run, started from a sub-folder of
the workspace, serves the checks of the report; a second run gets SIGTERM while both of its
gateways are up and one runs an agent: that scenario finishes and is judged, the other is not
started, and no gateway process may outlive the run. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.bringup import _proc_stats
from tests.e2e.conftest import kept_gateway_log
from tests.support.scripted_provider import ScriptedProvider, load_scripts

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = Path(__file__).resolve().parent / "contracts" / "variants"
PROVIDER_PORT = 18093  # the port contracts/variants/openclaw.json names

pytestmark = pytest.mark.e2e


def _env(launcher: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": launcher, "PYTHONPATH": str(REPO)})
    return env


def _argv(target: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "clawspec", "run", str(target), "--no-color", *args]


def _run_from_skills(work: Path, launcher: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`clawspec run ../tidy.clawspec.yaml ARGS…` from the workspace's `skills/` folder."""
    return subprocess.run(
        _argv(Path("../tidy.clawspec.yaml"), *args),
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
        env=_env(launcher),
        cwd=work / "skills",
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("variant-contracts") / "variants"
    shutil.copytree(CONTRACTS, folder)
    return folder


@pytest.fixture(scope="module")
def provider(work: Path, isolated_netns: None) -> Any:
    with ScriptedProvider(load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT) as p:
        yield p


@pytest.fixture(scope="module")
def cli_run(openclaw_launcher: str, work: Path, provider: ScriptedProvider) -> dict[str, Any]:
    # From a sub-folder, as a user in `skills/` runs it: the workspace's clawspec.yaml is found
    # and its report folder (work/reports) is used; the last test checks where the logs went.
    proc = _run_from_skills(work, openclaw_launcher, "--junit", "../reports/junit.xml")
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    return {
        "proc": proc,
        "report": report,
        "results": {s["variant"]: s for s in report["scenarios"]},
        "order": [(s["name"], s["variant"]) for s in report["scenarios"]],
        "requests": provider.chat_requests("tidy"),
    }


def test_each_variant_runs_the_scenario_and_only_model_b_breaks_the_contract(
    cli_run: dict[str, Any],
) -> None:
    proc = cli_run["proc"]
    assert cli_run["order"] == [
        ("tidy", "model-a"),
        ("tidy", "model-b"),
        ("tidy", "model-b-gated"),
        ("tidy", "direct-tools"),
    ]
    statuses = {name: r["status"] for name, r in cli_run["results"].items()}
    assert statuses == {
        "model-a": "pass",
        "model-b": "fail",
        "model-b-gated": "fail",
        "direct-tools": "pass",
    }, proc.stdout
    for name in ("model-b", "model-b-gated"):
        failed = cli_run["results"][name]["assertions"][0]
        assert (failed["type"], failed["status"]) == ("tool_not_called", "fail")
        assert "read" in failed["message"]


def test_the_gate_fails_the_job_for_the_required_variant_only(cli_run: dict[str, Any]) -> None:
    proc, report = cli_run["proc"], cli_run["report"]
    # fail_on: regression; model-b-gated (required) regressed against model-a, the reference
    assert proc.returncode == 1, proc.stdout + proc.stderr
    gate = {c["variant"]: c for c in report["variant_comparisons"]}
    assert set(gate) == {"model-b", "model-b-gated", "direct-tools"}
    assert gate["model-b-gated"]["required"] is True and gate["model-b-gated"]["regressions"]
    assert gate["model-b"]["required"] is False and gate["model-b"]["regressions"]
    assert gate["direct-tools"]["regressions"] == []
    # the side-by-side table in the terminal: one row, a column per variant
    table = next(line for line in proc.stdout.splitlines() if line.lstrip().startswith("tidy"))
    regressed = ["FAIL", "\u2193", "regressed"]
    assert table.split() == ["tidy", "pass", *regressed, *regressed, "pass"], proc.stdout
    assert "model-b-gated against model-a: 1 regressed" in proc.stdout
    assert "fails the job under fail_on: regression" in proc.stdout
    assert "model-b against model-a: 1 regressed" in proc.stdout
    assert "advisory: never fails the job" in proc.stdout


def test_the_report_names_the_model_that_answered_each_run(cli_run: dict[str, Any]) -> None:
    models = {name: r["evidence"]["models"] for name, r in cli_run["results"].items()}
    assert models == {
        "model-a": ["fake/fake-model"],
        "model-b": ["fake/fake-model-b"],
        "model-b-gated": ["fake/fake-model-b"],
        "direct-tools": ["fake/fake-model"],  # no override: the agent's own model
    }
    # what the provider was asked for agrees with what the report says answered
    asked = {r.model for r in cli_run["requests"]}
    assert asked == {"fake-model", "fake-model-b"}


def test_the_config_variant_ran_on_a_gateway_of_its_own(
    cli_run: dict[str, Any], work: Path
) -> None:
    # two gateways, each one's log kept under its own name
    shared, direct = (
        kept_gateway_log(work / "reports"),
        kept_gateway_log(work / "reports", "openclaw-gateway-direct-tools.log"),
    )
    assert shared.is_file() and direct.is_file()
    # Tool Search (OpenClaw's default) offers `tool_call`; the overlay turned it off for the
    # config variant's gateway only
    offers = [
        "tool_call" in {t["function"]["name"] for t in r.body.get("tools", [])}
        for r in cli_run["requests"]
    ]
    assert True in offers and False in offers
    direct_log = direct.read_text("utf-8")
    shared_log = shared.read_text("utf-8")
    run_ids = {name: r["run_id"] for name, r in cli_run["results"].items()}
    assert run_ids["direct-tools"] in direct_log and run_ids["direct-tools"] not in shared_log
    assert all(run_ids[n] in shared_log for n in ("model-a", "model-b", "model-b-gated"))


def test_junit_has_one_testcase_per_scenario_and_variant(
    cli_run: dict[str, Any], work: Path
) -> None:
    import xml.etree.ElementTree as ET

    cases = ET.parse(work / "reports" / "junit.xml").getroot().iter("testcase")
    variants = sorted(
        prop.get("value")
        for case in cases
        for prop in case.iter("property")
        if prop.get("name") == "variant"
    )
    assert variants == ["direct-tools", "model-a", "model-b", "model-b-gated"]


def _gateway_families(cli_pid: int) -> set[int]:
    """Every process of the gateways the CLI started: each one leads a session of its own
    (as does each gateway's watchdog, told apart by its command line)."""
    stats = _proc_stats()
    leaders = {
        pid
        for pid, (ppid, pgrp) in stats.items()
        if ppid == cli_pid and pgrp == pid and not _is_watchdog(pid)
    }
    return {pid for pid, (_, pgrp) in stats.items() if pgrp in leaders}


def _watchdogs(cli_pid: int) -> set[int]:
    stats = _proc_stats()
    return {pid for pid, (ppid, _) in stats.items() if ppid == cli_pid and _is_watchdog(pid)}


def _is_watchdog(pid: int) -> bool:
    try:
        return b"clawspec gateway watchdog" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def test_a_signal_lets_the_running_scenario_be_judged_and_stops_every_gateway(
    cli_run: dict[str, Any],
    openclaw_launcher: str,
    work: Path,
    provider: ScriptedProvider,
    tmp_path: Path,
) -> None:
    # A long grace period, set at the child's start-up: the running scenario is judged whenever
    # this busy machine lets it finish (the grace period's end has tests of its own).
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import clawspec.runner.run as run\nrun.INTERRUPT_GRACE_S = 600\n", "utf-8"
    )
    env = _env(openclaw_launcher)
    env["PYTHONPATH"] = os.pathsep.join([str(hook), env["PYTHONPATH"]])
    proc = subprocess.Popen(
        _argv(
            work / "interrupt",
            "--variant",
            "model-a",
            "--variant",
            "direct-tools",
            "--report-dir",
            str(work / "interrupted"),
            "--junit",
            str(work / "interrupted" / "junit.xml"),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=work,
    )
    output: list[str] = []
    said = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if "SIGTERM: starting no more scenarios" in line:
                said.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: set[int] = set()
    leaders: set[int] = set()
    watchdogs: set[int] = set()
    try:
        # Both gateways are up (every gateway is brought up before the first run) and the
        # first variant's run is held by the provider; the other variant's run of the same
        # scenario waits for it (runs of one scenario never overlap), its gateway idle.
        deadline = time.monotonic() + 600
        while not provider.chat_requests("slow") and proc.poll() is None:
            assert time.monotonic() < deadline, "the slow run never reached the provider"
            seen |= _gateway_families(proc.pid)
            time.sleep(0.5)
        seen |= _gateway_families(proc.pid)
        stats = _proc_stats()
        # A gateway is a session the CLI started; OpenClaw's own helpers may start sessions of
        # their own (its service-child anchor does), seen while still in the gateway's group.
        leaders = {pid for pid in seen if stats.get(pid) == (proc.pid, pid)}
        assert len(leaders) == 2, (leaders, proc.poll())
        watchdogs = _watchdogs(proc.pid)
        assert len(watchdogs) == 2, watchdogs  # one for each gateway
        proc.send_signal(signal.SIGTERM)  # start no more scenarios; the running one goes on
        assert said.wait(60), "".join(output)
        provider.release()  # only now does the agent write its file and finish
        proc.wait(timeout=300)
        reader.join(timeout=30)
    finally:
        provider.release()
        if proc.poll() is None:
            proc.kill()
    text = "".join(output)
    assert proc.returncode == 130, text
    alive = (seen | watchdogs) & set(_proc_stats())
    assert alive == set(), f"gateway processes left running: {sorted(alive)}"
    report = json.loads((work / "interrupted" / "clawspec-report.json").read_text("utf-8"))
    assert report["interrupted"] is True
    assert (work / "interrupted" / "junit.xml").is_file()
    by_variant = {s["variant"]: s for s in report["scenarios"]}
    assert set(by_variant) == {"model-a", "direct-tools"}
    # The running scenario was judged whole, its log read to the end after the signal.
    ran = by_variant["model-a"]
    assert ran["status"] == "fail", text
    assert [(a["type"], a["status"]) for a in ran["assertions"]] == [
        ("tool_not_called", "pass"),
        ("tool_was_called", "pass"),
        ("log_entry", "pass"),
        ("log_entry", "fail"),
    ], ran["assertions"]
    assert "interrupted" not in json.dumps(ran)
    waiting = by_variant["direct-tools"]
    assert (waiting["status"], waiting["message"]) == ("skip", "not run: the run was interrupted")
    assert "Traceback" not in text


def test_target_mode_a_model_the_policy_refuses_is_an_error_naming_it(
    openclaw_launcher: str,
    work: Path,
    provider: ScriptedProvider,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from clawspec.gateway.bringup import BringUpOptions, GatewayProcess

    options = BringUpOptions(
        command=[openclaw_launcher, "gateway", "run"],
        user_config=work / "openclaw.json",  # allows fake/fake-model only
        state_dir=tmp_path_factory.mktemp("policy-gateway"),
    )
    with GatewayProcess(options) as gateway:
        env = {
            **_env(openclaw_launcher),
            "CLAWSPEC_GATEWAY_BASE_URL": gateway.base_url,
            "CLAWSPEC_HOOKS_TOKEN": gateway.hooks_token,
            "CLAWSPEC_GATEWAY_LOG_PATTERN": str(gateway.log_path),
        }
        proc = subprocess.run(
            _argv(work / "target"),
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=work / "target",
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((work / "target" / "reports" / "clawspec-report.json").read_text("utf-8"))
    [result] = report["scenarios"]
    assert (result["variant"], result["status"]) == ("model-b", "error")
    assert "fake/fake-model-b" in result["message"]
    assert "modelPolicy.allow" in result["message"], result["message"]
    assert gateway.hooks_token not in proc.stdout + proc.stderr
    # Refused for good: the request was not sent again until the scenario's timeout (the gateway
    # answers it with the 502 of a gateway not ready yet, which is retried).
    lines = gateway.log_path.read_text("utf-8").splitlines()
    refusals = [line for line in lines if "rejected by agents.defaults.modelPolicy" in line]
    assert len(refusals) == 1, [line[:300] for line in refusals]


def _printed_logs(stdout: str) -> list[Path]:
    return [
        Path(line.removeprefix("gateway log: "))
        for line in stdout.splitlines()
        if line.startswith("gateway log: ")
    ]


def test_runs_from_a_sub_folder_keep_each_gateway_log_under_the_report_folder(
    cli_run: dict[str, Any], openclaw_launcher: str, provider: ScriptedProvider, work: Path
) -> None:
    # The module's run, from `skills/`, kept its two gateways' logs; a second run from there
    # writes its JSON report elsewhere and keeps the log of its one gateway.
    elsewhere = work.parent / "elsewhere"
    elsewhere.mkdir()
    only_a = ("--variant", "model-a")
    proc = _run_from_skills(
        work, openclaw_launcher, *only_a, "--report-json", "../../elsewhere/report.json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = _printed_logs(cli_run["proc"].stdout), _printed_logs(proc.stdout)
    assert len(first) == 2 and len(second) == 1, (cli_run["proc"].stdout, proc.stdout)
    # Under the config's report folder (the workspace root's), outside the current folder, so
    # printed absolute; one folder per run, each gateway's log under its own name ...
    runs = work / "reports" / "gateway-logs"
    assert {log.parent for log in first} == {first[0].parent} and first[0].parent.parent == runs
    assert second[0].parent.parent == runs and second[0].parent != first[0].parent
    assert sorted(p.name for p in runs.iterdir()) == sorted(
        {first[0].parent.name, second[0].parent.name}
    )
    for log in (*first, *second):
        assert "embedded run start" in log.read_text("utf-8")
    # ... not beside the JSON report, nor under the folder the run started in.
    assert sorted(p.name for p in elsewhere.iterdir()) == ["report.json"]
    assert not (work / "skills" / "reports").exists()

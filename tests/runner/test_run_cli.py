"""Runs through the real CLI against a local server speaking the hooks API (127.0.0.1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import requests

from clawspec.cli import main
from clawspec.gateway import client
from clawspec.reports import kept
from clawspec.reports.json_report import schema_path
from tests.support.hang_guard import wait_until
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-9f8e7d6c5b"
HEADER = 'version: "1.0"\ntarget: {type: skill, path: skills/news}\n'


@pytest.fixture
def server(workspace: Path) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, workspace) as running:
        yield running


@pytest.fixture
def gateway_env(server: HooksServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"CLAWSPEC_HOOKS_TOKEN": TOKEN, "CLAWSPEC_GATEWAY_BASE_URL": server.base_url}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture(params=["models", "compact"])
def results_kept(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways a run keeps its finished results: as models (small runs) and compact (past
    `kept.COMPACT_FROM`, here from the first result)."""
    if request.param == "compact":
        monkeypatch.setattr(kept, "COMPACT_FROM", 0)


def _report(workspace: Path) -> dict:
    data = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


WRITES_DRAFT = (
    HEADER
    + """defaults: {timeout: 5, test_mode: true, poll_interval: 0.05}
scenarios:
  - name: writes-draft
    tags: [smoke]
    given:
      - type: file_absent
        path: out/{{run_id}}.md
    when:
      invoke: "/send-newsletter Sunday [write:out/{{run_id}}.md]"
      params: {audience: members}
    then:
      - type: artifact_exists
        path: out/{{run_id}}.md
      - type: artifact_contains
        path: out/{{run_id}}.md
        sections: [hook, body, cta]
        fields: [title, status]
      - type: artifact_absent_words
        path: out/{{run_id}}.md
        words: [guaranteed]
"""
)


@pytest.mark.usefixtures("results_kept")
def test_passing_scenario_end_to_end_through_the_cli(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(WRITES_DRAFT)
    assert main(["run", "."]) == 0
    out, err = capsys.readouterr()
    assert "PASS  case.clawspec.yaml::writes-draft" in out
    # Before the first verdict, what starts is said on stderr (never among the verdicts).
    assert "clawspec: running 1 scenario\n" in err
    assert "clawspec:" not in out
    assert "1 scenario: 1 passed, 0 failed, 0 errored, 0 skipped, 0 warned" in out
    report = _report(workspace)
    scenario = report["scenarios"][0]
    assert scenario["status"] == "pass" and scenario["line"] == 5
    assert [a["status"] for a in scenario["assertions"]] == ["pass"] * 4
    assert [a["line"] for a in scenario["assertions"]] == [8, 14, 16, 20]
    (request,) = server.requests
    body = request["body"]
    run_id = scenario["run_id"]
    assert request["authorization"] == f"Bearer {TOKEN}"
    assert body == {
        "message": f"/send-newsletter Sunday [write:out/{run_id}.md]\n\n"
        'Parameters: {"audience":"members","test_mode":true}',
        "name": "writes-draft",
        "agentId": "main",
        "deliver": False,
        "waitForCompletion": True,
        "timeoutSeconds": 5,
        "sessionKey": f"hook:clawspec:{run_id}",
    }
    assert scenario["gateway_run_id"] and scenario["gateway_run_id"] != run_id
    assert (workspace / "out" / f"{run_id}.md").is_file()


FAULTS = (
    HEADER
    + """defaults: {timeout: 1, poll_interval: 0.05}
scenarios:
  - name: ok
    when: {invoke: "[write:ok.md]"}
    then: [{type: artifact_exists, path: ok.md}]
  - name: provider-500
    when: {invoke: "[fail:500]"}
    then: [{type: file_absent, path: nothing}]
  - name: never-completes
    when: {invoke: "[hang]"}
    then: [{type: file_absent, path: nothing}]
  - name: completion-error
    when: {invoke: "[status:error]"}
    then: [{type: file_absent, path: nothing}]
  - name: connection-dropped
    when: {invoke: "[drop]"}
    then: [{type: file_absent, path: nothing}]
  - name: fails-assertion
    when: {invoke: "nothing written"}
    then: [{type: artifact_exists, path: missing.md}]
"""
)


@pytest.mark.usefixtures("results_kept")
def test_gateway_faults_error_only_their_scenario_and_exit_1(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
) -> None:
    write_contract(FAULTS)
    assert main(["run", ".", "--concurrency", "3"]) == 1
    report = _report(workspace)
    by_name = {s["name"]: s for s in report["scenarios"]}
    assert [s["name"] for s in report["scenarios"]] == [
        "ok",
        "provider-500",
        "never-completes",
        "completion-error",
        "connection-dropped",
        "fails-assertion",
    ]
    assert by_name["ok"]["status"] == "pass"
    assert by_name["fails-assertion"]["status"] == "fail"
    assert by_name["fails-assertion"]["message"] == (
        "then[0] (artifact_exists): 'missing.md' not found"
    )
    assert "→ 500: " in by_name["provider-500"]["message"]
    assert by_name["never-completes"]["message"].startswith(
        "invocation failed: no completion within 1 s"
    )
    assert (
        "completed with status 'error': agent run failed"
        in (by_name["completion-error"]["message"])
    )
    assert by_name["completion-error"]["gateway_run_id"]
    assert by_name["connection-dropped"]["status"] == "error"
    # A failed check's message names it; an invocation failure is the scenario's own.
    assert by_name["fails-assertion"]["restates"] == {"phase": "then", "index": 0, "turn": None}
    for name in ("provider-500", "never-completes", "completion-error", "connection-dropped"):
        assert by_name[name]["status"] == "error"
        assert by_name[name]["assertions"] == []  # `then` never ran: left out
        assert by_name[name]["restates"] is None
    assert report["totals"] == {
        "scenarios": 6,
        "passed": 1,
        "failed": 1,
        "errored": 4,
        "skipped": 0,
        "warned": 0,
    }


NOTHING_ANSWERS = (
    "nothing answers at http://127.0.0.1:9 (connection refused). Start your OpenClaw gateway "
    "there, run with --bring-up to have ClawSpec start one for the run, or point ClawSpec at "
    "your gateway with --gateway-base-url URL (or gateway_base_url in clawspec.yaml, "
    "CLAWSPEC_GATEWAY_BASE_URL in the environment)"
)


def test_gateway_down_is_said_once_before_any_scenario_and_exits_3(
    workspace: Path,
    write_contract,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Target mode with nothing listening: one error naming the URL and what to do, no
    scenario started (not even one whose precondition fails), reports that say why."""
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", "http://127.0.0.1:9")
    write_contract(
        HEADER + "scenarios:\n  - name: a\n    when: {invoke: x}\n"
        "    then: [{type: file_absent, path: n}]\n"
        "  - name: b\n    given: [{type: env_present, vars: [CLAWSPEC_TEST_UNSET_VAR]}]\n"
        "    when: {invoke: x}\n    then: [{type: file_absent, path: n}]\n"
    )
    assert main(["run", "."]) == 3
    out, err = capsys.readouterr()
    assert err == f"error: {NOTHING_ANSWERS}\n"
    assert "[1/2]" not in out
    report = _report(workspace)
    assert [(s["status"], s["message"]) for s in report["scenarios"]] == [
        ("error", NOTHING_ANSWERS),
        ("error", NOTHING_ANSWERS),
    ]
    assert all(s["assertions"] == [] for s in report["scenarios"])


def test_a_gateway_gone_during_the_run_is_said_in_a_few_words(workspace: Path) -> None:
    """The per-scenario error keeps the operating system's words, not urllib3's wrapper text."""
    hooks = client.HooksClient("http://127.0.0.1:9", "/hooks", None)
    request = client.InvokeRequest("hi", "a", "main", None, timeout_s=5)
    with pytest.raises(client.InvocationError) as caught:
        hooks.invoke(request)
    assert str(caught.value) == (
        "gateway unreachable: POST http://127.0.0.1:9/hooks/agent: connection refused"
    )
    assert caught.value.unreachable
    # urllib3's wrapper around another cause of the operating system's: its words, not the
    # wrapper cut at 160 characters.
    wrapped = requests.ConnectionError(
        "HTTPConnectionPool(host='127.0.0.1', port=18789): Max retries exceeded with url: "
        "/hooks/agent (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object "
        "at 0x7f3a2c1b9d50>: Failed to establish a new connection: [Errno 101] Network is "
        "unreachable'))"
    )
    assert client._reason(wrapped) == "network is unreachable"


def test_failed_precondition_stops_the_scenario_without_invoking(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
) -> None:
    write_contract(
        HEADER
        + """scenarios:
  - name: needs-skill
    given:
      - {type: env_present, vars: [CLAWSPEC_TEST_UNSET_VAR]}
      - {type: file_present, path: SKILL.md}
    when: {invoke: "[write:x.md]"}
    then: [{type: artifact_exists, path: x.md}]
"""
    )
    assert main(["run", "."]) == 1
    scenario = _report(workspace)["scenarios"][0]
    assert server.requests == []
    assert scenario["status"] == "error"
    assert scenario["message"] == (
        "precondition given[0] (env_present) failed: not set or empty: 'CLAWSPEC_TEST_UNSET_VAR'"
    )
    assert [(a["phase"], a["index"], a["status"]) for a in scenario["assertions"]] == [
        ("given", 0, "fail")
    ]
    # The message restates that check: the runner says which, so outputs need not search it.
    assert scenario["restates"] == {"phase": "given", "index": 0, "turn": None}


def test_refused_session_key_is_retried_without_it_and_warned_once(
    workspace: Path,
    write_contract,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with HooksServer(TOKEN, workspace, allow_session_key=False) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        write_contract(
            HEADER
            + "scenarios:\n"
            + "".join(
                f"  - name: s{i}\n    when: {{invoke: '[write:s{i}.md]'}}\n"
                f"    then: [{{type: artifact_exists, path: s{i}.md}}]\n"
                for i in range(3)
            )
        )
        assert main(["run", ".", "--concurrency", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("refused the request session key") == 1
    with_key = [r for r in server.requests if "sessionKey" in r["body"]]
    assert len(with_key) == 1  # only the first request tried it
    assert len(server.requests) == 4


def test_wrong_token_is_an_error_naming_the_status(
    workspace: Path,
    write_contract,
    server: HooksServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", "wrong-token-1234")
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
    write_contract(
        HEADER + "scenarios:\n  - name: a\n    when: {invoke: x}\n"
        "    then: [{type: file_absent, path: n}]\n"
    )
    assert main(["run", "."]) == 1
    message = _report(workspace)["scenarios"][0]["message"]
    assert "→ 401:" in message
    assert "wrong-token-1234" not in (workspace / "reports" / "clawspec-report.json").read_text()


@pytest.mark.usefixtures("results_kept")
def test_results_come_out_in_contract_order_while_finishing_out_of_order(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(
        HEADER
        + """scenarios:
  - name: slow
    when: {invoke: "[sleep:0.8] [write:slow.md]"}
    then: [{type: artifact_exists, path: slow.md}]
  - name: fast
    when: {invoke: "[write:fast.md]"}
    then: [{type: artifact_exists, path: fast.md}]
"""
    )
    assert main(["run", ".", "--concurrency", "2"]) == 0
    out = capsys.readouterr().out
    assert out.index("::fast") < out.index("::slow")
    assert [s["name"] for s in _report(workspace)["scenarios"]] == ["slow", "fast"]


def _slow_checks(count: int, wait_s: float) -> str:
    """Quick agent runs whose one check waits `wait_s` for a file that never comes (fails)."""
    scenarios = "".join(
        f"""  - name: s{i}
    when: {{invoke: "[sleep:0.1] [write:out/s{i}.md]"}}
    then: [{{type: artifact_exists, path: out/never-{i}.md, timeout: {wait_s}}}]
"""
        for i in range(count)
    )
    return HEADER + "defaults: {poll_interval: 0.05}\nscenarios:\n" + scenarios


def _arrivals(server: HooksServer) -> dict[str, float]:
    return {r["body"]["name"]: r["arrived"] for r in server.requests}


def test_a_finished_run_frees_its_slot_before_its_checks_run(
    workspace: Path, write_contract, server: HooksServer, gateway_env: dict[str, str]
) -> None:
    # Concurrency bounds the agent runs in flight, not ClawSpec's checks: s0's and s1's checks
    # wait for the files that s2's and s3's runs write, so they pass only if s2 and s3 ran
    # while those checks waited (before run lanes they waited for the checks: a fail after
    # 60 s). Told by what happened, not by timing it.
    contract = _slow_checks(4, 2.0)
    for waiting, writer in (("0", "2"), ("1", "3")):
        contract = contract.replace(
            f"path: out/never-{waiting}.md, timeout: 2.0", f"path: out/s{writer}.md, timeout: 60"
        )
    write_contract(contract)
    assert main(["run", ".", "--concurrency", "2"]) == 1
    assert server.max_active == 2
    report = _report(workspace)
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass", "fail", "fail"]
    # A scenario's duration is its own (its slot, run and checks): s2's and s3's checks waited
    # their whole 2 s.
    assert all(s["duration_ms"] >= 2000 for s in report["scenarios"][2:])


def test_concurrency_one_keeps_each_scenario_s_checks_before_the_next_run(
    workspace: Path, write_contract, server: HooksServer, gateway_env: dict[str, str]
) -> None:
    write_contract(_slow_checks(2, 1.0))
    assert main(["run", ".", "--concurrency", "1"]) == 1
    arrived = _arrivals(server)
    assert arrived["s1"] - arrived["s0"] >= 1.0  # s0's 1 s check ended before s1 started
    assert server.max_active == 1


def test_scenario_and_tag_filters(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
) -> None:
    write_contract(
        HEADER
        + "".join(
            ["scenarios:\n"]
            + [
                f"  - name: {n}\n    tags: [{t}]\n    when: {{invoke: x}}\n"
                f"    then: [{{type: file_absent, path: n}}]\n"
                for n, t in (("a", "smoke"), ("b", "slow"), ("c", "smoke"))
            ]
        )
    )
    assert main(["run", ".", "--tag", "smoke", "--exclude-tag", "slow"]) == 0
    assert [s["name"] for s in _report(workspace)["scenarios"]] == ["a", "c"]
    assert main(["run", ".", "--scenario", "b"]) == 0
    assert [s["name"] for s in _report(workspace)["scenarios"]] == ["b"]
    assert main(["run", ".", "--scenario", "zzz"]) == 2


def test_dry_run_renders_the_plan_and_invokes_nothing(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(WRITES_DRAFT)
    assert main(["run", ".", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert server.requests == []
    assert "case.clawspec.yaml::writes-draft  (line 5, agent 'main', timeout 5 s, run id " in out
    run_id = out.split("run id ")[1].split(")")[0]
    assert f"given[0] file_absent: path='out/{run_id}.md'" in out
    assert f"when  hooks: /send-newsletter Sunday [write:out/{run_id}.md] Parameters:" in out
    assert f"then[0] artifact_exists: path='out/{run_id}.md'" in out
    assert not (workspace / "reports").exists()


def test_report_json_flag_and_contract_errors_exit_2_without_running(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(
        HEADER + "scenarios:\n  - name: a\n    when: {invoke: x}\n"
        "    then: [{type: tool_was_called}]\n"
    )
    assert main(["run", ".", "--report-json", "custom.json"]) == 2
    err = capsys.readouterr().err
    assert (
        "case.clawspec.yaml:6:12: scenario 'a', then[0] (tool_was_called): missing field "
        "'tool'" in err
    )
    assert server.requests == []
    assert not (workspace / "custom.json").exists()


def test_assertion_exception_errors_only_that_assertion(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
) -> None:
    (workspace / "state.yaml").write_bytes(b"\xff\xfe not utf-8")
    write_contract(
        HEADER
        + """scenarios:
  - name: a
    when: {invoke: "[write:a.md]"}
    then:
      - {type: state_file, path: state.yaml, expected_status: ok}
      - {type: artifact_exists, path: a.md}
"""
    )
    assert main(["run", "."]) == 1
    first, second = _report(workspace)["scenarios"][0]["assertions"]
    assert first["status"] == "error"  # the file's problem is that assertion's verdict
    assert first["message"].startswith("'state.yaml' is not UTF-8 text: byte 0xff at offset 0")
    assert second["status"] == "pass"


def test_sigint_stops_new_scenarios_abandons_running_and_still_writes_the_report(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
) -> None:
    write_contract(
        HEADER
        + """defaults: {timeout: 60}
scenarios:
  - name: hangs
    when: {invoke: "[hang]"}
    then: [{type: file_absent, path: n}]
  - name: never-started
    when: {invoke: "x"}
    then: [{type: file_absent, path: n}]
"""
    )
    env = {**os.environ, **gateway_env, "PYTHONPATH": str(Path(__file__).parents[2])}
    process = subprocess.Popen(
        [sys.executable, "-m", "clawspec", "run", ".", "--concurrency", "1"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(lambda: server.requests)
    assert server.requests, "the first scenario never reached the gateway"
    process.send_signal(signal.SIGINT)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)  # second signal: abandon the running scenario
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "SIGINT: starting no more scenarios" in err
    # Each scenario has its progress line, the ones the interrupt cut short too.
    assert "[1/2] ERROR case.clawspec.yaml::hangs (" in out
    assert "\n      interrupted: abandoned while running\n" in out
    assert "[2/2] SKIP  case.clawspec.yaml::never-started (0 ms)\n" in out
    report = _report(workspace)
    assert report["interrupted"] is True
    assert [(s["name"], s["status"], s["message"]) for s in report["scenarios"]] == [
        ("hangs", "error", "interrupted: abandoned while running"),
        ("never-started", "skip", "not run: the run was interrupted"),
    ]
    assert len(server.requests) == 1


HELD_RUNS = (
    HEADER
    + """defaults: {timeout: 60}
scenarios:
  - name: judged-pass
    when: {invoke: "[write:out/{{run_id}}.txt]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.txt"}
      - {type: log_entry, path: "out/{{run_id}}.txt", pattern: Sunday}
  - name: judged-fail
    when: {invoke: "[write:out/{{run_id}}.txt]"}
    then:
      - {type: log_entry, path: "out/{{run_id}}.txt", pattern: Monday}
  - name: never-started-1
    when: {invoke: "x"}
    then: [{type: file_absent, path: n}]
  - name: never-started-2
    when: {invoke: "y"}
    then: [{type: file_absent, path: n}]
"""
)
JUNIT = ("--junit", "reports/junit.xml")
NOT_STARTED = [
    ("never-started-1", "skip", "not run: the run was interrupted"),
    ("never-started-2", "skip", "not run: the run was interrupted"),
]


class _Stderr:
    """The child's stderr, read as it comes, so the test can wait for a line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def wait_for(self, text: str, timeout_s: float = 30) -> None:
        with self._changed:
            seen = self._changed.wait_for(
                lambda: any(text in line for line in self.lines), timeout_s
            )
        assert seen, f"never said {text!r}: {''.join(self.lines)}"

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "".join(self.lines)


def _run_with_held_runs(
    workspace: Path,
    server: HooksServer,
    gateway_env: dict[str, str],
    grace_s: float | None = None,
    stdout: int = subprocess.DEVNULL,
) -> tuple[subprocess.Popen[str], _Stderr]:
    """`clawspec run` of HELD_RUNS (or of its first two scenarios) with two lanes, returned
    once both running scenarios' runs have reached the gateway, which holds them until
    `server.released` is set."""
    env = {**os.environ, **gateway_env, "PYTHONPATH": str(Path(__file__).parents[2])}
    if grace_s is not None:  # a shorter grace period, set at the child's start-up
        hook = workspace.parent / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(
            f"import clawspec.runner.run as run\nrun.INTERRUPT_GRACE_S = {grace_s}\n", "utf-8"
        )
        env["PYTHONPATH"] = os.pathsep.join([str(hook), env["PYTHONPATH"]])
    server.on_run = lambda _body, _run_id: server.released.wait(60) and None
    process = subprocess.Popen(
        [sys.executable, "-m", "clawspec", "run", ".", "--concurrency", "2", *JUNIT],
        cwd=workspace,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = _Stderr(process)
    wait_until(lambda: len(server.requests) >= 2 or process.poll() is not None)
    assert len(server.requests) == 2, "".join(stderr.lines)  # both running ones reached it
    return process, stderr


def _interrupted_report(workspace: Path, process: subprocess.Popen[str]) -> dict:
    assert process.wait(timeout=60) == 130
    assert (workspace / "reports" / "junit.xml").is_file()
    report = _report(workspace)
    assert report["interrupted"] is True
    return report


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"]
)
def test_the_first_signal_lets_running_scenarios_finish_and_be_judged_whole(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    sig: signal.Signals,
) -> None:
    write_contract(HELD_RUNS)
    process, stderr = _run_with_held_runs(workspace, server, gateway_env)
    process.send_signal(sig)
    stderr.wait_for(f"{sig.name}: starting no more scenarios")
    server.released.set()  # the held runs complete only now, after the signal
    report = _interrupted_report(workspace, process)
    scenarios = report["scenarios"]
    assert [(s["name"], s["status"]) for s in scenarios[:2]] == [
        ("judged-pass", "pass"),
        ("judged-fail", "fail"),
    ]
    # The log was read to its end after the signal: a match found, and no match, both judged.
    passed, failed = scenarios[0]["assertions"], scenarios[1]["assertions"]
    assert [a["status"] for a in passed] == ["pass", "pass"]
    assert (
        passed[1]["message"].startswith("line 2 of 'out/")
        and "matches 'Sunday'" in passed[1]["message"]
    )
    assert failed[0]["status"] == "fail" and "no line of 'out/" in failed[0]["message"]
    assert "interrupted" not in json.dumps(scenarios[:2])
    assert [(s["name"], s["status"], s["message"]) for s in scenarios[2:]] == NOT_STARTED
    assert len(server.requests) == 2
    assert "Traceback" not in stderr.text()


@pytest.mark.parametrize("second", ["second signal", "grace period over"])
def test_past_the_first_signal_running_scenarios_are_interrupted(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    second: str,
) -> None:
    write_contract(HELD_RUNS)
    grace_s = 0.5 if second == "grace period over" else None
    process, stderr = _run_with_held_runs(workspace, server, gateway_env, grace_s)
    process.send_signal(signal.SIGTERM)
    if second == "second signal":
        stderr.wait_for("SIGTERM: starting no more scenarios")
        process.send_signal(signal.SIGINT)
    report = _interrupted_report(workspace, process)  # the held runs are never released
    abandoned = ("error", "interrupted: abandoned while running")
    assert [(s["name"], s["status"], s["message"]) for s in report["scenarios"]] == [
        ("judged-pass", *abandoned),
        ("judged-fail", *abandoned),
        *NOT_STARTED,
    ]
    # What an abandoned run had done: its run id (the gateway's log names it) and its time.
    sent = {r["body"]["sessionKey"].removeprefix("hook:clawspec:") for r in server.requests}
    for scenario in report["scenarios"][:2]:
        assert scenario["run_id"] in sent, (scenario["run_id"], sent)
        assert scenario["duration_ms"] > 0 and len(scenario["contract_digest"]) == 64
    junit = (workspace / "reports" / "junit.xml").read_text("utf-8")
    assert 'name="judged-pass" time="0.000"' not in junit
    assert "Traceback" not in stderr.text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_that_cut_nothing_short_leaves_the_run_its_own_verdict(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    sig: signal.Signals,
) -> None:
    """Every scenario had started when the signal came, and each finished in the grace
    period: nothing was abandoned or left unstarted, so the run is complete and ends as
    its results say (1: one failed), not as interrupted (130)."""
    write_contract(HELD_RUNS.split("  - name: never-started-1")[0])
    process, stderr = _run_with_held_runs(workspace, server, gateway_env, stdout=subprocess.PIPE)
    process.send_signal(sig)
    stderr.wait_for(f"{sig.name}: starting no more scenarios")
    server.released.set()  # the held runs complete only now, after the signal
    assert process.wait(timeout=60) == 1
    assert process.stdout is not None
    out = process.stdout.read()
    process.stdout.close()
    assert "\nFAILED: 1 failed\n" in out, out
    assert "(interrupted)" not in out and "INTERRUPTED" not in out
    assert (
        "note: the signal came once every scenario had started, and each finished: "
        "the run is complete\n"
    ) in stderr.text()
    report = _report(workspace)
    assert report["interrupted"] is False
    assert [(s["name"], s["status"]) for s in report["scenarios"]] == [
        ("judged-pass", "pass"),
        ("judged-fail", "fail"),
    ]
    junit = (workspace / "reports" / "junit.xml").read_text("utf-8")
    assert "interrupted" not in junit


def test_a_signal_while_the_summary_is_printed_keeps_the_finished_runs_verdict(
    workspace: Path, write_contract, server: HooksServer, gateway_env: dict[str, str]
) -> None:
    """The run is over and its reports are written when the terminal summary starts: a
    SIGINT then (sent by the child to itself, at that point) stops the text, not the verdict."""
    write_contract(WRITES_DRAFT)
    hook = workspace.parent / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os, signal, time\n"
        "from clawspec.reports.terminal import TerminalReporter\n"
        "def summary(self, report, outcome=None):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(5)  # the signal is handled before this returns\n"
        "TerminalReporter.summary = summary\n",
        "utf-8",
    )
    path = os.pathsep.join([str(hook), str(Path(__file__).parents[2])])
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "run", "."],
        check=False,
        cwd=workspace,
        env={**os.environ, **gateway_env, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith(
        "\ninterrupted while printing the summary; the reports are complete\n"
    ), done.stderr
    assert "Traceback" not in done.stderr
    assert _report(workspace)["interrupted"] is False


def test_on_github_secrets_are_masked_before_the_first_scenario_line(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    write_contract(WRITES_DRAFT)
    assert main(["run", "."]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"::add-mask::{TOKEN}"
    assert lines.index(f"::add-mask::{TOKEN}") < next(
        i for i, line in enumerate(lines) if "writes-draft" in line
    )


WEBHOOK = """version: "1.0"
target: {type: skill, path: skills/news, trigger: /send-newsletter, trigger_mode: webhook}
defaults: {timeout: 5, test_mode: true, poll_interval: 0.05}
scenarios:
  - name: command
    when: {invoke: "/send-newsletter [write:w1.md]", params: {day: Sunday}}
    then: [{type: artifact_exists, path: w1.md, timeout: 2}]
  - name: free-text
    when: {invoke: "write the draft [write:w2.md]"}
    then: [{type: artifact_exists, path: w2.md, timeout: 2}]
  - name: skill-fails
    when: {invoke: "/send-newsletter [status:failed]"}
    then: [{type: file_absent, path: nothing}]
"""


def test_webhook_trigger_mode_keeps_the_old_skill_webhook(
    workspace: Path,
    write_contract,
    server: HooksServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
    monkeypatch.setenv("CLAWSPEC_GATEWAY_AUTH_TOKEN", TOKEN)  # the webhook uses the gateway token
    write_contract(WEBHOOK)
    assert main(["run", ".", "--concurrency", "1"]) == 1
    statuses = {s["name"]: (s["status"], s["message"]) for s in _report(workspace)["scenarios"]}
    assert statuses["command"] == ("pass", "")
    assert statuses["free-text"] == ("pass", "")
    assert statuses["skill-fails"][0] == "error"
    assert "answered status 'failed': skill failed" in statuses["skill-fails"][1]
    command, free_text, _ = (r for r in server.requests if r["path"].startswith("/webhook"))
    run_id = _report(workspace)["scenarios"][0]["run_id"]
    assert command["authorization"] == f"Bearer {TOKEN}"
    assert command["body"] == {
        "skill_command": "/send-newsletter [write:w1.md]",
        "payload": '{"day": "Sunday", "test_mode": true}',
        "test_mode": True,
        "target_type": "skill",
        "target_path": "skills/news",
        "session_key": f"hook:clawspec:{run_id}",
    }
    assert free_text["body"]["skill_command"] == "/send-newsletter"
    assert json.loads(free_text["body"]["payload"]) == {
        "invoke": "write the draft [write:w2.md]",
        "params": {"test_mode": True},
    }


def test_trace_backend_set_up_failure_skips_every_trace_assertion_with_one_reason(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\nobservability: {backend: langfuse}\n", encoding="utf-8"
    )
    write_contract(
        HEADER
        + "".join(
            ["scenarios:\n"]
            + [
                f"  - name: s{i}\n    when: {{invoke: x}}\n"
                "    then: [{type: llm_call_count, max: 3}, {type: no_span_errors}]\n"
                for i in range(2)
            ]
        )
    )
    assert main(["run", "."]) == 0
    assert main(["run", ".", "--max-skipped", "0"]) == 1
    scenarios = _report(workspace)["scenarios"]
    reasons = {a["message"] for s in scenarios for a in s["assertions"]}
    assert [s["status"] for s in scenarios] == ["skip", "skip"]
    assert len(reasons) == 1
    assert "LANGFUSE_PUBLIC_KEY" in reasons.pop()


@pytest.mark.parametrize(("refusal", "status"), [("notready", 502), ("admission", 503)])
def test_a_run_the_gateway_never_started_is_retried_then_reported(
    workspace: Path,
    write_contract,
    server: HooksServer,
    gateway_env: dict[str, str],
    refusal: str,
    status: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Short pauses, then one that would pass the scenario's 10 s timeout: no retry after it.
    monkeypatch.setattr(client, "NOT_STARTED_RETRY_PAUSES_S", (0.1, 0.2, 30.0))
    write_contract(
        HEADER
        + f"""defaults: {{timeout: 10}}
scenarios:
  - name: store-warming-up
    when: {{invoke: "[{refusal}:1] [write:ok.md]"}}
    then: [{{type: artifact_exists, path: ok.md}}]
  - name: never-ready
    when: {{invoke: "[{refusal}:9]"}}
    then: [{{type: file_absent, path: nothing}}]
"""
    )
    assert main(["run", ".", "--concurrency", "2"]) == 1
    by_name = {s["name"]: s for s in _report(workspace)["scenarios"]}
    assert by_name["store-warming-up"]["status"] == "pass"
    assert by_name["never-ready"]["status"] == "error"
    assert f"→ {status}: " in by_name["never-ready"]["message"]
    attempts = [r for r in server.requests if f"[{refusal}:9]" in r["body"]["message"]]
    assert len(attempts) == 3  # the first try and two retries; a third would pass the timeout
    assert "(3 attempts in " in by_name["never-ready"]["message"]

"""A bug in ClawSpec (a reporter, a report writer, a lane thread) costs neither the reports nor
a readable error: what finished is written, one line names the error and the crash log, exit 70.

The bug is put into the real `clawspec run` process by a `sitecustomize` module on its
PYTHONPATH (Python imports it at start-up): it replaces one function of ClawSpec by one that
raises, with the hook token in the message, so the tests also see that no output shows it.
The gateway is a local server speaking the hooks API on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from clawspec.crash import CRASH_LOG_NAME
from clawspec.errors import ExitCode
from clawspec.reports.json_report import schema_path
from clawspec.runner.lanes import RunLanes
from tests.support.github_api import GitHubApiServer, pull_request_env
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-5e4d3c2b1a0f"
REPO = Path(__file__).resolve().parents[1]
HEADER = 'version: "1.0"\ntarget: {type: skill, path: skills/news}\n'


@pytest.fixture
def server(workspace: Path) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, workspace) as running:
        yield running


def _scenarios(*invokes: tuple[str, str]) -> str:
    lines = [HEADER, "defaults: {timeout: 30}\nscenarios:\n"]
    for name, invoke in invokes:
        lines.append(
            f"  - name: {name}\n"
            f'    when: {{invoke: "{invoke}"}}\n'
            "    then: [{type: file_absent, path: nothing-here}]\n"
        )
    return "".join(lines)


def _run(
    workspace: Path,
    server: HooksServer,
    bug: str,
    *args: str,
    environ: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`clawspec run .` in its own process, with `bug` (Python) run at its start-up;
    `environ` adds to its environment (a CI job's)."""
    hook = workspace.parent / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(bug, encoding="utf-8")
    env = {
        **os.environ,
        "CLAWSPEC_HOOKS_TOKEN": TOKEN,
        "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
        "PYTHONPATH": os.pathsep.join([str(hook), str(REPO)]),
        **(environ or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "clawspec", "run", ".", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _report(workspace: Path) -> dict:
    data = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


def _assert_one_line_naming_the_crash_log(done: subprocess.CompletedProcess[str]) -> str:
    """The internal error's line (returned): the last on stderr, the only one of its kind."""
    assert done.returncode == ExitCode.INTERNAL == 70
    lines = done.stderr.splitlines()
    errors = [line for line in lines if line.startswith("internal error: ")]
    assert errors == [lines[-1]], done.stderr
    assert f"crash log: reports/{CRASH_LOG_NAME}" in errors[0]
    assert "Traceback" not in done.stderr and "Exception in thread" not in done.stderr
    assert TOKEN not in done.stderr + done.stdout
    return errors[0]


def _crash_log(workspace: Path) -> str:
    text = (workspace / "reports" / CRASH_LOG_NAME).read_text("utf-8")
    assert TOKEN not in text
    assert f"python:    {sys.version_info.major}.{sys.version_info.minor}" in text
    assert "clawspec:  " in text and "platform:  " in text and "openclaw:  " in text
    assert "command:   clawspec run ." in text
    return text


REPORTER_BREAKS_ON_FIRST = f"""
import clawspec.runner.run as run
from clawspec.reports.terminal import TerminalReporter

run.INTERRUPT_GRACE_S = 0.5  # a scenario still running then is given up at once


def on_scenario_done(self, result):
    raise RuntimeError(f"reporter broke on {{result.name}} ({TOKEN})")


TerminalReporter.on_scenario_done = on_scenario_done
"""


def test_a_raising_reporter_still_gives_every_report_what_finished(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\njunit: reports/junit.xml\nreport_html: reports/report.html\n",
        encoding="utf-8",
    )
    # The first result breaks the reporter. The second scenario, which never ends, may have
    # started by then (it is then given up); the third cannot: the one lane is held by it.
    write_contract(_scenarios(("first", "a"), ("second", "[hang] b"), ("third", "c")))
    done = _run(workspace, server, REPORTER_BREAKS_ON_FIRST, "--concurrency", "1")
    line = _assert_one_line_naming_the_crash_log(done)
    assert line.startswith(
        "internal error: RuntimeError: reporter broke on first (***) "
        "(in TerminalReporter.on_scenario_done); what finished is in reports;"
    )
    report = _report(workspace)
    assert report["interrupted"] is False
    statuses = {s["name"]: (s["status"], s["message"]) for s in report["scenarios"]}
    assert statuses["first"][0] == "pass"
    why = f"an internal error in ClawSpec stopped the run (see {CRASH_LOG_NAME})"
    assert statuses["second"] in {("error", f"not finished: {why}"), ("skip", f"not run: {why}")}
    assert statuses["third"] == ("skip", f"not run: {why}")
    assert "third" not in json.dumps([r["body"] for r in server.requests])
    # The other outputs hold the same results.
    junit = (workspace / "reports" / "junit.xml").read_text("utf-8")
    assert 'name="first"' in junit and "internal error in ClawSpec" in junit
    assert (workspace / "reports" / "report.html").is_file()
    log = _crash_log(workspace)
    assert "in TerminalReporter.on_scenario_done" in log
    assert "Traceback (most recent call last)" in log
    assert 'raise RuntimeError(f"reporter broke on' in log  # the line that raised


WRITERS_BREAK = f"""
import clawspec.reports.codequality as codequality
import clawspec.reports.junit as junit


def write_junit(*args, **kwargs):
    raise TypeError("the JUnit writer has a bug ({TOKEN})")


def write_codequality(*args, **kwargs):
    raise IndexError("so has the Code Quality writer")


junit.write_junit = write_junit
codequality.write_codequality = write_codequality
"""


def test_raising_report_writers_do_not_stop_the_others(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\njunit: reports/junit.xml\nreport_html: reports/report.html\n"
        "codequality: reports/quality.json\n",
        encoding="utf-8",
    )
    write_contract(_scenarios(("first", "a"), ("second", "b")))
    done = _run(workspace, server, WRITERS_BREAK)
    line = _assert_one_line_naming_the_crash_log(done)
    assert line.startswith(
        "internal error: TypeError: the JUnit writer has a bug (***) (in writing the JUnit XML) "
        "and 1 more; what finished is in reports;"
    )
    assert "warning: JUnit XML not written: TypeError" in done.stderr
    assert "warning: Code Quality report not written: IndexError" in done.stderr
    report = _report(workspace)
    assert [(s["name"], s["status"]) for s in report["scenarios"]] == [
        ("first", "pass"),
        ("second", "pass"),
    ]
    assert not (workspace / "reports" / "junit.xml").exists()
    assert not (workspace / "reports" / "quality.json").exists()
    html = (workspace / "reports" / "report.html").read_text("utf-8")
    assert "first" in html and "second" in html
    log = _crash_log(workspace)
    assert "fault 1 of 2: in writing the JUnit XML" in log and "raise TypeError" in log
    assert "fault 2 of 2: in writing the Code Quality report" in log and "raise IndexError" in log


HTML_BREAKS = f"""
import clawspec.reports.html as html


def write_html(*args, **kwargs):
    raise TypeError("the HTML writer has a bug ({TOKEN})")


html.write_html = write_html
"""


def test_on_github_the_outputs_after_a_writers_bug_say_the_job_failed(
    workspace: Path, write_contract, server: HooksServer, tmp_path: Path
) -> None:
    """The scenarios pass, but the HTML writer's bug fails the job (70): the job summary, the
    step outputs and the check run, written after it, say so; none of them is green."""
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\nreport_html: reports/report.html\n", encoding="utf-8"
    )
    write_contract(_scenarios(("first", "a")))
    github_token = "ghs_writersbug0123456789abcdef"
    folder = tmp_path / "job"
    folder.mkdir()
    with GitHubApiServer(github_token) as api:
        env = pull_request_env(
            api, workspace, folder, 5, github_token,
            GITHUB_WORKFLOW="CI", GITHUB_JOB="test", GITHUB_SHA="a" * 40,
            GITHUB_STEP_SUMMARY=str(folder / "summary.md"),
            GITHUB_OUTPUT=str(folder / "output"),
        )  # fmt: skip
        done = _run(workspace, server, HTML_BREAKS, environ=env)
        (check,) = api.check_runs()
    # On GitHub the secrets are first handed to the runner to mask (`::add-mask::`), then
    # never shown.
    lines = done.stdout.splitlines()
    shown = [line for line in lines if not line.startswith("::add-mask::")]
    assert len(lines) - len(shown) >= 2  # the hook token and the GitHub token
    _assert_one_line_naming_the_crash_log(
        subprocess.CompletedProcess(done.args, done.returncode, "\n".join(shown), done.stderr)
    )
    assert _report(workspace)["scenarios"][0]["status"] == "pass"
    assert (check["status"], check["conclusion"]) == ("completed", "failure"), check
    internal = "an internal error in ClawSpec cut the run short"
    assert internal in json.dumps(check["output"])
    summary = (folder / "summary.md").read_text("utf-8")
    assert "**Error**" in summary and internal in summary, summary
    outputs = (folder / "output").read_text("utf-8")
    assert f"error: {internal}" in outputs, outputs
    assert github_token not in summary + outputs + json.dumps(check) + "\n".join(shown)


LANE_BREAKS = f"""
import clawspec.runner.run as run

started = run.start_scenario


def start_scenario(plan, env):
    if plan.scenario.name == "breaks":
        raise KeyError("lane bug ({TOKEN})")
    return started(plan, env)


run.start_scenario = start_scenario
"""


def test_a_raising_lane_thread_stops_the_run_and_keeps_what_finished(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    # Two lanes: one runs `slow` (a second at the gateway) while the other takes `breaks` and
    # raises; no lane may start any of the scenarios after it.
    write_contract(
        _scenarios(
            ("slow", "[sleep:1] a"),
            ("breaks", "b"),
            *((f"after-{n}", f"after-{n}") for n in range(4)),
        )
    )
    done = _run(workspace, server, LANE_BREAKS, "--concurrency", "2")
    line = _assert_one_line_naming_the_crash_log(done)
    assert line.startswith("internal error: KeyError: 'lane bug (***)' (in the thread clawspec-"), (
        line
    )
    assert ", running case.clawspec.yaml::breaks)" in line
    report = _report(workspace)
    assert report["interrupted"] is False
    why = f"an internal error in ClawSpec stopped the run (see {CRASH_LOG_NAME})"
    assert [(s["name"], s["status"], s["message"]) for s in report["scenarios"]] == [
        ("slow", "pass", ""),
        ("breaks", "error", f"not finished: {why}"),
        *((f"after-{n}", "skip", f"not run: {why}") for n in range(4)),
    ]
    assert "interrupted" not in json.dumps(report["scenarios"])
    assert len(server.requests) == 1  # only `slow` reached the gateway
    log = _crash_log(workspace)
    assert "KeyError: 'lane bug (***)'" in log and 'raise KeyError("lane bug' in log


def test_lanes_hand_a_thread_s_exception_over_instead_of_printing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hooked: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: hooked.append(args.exc_value))
    items = [0, 1, 2]
    lock = threading.Lock()
    failures: list[tuple[BaseException, int | None]] = []

    def next_item(waiting: object) -> int | None:
        with lock:
            return items.pop(0) if items else None

    def check(item: int, started: int) -> None:
        if item == 1:
            raise ValueError("check bug")

    def failed(exc: BaseException, item: int | None) -> None:
        with lock:
            failures.append((exc, item))

    lanes = RunLanes(2, next_item, lambda item: item, check, failed=failed)
    threads = lanes.threads(3)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads)
    assert [(str(exc), item) for exc, item in failures] == [("check bug", 1)]
    assert hooked == []


def test_a_bug_outside_a_run_leaves_a_crash_log_in_the_temporary_folder(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import tempfile

    from clawspec import cli

    def broken(args: object) -> ExitCode:
        raise AttributeError(f"validate bug ({TOKEN})")

    monkeypatch.setitem(cli.COMMANDS, "validate", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert cli.main(["validate", "."]) == 70
    out, err = capsys.readouterr()
    (log,) = tmp_path.glob("clawspec-crash-*.log")
    assert err == (
        "internal error: AttributeError: validate bug (***) (in clawspec); "
        f"crash log: {log} (please attach it to a bug report)\n"
    )
    # On GitHub the same line is an error annotation on the run's page.
    (annotation,) = [line for line in out.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error title=ClawSpec internal error::internal error: ")
    text = log.read_text("utf-8")
    assert "command:   clawspec validate ." in text
    assert "AttributeError: validate bug (***)" in text and TOKEN not in text
    assert TOKEN not in annotation


def test_a_long_message_is_cut_on_one_line_without_a_secret_s_first_half() -> None:
    from clawspec import secrets
    from clawspec.crash import Fault, describe

    with secrets.scope({"CLAWSPEC_HOOKS_TOKEN": TOKEN}):
        # The cut at 300 characters falls inside the token: its first half must not remain.
        text = describe(Fault("a test", ValueError("x\n" * 140 + "y" * 5 + TOKEN + " end")))
    assert "\n" not in text and TOKEN[:8] not in text
    assert text.startswith("ValueError: x x x") and text.endswith(" (in a test)")


ASSERTION_BREAKS = f"""
from clawspec.assertions.precondition import FileAbsent


def evaluate(self, ctx):
    if "breaks" in str(self.path):
        raise RuntimeError("assertion bug ({TOKEN})")
    return evaluated(self, ctx)


evaluated = FileAbsent.evaluate
FileAbsent.evaluate = evaluate
"""


def test_a_raising_assertion_is_an_error_naming_its_crash_log_and_the_run_goes_on(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    write_contract(
        HEADER
        + "defaults: {timeout: 30}\nscenarios:\n"
        + "  - name: judged\n    when: {invoke: a}\n"
        + "    then:\n      - {type: file_absent, path: breaks}\n"
        + "      - {type: file_absent, path: nothing-here}\n"
        + "  - name: after\n    when: {invoke: b}\n"
        + "    then: [{type: file_absent, path: nothing-here}]\n"
    )
    done = _run(workspace, server, ASSERTION_BREAKS)
    # A verdict, not a crash of the run: exit 1 for the error, every scenario judged.
    assert done.returncode == ExitCode.FAILED, done.stderr
    assert "internal error: " not in done.stderr and "Traceback" not in done.stderr
    assert TOKEN not in done.stderr + done.stdout
    report = _report(workspace)
    judged, after = report["scenarios"]
    assert (judged["status"], after["status"]) == ("error", "pass")
    broken, other = judged["assertions"]
    assert other["status"] == "pass"
    assert broken["status"] == "error"
    head = "RuntimeError: assertion bug (***) (an internal error in ClawSpec; crash log: "
    tail = ", please attach it to a bug report)"
    message = broken["message"]
    assert message.startswith(head) and message.endswith(tail), message
    named = message.removeprefix(head).removesuffix(tail)
    assert (workspace / named).resolve() == (workspace / "reports" / CRASH_LOG_NAME).resolve()
    assert f"crash log: {named}" in done.stdout  # the terminal names it too
    log = _crash_log(workspace)
    assert "in then[0] (file_absent) of case.clawspec.yaml::judged" in log
    assert 'raise RuntimeError("assertion bug' in log and "RuntimeError: assertion bug (***)" in log


PARSER_BREAKS = f"""
import sys

import clawspec.cli as cli

sys.modules["clawspec.gateway.bringup"] = None  # the crash log's own look-up fails too


def build_parser():
    raise RuntimeError("parser bug ({TOKEN})")


cli.build_parser = build_parser
"""


def test_a_bug_before_the_command_runs_is_handled_like_one_inside_it(
    workspace: Path, server: HooksServer, tmp_path: Path
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    hook = workspace.parent / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(PARSER_BREAKS, encoding="utf-8")
    env = {
        **os.environ,
        "CLAWSPEC_HOOKS_TOKEN": TOKEN,
        "TMPDIR": str(temp),
        "PYTHONPATH": os.pathsep.join([str(hook), str(REPO)]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "validate", "."],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == ExitCode.INTERNAL, done.stderr
    (log,) = temp.glob("clawspec-crash-*.log")
    assert done.stderr == (
        "internal error: RuntimeError: parser bug (***) (in clawspec); "
        f"crash log: {log} (please attach it to a bug report)\n"
    )
    text = log.read_text("utf-8")
    assert "command:   clawspec validate ." in text and "openclaw:  unknown" in text
    assert 'raise RuntimeError("parser bug' in text and TOKEN not in text


ANNOUNCE_BREAKS = f"""
from clawspec.secrets import SecretRegistry


def announce(self, *args, **kwargs):
    raise RuntimeError("entrypoint bug ({TOKEN})")


SecretRegistry.announce = announce
"""


def test_a_bug_in_the_action_s_entrypoint_is_a_crash_log_and_one_line(
    workspace: Path, tmp_path: Path
) -> None:
    hook = workspace.parent / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(ANNOUNCE_BREAKS, encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "INPUT_HOOKS_TOKEN": TOKEN,
        "INPUT_SCENARIOS": ".",
        "PYTHONPATH": os.pathsep.join([str(hook), str(REPO)]),
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "entrypoint.py")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == ExitCode.INTERNAL, done.stderr
    log = workspace / "clawspec-reports" / CRASH_LOG_NAME  # kept with the action's reports
    assert done.stderr == (
        "internal error: RuntimeError: entrypoint bug (***) (in the entrypoint); "
        f"crash log: {log} (please attach it to a bug report)\n"
    )
    (annotation,) = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error title=ClawSpec internal error::internal error: ")
    assert TOKEN not in done.stdout
    text = log.read_text("utf-8")
    assert "command:   entrypoint.py" in text and 'raise RuntimeError("entrypoint bug' in text
    assert TOKEN not in text

"""Where paths resolve when ClawSpec runs from a sub-folder of the workspace: the real CLI in a
subprocess against a local server speaking the hooks API (127.0.0.1).

The rule (docs/guide.md "Configuration"): paths in clawspec.yaml are relative to the workspace
root, paths given as flags or CLAWSPEC_* variables to the folder the command runs in; the
scenario patterns match workspace-relative paths (outside the workspace: relative to the folder
given), and the terminal names the files where they were written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawspec.gateway.managed import run_log_dir
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-paths-7e1f0a"
REPO = Path(__file__).parents[2]
CONTRACT = (
    'version: "1.0"\ntarget: {type: skill, path: skills/news}\n'
    "defaults: {timeout: 5, poll_interval: 0.02}\nscenarios:\n"
    "  - name: plain\n"
    '    when: {invoke: "[write:out/{{run_id}}.md]"}\n'
    '    then: [{type: artifact_exists, path: "out/{{run_id}}.md"}]\n'
)
NEWS = "skills/news/tests/scenarios.yaml"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace whose clawspec.yaml (at its root) names report paths, and one contract that
    only the default pattern `skills/**/tests/scenarios.yaml` finds."""
    root = tmp_path / "ws"
    (root / "skills/news/tests").mkdir(parents=True)
    (root / NEWS).write_text(CONTRACT, encoding="utf-8")
    (root / "clawspec.yaml").write_text(
        "report_dir: ci-reports\njunit: ci-reports/junit.xml\n", encoding="utf-8"
    )
    return root


@pytest.fixture
def server(ws: Path) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, ws) as running:
        yield running


def _cli(
    server: HooksServer, cwd: Path, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CLAWSPEC_")},
        **extra,
        "CLAWSPEC_HOOKS_TOKEN": TOKEN,
        "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
        "PYTHONPATH": str(REPO),
    }
    env.pop("GITHUB_ACTIONS", None)  # the terminal's output, not a runner's workflow commands
    return subprocess.run(
        [sys.executable, "-m", "clawspec", *args],
        check=False,  # the exit code is asserted
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _ids(report: Path) -> list[str]:
    return [s["id"] for s in json.loads(report.read_text("utf-8"))["scenarios"]]


def _printed(stdout: str, label: str) -> list[str]:
    return [
        line.removeprefix(f"{label}: ") for line in stdout.splitlines() if line.startswith(label)
    ]


def test_from_a_sub_folder_the_workspace_patterns_find_the_contracts_and_reports_land_at_the_root(
    ws: Path, server: HooksServer, tmp_path: Path
) -> None:
    skills = ws / "skills"
    done = _cli(server, skills, "run", "news", "--config", "../clawspec.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no contract files found" not in done.stderr
    # The report paths of clawspec.yaml are the workspace root's, not the current folder's ...
    report, junit = ws / "ci-reports/clawspec-report.json", ws / "ci-reports/junit.xml"
    assert _ids(report) == [f"{NEWS}::plain"]
    assert f'file="{NEWS}"' in junit.read_text("utf-8")
    assert not (skills / "ci-reports").exists()
    # ... and the terminal names them where they are (outside the current folder: absolute;
    # from the root: relative to it).
    assert _printed(done.stdout, "report") == [str(report), str(junit)]
    done = _cli(server, ws, "run", "skills")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _printed(done.stdout, "report") == [
        "ci-reports/clawspec-report.json",
        "ci-reports/junit.xml",
    ]
    # A flag's path is relative to where it was typed; the config's JUnit stays at the root.
    (tmp_path / "elsewhere").mkdir()
    flag = "../../elsewhere/r.json"
    done = _cli(
        server, skills, "run", "news", "--config", "../clawspec.yaml", "--report-json", flag
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ids(tmp_path / "elsewhere/r.json") == [f"{NEWS}::plain"]
    assert _printed(done.stdout, "report") == [flag, str(junit)]  # as typed: the cwd's


def test_workspace_and_report_paths_from_flags_and_the_environment_are_the_current_folders(
    ws: Path, server: HooksServer, tmp_path: Path
) -> None:
    # clawspec.yaml elsewhere, with a workspace of its own: --workspace overrides it from here.
    config = tmp_path / "conf" / "clawspec.yaml"
    config.parent.mkdir()
    config.write_text("workspace: nowhere\nreport_dir: reports\n", encoding="utf-8")
    skills = ws / "skills"
    done = _cli(
        server,
        skills,
        "run",
        "news/tests/scenarios.yaml",
        "--workspace",
        "..",
        "--config",
        str(config),
        CLAWSPEC_JUNIT="junit-here.xml",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The workspace is ws (.. from ws/skills), not the config folder's parent.
    assert _ids(ws / "reports/clawspec-report.json") == [f"{NEWS}::plain"]
    assert (skills / "junit-here.xml").is_file()  # CLAWSPEC_JUNIT: relative to the cwd
    assert _printed(done.stdout, "report") == [
        str(ws / "reports/clawspec-report.json"),
        "junit-here.xml",
    ]


def test_a_contract_outside_the_workspace_matches_the_patterns_from_the_folder_given(
    ws: Path, server: HooksServer, tmp_path: Path
) -> None:
    outside = tmp_path / "shared"
    (outside / "skills/digest/tests").mkdir(parents=True)
    (outside / "skills/digest/tests/scenarios.yaml").write_text(CONTRACT, encoding="utf-8")
    # Inside the workspace, the same relative path under another folder is no contract: the
    # patterns are the workspace's (`lib/skills/...` is not `skills/...`).
    (ws / "lib/skills/old/tests").mkdir(parents=True)
    (ws / "lib/skills/old/tests/scenarios.yaml").write_text(CONTRACT, encoding="utf-8")
    done = _cli(server, ws, "run", str(outside), "lib", "--report-json", "out.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "lib: no contract files found; lib/skills/old/tests/scenarios.yaml looks like a " in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    done = _cli(server, ws, "run", str(outside), "skills", "--report-json", "out.json")
    assert done.returncode == 0, done.stdout + done.stderr
    # Outside the workspace a contract keeps its absolute path as its id.
    digest = (outside / "skills/digest/tests/scenarios.yaml").resolve().as_posix()
    assert sorted(_ids(ws / "out.json")) == sorted([f"{digest}::plain", f"{NEWS}::plain"])


def test_each_run_gets_its_own_gateway_log_folder(tmp_path: Path) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    first = run_log_dir(tmp_path / "reports", now)
    (first / "openclaw-gateway.log").write_text("the first run's log\n", encoding="utf-8")
    second = run_log_dir(tmp_path / "reports", now)  # started in the same second
    third = run_log_dir(tmp_path / "reports", now)
    assert first == tmp_path / "reports/gateway-logs/20260102T030405Z"
    assert (second.name, third.name) == ("20260102T030405Z-2", "20260102T030405Z-3")
    assert second.is_dir() and third.is_dir()
    assert (first / "openclaw-gateway.log").read_text("utf-8") == "the first run's log\n"

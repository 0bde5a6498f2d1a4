"""A run that goes on past midnight in the gateway's zone: OpenClaw's dated log moves on to the
next day's file (it picks the file again for every line it writes), and ClawSpec follows it.

The CLI test runs ClawSpec and a stand-in gateway (benchmarks/gateway_fake.py, writing a dated
log as OpenClaw's default is) on one clock two seconds before midnight (libfaketime), so the
scenario starts on one day and its run's lines land in the next day's file.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from benchmarks.gateway_fake import run_lines
from clawspec.config.settings import Settings
from clawspec.gateway.logs.index import LogIndex
from clawspec.gateway.logs.location import FOLLOW_DAYS, later_days
from clawspec.runner.scenario import RunEnv

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "midnight-hooks-token-0123456789"
DAY = date(2026, 11, 29)


def env_for(workspace: Path, **settings: str) -> RunEnv:
    return RunEnv(
        Settings.model_validate(settings),
        workspace,
        client=None,  # type: ignore[arg-type]
        http=None,  # type: ignore[arg-type]
        environ={},
        tz=UTC,
    )


def test_later_days_are_the_days_after_the_start_up_to_today_and_no_more() -> None:
    assert later_days(DAY, DAY) == []
    assert later_days(DAY, DAY + timedelta(days=1)) == ["2026-11-30"]
    # across a month and a year
    assert later_days(date(2026, 12, 31), date(2027, 1, 1)) == ["2027-01-01"]
    far = later_days(DAY, DAY + timedelta(days=30))
    assert len(far) == FOLLOW_DAYS and far[0] == "2026-11-30"
    assert later_days(DAY, DAY - timedelta(days=1)) == []  # a clock set back


def test_a_dated_pattern_follows_to_the_next_days_file_once_it_exists(tmp_path: Path) -> None:
    env = env_for(tmp_path, gateway_log_pattern="logs/openclaw-{date}.log")
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    logs = tmp_path / "logs"
    logs.mkdir()
    later = env.later_logs(yesterday, env.log_path_for(yesterday.isoformat()))
    assert later is not None and later() == []  # today's file is not there yet
    today_file = logs / f"openclaw-{datetime.now(UTC).date()}.log"
    today_file.write_text("{}\n", encoding="utf-8")
    assert later() == [today_file]


def test_a_log_that_is_one_file_whatever_the_day_is_not_followed(tmp_path: Path) -> None:
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "openclaw.log").write_text("{}\n", encoding="utf-8")
    plain_env = env_for(tmp_path, gateway_log_pattern="logs/openclaw.log")
    plain = plain_env.later_logs(yesterday, plain_env.log_path_for(yesterday.isoformat()))
    assert plain is not None and plain() == []  # the same file every day: nothing after it
    brought_up = env_for(tmp_path)
    brought_up.gateway_log = tmp_path / "logs" / "openclaw.log"
    assert brought_up.later_logs(yesterday, brought_up.gateway_log) is None


def test_the_run_index_reads_on_into_the_next_days_file(tmp_path: Path) -> None:
    """The run's first lines in one day's file, the rest (its tools, its end, the hook's
    completion) in the next day's: found whole, nothing pending."""
    lines = run_lines("hook-run-1", ["read", "write"], "hook:clawspec:r1")
    first, second = tmp_path / "openclaw-2026-11-29.log", tmp_path / "openclaw-2026-11-30.log"
    other = run_lines("hook-run-0", ["exec"], "hook:clawspec:r0")
    first.write_text("".join(other), encoding="utf-8")
    offset = first.stat().st_size  # where the run's lines start
    with first.open("a", encoding="utf-8") as handle:
        handle.writelines(lines[:2])  # session state, embedded run start
    second.write_text("".join(lines[2:]), encoding="utf-8")

    def build(later: object) -> LogIndex:
        return LogIndex.build(
            first, offset, run_ids=("r1",), session_keys=("hook:clawspec:r1",),
            hook_run="hook-run-1", wait_s=0.3, poll_interval_s=0.05, later=later,
        )  # fmt: skip

    index = build(lambda: [second])
    assert index.found and index.pending == []
    assert [call.name for call in index.tool_calls] == ["read", "write"]
    assert [path for path, _ in index.segments] == [first, second]
    # Without following, the run's calls are missing: what the log reading used to see.
    assert [call.name for call in build(None).tool_calls] == []


def test_a_run_whose_first_day_file_does_not_exist_is_read_in_the_next(tmp_path: Path) -> None:
    lines = run_lines("hook-run-2", ["write"], "hook:clawspec:r2")
    second = tmp_path / "openclaw-2026-11-30.log"
    second.write_text("".join(lines), encoding="utf-8")
    index = LogIndex.build(
        tmp_path / "openclaw-2026-11-29.log", 0, run_ids=("r2",),
        session_keys=("hook:clawspec:r2",), hook_run="hook-run-2", later=lambda: [second],
    )  # fmt: skip
    assert index.exists and index.found
    assert [call.name for call in index.tool_calls] == ["write"]


# -- the CLI on a clock two seconds before midnight ---------------------------------------------

CONTRACT = """version: "1.0"
target: {type: skill, path: skills/night}
scenarios:
  - name: over-midnight
    timeout: 30
    when: {invoke: "go [write:out/night.md]"}
    then:
      - {type: artifact_exists, path: out/night.md}
      - {type: tool_was_called, tool: write}
      - {type: tool_not_called, tool: exec}
      - type: log_entry
        path: "{{gateway_log}}"
        pattern: "embedded run done"
        run_id: "{{run_id}}"
      - {type: log_entry, path: "{{gateway_log}}", pattern: "hook:clawspec:{{run_id}}"}
"""


def _libfaketime() -> str:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    if not found:
        if os.environ.get("CI", "") not in ("", "0", "false"):
            pytest.fail("libfaketime is not installed (scripts/test.sh installs it)", pytrace=False)
        pytest.skip("libfaketime is not installed (Debian package libfaketime)")
    return found[0]


def test_a_scenario_started_before_midnight_is_judged_from_the_next_days_log(
    tmp_path: Path,
) -> None:
    faketime = _libfaketime()
    work = tmp_path / "ws"
    (work / "skills" / "night" / "tests").mkdir(parents=True)
    (work / "skills" / "night" / "tests" / "scenarios.yaml").write_text(CONTRACT, "utf-8")
    (work / "clawspec.yaml").write_text(
        "report_dir: reports\ngateway_log_pattern: logs/openclaw-{date}.log\n", "utf-8"
    )
    # One shared clock for both processes: now + offset is 2 s before the next midnight (UTC).
    now = time.time()
    midnight = (datetime.fromtimestamp(now, UTC) + timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    offset = int(midnight.timestamp() - 2 - now)
    before, after = (midnight - timedelta(days=1)).date(), midnight.date()
    logs = work / "logs"
    logs.mkdir()
    # The day's log already holds the gateway's earlier lines.
    (logs / f"openclaw-{before}.log").write_text(
        "".join(run_lines("earlier", ["exec"], "hook:clawspec:earlier")), "utf-8"
    )
    clock = {
        "LD_PRELOAD": faketime, "FAKETIME": f"{offset:+d}",
        "TZ": "UTC", "FAKETIME_NO_CACHE": "1",
    }  # fmt: skip
    env = {**os.environ, **clock}
    gateway = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "gateway_fake.py"), "--workspace", str(work),
         "--log", str(logs / "openclaw-{date}.log"), "--latency", "4", "--token", TOKEN],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        url = gateway.stdout.readline().strip() if gateway.stdout else ""
        proc = subprocess.run(
            [sys.executable, "-m", "clawspec", "run"],
            check=False, cwd=work, capture_output=True, text=True, timeout=120,
            env={**env, "CLAWSPEC_GATEWAY_BASE_URL": url, "CLAWSPEC_HOOKS_TOKEN": TOKEN,
                 "CLAWSPEC_TIMEZONE": "UTC"},
        )  # fmt: skip
    finally:
        gateway.terminate()
        gateway.wait(10)
    saved = work / "reports" / "clawspec-report.json"
    assert saved.is_file(), (proc.returncode, proc.stdout, proc.stderr)
    report = json.loads(saved.read_text("utf-8"))
    (scenario,) = report["scenarios"]
    assert proc.returncode == 0, (proc.stdout, proc.stderr, scenario["assertions"])
    assert all(a["status"] == "pass" for a in scenario["assertions"]), scenario["assertions"]
    # The scenario started on the first day ({{gateway_log}} named that day's file) and its
    # run was logged in the next day's file only.
    key = f"hook:clawspec:{scenario['run_id']}"
    assert key in (logs / f"openclaw-{after}.log").read_text("utf-8")
    assert key not in (logs / f"openclaw-{before}.log").read_text("utf-8")
    scoped, unscoped = scenario["assertions"][-2:]
    assert f"openclaw-{before}.log'" in scoped["message"], scoped["message"]
    assert "in 2 files" in scoped["message"], scoped["message"]
    assert f"openclaw-{after}.log' (the log went on there after" in unscoped["message"]

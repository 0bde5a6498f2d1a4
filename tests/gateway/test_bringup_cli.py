"""Bring-up failures through the real CLI: exit 3, a useful message, reports that say why, and
no process left behind. Fake gateway commands only: nothing here reaches a network."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.support.hang_guard import wait_until

CONTRACT = """version: "1.0"
target: {type: agent, path: agents/x}
scenarios:
  - name: a
    when: {invoke: go}
    then: [{type: file_absent, path: nothing}]
  - name: b
    when: {invoke: go}
    then: [{type: file_absent, path: nothing}]
"""


def _sleepers(marker: str) -> list[int]:
    """PIDs of processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline and entry.name != str(os.getpid()):
                found.append(int(entry.name))
    return found


def _run(workspace: Path, write_contract, capsys, *args: str) -> tuple[int, str, dict]:
    write_contract(CONTRACT)
    code = main(["run", ".", "--bring-up", *args])
    err = capsys.readouterr().err
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    return code, err, report


def test_bad_gateway_command_exits_3_and_reports_every_scenario_as_error(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err, report = _run(
        workspace, write_contract, capsys, "--gateway-command", "/nonexistent/openclaw gateway run"
    )
    assert code == 3
    assert "error: gateway bring-up failed: cannot start /nonexistent/openclaw" in err
    assert [s["status"] for s in report["scenarios"]] == ["error", "error"]
    assert report["scenarios"][0]["message"].startswith("gateway bring-up failed: cannot start")


def test_gateway_that_never_gets_ready_exits_3_and_is_stopped(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\ngateway: {ready_timeout: 1.5}\n", encoding="utf-8"
    )
    marker = "4242.1717"  # a sleep length nothing else on the machine uses
    code, err, report = _run(
        workspace, write_contract, capsys, "--gateway-command", f"sleep {marker}"
    )
    assert code == 3
    assert "not ready" in err or "never" in err, err
    assert report["totals"]["errored"] == 2
    # What it was doing meanwhile was said first; it was never ready, and nothing ran.
    assert err.startswith("clawspec: starting the OpenClaw gateway (its log: "), err
    assert "gateway ready" not in err and "running 2 scenarios" not in err
    wait_until(lambda: not _sleepers(f"sleep {marker}"), poll_s=0.1)
    assert _sleepers(f"sleep {marker}") == []


def test_port_already_taken_exits_3_naming_the_port(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        (workspace / "clawspec.yaml").write_text(
            f"report_dir: reports\ngateway: {{port: {port}, ready_timeout: 2}}\n",
            encoding="utf-8",
        )
        code, err, _ = _run(
            workspace, write_contract, capsys, "--gateway-command", "sleep 4243.1717"
        )
    assert code == 3
    assert f"port {port} on 127.0.0.1 is already in use" in err
    assert _sleepers("sleep 4243.1717") == []


# A stand-in gateway that fails the way a real one does with a rejected provider key: it prints
# the keys of the config it was given (`${NAME}` substituted from its environment, as OpenClaw
# does) and exits.
ECHOING_GATEWAY = r"""
import json, os, re, sys
cfg = json.load(open(os.environ["OPENCLAW_CONFIG_PATH"]))
providers = cfg["models"]["providers"]
def key(name):
    return re.sub(r"\$\{(\w+)\}", lambda m: os.environ[m.group(1)], providers[name]["apiKey"])
print("provider rejected key", key("acme"), "and", key("other"))
print("session", cfg["agents"]["entries"]["main"]["sessionKey"], file=sys.stderr)
sys.exit(1)
"""


def test_provider_keys_in_the_users_openclaw_json_never_reach_an_output(
    workspace: Path,
    write_contract,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    literal, from_env = "sk-acme-literal-0123456789", "sk-other-from-env-9876543210"
    monkeypatch.setenv("OTHER_PROVIDER_CREDENTIAL", from_env)  # a name the name rule misses
    (workspace / "openclaw.json").write_text(
        json.dumps(
            {
                "models": {
                    "providers": {
                        "acme": {"apiKey": literal},
                        "other": {"apiKey": "${OTHER_PROVIDER_CREDENTIAL}"},
                    }
                },
                "agents": {"entries": {"main": {"sessionKey": "agent:main:visible"}}},
            }
        ),
        encoding="utf-8",
    )
    script = workspace / "echoing_gateway.py"
    script.write_text(ECHOING_GATEWAY, encoding="utf-8")
    code, err, report = _run(
        workspace,
        write_contract,
        capsys,
        "--openclaw-config",
        "openclaw.json",
        "--gateway-command",
        f"{sys.executable} {script}",
    )
    assert code == 3
    assert "provider rejected key *** and ***" in err  # the gateway's own words, keys masked
    assert "agent:main:visible" in err  # a session key is no credential
    written = "".join(p.read_text("utf-8") for p in (workspace / "reports").rglob("*.*"))
    for text in (err, json.dumps(report), written):
        assert literal not in text and from_env not in text


# A stand-in gateway that gets ready and completes every hook run; with STAND_IN_FAILS set in
# its environment (a variant's `env`), it exits the way OpenClaw does on a config it rejects.
READY_GATEWAY = r"""
import json, os, sys, uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
cfg = json.load(open(os.environ["OPENCLAW_CONFIG_PATH"]))
if os.environ.get("STAND_IN_FAILS"):
    print("Invalid config: tools.profile: expected a string"); sys.exit(78)
class H(BaseHTTPRequestHandler):
    def _json(self, body):
        data = json.dumps(body).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self._json({"ready": True})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._json({"ok": True, "runId": uuid.uuid4().hex, "completion": {"status": "ok"}})
    def log_message(self, *a): pass
HTTPServer(("127.0.0.1", cfg["gateway"]["port"]), H).serve_forever()
"""


def _variant_failing_to_start(workspace: Path, extra: str) -> None:
    """Variants `current` and `next` on stand-in gateways; `next`'s does not start."""
    (workspace / "stand_in.py").write_text(READY_GATEWAY, encoding="utf-8")
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\n"
        f"gateway: {{command: ['{sys.executable}', '{workspace / 'stand_in.py'}', gateway, run]}}\n"
        "variants:\n"
        "  - {name: current}\n"
        f"  - {{name: next, env: {{STAND_IN_FAILS: '1'}}{extra}}}\n",
        encoding="utf-8",
    )


def test_an_advisory_variants_gateway_that_does_not_start_skips_only_its_runs(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    _variant_failing_to_start(workspace, ", required: false")
    code, err, report = _run(workspace, write_contract, capsys)
    by_variant = {(s["name"], s["variant"]): s for s in report["scenarios"]}
    assert code == 0, err
    assert {k: s["status"] for k, s in by_variant.items()} == {
        ("a", "current"): "pass", ("b", "current"): "pass",
        ("a", "next"): "skip", ("b", "next"): "skip",
    }  # fmt: skip
    why = by_variant[("a", "next")]["message"]
    assert why.startswith("not run: the gateway of advisory variant next did not start"), why
    assert "code 78" in why and "the other variants went on" in why
    # What it printed before it exited is kept where the progress line said.
    kept = next((workspace / "reports" / "gateway-logs").glob("*/openclaw-gateway-next.log"))
    assert "Invalid config" in kept.read_text(encoding="utf-8")


def test_a_required_variants_gateway_that_does_not_start_stops_the_run(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    _variant_failing_to_start(workspace, "")
    code, err, report = _run(workspace, write_contract, capsys)
    assert code == 3 and "code 78" in err
    assert {s["status"] for s in report["scenarios"]} == {"error"}


def test_a_gateway_outlives_no_clawspec_killed_without_its_cleanup(
    workspace: Path, tmp_path: Path
) -> None:
    """SIGKILL (a CI runner's timeout, the OOM killer): ClawSpec cannot stop what it started,
    so its watchdog does: the gateway's process group is stopped, the bootstrap files it wrote
    into the workspace taken back out (the user's own stay) and its state folder (the generated
    config with the run's tokens) removed."""
    import signal
    import subprocess

    marker = "held-4242"  # in the stand-in's command line: how its process is found
    script = workspace / "stand_in.py"
    # Like OpenClaw: bootstrap files in the default agent's workspace, and a workspace of its
    # own, with a `.git`, for another agent.
    bootstrap = (
        'home = cfg["agents"]["defaults"]["workspace"]\n'
        "for name in ('AGENTS.md', 'SOUL.md', 'TOOLS.md', 'brand/AGENTS.md', 'brand/.git/HEAD'):\n"
        "    os.makedirs(os.path.dirname(os.path.join(home, name)), exist_ok=True)\n"
        "    if not os.path.exists(os.path.join(home, name)):\n"
        "        open(os.path.join(home, name), 'w').write('bootstrap')\n"
    )
    script.write_text(READY_GATEWAY.replace("self.rfile.read", "time.sleep(60); self.rfile.read")
                      .replace("import json, os, sys, uuid", "import json, os, sys, time, uuid")
                      .replace("class H(", bootstrap + "class H("),
                      encoding="utf-8")  # fmt: skip
    (workspace / "TOOLS.md").write_text("the user's own\n", encoding="utf-8")
    (workspace / "clawspec.yaml").write_text(
        f"report_dir: reports\ngateway: {{command: ['{sys.executable}', '{script}', {marker}]}}\n",
        encoding="utf-8",
    )
    (workspace / "c.clawspec.yaml").write_text(CONTRACT, encoding="utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(Path(__file__).parents[2])}
    child = subprocess.Popen(
        [sys.executable, "-m", "clawspec", "run", ".", "--bring-up"],
        cwd=workspace, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stderr is not None
        for line in child.stderr:
            if "running 2 scenarios" in line:
                break
        gateways = _sleepers(marker)
        assert len(gateways) == 1 and [p.name for p in temp.glob("clawspec-gateway-*")]
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        wait_until(
            lambda: not _sleepers(marker) and not list(temp.glob("clawspec-gateway-*")),
            poll_s=0.1,
        )
        assert _sleepers(marker) == []
        assert list(temp.glob("clawspec-gateway-*")) == []
        assert not (workspace / "AGENTS.md").exists() and not (workspace / "SOUL.md").exists()
        assert not (workspace / "brand").exists()
        assert (workspace / "TOOLS.md").read_text(encoding="utf-8") == "the user's own\n"
    finally:
        child.kill()
        for pid in _sleepers(marker):
            os.kill(pid, 9)


def test_a_gateway_that_dies_during_the_run_is_said_to_have_died(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "could not be reached": ClawSpec started it and knows how it ended."""
    script = workspace / "stand_in.py"
    script.write_text(
        READY_GATEWAY.replace(
            'self.rfile.read(int(self.headers.get("Content-Length") or 0))',
            "os.kill(os.getpid(), 9)",
        ),
        encoding="utf-8",
    )
    (workspace / "clawspec.yaml").write_text(
        f"report_dir: reports\ngateway: {{command: ['{sys.executable}', '{script}']}}\n",
        encoding="utf-8",
    )
    code, _, report = _run(workspace, write_contract, capsys)
    assert code == 3
    message = report["scenarios"][0]["message"]
    assert "(the gateway ClawSpec started was killed by signal 9 during the run" in message
    assert "its log: reports/gateway-logs/" in message

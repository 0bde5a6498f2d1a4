"""A model provider nothing answers for, through the CLI on a real gateway: the first run on it
says where and why, with a fix, and names the gateway log; the runs not yet started on that
provider are skipped with the reason, while another provider's variant goes on.

The unreachable provider is the agents' default model, its baseUrl a loopback port nothing
listens on (connection refused). OpenClaw checks a local provider before each run and refuses the
run with the same 502 as a run it could not start yet; ClawSpec tells the two apart by the run's
log line and does not retry this one: the gateway sees one hook request for that scenario. A
remote provider's calls are retried by OpenClaw instead (that message is checked in
tests/gateway/test_run_failure.py). The variant `up` overrides the model with the scripted
provider's. The progress lines (gateway starting, ready, how many scenarios) are checked on the
same run's stderr.
"""

from __future__ import annotations

import copy
import json
import socket
from pathlib import Path

import pytest

from tests.e2e.conftest import kept_gateway_log, provider_config, run_clawspec
from tests.support.scripted_provider import MODEL_ID, ScriptedProvider

pytestmark = pytest.mark.e2e

CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/hello}
defaults: {timeout: 240}
scenarios:
  - name: first
    when: {invoke: "Say hello. [script:hello]"}
    then: [{type: file_absent, path: never.md}]
  - name: second
    when: {invoke: "Say hello. [script:hello]"}
    then: [{type: file_absent, path: never.md}]
"""


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _workspace(root: Path, up_url: str, down_url: str) -> Path:
    work = root / "work"
    (work / "skills" / "hello").mkdir(parents=True)
    (work / "skills" / "hello" / "SKILL.md").write_text("---\nname: hello\n---\nHi.\n", "utf-8")
    (work / "skills" / "hello" / "hello.clawspec.yaml").write_text(CONTRACT, "utf-8")
    config = provider_config(up_url)
    providers = config["models"]["providers"]
    providers["down"] = copy.deepcopy(providers["fake"])
    providers["down"]["baseUrl"] = down_url
    config["agents"]["defaults"]["model"]["primary"] = f"down/{MODEL_ID}"
    (work / "openclaw.json").write_text(json.dumps(config), "utf-8")
    (work / "clawspec.yaml").write_text(
        "gateway: {mode: bring_up, config: openclaw.json, ready_timeout: 180}\n"
        "concurrency: 1\n"
        "variants:\n"
        f"  - {{name: up, model: fake/{MODEL_ID}}}\n"
        "  - {name: down}\n",  # the agents' default model
        "utf-8",
    )
    return work


def _hook_requests(log: Path, session_key: str) -> int:
    """How many hook requests with `session_key` the gateway ended: each ends in one
    `hook agent run completed` line, refused ones too."""
    count = 0
    for line in log.read_text("utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        meta = entry.get("1") if isinstance(entry, dict) else None
        if (
            isinstance(meta, dict)
            and meta.get("logicalSessionKey") == session_key
            and str(entry.get("message", "")).startswith("hook agent run completed")
        ):
            count += 1
    return count


def test_an_unreachable_provider_is_named_once_and_its_other_runs_are_skipped(
    openclaw_launcher: str, tmp_path: Path
) -> None:
    port = _closed_port()
    with ScriptedProvider({"hello": [{"text": "Hello!"}]}) as provider:
        work = _workspace(tmp_path, provider.base_url, f"http://127.0.0.1:{port}/v1")
        reports = tmp_path / "reports"
        proc = run_clawspec(work, openclaw_launcher, "--report-dir", str(reports))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    report = json.loads((reports / "clawspec-report.json").read_text("utf-8"))
    by_run = {(s["name"], s["variant"]): s for s in report["scenarios"]}
    assert by_run["first", "up"]["status"] == "pass", out
    assert by_run["second", "up"]["status"] == "pass", out

    down = [by_run["first", "down"], by_run["second", "down"]]
    errored = [s for s in down if s["status"] == "error"]
    skipped = [s for s in down if s["status"] == "skip"]
    assert len(errored) == 1 and len(skipped) == 1, out
    log = kept_gateway_log(reports)
    message = errored[0]["message"]
    assert f"model provider 'down' unreachable at 127.0.0.1:{port}" in message
    assert f"; log: {log}): " in message
    assert "fix:" in message
    assert "local provider preflight failed" in log.read_text("utf-8")  # the evidence is there
    # Refused at the first answer, not retried: one hook request, no "N attempts in M s".
    assert _hook_requests(log, f"hook:clawspec:{errored[0]['run_id']}") == 1, message
    assert "attempts in" not in message
    assert skipped[0]["message"].startswith(
        f"not run: model provider 'down' unreachable at 127.0.0.1:{port} in "
    )

    # Progress on stderr, in order, before the first verdict; none of it on stdout.
    lines = proc.stderr.splitlines()
    starting = next(i for i, line in enumerate(lines) if "starting the OpenClaw gateway" in line)
    ready = next(i for i, line in enumerate(lines) if line.startswith("clawspec: gateway ready"))
    assert starting < ready < lines.index("clawspec: running 4 scenarios")
    assert "clawspec:" not in proc.stdout

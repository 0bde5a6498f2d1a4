"""End-to-end fixtures: one real OpenClaw gateway per test session, fed by a scripted provider.

The gateway may try to reach outside hosts, so these tests only run inside a loopback-only
network namespace:  unshare --net sh -c 'ip link set lo up && exec .venv/bin/pytest tests/e2e'
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.bringup import BringUpOptions, GatewayProcess, RunningGateway
from clawspec.gateway.install import CACHE_ENV
from tests.support.scripted_provider import MODEL_ID, ScriptedProvider

REPO = Path(__file__).resolve().parents[2]
INSTALLER = REPO / "scripts" / "install-openclaw.sh"
# Read at import: the autouse _clean_environment fixture removes CI and CLAWSPEC_* per test.
IN_CI = bool(os.environ.get("CI"))
OPENCLAW_BIN = os.environ.get("CLAWSPEC_OPENCLAW_BIN")
NETNS_HINT = "unshare --net sh -c 'ip link set lo up && exec .venv/bin/pytest tests/e2e'"

SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "write-file": [
        {
            "tool": "write",
            "args": {"path": "out.md", "content": "hello from clawspec\n"},
            "usage": {"prompt_tokens": 1000, "completion_tokens": 50},
        },
        {"text": "Wrote out.md.", "usage": {"prompt_tokens": 1100, "completion_tokens": 7}},
    ],
    "spawn": [
        {
            "tool": "sessions_spawn",
            "args": {"task": "Write child.md [script:child]", "taskName": "child-writer"},
            "usage": {"prompt_tokens": 500, "completion_tokens": 20},
        },
        {"text": "Delegated.", "usage": {"prompt_tokens": 600, "completion_tokens": 5}},
    ],
    "child": [
        {
            "tool": "write",
            "args": {"path": "child.md", "content": "from the child\n"},
            "usage": {"prompt_tokens": 300, "completion_tokens": 30},
        },
        {"text": "Child done.", "usage": {"prompt_tokens": 310, "completion_tokens": 3}},
    ],
}


def _only_loopback() -> bool:
    # /proc/self/net follows our network namespace; /sys/class/net would show the host's.
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return [line.split(":", 1)[0].strip() for line in lines] == ["lo"]


@pytest.fixture(scope="session")
def isolated_netns() -> None:
    if not _only_loopback():
        pytest.fail(
            "e2e tests start a real OpenClaw gateway and must run in a loopback-only network "
            f"namespace; run: {NETNS_HINT}",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def openclaw_launcher(isolated_netns: None) -> str:
    """The installed launcher (scripts/install-openclaw.sh is idempotent and offline when done)."""
    if OPENCLAW_BIN:
        return OPENCLAW_BIN
    proc = subprocess.run(
        ["bash", str(INSTALLER)], check=False, capture_output=True, text=True, timeout=900
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines and Path(lines[-1]).exists():
        return lines[-1]
    reason = (
        "OpenClaw is not installed and cannot be installed here (no network in the "
        "namespace?): run scripts/install-openclaw.sh first. "
        + " | ".join(proc.stderr.strip().splitlines()[-3:])
    )
    if IN_CI:
        pytest.fail(reason, pytrace=False)  # in CI a missing gateway is a failure, never a skip
    pytest.skip(reason)


def run_clawspec(
    work: Path,
    launcher: str,
    *args: str,
    timeout_s: float = 600,
    extra_env: dict[str, str] | None = None,
    unset: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """`clawspec run WORK ARGS…` as a user runs it, in its own process, against `launcher`
    (no CLAWSPEC_/GITHUB_ variables of the test environment leak in, nor those in `unset`; the
    cache folder of this machine's OpenClaw installs does)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if (k == CACHE_ENV or not k.startswith(("CLAWSPEC_", "GITHUB_"))) and k not in unset
    }
    env.update({"CLAWSPEC_OPENCLAW_BIN": launcher, "PYTHONPATH": str(REPO), **(extra_env or {})})
    argv = [sys.executable, "-m", "clawspec", "run", str(work), "--no-color", *args]
    return subprocess.run(
        argv, check=False, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=work
    )


def kept_gateway_log(report_dir: Path, name: str = "openclaw-gateway.log") -> Path:
    """The log a run kept of its gateway `name` (`<report_dir>/gateway-logs/<run>/NAME`), for a
    report folder that one run wrote."""
    (run,) = sorted((report_dir / "gateway-logs").iterdir())
    return run / name


def provider_config(base_url: str, *, tool_search: bool = True) -> dict[str, Any]:
    """extra_config pointing the gateway at the scripted provider.

    Tool Search stays OpenClaw's default (on since 2026.9.6), as users run it: the scripted
    provider calls the tools it is not offered through `tool_call`. `tool_search=False` gives
    the model every tool directly (`tools.toolSearch: false`)."""
    tools: dict[str, Any] = {"profile": "coding"}
    if not tool_search:
        tools["toolSearch"] = False
    return {
        "tools": tools,
        "agents": {"defaults": {"model": {"primary": f"fake/{MODEL_ID}"}}},
        "models": {
            "catalogRefresh": {"enabled": False},
            "mode": "replace",
            "providers": {
                "fake": {
                    "baseUrl": base_url,
                    "apiKey": "fake-local-key",
                    "api": "openai-completions",
                    "timeoutSeconds": 60,
                    "models": [
                        {
                            "id": MODEL_ID,
                            "name": "Fake Model",
                            "reasoning": False,
                            "input": ["text"],
                            "contextWindow": 128000,
                            "maxTokens": 4096,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                        }
                    ],
                }
            },
        },
    }


@pytest.fixture(scope="session")
def provider(isolated_netns: None) -> Iterator[ScriptedProvider]:
    with ScriptedProvider(SCRIPTS) as p:
        yield p


@pytest.fixture(scope="session")
def gateway(
    openclaw_launcher: str, provider: ScriptedProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningGateway]:
    opts = BringUpOptions(
        command=[openclaw_launcher, "gateway", "run"],
        state_dir=tmp_path_factory.mktemp("gateway-state"),
        extra_config=provider_config(provider.base_url),
    )
    with GatewayProcess(opts) as running:
        yield running

"""A brought-up gateway without a model key is a configuration error found before anything runs,
and the message names what to set; `clawspec doctor` says the same, and what else is missing."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.model_keys import missing_key_messages, provider_uses

REPO = Path(__file__).resolve().parents[2]
CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/hello}
scenarios:
  - name: hello
    when: {invoke: "Say hello."}
    then: [{type: file_absent, path: never.md}]
"""
NO_CONFIG_OPENAI = (
    "error: model provider 'openai' has no API key (agent 'main' uses 'openai/gpt-6-astra', "
    "OpenClaw's default model: the OpenClaw config names none): set OPENAI_API_KEY in the "
    "environment clawspec runs in (in CI, from a secret), or set models.providers.openai.apiKey "
    "in an OpenClaw config (gateway.config; the action's openclaw_config), e.g. "
    '"${OPENAI_API_KEY}"'
)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAWSPEC_", "GITHUB_")) and not k.endswith(("_API_KEY", "_TOKEN"))
    }
    return {**env, "PYTHONPATH": str(REPO), "CLAWSPEC_CACHE_DIR": str(tmp_path / "cache"), **extra}


def _clawspec(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawspec", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "skills" / "hello").mkdir(parents=True)
    (root / "skills" / "hello" / "hello.clawspec.yaml").write_text(CONTRACT, "utf-8")
    return root


def test_bring_up_without_a_key_stops_before_anything_runs_and_names_the_variable(
    repo: Path, tmp_path: Path
) -> None:
    proc = _clawspec(repo, _env(tmp_path), "run", "skills/", "--bring-up", "--no-color")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == NO_CONFIG_OPENAI
    assert "paste-api-key" not in proc.stdout + proc.stderr
    # Nothing started: OpenClaw was not even installed, and no scenario was reported.
    assert not (tmp_path / "cache").exists()
    assert not (repo / "clawspec-reports").exists()


def test_the_provider_the_openclaw_config_names_is_the_one_checked(
    repo: Path, tmp_path: Path
) -> None:
    config = {"agents": {"defaults": {"model": {"primary": "anthropic/claude-sonnet-5"}}}}
    (repo / "openclaw.json").write_text(json.dumps(config), "utf-8")
    (repo / "clawspec.yaml").write_text("gateway: {mode: bring_up, config: openclaw.json}\n")
    env = _env(tmp_path, OPENAI_API_KEY="sk-not-the-one-needed")
    proc = _clawspec(repo, env, "run", "skills/", "--no-color")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == (
        "error: model provider 'anthropic' has no API key (agent 'main' uses "
        "'anthropic/claude-sonnet-5'): set ANTHROPIC_API_KEY or ANTHROPIC_OAUTH_TOKEN in the "
        "environment clawspec runs in (in CI, from a secret), or set "
        "models.providers.anthropic.apiKey in your OpenClaw config (openclaw.json), e.g. "
        '"${ANTHROPIC_API_KEY}"'
    )


@pytest.mark.parametrize(
    ("config", "environ", "has_key"),
    [
        ({}, {"OPENAI_API_KEY": "sk-1"}, True),
        ({}, {}, False),
        ({"env": {"vars": {"OPENAI_API_KEY": "sk-1"}}}, {}, True),
        ({"models": {"providers": {"openai": {"apiKey": "sk-inline"}}}}, {}, True),
        ({"models": {"providers": {"openai": {"apiKey": "${MY_KEY}"}}}}, {}, False),
        ({"models": {"providers": {"openai": {"apiKey": "${MY_KEY}"}}}}, {"MY_KEY": "k"}, True),
        (
            {"models": {"providers": {"openai": {"apiKey": {"source": "env", "id": "K2"}}}}},
            {},
            False,
        ),
        ({"agents": {"defaults": {"model": "acme/m1"}}}, {}, None),  # unknown provider
    ],
)
def test_where_a_key_may_come_from(
    config: dict[str, Any], environ: dict[str, str], has_key: bool | None
) -> None:
    (use,) = provider_uses(config, ["main"], environ)
    assert use.has_key is has_key
    assert bool(missing_key_messages([use], None)) is (has_key is False)


def test_each_agent_of_the_run_is_checked_for_its_own_provider() -> None:
    config = {
        "agents": {
            "defaults": {"model": {"primary": "openai/gpt-6"}},
            "entries": {"writer": {"model": {"primary": "google/gemini-3"}}},
        }
    }
    uses = provider_uses(config, ["main", "writer"], {"OPENAI_API_KEY": "sk"})
    assert [(u.provider, u.agent, u.has_key) for u in uses] == [
        ("openai", "main", True),
        ("google", "writer", False),
    ]
    (message,) = missing_key_messages(uses, "openclaw.json")
    assert "set GEMINI_API_KEY or GOOGLE_API_KEY in the environment" in message


# -- clawspec doctor ---------------------------------------------------------------------------


@pytest.fixture
def ready_gateway() -> Iterator[str]:
    """A server on 127.0.0.1 answering /readyz as a ready OpenClaw gateway does."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = b'{"ready":true}' if self.path == "/readyz" else b"<html></html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_doctor_in_target_mode_checks_the_gateway_url_and_the_hook_token(
    repo: Path, tmp_path: Path, ready_gateway: str
) -> None:
    env = _env(tmp_path, CLAWSPEC_GATEWAY_BASE_URL=ready_gateway, CLAWSPEC_HOOKS_TOKEN="hk-1234")
    proc = _clawspec(repo, env, "doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"  ok       gateway: {ready_gateway} is ready" in proc.stdout.splitlines()

    with socket_closed() as closed:
        env = _env(tmp_path, CLAWSPEC_GATEWAY_BASE_URL=closed, CLAWSPEC_HOOKS_TOKEN="hk-1234")
        proc = _clawspec(repo, env, "doctor")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert (
        f"  MISSING  gateway: nothing answers at {closed} (ConnectionError): start your gateway, "
        "set gateway_base_url, or run with --bring-up"
    ) in proc.stdout.splitlines()


def test_doctor_for_bring_up_names_the_cache_and_the_missing_key(
    repo: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path, PATH=os.environ["PATH"])
    proc = _clawspec(repo, env, "doctor", "--bring-up")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert f"  ok       cache: {tmp_path / 'cache'} ($CLAWSPEC_CACHE_DIR)" in lines
    assert f"  MISSING  model key: {NO_CONFIG_OPENAI.removeprefix('error: ')}" in lines
    assert lines[-1] == "something is missing (above)"


@contextlib.contextmanager
def socket_closed() -> Iterator[str]:
    """The URL of a loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


def test_the_workflow_init_writes_names_the_model_key_secret(repo: Path, tmp_path: Path) -> None:
    proc = _clawspec(repo, _env(tmp_path), "init")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    workflow = (repo / ".github" / "workflows" / "clawspec.yml").read_text("utf-8")
    assert (
        "        # The brought-up gateway needs the API key of the model provider your OpenClaw\n"
        "        # config names (OPENAI_API_KEY here). Add it as a repository secret, then "
        "uncomment:\n"
        "        # env:\n"
        "        #   OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n"
    ) in workflow


VARIANTS = """\
gateway: {mode: bring_up}
variants:
  - {name: base}
  - {name: mini, model: anthropic/claude-haiku-4-5}
  - name: gem
    openclaw_config: {agents: {defaults: {model: {primary: google/gemini-3-pro}}}}
"""
MINI_MISSING = (
    "model provider 'anthropic' has no API key (variant 'mini' uses "
    "'anthropic/claude-haiku-4-5'): set ANTHROPIC_API_KEY or ANTHROPIC_OAUTH_TOKEN in the "
    "environment clawspec runs in (in CI, from a secret), or set "
    "models.providers.anthropic.apiKey in an OpenClaw config (gateway.config; the action's "
    'openclaw_config), e.g. "${ANTHROPIC_API_KEY}"'
)
GEM_MISSING = (
    "model provider 'google' has no API key (agent 'main' uses 'google/gemini-3-pro'): set "
    "GEMINI_API_KEY or GOOGLE_API_KEY in the environment clawspec runs in (in CI, from a "
    "secret), or set models.providers.google.apiKey in an OpenClaw config (gateway.config; the "
    'action\'s openclaw_config), e.g. "${GEMINI_API_KEY}"'
)


def test_run_checks_every_selected_variants_model_before_any_gateway_starts(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "clawspec.yaml").write_text(VARIANTS, "utf-8")
    env = _env(tmp_path, OPENAI_API_KEY="sk-for-the-agents")
    proc = _clawspec(repo, env, "run", "skills/", "--variant", "mini", "--no-color")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == f"error: {MINI_MISSING}"
    assert "sk-for-the-agents" not in proc.stdout + proc.stderr
    # Nothing started: OpenClaw was not even installed, and no scenario was reported.
    assert not (tmp_path / "cache").exists()
    assert not (repo / "clawspec-reports").exists()

    # All variants: the model-only one and the one with a gateway of its own, both named at
    # once (the second gateway's key is not found only after the first gateway is up).
    proc = _clawspec(repo, env, "run", "skills/", "--no-color")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {MINI_MISSING}", GEM_MISSING]
    assert not (tmp_path / "cache").exists()


def test_doctor_checks_the_selected_variants_models(repo: Path, tmp_path: Path) -> None:
    (repo / "clawspec.yaml").write_text(VARIANTS, "utf-8")
    env = _env(tmp_path, PATH=os.environ["PATH"], OPENAI_API_KEY="sk-for-the-agents")
    proc = _clawspec(repo, env, "doctor", "--bring-up")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "  ok       model key: openai (openai/gpt-6-astra): found" in lines
    assert f"  MISSING  model key: {MINI_MISSING}" in lines
    assert f"  MISSING  model key: {GEM_MISSING}" in lines
    assert lines[-1] == "something is missing (above)"
    assert "sk-for-the-agents" not in proc.stdout + proc.stderr

    env["ANTHROPIC_API_KEY"] = "sk-ant-test"
    proc = _clawspec(repo, env, "doctor", "--bring-up", "--variant", "mini")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert (
        "  ok       model key: anthropic (anthropic/claude-haiku-4-5, variant 'mini'): found"
        in lines
    )
    assert not any("google" in line for line in lines)  # gem is not selected
    assert lines[-1] == "nothing missing"

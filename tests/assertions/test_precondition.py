"""Precondition assertions: file_present, file_absent, env_present, gateway_healthy."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clawspec.assertions.base import PathEscapeError, Status
from clawspec.config.settings import Settings
from tests.support.harness import evaluate_one, make_context

# --- a gateway stand-in on 127.0.0.1 ----------------------------------------------------------


class FakeGateway:
    """Serve fixed answers per path: {path: (status, body, content type)}; record requests."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, str, str]] = {}
        self.requests: list[tuple[str, str]] = []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                gateway.requests.append(("GET", self.path))
                status, body, kind = gateway.routes.get(self.path, (404, "not found", "text/plain"))
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def route(self, path: str, status: int, body: object = "", kind: str | None = None) -> None:
        text = body if isinstance(body, str) else json.dumps(body)
        self.routes[path] = (
            status,
            text,
            kind or ("text/plain" if isinstance(body, str) else "application/json"),
        )


@pytest.fixture
def gateway() -> Iterator[FakeGateway]:
    fake = FakeGateway()
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def closed_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- file_present / file_absent ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "exists", "status", "message"),
    [
        ("file_present", True, Status.PASS, "'SKILL.md' exists"),
        ("file_present", False, Status.FAIL, "'SKILL.md' does not exist"),
        ("file_absent", True, Status.FAIL, "'SKILL.md' exists but must not"),
        ("file_absent", False, Status.PASS, "'SKILL.md' does not exist"),
    ],
)
def test_file_presence_verdicts(
    workspace: Path, kind: str, exists: bool, status: Status, message: str
) -> None:
    if exists:
        (workspace / "SKILL.md").write_text("# skill\n")
    verdict = evaluate_one({"type": kind, "path": "SKILL.md"}, make_context(workspace))
    assert (verdict.status, verdict.message) == (status, message)


@pytest.mark.parametrize(
    ("kind", "status"), [("file_present", Status.PASS), ("file_absent", Status.FAIL)]
)
def test_file_presence_resolves_relative_paths_against_workspace_not_cwd(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, status: Status
) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "state.yaml").write_text("status: ready\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    verdict = evaluate_one({"type": kind, "path": "memory/state.yaml"}, make_context(workspace))
    assert verdict.status == status


def test_file_present_ignores_file_that_only_exists_in_cwd(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "only-here.md").write_text("x")
    monkeypatch.chdir(elsewhere)
    verdict = evaluate_one(
        {"type": "file_present", "path": "only-here.md"}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (Status.FAIL, "'only-here.md' does not exist")


def test_file_present_accepts_absolute_path_outside_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "openclaw" / "gateway.log"
    outside.parent.mkdir()
    outside.write_text("line\n")
    verdict = evaluate_one({"type": "file_present", "path": str(outside)}, make_context(workspace))
    assert (verdict.status, verdict.message) == (Status.PASS, f"'{outside}' exists")


@pytest.mark.parametrize("kind", ["file_present", "file_absent"])
def test_file_presence_refuses_symlink_escaping_workspace(
    workspace: Path, tmp_path: Path, kind: str
) -> None:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("x")
    (workspace / "link").symlink_to(secret, target_is_directory=True)
    with pytest.raises(PathEscapeError, match=r"path 'link/secret.txt' resolves outside the "):
        evaluate_one({"type": kind, "path": "link/secret.txt"}, make_context(workspace))


def test_file_present_follows_symlink_inside_workspace(workspace: Path) -> None:
    (workspace / "real.md").write_text("x")
    (workspace / "alias.md").symlink_to(workspace / "real.md")
    verdict = evaluate_one({"type": "file_present", "path": "alias.md"}, make_context(workspace))
    assert verdict.status == Status.PASS


# --- env_present -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "status", "message"),
    [
        (
            {"CS_T_A": "s3cr3t-a", "CS_T_B": "s3cr3t-b"},
            Status.PASS,
            "all 2 set: 'CS_T_A', 'CS_T_B'",
        ),
        ({"CS_T_A": "s3cr3t-a"}, Status.FAIL, "not set or empty: 'CS_T_B'"),
        ({"CS_T_A": "s3cr3t-a", "CS_T_B": ""}, Status.FAIL, "not set or empty: 'CS_T_B'"),
        ({}, Status.FAIL, "not set or empty: 'CS_T_A', 'CS_T_B'"),
    ],
)
def test_env_present_verdicts_name_variables_never_values(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    status: Status,
    message: str,
) -> None:
    for name in ("CS_T_A", "CS_T_B"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    verdict = evaluate_one(
        {"type": "env_present", "vars": ["CS_T_A", "CS_T_B"]}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (status, message)
    assert "s3cr3t" not in repr(verdict)


# --- gateway_healthy ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status_code", "body", "status", "suffix"),
    [
        (200, {"ok": True, "status": "live"}, Status.PASS, "→ 200"),
        (200, "OK", Status.PASS, "→ 200"),
        (200, {"ready": True}, Status.PASS, "→ 200"),
        (200, {"ok": False}, Status.FAIL, '→ 200 but body says {"ok": false}'),
        (
            200,
            {"ready": False, "failing": ["db"]},
            Status.FAIL,
            '→ 200 but body says {"ready": false, "failing": ["db"]}',
        ),
        (503, {"ok": False}, Status.FAIL, "→ 503"),
        (404, "not found", Status.FAIL, "→ 404"),
    ],
)
def test_gateway_healthy_verdicts(
    *,
    workspace: Path,
    gateway: FakeGateway,
    status_code: int,
    body: object,
    status: Status,
    suffix: str,
) -> None:
    gateway.route("/health", status_code, body)
    ctx = make_context(workspace, Settings(gateway_base_url=gateway.url))
    verdict = evaluate_one({"type": "gateway_healthy"}, ctx)
    assert (verdict.status, verdict.message) == (status, f"GET {gateway.url}/health {suffix}")
    assert gateway.requests == [("GET", "/health")]


def test_gateway_healthy_uses_configured_health_path(workspace: Path, gateway: FakeGateway) -> None:
    gateway.route("/readyz", 200, {"ready": True})
    settings = Settings(gateway_base_url=gateway.url + "/", gateway_health_path="/readyz")
    verdict = evaluate_one({"type": "gateway_healthy"}, make_context(workspace, settings))
    assert (verdict.status, verdict.message) == (Status.PASS, f"GET {gateway.url}/readyz → 200")


def test_gateway_healthy_fails_when_connection_refused(workspace: Path, closed_url: str) -> None:
    ctx = make_context(workspace, Settings(gateway_base_url=closed_url))
    verdict = evaluate_one({"type": "gateway_healthy"}, ctx)
    assert verdict.status == Status.FAIL
    assert verdict.message.startswith(f"GET {closed_url}/health failed: ")
    assert "\n" not in verdict.message

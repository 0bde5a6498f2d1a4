"""Behavioral assertions that read files or one HTTP answer: gateway_response, log_entry
(without run_id) and decision_routed_to."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from clawspec.assertions.base import PathEscapeError, Status
from clawspec.config.settings import Settings
from tests.support.harness import evaluate_one, make_context


class StatusServer:
    """Answer GET {path} with the status in `routes` (404 otherwise); record the paths."""

    def __init__(self) -> None:
        self.routes: dict[str, int] = {}
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.paths.append(self.path)
                status = owner.routes.get(self.path, 404)
                body = json.dumps({"status": status}).encode()
                self.send_response(status)
                if status in (301, 302):
                    self.send_header("Location", "/elsewhere")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def server() -> Iterator[StatusServer]:
    fake = StatusServer()
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- gateway_response --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route_status", "expected", "status", "suffix"),
    [
        (200, 200, Status.PASS, "→ 200"),
        (503, 503, Status.PASS, "→ 503"),
        (503, 200, Status.FAIL, "→ 503, expected 200"),
        (200, 201, Status.FAIL, "→ 200, expected 201"),
        (302, 302, Status.PASS, "→ 302"),  # redirects are not followed
        (None, 404, Status.PASS, "→ 404"),
    ],
)
def test_gateway_response_compares_status_code(
    *,
    workspace: Path,
    server: StatusServer,
    route_status: int | None,
    expected: int,
    status: Status,
    suffix: str,
) -> None:
    if route_status is not None:
        server.routes["/health"] = route_status
    verdict = evaluate_one(
        {
            "type": "gateway_response",
            "endpoint": f"{server.url}/health",
            "expected_status": expected,
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (status, f"GET {server.url}/health {suffix}")
    assert server.paths == ["/health"]


def test_gateway_response_resolves_relative_endpoint_on_gateway_base_url(
    workspace: Path, server: StatusServer
) -> None:
    server.routes["/x"] = 202
    ctx = make_context(workspace, Settings(gateway_base_url=server.url + "/"))
    verdict = evaluate_one(
        {"type": "gateway_response", "endpoint": "/x", "expected_status": 202}, ctx
    )
    assert (verdict.status, verdict.message) == (Status.PASS, f"GET {server.url}/x → 202")
    assert (verdict.value, verdict.limit) == (202, 202)
    assert server.paths == ["/x"]


def test_gateway_response_fails_when_connection_refused(workspace: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/health"
    verdict = evaluate_one(
        {"type": "gateway_response", "endpoint": url, "expected_status": 200},
        make_context(workspace),
    )
    assert verdict.status == Status.FAIL
    assert verdict.message.startswith(f"GET {url} failed: ")


# --- log_entry ---------------------------------------------------------------------------------

LOG = """\
2025-01-01T10:00:00 INFO run started
{"level":"info","message":"draft approved (by brand)","runId":"r1"}
2025-01-01T10:00:02 WARN retry 3 of 5
"""


@pytest.mark.parametrize(
    ("pattern", "status", "message"),
    [
        ("approved", Status.PASS, "line 2 of 'logs/run.log' matches 'approved'"),
        ("run started", Status.PASS, "line 1 of 'logs/run.log' matches 'run started'"),
        (r"retry \d+ of \d+", Status.PASS, r"line 3 of 'logs/run.log' matches 'retry \d+ of \d+'"),
        ("approved (", Status.PASS, "line 2 of 'logs/run.log' matches 'approved ('"),
        ("(by brand)", Status.PASS, "line 2 of 'logs/run.log' matches '(by brand)'"),
        ("^draft approved", Status.PASS, "line 2 of 'logs/run.log' matches '^draft approved'"),
        ("^\\d{4}-", Status.PASS, "line 1 of 'logs/run.log' matches '^\\d{4}-'"),
        (
            "rejected (",
            Status.FAIL,
            "no line of 'logs/run.log' matches 'rejected (' (3 lines read)",
        ),
        ("^approved", Status.FAIL, "no line of 'logs/run.log' matches '^approved' (3 lines read)"),
        ("APPROVED", Status.FAIL, "no line of 'logs/run.log' matches 'APPROVED' (3 lines read)"),
    ],
)
def test_log_entry_matches_substring_regex_or_json_message(
    workspace: Path, pattern: str, status: Status, message: str
) -> None:
    _write(workspace, "logs/run.log", LOG)
    verdict = evaluate_one(
        {"type": "log_entry", "path": "logs/run.log", "pattern": pattern}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (status, message)


def test_log_entry_json_message_field_matches_anchored_regex(workspace: Path) -> None:
    # The raw line starts with '{', so only the `message` field can match '^sent$'.
    _write(workspace, "gw.log", '{"time":"t","message":"sent","subsystem":"gateway/hooks"}\n')
    verdict = evaluate_one(
        {"type": "log_entry", "path": "gw.log", "pattern": "^sent$"}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (Status.PASS, "line 1 of 'gw.log' matches '^sent$'")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "log 'logs/run.log' not found"),
        ("", "no line of 'logs/run.log' matches 'approved' (0 lines read)"),
        (
            '{"message": 42}\n[1, 2]\n{broken json\n',
            "no line of 'logs/run.log' matches 'approved' (3 lines read)",
        ),
    ],
)
def test_log_entry_fails_without_matching_line(
    workspace: Path, text: str | None, message: str
) -> None:
    if text is not None:
        _write(workspace, "logs/run.log", text)
    verdict = evaluate_one(
        {"type": "log_entry", "path": "logs/run.log", "pattern": "approved"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (Status.FAIL, message)


def test_log_entry_reads_workspace_file_not_cwd(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(workspace, "run.log", "approved\n")
    _write(tmp_path / "elsewhere", "run.log", "nothing\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    verdict = evaluate_one(
        {"type": "log_entry", "path": "run.log", "pattern": "approved"}, make_context(workspace)
    )
    assert verdict.status == Status.PASS


def test_log_entry_refuses_symlink_escaping_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = _write(tmp_path, "outside.log", "approved\n")
    (workspace / "run.log").symlink_to(outside)
    with pytest.raises(PathEscapeError, match=r"path 'run\.log' resolves outside the workspace"):
        evaluate_one(
            {"type": "log_entry", "path": "run.log", "pattern": "approved"},
            make_context(workspace),
        )


# --- decision_routed_to ------------------------------------------------------------------------

NO_DECISION = (
    "'router.yaml' records no routing decision "
    "(looked for 'routed_to', 'selected_agent', 'decision', 'agent', 'route')"
)


@pytest.mark.parametrize(
    ("state", "expected_agent", "status", "message"),
    [
        ({"routed_to": "agents/brand"}, "agents/brand", Status.PASS, "routed_to = 'agents/brand'"),
        ({"selected_agent": "brand"}, "brand", Status.PASS, "selected_agent = 'brand'"),
        ({"decision": "brand"}, "brand", Status.PASS, "decision = 'brand'"),
        (
            {"decision": {"agent": "brand", "score": 0.9}},
            "brand",
            Status.PASS,
            "decision = 'brand'",
        ),
        ({"agent": "brand"}, "brand", Status.PASS, "agent = 'brand'"),
        ({"route": "brand"}, "brand", Status.PASS, "route = 'brand'"),
        # precedence: the first present key decides, later ones are ignored
        (
            {"routed_to": "copy", "selected_agent": "brand", "agent": "brand"},
            "brand",
            Status.FAIL,
            "routed to 'copy', expected 'brand'",
        ),
        (
            {"selected_agent": "brand", "decision": "copy"},
            "brand",
            Status.PASS,
            "selected_agent = 'brand'",
        ),
        (
            {"decision": {"agent": "copy"}, "agent": "brand"},
            "brand",
            Status.FAIL,
            "routed to 'copy', expected 'brand'",
        ),
        (
            {"agent": "brand", "route": "copy"},
            "copy",
            Status.FAIL,
            "routed to 'brand', expected 'copy'",
        ),
        ({"routed_to": None, "route": "brand"}, "brand", Status.PASS, "route = 'brand'"),
        # lists: any item
        ({"routed_to": ["copy", "/brand/"]}, "brand", Status.PASS, "routed_to = 'brand'"),
        (
            {"decision": [{"agent": "copy"}, {"agent": "brand"}]},
            "brand",
            Status.PASS,
            "decision = 'brand'",
        ),
        (
            {"routed_to": ["copy", "legal"]},
            "brand",
            Status.FAIL,
            "routed to 'copy', 'legal', expected 'brand'",
        ),
        # exact after trimming '/'
        (
            {"routed_to": "/agents/marketing/brand/"},
            "agents/marketing/brand/",
            Status.PASS,
            "routed_to = 'agents/marketing/brand'",
        ),
        (
            {"routed_to": "agents/marketing/brand"},
            "brand",
            Status.FAIL,
            "routed to 'agents/marketing/brand', expected 'brand'",
        ),
        ({"routed_to": "Brand"}, "brand", Status.FAIL, "routed to 'Brand', expected 'brand'"),
        # nothing recorded
        ({"status": "done"}, "brand", Status.FAIL, NO_DECISION),
        ({"routed_to": None}, "brand", Status.FAIL, NO_DECISION),
    ],
)
def test_decision_routed_to_reads_first_present_decision_key(
    workspace: Path, state: dict[str, Any], expected_agent: str, status: Status, message: str
) -> None:
    _write(workspace, "router.yaml", json.dumps(state))  # JSON is valid YAML
    verdict = evaluate_one(
        {
            "type": "decision_routed_to",
            "state_path": "router.yaml",
            "expected_agent": expected_agent,
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (status, message)


def test_decision_routed_to_reads_yaml_and_json_files(workspace: Path) -> None:
    _write(workspace, "memory/router-state.yaml", "decision:\n  agent: agents/marketing/brand\n")
    _write(workspace, "memory/router-state.json", '{"selected_agent": "agents/marketing/brand"}')
    ctx = make_context(workspace)
    for name in ("memory/router-state.yaml", "memory/router-state.json"):
        verdict = evaluate_one(
            {
                "type": "decision_routed_to",
                "state_path": name,
                "expected_agent": "agents/marketing/brand",
            },
            ctx,
        )
        assert verdict.status == Status.PASS, name


@pytest.mark.parametrize(
    ("text", "status", "message"),
    [
        (None, Status.FAIL, "router state 'router.yaml' not found"),
        ("routed_to: [brand\n", Status.ERROR, "'router.yaml' is not valid YAML: "),
        ("- brand\n", Status.FAIL, NO_DECISION),
    ],
)
def test_decision_routed_to_without_usable_state(
    workspace: Path, text: str | None, status: Status, message: str
) -> None:
    if text is not None:
        _write(workspace, "router.yaml", text)
    verdict = evaluate_one(
        {"type": "decision_routed_to", "state_path": "router.yaml", "expected_agent": "brand"},
        make_context(workspace),
    )
    assert verdict.status == status
    assert verdict.message.startswith(message)


def test_decision_routed_to_mapping_without_agent_fails_clearly(workspace: Path) -> None:
    (workspace / "router.yaml").write_text("decision: {confidence: 0.9}\n", encoding="utf-8")
    verdict = evaluate_one(
        {"type": "decision_routed_to", "state_path": "router.yaml", "expected_agent": "brand"},
        make_context(workspace),
    )
    assert verdict.status == Status.FAIL
    assert verdict.message == (
        "'router.yaml': decision names no agent (a string, or a mapping's 'agent')"
    )

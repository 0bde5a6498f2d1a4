"""`clawspec doctor` and conversations, through the real CLI against a local server speaking
OpenClaw's readiness and chat wire formats (127.0.0.1): with conversations among the contracts
it checks the gateway token and asks the chat endpoint with it (target mode), and it always says
where each gateway's run records are read (`openclaw_state_dir`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.support import chat_api
from tests.support.chat_api import ChatServer

TOKEN = "gw-token-doctor-4c4c21"
CONVERSATION = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: talks
    turns:
      - say: "hello"
        then:
          - {type: reply_contains, text: "hello"}
"""
ONE_MESSAGE = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: writes
    when: {invoke: "/send-newsletter"}
    then:
      - {type: artifact_exists, path: out.md}
"""


class ReadyChatServer(ChatServer):
    """The chat server, also answering OpenClaw's `GET /readyz` (`{"ready": true}`)."""

    def __enter__(self) -> ReadyChatServer:
        import threading

        owner = self

        class Handler(chat_api._Handler):
            server_owner = owner

            def do_GET(self) -> None:
                if self.path == "/readyz":
                    self._json(200, {"ready": True})
                    return
                super().do_GET()

        self._server = chat_api._Listener(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self


@pytest.fixture
def gateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReadyChatServer]:
    with ReadyChatServer(TOKEN) as server:
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", "hooks-token-doctor-1")
        for name in (
            "CLAWSPEC_GATEWAY_AUTH_TOKEN",
            "OPENCLAW_GATEWAY_TOKEN",
            "CLAWSPEC_OPENCLAW_STATE_DIR",
            "OPENCLAW_STATE_DIR",
        ):
            monkeypatch.delenv(name, raising=False)
        yield server


def _doctor(capsys: pytest.CaptureFixture[str], code: int) -> str:
    assert main(["doctor", "."]) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.out


def test_conversations_without_a_gateway_token_are_missing_it(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: ReadyChatServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    out = _doctor(capsys, 2)
    assert "ok       gateway:" in out
    assert "MISSING  gateway token: conversations ('talks' (case.clawspec.yaml))" in out
    assert "CLAWSPEC_GATEWAY_AUTH_TOKEN" in out
    assert not any(r.path.startswith("/v1/") for r in gateway.requests)


def test_conversations_with_the_token_ask_the_chat_endpoint(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: ReadyChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", TOKEN)  # OpenClaw's own name is read too
    out = _doctor(capsys, 0)
    assert "ok       gateway token: set" in out
    assert f"ok       chat endpoint: {gateway.base_url}/v1/models answers with the token" in out
    (asked,) = [r for r in gateway.requests if r.path == "/v1/models"]
    assert asked.headers["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in out


@pytest.mark.parametrize(
    ("token", "enabled", "expected"),
    [
        ("gw-token-wrong-000000", True, "/v1/models → 401: the gateway token was refused"),
        (TOKEN, False, "gateway.http.endpoints.chatCompletions.enabled"),
    ],
)
def test_a_refused_token_or_an_endpoint_that_is_off_is_missing(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: ReadyChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    token: str,
    enabled: bool,
    expected: str,
) -> None:
    write_contract(CONVERSATION)
    gateway.enabled = enabled
    monkeypatch.setenv("CLAWSPEC_GATEWAY_AUTH_TOKEN", token)
    out = _doctor(capsys, 2)
    assert "MISSING  chat endpoint:" in out
    assert expected in out
    assert token not in out


def test_without_conversations_the_chat_endpoint_is_not_asked(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: ReadyChatServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(ONE_MESSAGE)
    out = _doctor(capsys, 0)
    assert "gateway token" not in out and "chat endpoint" not in out
    assert not any(r.path.startswith("/v1/") for r in gateway.requests)


def test_the_state_folder_is_reported_set_or_not(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: ReadyChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(ONE_MESSAGE)
    out = _doctor(capsys, 0)
    assert "note     state dir: not set: reply and run-record assertions" in out
    (workspace / "state").mkdir()
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(workspace / "state"))
    assert f"note     state dir: {workspace / 'state'} has no agents/ folder" in _doctor(capsys, 0)
    (workspace / "state" / "agents").mkdir()
    assert f"ok       state dir: {workspace / 'state'}" in _doctor(capsys, 0)
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(workspace / "no-such-folder"))
    assert "MISSING  state dir:" in _doctor(capsys, 2)


def test_a_variant_gateway_is_checked_with_its_own_token_and_state_folder(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: ReadyChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    other_token = "gw-token-doctor-other-9"
    with ReadyChatServer(other_token) as other:
        (workspace / "clawspec.yaml").write_text(
            "variants:\n  - name: canary\n"
            f"    gateway_base_url: {other.base_url}\n"
            "    gateway_token_env: CANARY_TOKEN\n    openclaw_state_dir: canary-state\n"
            "  - name: deep\n    thinking: high\n",
            encoding="utf-8",
        )
        monkeypatch.setenv("CLAWSPEC_GATEWAY_AUTH_TOKEN", TOKEN)
        monkeypatch.setenv("CANARY_TOKEN", other_token)
        out = _doctor(capsys, 2)
    assert "ok       variant 'canary' token: set" in out
    (asked,) = [r for r in other.requests if r.path == "/v1/models"]
    assert asked.headers["Authorization"] == f"Bearer {other_token}"
    assert f"MISSING  variant 'canary' state dir: {workspace / 'canary-state'}" in out
    assert "MISSING  thinking: variant 'deep' sets thinking 'high'" in out
    assert other_token not in out


def test_bring_up_says_it_makes_the_token(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    monkeypatch.setenv("CLAWSPEC_OPENCLAW_BIN", "/bin/true")
    assert main(["doctor", ".", "--bring-up"]) in (0, 2)  # model keys are not this test's
    out = capsys.readouterr().out
    assert "ok       conversations: 'talks' (case.clawspec.yaml): bring-up makes the gateway" in (
        out
    )
    assert "ok       state dir: bring-up's own" in out


def test_a_server_whose_readiness_answer_is_not_openclaws_says_what_was_expected(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Something answers at the URL, but `/readyz` is no OpenClaw readiness answer: doctor says
    what it asked, what it expected and what to check, not a bare "not ready (HTTP 404)"."""
    from tests.support.hooks_api import serving_cli

    write_contract(ONE_MESSAGE)
    with serving_cli("hooks-token-doctor-2", workspace, monkeypatch) as server:
        assert main(["doctor", "."]) == 3
    out = capsys.readouterr().out
    assert (
        f"{server.base_url} answers but is not ready: {server.base_url}/readyz answered HTTP 404 "
        'without {"ready": true}'
    ) in out
    assert "check gateway_base_url" in out

"""What conversations need of a gateway ClawSpec did not start, through the real `clawspec run`
CLI against local servers speaking OpenClaw's chat wire format (127.0.0.1): a gateway token,
checked before anything is contacted; `GET /v1/models` with it before any turn (401 and 404 are
usage errors saying what to set); a variant's own gateway with its own token; a variant whose
thinking level cannot reach its conversations refused before any run; one-message scenarios
untouched; the webhook trigger mode leaves conversations on the chat endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawspec.cli import main
from tests.support.chat_api import ChatServer
from tests.support.hooks_api import serving_cli

TOKEN = "gw-token-conversations-5d1c9a"
OTHER_TOKEN = "gw-token-other-gateway-0b7e2f"
HOOKS_TOKEN = "hooks-token-conversations-77aa01"
CONVERSATION = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5}
scenarios:
  - name: talks
    turns:
      - say: "hello there"
        then:
          - {type: reply_contains, text: "echo: hello there"}
      - say: "and again"
        then:
          - {type: reply_contains, text: "echo: and again"}
"""
ONE_MESSAGE = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: writes
    when: {invoke: "/send-newsletter [write:out/{{run_id}}.md]"}
    then:
      - type: artifact_exists
        path: "out/{{run_id}}.md"
"""


def _config(workspace: Path, text: str) -> None:
    (workspace / "clawspec.yaml").write_text("report_dir: reports\n" + text, encoding="utf-8")


def _target(monkeypatch: pytest.MonkeyPatch, server: ChatServer, token: str | None) -> None:
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
    monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", HOOKS_TOKEN)
    for name in ("CLAWSPEC_GATEWAY_AUTH_TOKEN", "OPENCLAW_GATEWAY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    if token is not None:
        monkeypatch.setenv("CLAWSPEC_GATEWAY_AUTH_TOKEN", token)


def _report(workspace: Path) -> dict[str, Any]:
    return json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))


def _posts(server: ChatServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["run", ".", *argv]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err


def test_the_preflight_asks_the_chat_endpoint_once_before_the_first_turn(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    with ChatServer(TOKEN) as server:
        _target(monkeypatch, server, TOKEN)
        assert main(["run", "."]) == 0
    # Anything answering the base URL counts as reachable; then the preflight, then the turns.
    asked = [(r.method, r.path) for r in server.requests if r.path.startswith("/v1/")]
    assert asked == [
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/chat/completions"),
    ]
    assert {r.headers["Authorization"] for r in server.requests if r.path.startswith("/v1/")} == {
        f"Bearer {TOKEN}"
    }
    (result,) = _report(workspace)["scenarios"]
    assert result["status"] == "pass"
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err


def test_no_gateway_token_is_a_usage_error_before_anything_is_contacted(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    with ChatServer(TOKEN) as server:
        _target(monkeypatch, server, None)
        err = _usage_error(capsys)
    assert server.requests == []
    assert "scenario 'talks' (case.clawspec.yaml) is a conversation" in err
    assert "none is set" in err
    for named in ("CLAWSPEC_GATEWAY_AUTH_TOKEN", "OPENCLAW_GATEWAY_TOKEN", "gateway_token"):
        assert named in err


def test_a_refused_token_is_a_usage_error_naming_the_token_settings(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    wrong = "gw-token-wrong-9c9c9c"
    with ChatServer(TOKEN) as server:
        _target(monkeypatch, server, wrong)
        err = _usage_error(capsys)
    assert _posts(server) == []  # no turn was sent
    assert "/v1/models → 401: the gateway token was refused" in err
    for named in ("CLAWSPEC_GATEWAY_AUTH_TOKEN", "OPENCLAW_GATEWAY_TOKEN", "gateway_token"):
        assert named in err
    assert wrong not in err
    assert not (workspace / "reports" / "clawspec-report.json").exists()


def test_an_endpoint_that_is_off_is_a_usage_error_naming_its_setting(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    with ChatServer(TOKEN, enabled=False) as server:
        _target(monkeypatch, server, TOKEN)
        err = _usage_error(capsys)
    assert _posts(server) == []
    assert "/v1/models → 404" in err
    assert "gateway.http.endpoints.chatCompletions.enabled" in err


def test_one_message_scenarios_need_no_gateway_token_and_get_no_preflight(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_contract(ONE_MESSAGE)
    for name in ("CLAWSPEC_GATEWAY_AUTH_TOKEN", "OPENCLAW_GATEWAY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with serving_cli(HOOKS_TOKEN, workspace, monkeypatch) as hooks:
        assert main(["run", "."]) == 0
    assert not any(r["path"].startswith("/v1/") for r in hooks.requests)


def test_in_webhook_mode_conversations_still_go_through_the_chat_endpoint(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _config(workspace, "trigger_mode: webhook\n")
    write_contract(CONVERSATION)
    with ChatServer(TOKEN) as server:
        _target(monkeypatch, server, TOKEN)
        assert main(["run", "."]) == 0
    assert len(_posts(server)) == 2
    assert {r.path for r in _posts(server)} == {"/v1/chat/completions"}


def test_a_variant_gateway_is_asked_with_its_own_token(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    with ChatServer(TOKEN) as default, ChatServer(OTHER_TOKEN) as other:
        _target(monkeypatch, default, TOKEN)
        monkeypatch.setenv("CANARY_GATEWAY_TOKEN", OTHER_TOKEN)
        _config(
            workspace,
            "variants:\n  - name: current\n  - name: canary\n"
            f"    gateway_base_url: {other.base_url}\n"
            "    gateway_token_env: CANARY_GATEWAY_TOKEN\n",
        )
        assert main(["run", "."]) == 0
    for server, token in ((default, TOKEN), (other, OTHER_TOKEN)):
        used = [r for r in server.requests if r.path.startswith("/v1/")]
        assert [r.path for r in used][:1] == ["/v1/models"]
        assert len(_posts(server)) == 2
        assert {r.headers["Authorization"] for r in used} == {f"Bearer {token}"}
    results = _report(workspace)["scenarios"]
    assert [(r["variant"], r["status"]) for r in results] == [
        ("current", "pass"),
        ("canary", "pass"),
    ]
    captured = capsys.readouterr()
    report_text = (workspace / "reports" / "clawspec-report.json").read_text("utf-8")
    assert OTHER_TOKEN not in captured.out + captured.err + report_text


def test_a_variant_gateway_refusing_its_token_names_the_variant_variable(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    with ChatServer(TOKEN) as default, ChatServer(OTHER_TOKEN) as other:
        _target(monkeypatch, default, TOKEN)
        monkeypatch.setenv("CANARY_GATEWAY_TOKEN", "gw-token-stale-123456")
        _config(
            workspace,
            f"variants:\n  - name: canary\n    gateway_base_url: {other.base_url}\n"
            "    gateway_token_env: CANARY_GATEWAY_TOKEN\n",
        )
        err = _usage_error(capsys)
    assert _posts(other) == [] and _posts(default) == []
    assert "on variant 'canary'" in err
    assert "CANARY_GATEWAY_TOKEN (the variant's gateway_token_env)" in err
    assert "gw-token-stale-123456" not in err


def test_an_unset_gateway_token_variable_is_a_usage_error(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    with ChatServer(OTHER_TOKEN) as other:
        _target(monkeypatch, other, TOKEN)
        _config(
            workspace,
            f"variants:\n  - name: canary\n    gateway_base_url: {other.base_url}\n"
            "    gateway_token_env: CANARY_TOKEN_UNSET_1f\n",
        )
        err = _usage_error(capsys)
    assert other.requests == []
    assert "variant 'canary': gateway_token_env names CANARY_TOKEN_UNSET_1f, which is not set" in (
        err
    )


def test_a_variant_thinking_level_refuses_its_conversations_in_target_mode(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(CONVERSATION)
    write_contract(ONE_MESSAGE, "plain.clawspec.yaml")
    _config(workspace, "variants:\n  - name: plain\n  - name: deep\n    thinking: high\n")
    with ChatServer(TOKEN) as server:
        _target(monkeypatch, server, TOKEN)
        err = _usage_error(capsys)
        assert server.requests == []  # refused before anything was contacted
        assert "variant 'deep': thinking 'high' cannot apply to its conversations" in err
        assert "scenario 'talks' (case.clawspec.yaml)" in err
        assert "cannot set a thinking level per request" in err
        assert "variant 'plain'" not in err
        # Without the conversations, the variant runs (its hook requests carry the level).
        with serving_cli(HOOKS_TOKEN, workspace, monkeypatch) as hooks:
            assert main(["run", "plain.clawspec.yaml"]) == 0
        thinking = [r["body"].get("thinking") for r in hooks.requests if "body" in r]
        assert sorted(map(str, thinking)) == ["None", "high"]

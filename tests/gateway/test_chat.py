"""The chat endpoint client against a local server speaking OpenClaw's wire format."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
import requests

from clawspec import secrets
from clawspec.gateway.chat import ChatError, ChatReply, ChatRequest, preflight, send
from clawspec.net.deadline import request as request_within
from tests.support.chat_api import ChatServer
from tests.support.fake_time import FakeTime
from tests.support.hang_guard import HANG_GUARD_S
from tests.support.slow_server import Answer, SlowServer

TOKEN = "gw-token-5f0c1d2e9a8b7c6d"
KEY = "agent:main:clawspec:run-1"


@pytest.fixture
def server():
    with ChatServer(TOKEN) as running:
        yield running


@pytest.fixture
def http():
    with requests.Session() as session:
        yield session


def _request(base_url: str, message: str, **overrides) -> ChatRequest:
    fields = {
        "base_url": base_url,
        "token": TOKEN,
        "agent_id": "main",
        "session_key": KEY,
        "message": message,
        "timeout_s": 10.0,
    }
    fields.update(overrides)
    return ChatRequest(**fields)


def _error(http: requests.Session, request: ChatRequest) -> ChatError:
    with pytest.raises(ChatError) as caught:
        send(http, request)
    return caught.value


def test_a_turn_sends_the_wire_format_and_returns_the_reply(server, http) -> None:
    reply = send(http, _request(server.base_url, "My name is Zed.", model="fake/fake-model-b"))
    assert isinstance(reply, ChatReply)
    assert reply.run_id.startswith("chatcmpl_")
    assert reply.content == "echo: My name is Zed."
    assert reply.usage == {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    assert reply.model == "openclaw/main" and reply.waited_s >= 0
    (seen,) = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["x-openclaw-session-key"] == KEY
    assert seen.headers["x-openclaw-model"] == "fake/fake-model-b"
    assert seen.body == {
        "model": "openclaw/main",
        "messages": [{"role": "user", "content": "My name is Zed."}],
        "stream": False,
    }


def test_without_a_model_no_override_header_is_sent(server, http) -> None:
    send(http, _request(server.base_url, "hi"))
    assert "x-openclaw-model" not in server.requests[0].headers


def test_the_token_is_not_in_the_request_repr() -> None:
    assert TOKEN not in repr(_request("http://127.0.0.1:1", "hi"))


def test_a_null_content_is_no_reply(server, http) -> None:
    assert send(http, _request(server.base_url, "[null]")).content is None


def test_hostile_text_in_the_reply_reaches_content_unchanged(server, http) -> None:
    # A lone surrogate, a bell, NUL and a line separator, as JSON escapes the gateway may send.
    literal = r'"a\ud800b\u0007c\u0000d\u2028e"'
    reply = send(http, _request(server.base_url, f"[reply:{literal}]"))
    assert reply.content == "a\ud800b\x07c\x00d\u2028e"


def test_a_wrong_token_names_the_token_settings(server, http) -> None:
    error = _error(http, _request(server.base_url, "hi", token="wrong"))
    assert (error.kind, error.http_status) == ("auth", 401)
    text = str(error)
    for name in ("CLAWSPEC_GATEWAY_AUTH_TOKEN", "OPENCLAW_GATEWAY_TOKEN", "gateway_token"):
        assert name in text
    assert "wrong" not in text  # the token sent is never quoted


@pytest.mark.parametrize("status", [404, 405])
def test_an_endpoint_answer_names_the_setting(server, http, status: int) -> None:
    error = _error(http, _request(server.base_url, f"[status:{status}]"))
    assert (error.kind, error.http_status) == ("endpoint", status)
    assert "gateway.http.endpoints.chatCompletions.enabled" in str(error)


def test_the_endpoint_turned_off_is_an_endpoint_error(http) -> None:
    with ChatServer(TOKEN, enabled=False) as off:
        error = _error(http, _request(off.base_url, "hi"))
    assert (error.kind, error.http_status, error.detail) == ("endpoint", 404, "Not Found")


def test_a_reserved_session_key_says_the_namespace_is_reserved(server, http) -> None:
    error = _error(http, _request(server.base_url, "hi", session_key="agent:main:subagent:x"))
    assert (error.kind, error.http_status) == ("invalid", 400)
    assert "reserved" in str(error) and "agent:main:subagent:x" in str(error)


def test_another_400_quotes_the_gateway(server, http) -> None:
    error = _error(http, _request(server.base_url, "[status:400][said:Unknown agent 'x'.]"))
    assert (error.kind, error.http_status) == ("invalid", 400)
    assert "Unknown agent 'x'." in str(error) and "reserved" not in str(error)


def test_a_400_that_only_mentions_a_session_is_not_called_a_reserved_key(server, http) -> None:
    """A 400 whose text quotes a session (a model call the replay refused, naming
    `session=agent:…`) is the gateway's own words, not a refused session key."""
    said = "400 clawspec replay: no recorded model call matches: session=agent:main:clawspec:x"
    error = _error(http, _request(server.base_url, f"[status:400][said:{said}]"))
    assert (error.kind, error.http_status) == ("invalid", 400)
    assert said in str(error) and "reserved" not in str(error)


def test_a_5xx_quotes_the_gateway_once_and_is_not_retried(server, http) -> None:
    error = _error(http, _request(server.base_url, "[status:500]"))
    assert (error.kind, error.http_status, error.detail) == ("server", 500, "internal error")
    assert '"internal error"' in str(error)
    assert len(server.requests) == 1


def test_a_secret_the_gateway_echoes_is_masked_and_its_text_cleaned(server, http) -> None:
    error = _error(http, _request(server.base_url, "[echo-auth]"))
    assert error.kind == "server"
    for text in (str(error), error.detail):
        assert TOKEN not in text and "***" in text
        assert "\x07" not in text and "\n" not in text
    assert "\\u0007" in error.detail


def test_a_registered_secret_is_masked_too(server, http) -> None:
    with secrets.scope() as registry:
        registry.add("provider-key-0123456789")
        error = _error(
            http, _request(server.base_url, "[status:502][said:bad key provider-key-0123456789]")
        )
    assert "provider-key-0123456789" not in str(error) and "***" in str(error)


def test_a_cut_answer_is_cut(server, http) -> None:
    error = _error(http, _request(server.base_url, "[cut]"))
    assert error.kind == "cut"
    assert "cut off" in str(error) and "bytes came" in str(error)


def test_a_json_answer_that_stops_short_is_cut_and_quoted(server, http) -> None:
    error = _error(http, _request(server.base_url, "[half]"))
    assert (error.kind, error.http_status) == ("cut", 200)
    assert '{"id": "chatcmpl_' in str(error) and "cut off" in str(error)


def test_an_answer_that_is_not_json_quotes_what_came(server, http) -> None:
    error = _error(http, _request(server.base_url, "[notjson]"))
    assert (error.kind, error.http_status) == ("invalid", 200)
    assert "Bad Gateway" in str(error)


def test_no_answer_within_the_timeout_is_a_timeout(http, monkeypatch) -> None:
    """The turn's deadline ends the wait: its message names it, and the server, whose answer
    comes only after the hang guard, had sent nothing when the call returned."""
    monkeypatch.setattr("clawspec.gateway.chat.HTTP_GRACE_S", 0.0)
    with SlowServer(Answer(delay_s=HANG_GUARD_S)) as slow:
        error = _error(http, _request(slow.url, "hi", timeout_s=0.5))
        completed = slow.completed
    assert error.kind == "timeout" and error.waited_s is not None
    assert str(error).startswith("no reply within 0.5 s (POST ")
    assert completed == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_is_tried_again_briefly_then_named(http, monkeypatch) -> None:
    monkeypatch.setattr("clawspec.gateway.chat.REFUSED_RETRY_PAUSES_S", (0.05, 0.05))
    port = _closed_port()
    error = _error(http, _request(f"http://127.0.0.1:{port}", "hi"))
    assert error.kind == "connection"
    assert "connection refused" in str(error) and "unreachable" in str(error)


def test_a_gateway_that_comes_back_gets_the_turn(http, monkeypatch) -> None:
    """Nothing reached a gateway that refused the connection, so the turn is sent once it
    listens again (a restart between turns): here it comes back during the first pause."""
    monkeypatch.setattr("clawspec.gateway.chat.REFUSED_RETRY_PAUSES_S", (0.5, 1.0, 2.0))
    port = _closed_port()
    later = ChatServer(TOKEN, port=port)
    pauses: list[float] = []

    def pause(seconds: float) -> bool:
        if not pauses:
            later.__enter__()
        pauses.append(seconds)
        return False

    monkeypatch.setattr("clawspec.gateway.chat._sleep", pause)
    try:
        reply = send(http, _request(f"http://127.0.0.1:{port}", "hi"))
    finally:
        later.__exit__(None, None, None)
    assert reply.content == "echo: hi"
    assert len(later.requests) == 1 and pauses == [0.5]


def test_stop_ends_the_pauses_between_refused_attempts(http, monkeypatch) -> None:
    """Told by the attempts made and the pauses slept, not by timing the call: the pause after
    the first refusal ends at the stop, so no attempt follows and nothing sleeps."""
    monkeypatch.setattr("clawspec.gateway.chat.REFUSED_RETRY_PAUSES_S", (5.0, 5.0))
    fake = FakeTime()
    monkeypatch.setattr("clawspec.gateway.chat._sleep", lambda s: bool(fake.sleep(s)))
    attempts: list[str] = []

    def attempt(*args: Any, **kwargs: Any) -> requests.Response:
        attempts.append(args[2])
        return request_within(*args, **kwargs)

    monkeypatch.setattr("clawspec.gateway.chat.request_within", attempt)
    stop = threading.Event()
    stop.set()
    with pytest.raises(ChatError) as caught:
        send(http, _request(f"http://127.0.0.1:{_closed_port()}", "hi"), stop)
    assert caught.value.kind == "connection"
    assert len(attempts) == 1 and fake.pauses == []


def test_preflight_passes_with_the_token(server, http) -> None:
    preflight(http, server.base_url, TOKEN)
    assert server.requests[0].path == "/v1/models"
    assert server.requests[0].headers["Authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("token", ["wrong", None])
def test_preflight_refused_token_is_auth(server, http, token: str | None) -> None:
    with pytest.raises(ChatError) as caught:
        preflight(http, server.base_url, token)
    assert (caught.value.kind, caught.value.http_status) == ("auth", 401)
    assert "CLAWSPEC_GATEWAY_AUTH_TOKEN" in str(caught.value)
    if token is None:
        assert "no gateway token is set" in str(caught.value)


def test_preflight_endpoint_off_is_endpoint(http) -> None:
    with ChatServer(TOKEN, enabled=False) as off, pytest.raises(ChatError) as caught:
        preflight(http, off.base_url, TOKEN)
    assert (caught.value.kind, caught.value.http_status) == ("endpoint", 404)
    assert "gateway.http.endpoints.chatCompletions.enabled" in str(caught.value)


def test_preflight_nothing_listening_is_connection(http, monkeypatch) -> None:
    monkeypatch.setattr("clawspec.gateway.chat.REFUSED_RETRY_PAUSES_S", ())
    with pytest.raises(ChatError) as caught:
        preflight(http, f"http://127.0.0.1:{_closed_port()}", TOKEN)
    assert caught.value.kind == "connection"

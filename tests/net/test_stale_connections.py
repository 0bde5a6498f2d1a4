"""A request sent on a keep-alive connection the server has just closed (or reset) fails before
any answer comes: the hooks and chat clients send it once more, on a new connection, and only
once. Against a local socket server that drops the first connections it accepts."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest
import requests

from clawspec.gateway.chat import ChatError, ChatRequest, send
from clawspec.gateway.client import InvocationError, post_json
from clawspec.net.failures import closed_before_answer

TOKEN = "gw-token-stale-conn-6a1f"
CHAT_ANSWER = {
    "id": "chatcmpl_stale",
    "object": "chat.completion",
    "model": "openclaw/main",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


@contextmanager
def dropping(first: int, reset: bool, hold_s: float = 0.0) -> Iterator[tuple[str, list[bytes]]]:
    """A server on 127.0.0.1 that reads each request whole and closes the first `first`
    connections without a byte of answer (`reset`: with an RST, as a peer that aborts; after
    `hold_s`, as a proxy dropping a run in progress), then answers 200 with CHAT_ANSWER.
    Yields its base URL and the requests it read."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(body) < length:
                    body += conn.recv(65536)
                seen.append(head + b"\r\n\r\n" + body)
                if len(seen) <= first:
                    time.sleep(hold_s)
                    if reset:
                        linger = struct.pack("ii", 1, 0)  # close with an RST
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    continue  # closed without answering
                payload = json.dumps(CHAT_ANSWER).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                    + payload
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        # Closing alone leaves the thread blocked in accept() on the old socket: it once
        # answered a later test's server's requests with CHAT_ANSWER. Shutting the listener
        # down wakes it (accept fails), then it ends.
        with suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)
        assert not thread.is_alive(), "the dropping server did not stop"


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_hook_request_on_a_dropped_connection_is_sent_once_more(reset: bool) -> None:
    with dropping(1, reset) as (url, seen), requests.Session() as http:
        answer = post_json(http, url + "/hooks/agent", {"message": "hi"}, TOKEN, 10, "answer")
    assert answer.status_code == 200
    assert len(seen) == 2 and seen[0] == seen[1]  # the same request, twice


def test_a_request_dropped_after_the_gateway_held_it_is_never_sent_again() -> None:
    """Held for a second, then dropped: the gateway may have started the agent's run, and a
    second request would run it twice."""
    with (
        dropping(1, False, hold_s=1.0) as (url, seen),
        requests.Session() as http,
        pytest.raises(InvocationError) as caught,
    ):
        post_json(http, url + "/hooks/agent", {"message": "hi"}, TOKEN, 10, "answer")
    assert len(seen) == 1 and "remotedisconnected" in str(caught.value)
    with (
        dropping(1, False, hold_s=1.0) as (url, seen),
        requests.Session() as http,
        pytest.raises(ChatError),
    ):
        send(http, _turn(url))
    assert len(seen) == 1


def test_a_hook_request_is_sent_at_most_twice() -> None:
    with (
        dropping(5, False) as (url, seen),
        requests.Session() as http,
        pytest.raises(InvocationError) as caught,
    ):
        post_json(http, url + "/hooks/agent", {"message": "hi"}, TOKEN, 10, "answer")
    assert len(seen) == 2
    assert caught.value.unreachable and "gateway unreachable" in str(caught.value)


def _turn(url: str) -> ChatRequest:
    return ChatRequest(
        base_url=url,
        token=TOKEN,
        agent_id="main",
        session_key="agent:main:clawspec:run-1",
        message="hi",
        timeout_s=10.0,
    )


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_turn_on_a_dropped_connection_is_sent_once_more(reset: bool) -> None:
    with dropping(1, reset) as (url, seen), requests.Session() as http:
        reply = send(http, _turn(url))
    assert (reply.content, reply.run_id) == ("hello", "chatcmpl_stale")
    assert len(seen) == 2


def test_a_turn_is_sent_at_most_twice() -> None:
    with (
        dropping(5, False) as (url, seen),
        requests.Session() as http,
        pytest.raises(ChatError) as caught,
    ):
        send(http, _turn(url))
    assert len(seen) == 2
    assert caught.value.kind == "cut"


def test_only_a_connection_closed_before_any_answer_counts() -> None:
    refused = requests.ConnectionError(
        "HTTPConnectionPool(host='127.0.0.1', port=1): Max retries exceeded with url: /x "
        "(Caused by NewConnectionError('...: Failed to establish a new connection: [Errno 111] "
        "Connection refused'))"
    )
    dropped = requests.ConnectionError(
        "('Connection aborted.', RemoteDisconnected('Remote end closed connection without "
        "response'))"
    )
    reset = requests.ConnectionError(
        "('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))"
    )
    cut = requests.exceptions.ChunkedEncodingError("('Connection broken: IncompleteRead(5 bytes)")
    assert closed_before_answer(dropped) and closed_before_answer(reset)
    assert not closed_before_answer(refused) and not closed_before_answer(cut)

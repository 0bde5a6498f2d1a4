"""A fake Telegram Bot API on 127.0.0.1, for driving OpenClaw's Telegram channel offline.

OpenClaw's Telegram channel takes a custom Bot API root (`channels.telegram.apiRoot`, for a
self-hosted Bot API server); pointed at this server, the real gateway starts the channel, polls
for updates and sends what the agent sends through its `message` tool here instead of to
Telegram. The wire format is the Bot API's: `POST <root>/bot<token>/<method>` with a JSON (or
form) body, answered `{"ok": true, "result": …}` or `{"ok": false, "error_code": …,
"description": …}`.

Served: `getMe` (the bot), `getUpdates` (a long poll that never has an update: it holds the
request for its `timeout`, capped, so the channel's poller does not spin), `getChat` (a chat
by id, or a public channel by `@username`, which OpenClaw resolves to its numeric id before
sending), `sendMessage` (the message; a chat in `missing_chats` is answered 400 "chat not
found", as Telegram answers a chat the bot cannot reach), and the setup calls the channel
makes at start (`deleteWebhook`, `setMyCommands`, …) answered `true`. Every request is
recorded (`requests`) with its method and parameters, so a test can check what the gateway
really sent. A token other than the one configured is answered 401 as Telegram does.

Calls OpenClaw 2026.9.5 and 2026.9.6 made (a gateway start, then one send): `getMe`,
`deleteWebhook`, `deleteMyCommands` (twice), `setMyCommands` (twice), `getUpdates` (timeout 0,
then 30, repeated), `sendMessage {chat_id, text, parse_mode: "HTML"}`.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

# Bot tokens look like "<bot id>:<secret>"; OpenClaw checks that shape before using one.
BOT_ID = 7000000001
BOT_TOKEN = f"{BOT_ID}:clawspec-local-fake-token"
BOT_USERNAME = "clawspec_test_bot"
# Longest a getUpdates is held: long enough that the poller is idle, short enough that a
# stopping gateway or server is never kept waiting on it.
MAX_POLL_S = 2.0
# Methods the channel calls at start (or on the way) whose answer is only "done".
TRUE_METHODS = frozenset(
    {
        "deleteWebhook",
        "setWebhook",
        "setMyCommands",
        "deleteMyCommands",
        "setMyDescription",
        "setMyShortDescription",
        "setChatMenuButton",
        "sendChatAction",
        "setMessageReaction",
        "close",
        "logOut",
    }
)


@dataclass(frozen=True)
class BotApiRequest:
    """One request the fake received: the Bot API method and its parameters."""

    http_method: str
    method: str
    params: dict[str, Any]
    token: str


@dataclass
class _State:
    token: str
    missing_chats: frozenset[str] = frozenset()
    requests: list[BotApiRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


def _bot() -> dict[str, Any]:
    return {
        "id": BOT_ID,
        "is_bot": True,
        "first_name": "ClawSpec Test Bot",
        "username": BOT_USERNAME,
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


def channel_id(username: str) -> int:
    """The numeric id of the public channel `@username` (stable per name, in Telegram's
    -100… range of channel ids)."""
    return -1000000000000 - sum(ord(c) for c in username.lstrip("@").lower())


def _chat(chat_id: Any) -> dict[str, Any]:
    """A chat: private for a positive id, a supergroup for a negative one, a public channel for
    `@name` (answered with its numeric id, as Telegram does)."""
    text = str(chat_id)
    if text.lstrip("-").isdigit():
        number = int(text)
        if number > 0:
            return {"id": number, "type": "private", "first_name": "Test User"}
        return {"id": number, "type": "supergroup", "title": "Test Group"}
    name = text.lstrip("@")
    return {"id": channel_id(name), "type": "channel", "title": name, "username": name}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return  # requests are recorded instead

    def _params(self) -> dict[str, Any]:
        query = dict(parse_qsl(urlsplit(self.path).query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if not raw:
            return query
        if kind == "application/json":
            body = json.loads(raw)
            return {**query, **body} if isinstance(body, dict) else query
        if kind == "application/x-www-form-urlencoded":
            return {**query, **dict(parse_qsl(raw.decode("utf-8")))}
        # Multipart (a file upload) is not parsed: the method is still recorded.
        return {**query, "_body_type": kind}

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code: int, description: str) -> None:
        self._answer(code, {"ok": False, "error_code": code, "description": description})

    def _handle(self) -> None:
        state = self.server.state
        parts = urlsplit(self.path).path.strip("/").split("/")
        if len(parts) != 2 or not parts[0].startswith("bot"):
            self._error(404, "Not Found")
            return
        token, method = parts[0][3:], parts[1]
        try:
            params = self._params()
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._error(400, "Bad Request: can't parse request body")
            return
        with state.lock:
            state.requests.append(BotApiRequest(self.command, method, params, token))
        if token != state.token:
            self._error(401, "Unauthorized")
            return
        if method == "getMe":
            self._answer(200, {"ok": True, "result": _bot()})
        elif method == "getUpdates":
            wait = min(float(params.get("timeout") or 0), MAX_POLL_S)
            state.stopping.wait(wait)
            self._answer(200, {"ok": True, "result": []})
        elif method == "getChat":
            if not params.get("chat_id") or str(params["chat_id"]) in state.missing_chats:
                self._error(400, "Bad Request: chat not found")
                return
            self._answer(200, {"ok": True, "result": _chat(params["chat_id"])})
        elif method == "sendMessage":
            if not params.get("chat_id") or not str(params.get("text") or "").strip():
                self._error(400, "Bad Request: message text is empty")
                return
            if str(params["chat_id"]) in state.missing_chats:
                self._error(400, "Bad Request: chat not found")
                return
            message = {
                "message_id": next(state.message_ids),
                "from": _bot(),
                "chat": _chat(params["chat_id"]),
                "date": int(time.time()),
                "text": str(params["text"]),
            }
            self._answer(200, {"ok": True, "result": message})
        elif method == "getWebhookInfo":
            self._answer(200, {"ok": True, "result": {"url": "", "pending_update_count": 0}})
        elif method == "getMyCommands":
            self._answer(200, {"ok": True, "result": []})
        elif method in TRUE_METHODS:
            self._answer(200, {"ok": True, "result": True})
        else:
            self._error(404, "Not Found")

    do_GET = _handle
    do_POST = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, state: _State) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = state

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A stopping gateway drops its held getUpdates: nothing to report.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeTelegramBotApi:
    """`with FakeTelegramBotApi() as api:` serves the Bot API on `api.api_root` (127.0.0.1)."""

    def __init__(
        self, port: int = 0, token: str = BOT_TOKEN, missing_chats: Iterable[str] = ()
    ) -> None:
        self._state = _State(token=token, missing_chats=frozenset(missing_chats))
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("fake Bot API not started")
        return int(self._server.server_address[1])

    @property
    def api_root(self) -> str:
        """The value for `channels.telegram.apiRoot` (the root, without `/bot<token>`)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[BotApiRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def sent_messages(self) -> list[dict[str, Any]]:
        """The parameters of each `sendMessage` the gateway made, in order."""
        return [r.params for r in self.requests if r.method == "sendMessage"]

    def start(self) -> FakeTelegramBotApi:
        self._server = _Server(self._port, self._state)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-telegram-bot-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()  # held polls answer now
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeTelegramBotApi:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

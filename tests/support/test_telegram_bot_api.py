"""The fake Telegram Bot API answers in the wire format OpenClaw's Telegram channel reads."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.support.telegram_bot_api import BOT_TOKEN, BOT_USERNAME, FakeTelegramBotApi, channel_id


@pytest.fixture
def api() -> Iterator[FakeTelegramBotApi]:
    with FakeTelegramBotApi(missing_chats=["1000404"]) as fake:
        yield fake


def call(
    api: FakeTelegramBotApi, method: str, token: str = BOT_TOKEN, **params: object
) -> tuple[int, Any]:
    resp = requests.post(f"{api.api_root}/bot{token}/{method}", json=params, timeout=10)
    return resp.status_code, resp.json()


def test_get_me_names_the_bot(api: FakeTelegramBotApi) -> None:
    status, body = call(api, "getMe")
    assert status == 200
    assert body["ok"] is True and body["result"]["is_bot"] is True
    assert body["result"]["username"] == BOT_USERNAME


def test_send_message_answers_the_message_and_records_it(api: FakeTelegramBotApi) -> None:
    status, body = call(api, "sendMessage", chat_id="123456789", text="hi", parse_mode="HTML")
    assert status == 200 and body["ok"] is True
    message = body["result"]
    assert (message["message_id"], message["text"], message["chat"]["type"]) == (1, "hi", "private")
    assert api.sent_messages() == [{"chat_id": "123456789", "text": "hi", "parse_mode": "HTML"}]


def test_a_form_body_is_read_as_the_bot_api_allows(api: FakeTelegramBotApi) -> None:
    url = f"{api.api_root}/bot{BOT_TOKEN}/sendMessage"
    resp = requests.post(url, data={"chat_id": "5", "text": "form"}, timeout=10)
    assert resp.json()["result"]["text"] == "form"


def test_errors_are_answered_as_telegram_answers_them(api: FakeTelegramBotApi) -> None:
    assert call(api, "sendMessage", chat_id="1000404", text="x") == (
        400,
        {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"},
    )
    assert call(api, "getMe", token="1:wrong") == (
        401,
        {"ok": False, "error_code": 401, "description": "Unauthorized"},
    )
    assert call(api, "noSuchMethod")[0] == 404
    # A refused request is still recorded: the test sees what the gateway tried.
    assert [r.method for r in api.requests] == ["sendMessage", "getMe", "noSuchMethod"]


def test_a_public_channel_is_resolved_to_its_numeric_id(api: FakeTelegramBotApi) -> None:
    _, body = call(api, "getChat", chat_id="@clawspec_updates")
    chat = body["result"]
    assert (chat["id"], chat["type"], chat["username"]) == (
        channel_id("clawspec_updates"),
        "channel",
        "clawspec_updates",
    )
    assert str(chat["id"]).startswith("-100")


def test_a_long_poll_is_held_but_never_for_long(api: FakeTelegramBotApi) -> None:
    start = time.monotonic()
    assert call(api, "getUpdates", timeout=30) == (200, {"ok": True, "result": []})
    assert 1.5 < time.monotonic() - start < 10

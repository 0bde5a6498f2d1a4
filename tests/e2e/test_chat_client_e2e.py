"""The chat endpoint client on a real OpenClaw gateway: a conversation keeps its session.

The scripted provider's `recall` step answers from the history the gateway sends it, so turn 2's
reply names what turn 1 said only if the gateway carried turn 1 into turn 2's model request.
Run inside a loopback-only namespace (see tests/e2e/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import requests

from clawspec.gateway.bringup import BringUpOptions, GatewayProcess, RunningGateway
from clawspec.gateway.chat import ChatError, ChatRequest, preflight, send
from clawspec.gateway.logs.index import LogIndex
from clawspec.gateway.trajectory.reader import TrajectoryReader, wait_for
from tests.e2e.conftest import provider_config
from tests.support.hang_guard import wait_until
from tests.support.scripted_provider import ScriptedProvider

pytestmark = pytest.mark.e2e

SCRIPTS = {
    "chat-intro": [{"text": "Nice to meet you."}],
    "chat-spawn": [
        {
            "tool": "sessions_spawn",
            "args": {"task": "Write chat-kid.md [script:chat-kid]", "taskName": "chat-kid"},
        },
        {"text": "Delegated."},
    ],
    "chat-kid": [
        {"tool": "write", "args": {"path": "chat-kid.md", "content": "kid\n"}, "slow": 4},
        {"text": "Kid done."},
    ],
    "chat-recall": [
        {
            "recall": r"[Mm]y name is (\w+)",
            "template": "Your name is {}.",
            "else": "I do not know your name.",
        }
    ],
}


@pytest.fixture
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


@pytest.fixture(scope="module")
def chat_provider(provider: ScriptedProvider) -> ScriptedProvider:
    for name, steps in SCRIPTS.items():
        provider.add_script(name, steps)
    return provider


def _turn(gateway: RunningGateway, key: str, message: str) -> ChatRequest:
    return ChatRequest(
        base_url=gateway.base_url,
        token=gateway.gateway_token,
        agent_id="main",
        session_key=key,
        message=message,
        timeout_s=90,
    )


def test_the_second_turn_sees_the_first(
    gateway: RunningGateway, chat_provider: ScriptedProvider, http: requests.Session
) -> None:
    key = "agent:main:clawspec:chat-e2e-1"
    first = send(http, _turn(gateway, key, "My name is Zed. [script:chat-intro]"))
    second = send(http, _turn(gateway, key, "What is my name? [script:chat-recall]"))
    assert first.content == "Nice to meet you."
    assert second.content == "Your name is Zed."
    assert first.run_id.startswith("chatcmpl_") and second.run_id != first.run_id
    assert second.model == "openclaw/main" and second.usage
    # The same question in a fresh session has no history to answer from.
    fresh = send(
        http,
        _turn(gateway, "agent:main:clawspec:chat-e2e-2", "What is my name? [script:chat-recall]"),
    )
    assert fresh.content == "I do not know your name."
    # The response's id is the run's id in the trajectory store, in the conversation's session.
    with TrajectoryReader(Path(gateway.state_dir)) as reader:
        run = wait_for(lambda: reader.chat_run("main", second.run_id, key), timeout_s=30)
        turns = reader.conversation("main", key)
    assert run.reply == "Your name is Zed." and run.session_key == key
    assert [t.run_id for t in turns] == [first.run_id, second.run_id]


def test_a_turn_answers_before_its_sub_agent_ends_and_finds_it(
    gateway: RunningGateway, chat_provider: ScriptedProvider, http: requests.Session
) -> None:
    key = "agent:main:clawspec:chat-e2e-spawn"
    turn = send(http, _turn(gateway, key, "Delegate it [script:chat-spawn]"))
    assert turn.content == "Delegated."
    with TrajectoryReader(Path(gateway.state_dir)) as reader:
        early = wait_for(
            lambda: reader.chat_run("main", turn.run_id, key), timeout_s=30, until="complete"
        )
        # The sub-agent's first model answer takes 4 s: the answer came before it ended.
        assert not early.settled
        run = wait_for(lambda: reader.chat_run("main", turn.run_id, key), timeout_s=60)
        (child,) = run.children
        assert [call.name for call in child.calls] == ["write"] and child.reply == "Kid done."

        def announced() -> list[str]:
            return [r.run_id for r in reader.conversation("main", key)]

        wait_until(lambda: len(announced()) >= 2, poll_s=0.5)
    first, then = announced()
    assert first == turn.run_id and then.startswith(f"announce:v1:{child.session_key}:")
    # The log's lines of the turn are found by its chat id, the sub-agent's with them.
    index = LogIndex.build(gateway.log_path, 0, run_ids=(turn.run_id,), wait_s=30)
    assert child.run_id in index.run_ids
    assert sorted(call.name for call in index.tool_calls) == ["sessions_spawn", "write"]


def test_preflight_takes_the_gateway_token_and_refuses_another(
    gateway: RunningGateway, http: requests.Session
) -> None:
    preflight(http, gateway.base_url, gateway.gateway_token)
    with pytest.raises(ChatError) as caught:
        preflight(http, gateway.base_url, "not-the-gateway-token")
    assert (caught.value.kind, caught.value.http_status) == ("auth", 401)
    assert "CLAWSPEC_GATEWAY_AUTH_TOKEN" in str(caught.value)
    wrong = replace(_turn(gateway, "agent:main:clawspec:chat-e2e-3", "hi"), token="not-it")
    with pytest.raises(ChatError) as turn:
        send(http, wrong)
    assert turn.value.kind == "auth"


def test_a_reserved_session_key_is_refused_before_any_run(
    gateway: RunningGateway, http: requests.Session
) -> None:
    with pytest.raises(ChatError) as caught:
        send(http, _turn(gateway, "agent:main:subagent:chat-e2e", "hi"))
    assert (caught.value.kind, caught.value.http_status) == ("invalid", 400)
    assert "reserved" in str(caught.value)


def test_a_gateway_with_the_endpoint_off_is_an_endpoint_error(
    openclaw_launcher: str,
    chat_provider: ScriptedProvider,
    tmp_path_factory: pytest.TempPathFactory,
    http: requests.Session,
) -> None:
    config = provider_config(chat_provider.base_url)
    config["gateway"] = {"http": {"endpoints": {"chatCompletions": {"enabled": False}}}}
    opts = BringUpOptions(
        command=[openclaw_launcher, "gateway", "run"],
        state_dir=tmp_path_factory.mktemp("gateway-chat-off"),
        extra_config=config,
    )
    with GatewayProcess(opts) as off:
        with pytest.raises(ChatError) as asked:
            preflight(http, off.base_url, off.gateway_token)
        with pytest.raises(ChatError) as sent:
            send(http, _turn(off, "agent:main:clawspec:chat-off", "hi [script:chat-intro]"))
    for caught in (asked, sent):
        assert (caught.value.kind, caught.value.http_status) == ("endpoint", 404)
        assert "gateway.http.endpoints.chatCompletions.enabled" in str(caught.value)

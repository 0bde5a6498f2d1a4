"""The judge client against local servers speaking the Messages API and Bedrock."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.config.settings import JudgeSettings
from clawspec.judge.client import (
    NOT_CONFIGURED,
    JudgeCallError,
    JudgeClient,
    JudgeNotConfiguredError,
    RetryPolicy,
)
from clawspec.judge.prompt import SYSTEM_PROMPT
from tests.support.anthropic_api import API_KEY, AnthropicApi
from tests.support.bedrock_api import ACCESS_KEY, MODEL_ID, REGION, BedrockApi, isolate_aws

FAST = RetryPolicy(base_delay_s=0.05, max_delay_s=0.2)
MODEL = "claude-sonnet-4-6"


@pytest.fixture
def api() -> Iterator[AnthropicApi]:
    with AnthropicApi() as server:
        yield server


def client_for(base_url: str, timeout: float = 5, **extra: object) -> JudgeClient:
    data = {"base_url": base_url, "timeout": timeout, "model": MODEL, **extra}
    settings = JudgeSettings.model_validate(data)
    client = JudgeClient.from_settings(settings, {"ANTHROPIC_API_KEY": API_KEY})
    client.policy = FAST
    return client


def ask(client: JudgeClient, budget_s: float = 5):
    try:
        return client.ask(SYSTEM_PROMPT, "judge this", time.monotonic() + budget_s)
    finally:
        client.close()


def test_request_forces_the_verdict_tool_without_sampling_params(api: AnthropicApi) -> None:
    reply = ask(client_for(api.base_url, max_tokens=300))
    assert reply.usage.calls == 1
    (request,) = api.requests
    body = request.body
    assert request.path == "/v1/messages"
    assert request.headers["x-stainless-retry-count"] == "0"
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    assert body["tools"][0]["input_schema"]["required"] == ["score", "reasoning"]
    assert body["tools"][0]["input_schema"]["properties"]["score"]["type"] == "integer"
    assert body["system"] == SYSTEM_PROMPT
    assert body["messages"] == [{"role": "user", "content": "judge this"}]
    assert body["max_tokens"] == 300
    assert body["model"] == MODEL
    assert not {"temperature", "top_p", "top_k"} & body.keys()


def test_retry_after_is_honoured_then_call_succeeds(api: AnthropicApi) -> None:
    api.script({"status": 429, "headers": {"retry-after": "1"}}, {"score": 4, "reasoning": "ok"})
    reply = ask(client_for(api.base_url))
    first, second = api.requests
    assert second.at - first.at >= 0.95
    assert reply.content[0].input == {"score": 4, "reasoning": "ok"}


@pytest.mark.parametrize("status", [500, 503, 529, 408])
def test_transient_status_is_retried_with_backoff(api: AnthropicApi, status: int) -> None:
    api.script({"status": status}, {"status": status}, {"score": 5})
    ask(client_for(api.base_url))
    assert len(api.requests) == 3  # our policy only: the SDK's own retries are off


class Waits(threading.Event):
    """The client's stop event, recording each backoff it waits (and waiting none)."""

    def __init__(self) -> None:
        super().__init__()
        self.delays: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.delays.append(timeout or 0.0)
        return False


def test_persistent_500s_end_within_time_bound_with_last_status(api: AnthropicApi) -> None:
    api.script({"status": 500, "message": "upstream exploded"})
    client = client_for(api.base_url, timeout=1)
    # The client's clock: 0.1 s per reading, so the 1 s budget ends after a known number of
    # attempts whatever the machine's load (the backoffs are recorded, not waited).
    readings = iter(range(1_000_000))
    client.clock = lambda: next(readings) / 10
    client.stop = waits = Waits()
    with pytest.raises(JudgeCallError) as caught:
        try:
            client.ask(SYSTEM_PROMPT, "judge this", client.clock() + 1)
        finally:
            client.close()
    # the deadline ended the retries (the client's clock reads 1 s after a few attempts)
    assert 3 <= len(api.requests) < 10
    assert len(waits.delays) == len(api.requests) - 1  # a backoff between attempts
    assert str(caught.value).startswith(f"judge gave up after {len(api.requests)} attempts in ")
    assert str(caught.value).endswith(
        "s (judge.timeout 1 s): last HTTP 500 api_error: upstream exploded"
    )


def test_a_rate_limit_is_retried_until_the_deadline_not_a_count(api: AnthropicApi) -> None:
    """`retry-after: 1` on every call with a 20 s budget: retried for the whole budget (a
    count of ten attempts gave up after ~10 s of a 120 s default)."""
    api.script({"status": 429, "headers": {"retry-after": "1"}})
    client = client_for(api.base_url, timeout=20)
    now = [0.0]
    client.clock = lambda: now[0]
    waits: list[float] = []

    class Advancing:  # waits cost what they ask, on the client's clock
        def wait(self, seconds: float) -> bool:
            waits.append(seconds)
            now[0] += seconds
            return False

    client.stop = Advancing()  # type: ignore[assignment]
    with pytest.raises(JudgeCallError) as caught:
        try:
            client.ask(SYSTEM_PROMPT, "judge this", client.clock() + 20)
        finally:
            client.close()
    assert len(api.requests) == 20 and waits == [1.0] * 19
    assert str(caught.value).startswith("judge gave up after 20 attempts in 19.0 s")


def test_retry_after_beyond_the_deadline_stops_at_once(api: AnthropicApi) -> None:
    api.script({"status": 429, "headers": {"retry-after": "30"}})
    client = client_for(api.base_url, timeout=2)
    client.stop = waits = Waits()
    with pytest.raises(JudgeCallError, match="last HTTP 429 rate_limit_error"):
        ask(client, budget_s=2)
    assert len(api.requests) == 1
    assert waits.delays == []  # it did not wait for the 30 s the server asked for


def test_slow_server_is_cut_off_by_the_time_bound(api: AnthropicApi) -> None:
    api.script({"delay": 3, "score": 5})
    # Timed out, not the verdict the server sends after 3 s: the call was cut at the deadline,
    # and not tried again with no time left.
    with pytest.raises(JudgeCallError, match=r"\(judge.timeout 1 s\): last timed out$") as caught:
        ask(client_for(api.base_url, timeout=1), budget_s=1)
    assert str(caught.value).startswith("judge gave up after 1 attempt in ")
    assert len(api.requests) == 1


def test_a_server_error_cut_short_by_the_deadline_still_names_the_server_error(
    api: AnthropicApi,
) -> None:
    # The quick 500 itself must come within the budget, also on a starved machine (2 s was
    # not enough there); the second answer comes long after it.
    api.script({"status": 500, "message": "upstream exploded"}, {"delay": 120, "score": 5})
    with pytest.raises(JudgeCallError) as caught:
        ask(client_for(api.base_url, timeout=8), budget_s=8)
    assert str(caught.value).endswith(
        "(judge.timeout 8 s): last HTTP 500 api_error: upstream exploded, then timed out"
    )
    assert len(api.requests) == 2


def test_client_errors_are_not_retried(api: AnthropicApi) -> None:
    api.script({"status": 400, "message": "max_tokens: too large"})
    with pytest.raises(JudgeCallError) as caught:
        ask(client_for(api.base_url))
    assert str(caught.value) == (
        "judge request rejected: HTTP 400 invalid_request_error: max_tokens: too large"
    )
    assert len(api.requests) == 1


def test_wrong_api_key_is_rejected_without_showing_the_key(api: AnthropicApi) -> None:
    settings = JudgeSettings(base_url=api.base_url, model=MODEL)
    client = JudgeClient.from_settings(settings, {"ANTHROPIC_API_KEY": "sk-ant-wrong-key-123"})
    with pytest.raises(JudgeCallError) as caught:
        ask(client)
    assert str(caught.value) == (
        "judge request rejected: HTTP 401 authentication_error: invalid x-api-key"
    )


def test_unreachable_server_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(JudgeCallError) as caught:
        ask(client_for(f"http://127.0.0.1:{port}", timeout=0.6), budget_s=0.6)
    assert "attempts in" in str(caught.value)
    # Where and why, not the SDK's bare "Connection error."
    assert str(caught.value).endswith(
        f"last connection error: [Errno 111] Connection refused at 127.0.0.1:{port}"
    )


def test_base_url_falls_back_to_environment(api: AnthropicApi) -> None:
    env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": api.base_url}
    client = JudgeClient.from_settings(JudgeSettings(model=MODEL), env)
    ask(client)
    assert len(api.requests) == 1


def test_missing_api_key_means_not_configured() -> None:
    with pytest.raises(JudgeNotConfiguredError) as caught:
        JudgeClient.from_settings(JudgeSettings(), {"ANTHROPIC_API_KEY": ""})
    assert (
        str(caught.value)
        == NOT_CONFIGURED
        == (
            "judge not configured: set ANTHROPIC_API_KEY (or judge.provider: bedrock with AWS "
            "credentials)"
        )
    )


def bedrock_settings(base_url: str, **extra: object) -> JudgeSettings:
    data = {"provider": "bedrock", "model": MODEL_ID, "base_url": base_url, "timeout": 5}
    return JudgeSettings.model_validate({**data, **extra})


def test_bedrock_request_is_sigv4_signed_and_uses_invoke(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    monkeypatch.setenv("AWS_REGION", REGION)
    with BedrockApi([{"score": 4, "reasoning": "fits"}]) as server:
        reply = ask(JudgeClient.from_settings(bedrock_settings(server.base_url)))
        (request,) = server.requests
    assert reply.content[0].input == {"score": 4, "reasoning": "fits"}
    assert request.path == f"/model/{MODEL_ID}/invoke"
    date = request.headers["x-amz-date"]
    assert request.headers["authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{date[:8]}/{REGION}/bedrock/aws4_request, "
    )
    assert "model" not in request.body
    assert request.body["tool_choice"] == {"type": "tool", "name": "record_verdict"}


def test_bedrock_region_from_settings_wins_and_bad_signature_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    with BedrockApi(region=REGION) as server:
        ask(JudgeClient.from_settings(bedrock_settings(server.base_url, region=REGION)))
        assert len(server.requests) == 1
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-right-secret-key")
    with BedrockApi(region=REGION) as server:
        client = JudgeClient.from_settings(bedrock_settings(server.base_url, region=REGION))
        with pytest.raises(JudgeCallError) as caught:
            ask(client)
    assert str(caught.value) == (
        "judge request rejected: HTTP 403 AccessDeniedException: The request signature we "
        "calculated does not match the signature you provided"
    )
    assert "not-the-right-secret-key" not in str(caught.value)


def test_bedrock_throttling_is_retried(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    with BedrockApi([{"status": 429}, {"status": 503}, {"score": 3}]) as server:
        client = JudgeClient.from_settings(bedrock_settings(server.base_url, region=REGION))
        client.policy = FAST
        ask(client)
        assert len(server.requests) == 3


def test_bedrock_without_credentials_or_region_is_not_configured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=False)
    monkeypatch.setenv("AWS_REGION", REGION)
    with pytest.raises(JudgeNotConfiguredError, match=r"^judge not configured: set ANTHROPIC"):
        JudgeClient.from_settings(bedrock_settings("http://127.0.0.1:9"))
    monkeypatch.delenv("AWS_REGION")
    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    with pytest.raises(JudgeNotConfiguredError) as caught:
        JudgeClient.from_settings(bedrock_settings("http://127.0.0.1:9"))
    assert str(caught.value) == (
        "judge not configured: set judge.region (or AWS_REGION) for judge.provider: bedrock"
    )


def test_importing_assertions_does_not_import_the_sdks() -> None:
    code = (
        "import sys, clawspec.assertions, clawspec.judge.client; "
        "print(sorted(m for m in ('anthropic', 'boto3') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

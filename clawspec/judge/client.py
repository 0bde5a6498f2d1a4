"""Call the judge model through the `anthropic` SDK: Anthropic API or Amazon Bedrock.

The SDK's own retries are off (`max_retries=0`) so that one policy applies: retry 408/409/429,
5xx and connection errors with exponential backoff, honouring `retry-after`, until the
assertion's deadline (`judge.timeout`) would be passed. `anthropic` and `boto3` are
imported inside functions: `clawspec --help` must not pay for them.

`judge.timeout` is a deadline, not a read timeout. The SDK's timeouts (httpx) bound each wait
between bytes only, so a server that trickles its answer would hold the call as long as it
likes. Each call therefore streams the answer (`with_streaming_response`), with the SDK's
timeout set to the time left, checks the deadline after every chunk, and runs in a worker thread
the caller stops waiting for at the deadline (`deadline.call_within`): the call ends by the
deadline whatever the server does, and the abandoned worker stops at the server's next byte.
The answer is parsed here, so one that is not the promised JSON (an HTML page from a proxy, a
bare string, no `content`) is an error naming the status, the content type and its first
characters, not an AttributeError.

No `temperature`: anthropic 2.x sends API version 2026-10-21, which rejects temperature, top_p
and top_k with HTTP 400 on every model (even at their defaults), and the SDK dropped the
arguments. Steadiness comes from the forced tool call, the anchored 1-5 scale in the system
prompt and, where it matters, `consistency: true`.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from clawspec.judge.verdict import TOOL, TOOL_CHOICE, Usage
from clawspec.net.deadline import Deadline, DeadlineExceeded, call_within
from clawspec.secrets import register as register_secrets
from clawspec.text import fmt_number, one_line, redact

if TYPE_CHECKING:
    from clawspec.config.settings import JudgeSettings

NOT_CONFIGURED = (
    "judge not configured: set ANTHROPIC_API_KEY (or judge.provider: bedrock with AWS credentials)"
)
RETRYABLE_STATUS = frozenset({408, 409, 429})
CONNECT_TIMEOUT_S = 10.0  # or the time left, if less
SHOWN_CHARS = 200  # of an answer that is not the promised JSON


class JudgeNotConfiguredError(Exception):
    """No credentials (or no region) for the judge: the assertion is skipped with this reason."""


class JudgeCallError(Exception):
    """The judge could not be asked: rejected request or exhausted retry budget."""


@dataclass(frozen=True)
class Reply:
    """One answer of the model: its content blocks, why it stopped, and its token usage."""

    content: list[Any]
    stop_reason: str | None
    usage: Usage


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff between attempts; the deadline, not a count, is the real bound."""

    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    # Never less between two attempts, whatever a server asks (`retry-after: 0` in a loop).
    min_delay_s: float = 0.25

    def backoff_s(self, attempt: int) -> float:
        """Return the delay after failed attempt number `attempt` (1-based), with jitter."""
        delay = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return delay * random.uniform(0.75, 1.0)


@dataclass
class JudgeClient:
    """One configured judge: a Messages API client plus the retry policy around it."""

    sdk: Any  # anthropic.Anthropic or anthropic.AnthropicBedrock, built with max_retries=0
    model: str
    max_tokens: int
    timeout_s: float
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_settings(
        cls,
        judge: JudgeSettings,
        environ: Mapping[str, str] | None = None,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> JudgeClient:
        """Build the client for `judge.provider` (JudgeNotConfiguredError: no credentials)."""
        env = os.environ if environ is None else environ
        build = _bedrock if judge.provider == "bedrock" else _anthropic
        sdk, secrets = build(judge, env)
        register_secrets(*secrets)  # resolved credentials (e.g. an AWS profile's): masked
        return cls(
            sdk,
            judge.model,
            judge.max_tokens,
            judge.timeout,
            stop=stop or threading.Event(),
            clock=clock,
        )

    def close(self) -> None:
        self.sdk.close()

    def ask(self, system: str, user: str, deadline: float) -> Reply:
        """Ask once (retrying transient failures until `deadline`) and return the reply."""
        import anthropic

        started = self.clock()
        last = ""
        # The last thing a server said: when the deadline then cuts an attempt short, the
        # message keeps it (a judge answering 500 is the cause, the cut-off only the end).
        answered = ""
        attempt = 0
        while True:
            remaining = deadline - self.clock()
            if remaining <= 0:
                break
            attempt += 1
            asked = 0.0  # what the server asked to wait this time (retry-after)
            # The injected clock's time left, as a deadline on the real clock.
            limit = Deadline.after(remaining, f"judge.timeout {fmt_number(self.timeout_s)} s")
            try:
                status, content_type, body = call_within(
                    partial(self._exchange, system, user, limit), limit, "the judge call"
                )
            except DeadlineExceeded:
                last = f"{answered}, then timed out" if answered else "timed out"
                delay = self.policy.backoff_s(attempt)
            except anthropic.APIStatusError as exc:
                last = answered = self._describe_status(exc)
                if exc.status_code not in RETRYABLE_STATUS and exc.status_code < 500:
                    raise JudgeCallError(f"judge request rejected: {last}") from None
                delay = asked = _retry_after_s(exc.response.headers) or 0.0
                if not delay:
                    delay = self.policy.backoff_s(attempt)
            except anthropic.APIConnectionError as exc:
                timed_out = isinstance(exc, anthropic.APITimeoutError)
                last = "timed out" if timed_out else f"connection error: {self._cause(exc)}"
                delay = self.policy.backoff_s(attempt)
            except anthropic.AnthropicError as exc:
                raise JudgeCallError(f"judge call failed: {self._clean(exc)}") from None
            else:
                return self._reply(status, content_type, body)
            delay = max(delay, self.policy.min_delay_s)
            if self.clock() + delay >= deadline:
                if asked and asked >= deadline - self.clock():  # why no retry followed: said
                    last += f" (it asked to wait {fmt_number(round(asked, 1))} s, past the budget)"
                break
            if self.stop.wait(delay):
                raise JudgeCallError(f"judge call interrupted; last: {last}")
        budget = f"judge.timeout {fmt_number(self.timeout_s)} s"
        if attempt == 0:  # earlier calls of this assertion used the whole budget
            raise JudgeCallError(f"{budget} used up before this call")
        elapsed = self.clock() - started
        raise JudgeCallError(
            f"judge gave up after {attempt} attempt{'s' if attempt != 1 else ''} in "
            f"{elapsed:.1f} s ({budget}): last {last}"
        )

    def _exchange(self, system: str, user: str, deadline: Deadline) -> tuple[int, str, bytes]:
        """Send one request; return the status, content type and body read by `deadline`.

        Runs in `call_within`'s worker. Errors of the body's transport (httpx's, which the SDK
        does not wrap while a streamed body is read) are turned into the SDK's own."""
        import anthropic

        left = max(deadline.remaining(), 0.001)
        timeout = anthropic.Timeout(left, connect=min(CONNECT_TIMEOUT_S, left))
        with self.sdk.messages.with_streaming_response.create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=system,
            messages=[{"role": "user", "content": user}],
            tools=[TOOL],
            tool_choice=TOOL_CHOICE,
            timeout=timeout,
        ) as response:
            chunks: list[bytes] = []
            try:
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    if deadline.passed():
                        raise deadline.exceeded("the judge call")
            except (anthropic.AnthropicError, DeadlineExceeded):
                raise
            except Exception as exc:  # httpx's ReadTimeout, RemoteProtocolError, ...
                request = response.http_request
                if "timeout" in type(exc).__name__.lower():
                    raise anthropic.APITimeoutError(request=request) from None
                raise anthropic.APIConnectionError(message=str(exc), request=request) from None
            content_type = response.headers.get("content-type", "")
            return response.status_code, content_type, b"".join(chunks)

    def _reply(self, status: int, content_type: str, body: bytes) -> Reply:
        """The Reply in a 2xx answer, or JudgeCallError naming what came back instead."""
        import anthropic

        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            shown = self._clean_body(body)
            raise JudgeCallError(
                f"judge answered HTTP {status} ({content_type or 'no content type'}) but not "
                f"with a Messages API response: {shown}"
            )
        message = anthropic.types.Message.construct(**data)
        usage = getattr(message, "usage", None)
        return Reply(
            list(message.content or []),
            getattr(message, "stop_reason", None),
            Usage(
                1,
                _tokens(usage, "input_tokens"),
                _tokens(usage, "output_tokens"),
                unmetered=int(usage is None),
            ),
        )

    def _clean_body(self, body: bytes) -> str:
        """The first SHOWN_CHARS characters of a body, on one line, secrets masked."""
        text = body.decode("utf-8", errors="replace")  # never cut inside a character
        if not text.strip():
            return "an empty body"
        return repr(redact(one_line(text, SHOWN_CHARS)))

    def _describe_status(self, exc: Any) -> str:
        """Return 'HTTP 429 rate_limit_error: …' (Bedrock: x-amzn-ErrorType and body message)."""
        body = exc.body if isinstance(exc.body, dict) else {}
        kind = exc.type or exc.response.headers.get("x-amzn-errortype", "").split(":")[0]
        detail = exc.api_message or body.get("message") or body.get("Message")
        text = f"HTTP {exc.status_code}" + (f" {kind}" if kind else "")
        return text + (f": {self._clean(detail)}" if detail else "")

    def _clean(self, value: object) -> str:
        return redact(one_line(str(value), 160))

    def _cause(self, exc: BaseException) -> str:
        """What failed under the SDK's "Connection error.", and where: `[Errno 111] Connection
        refused at 127.0.0.1:8080`."""
        cause = exc.__cause__ or exc
        while cause.__cause__ is not None and cause.__cause__ is not cause:
            cause = cause.__cause__  # httpx's error wraps the socket's
        where = urlsplit(str(getattr(self.sdk, "base_url", ""))).netloc
        said = str(cause) or type(cause).__name__
        return self._clean(said + (f" at {where}" if where else ""))


def _anthropic(judge: JudgeSettings, env: Mapping[str, str]) -> tuple[Any, list[str]]:
    api_key = env.get("ANTHROPIC_API_KEY") or None
    if api_key is None:
        raise JudgeNotConfiguredError(NOT_CONFIGURED)
    import anthropic

    base_url = judge.base_url or env.get("ANTHROPIC_BASE_URL") or None
    sdk = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0)
    return sdk, [api_key]


def _bedrock(judge: JudgeSettings, env: Mapping[str, str]) -> tuple[Any, list[str]]:
    """Bedrock with the standard boto3 credential chain (or a Bedrock API key)."""
    import anthropic
    import boto3

    region = judge.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
    session = boto3.Session(region_name=region)
    region = region or session.region_name
    base_url = judge.base_url or env.get("ANTHROPIC_BEDROCK_BASE_URL") or None
    bearer = env.get("AWS_BEARER_TOKEN_BEDROCK") or None
    if bearer is None:
        credentials = session.get_credentials()
        if credentials is None:
            raise JudgeNotConfiguredError(NOT_CONFIGURED)
        frozen = credentials.get_frozen_credentials()
    if not region:
        raise JudgeNotConfiguredError(
            "judge not configured: set judge.region (or AWS_REGION) for judge.provider: bedrock"
        )
    if bearer is not None:
        sdk = anthropic.AnthropicBedrock(
            api_key=bearer, aws_region=region, base_url=base_url, max_retries=0
        )
        return sdk, [bearer]
    sdk = anthropic.AnthropicBedrock(
        aws_access_key=frozen.access_key,
        aws_secret_key=frozen.secret_key,
        aws_session_token=frozen.token,
        aws_region=region,
        base_url=base_url,
        max_retries=0,
    )
    return sdk, [s for s in (frozen.secret_key, frozen.token) if s]


def _tokens(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, 0)
    return value if isinstance(value, int) else 0


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Return the server's requested delay: `retry-after-ms`, else `retry-after` in seconds."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue  # an HTTP date: fall back to our backoff
        if seconds >= 0:
            return seconds
    return None

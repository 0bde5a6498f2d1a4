"""Invoking an agent through the gateway and waiting for it to finish."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests

from clawspec.errors import GatewayError
from clawspec.net import sessions
from clawspec.net.deadline import GRACE_S, Deadline, DeadlineExceeded, call_within
from clawspec.net.deadline import request as request_within
from clawspec.net.failures import safe_to_resend, transport_reason
from clawspec.text import fmt_number, one_line

CONNECT_TIMEOUT_S = 10
# The gateway holds the request until the run ends; give it a little beyond the run's own bound.
# The wait is a deadline, not a read timeout: the whole answer must have arrived by then, so a
# server that trickles its answer cannot hold a scenario past `timeout` + HTTP_GRACE_S.
HTTP_GRACE_S = GRACE_S
# OpenClaw's answers when it refused a hook run before the run started, so nothing ran and a
# retry is safe: 502 right after start-up (its session store is not ready yet), 503 when the
# run waited in the gateway's dispatch queue past its 15 s admission timeout (a busy gateway or
# machine; OpenClaw aborts the run's start-up when it answers this), and 409 when its hooks
# configuration was reloaded during the request or another run changed the run's session while
# it started (OpenClaw's own texts end in "retry").
NOT_STARTED = (
    "before entering the agent runner",
    "did not start before admission timeout",
    "hook configuration changed",
    "rejected because the target session changed",
)
# Pauses before the retries of a run the gateway never started. They grow because a busy
# gateway drains its queue slowly (on a loaded 2-core machine preparing one run took 47-65 s,
# and every refused attempt has already waited the 15 s admission timeout), so retrying at once
# would only queue again behind the same runs. They are bounded by the scenario's `timeout`: a
# retry is sent only if, after its pause, at least MIN_RETRY_BUDGET_S of the timeout (counted
# from the first attempt) is left, and it asks the gateway for just what is left
# (`timeoutSeconds`, and the same HTTP wait + HTTP_GRACE_S). So the whole invocation, refused
# attempts and pauses included, ends within `timeout` + HTTP_GRACE_S like a single attempt:
# with `timeout: 120` and a gateway that keeps answering 503 that is 5 attempts (15 s each)
# and pauses of 2, 5, 10 and 20 s; with `timeout: 30`, 2 attempts.
NOT_STARTED_RETRY_PAUSES_S = (2.0, 5.0, 10.0, 20.0, 30.0)
MIN_RETRY_BUDGET_S = 5.0  # a warm run takes 0.6-3 s; a retry with less left cannot finish

# Asked during the pause before each retry of a 502 "before entering the agent runner": given
# the gateway's run ids of the refused attempts so far and how long it may wait (the pause),
# True when the gateway's log says a retry would be refused the same way. That 502 also answers
# a run OpenClaw skipped for good, e.g. one whose local model provider failed its preflight, and
# its body never says which (OpenClaw 2026.9.6 answers the same text and the run id): only the
# run's log line does, written about when the answer is sent.
RefusalCheck = Callable[[Sequence[str], float], bool]


@dataclass(frozen=True)
class InvokeRequest:
    """One agent run to start."""

    message: str  # the hook message: rendered `when.invoke` (+ a `Parameters:` line)
    name: str
    agent_id: str
    session_key: str | None
    timeout_s: float
    # What the legacy skill webhook needs besides the message.
    invoke: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    trigger: str | None = None
    target_type: str = "skill"
    target_path: str = ""
    trigger_mode: str = "hooks"
    # A variant's per-request overrides (OpenClaw's hook `model` and `thinking`); None: the
    # agent's own.
    model: str | None = None
    thinking: str | None = None
    # Tells a refusal a retry cannot change from a gateway not ready yet (RefusalCheck); None:
    # every "never started" answer is retried. It must not raise.
    refused_for_good: RefusalCheck | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class InvokeResult:
    """A run that completed with status ok."""

    gateway_run_id: str | None
    session_key: str | None  # the session key actually used (None if the gateway refused it)
    status: str
    raw: dict[str, Any]


class InvocationError(Exception):
    """The run could not be started or did not complete with status ok."""

    def __init__(
        self,
        message: str,
        *,
        unreachable: bool = False,
        gateway_run_id: str | None = None,
        http_status: int | None = None,
        completion_status: str | None = None,
        timed_out: bool = False,
        waited_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.gateway_run_id = gateway_run_id
        self.http_status = http_status  # a non-2xx answer's status
        self.completion_status = completion_status  # a completed run's status other than ok
        self.timed_out = timed_out  # no answer within the timeout (+ HTTP grace)
        self.waited_s = waited_s  # how long the request that timed out waited


class GatewayClient(Protocol):
    """What the runner needs from a gateway."""

    def invoke(self, request: InvokeRequest) -> InvokeResult: ...


class HooksClient:
    """`POST {base}{hooks_path}/agent` with `waitForCompletion` (OpenClaw's hooks API)."""

    def __init__(
        self,
        base_url: str,
        hooks_path: str,
        token: str | None,
        session: requests.Session | None = None,
        on_warning: Any = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = base_url.rstrip("/") + "/" + hooks_path.strip("/") + "/agent"
        self._token = token
        self._http = session or sessions.session()
        self._on_warning = on_warning or (lambda message: None)
        self._session_keys_refused = False
        self._lock = threading.Lock()
        self._sleep = sleep
        self._clock = clock

    def invoke(self, request: InvokeRequest) -> InvokeResult:
        session_key = None if self._session_keys_refused else request.session_key
        started = self._clock()
        deadline = started + request.timeout_s
        response, attempts, final = self._post_started(request, session_key, deadline)
        if response.status_code == 400 and session_key and _mentions_session_key(response):
            # The gateway does not allow request session keys: retry once without, warn once
            # per run, and correlate by the returned runId instead.
            with self._lock:
                first = not self._session_keys_refused
                self._session_keys_refused = True
            if first:
                self._on_warning(
                    "the gateway refused the request session key "
                    "(hooks.allowRequestSessionKey is off); correlating by run id"
                )
            session_key = None
            response, attempts, final = self._post_started(request, None, deadline)
        if final or (attempts > 1 and _never_started(response)):
            # A final refusal names only OpenClaw's error: the run id is in the report, and the
            # runner adds the cause and the fix from the log within the message's 500 characters.
            told = _error_of(response) if final else one_line(response.text, 200)
            tried = (
                f" ({attempts} attempts in {self._clock() - started:.0f} s)" if attempts > 1 else ""
            )
            raise InvocationError(
                f"POST {self.url} → {response.status_code}: {told}{tried}",
                http_status=response.status_code,
                gateway_run_id=_run_id_of(response),
            )
        return self._result(response, session_key)

    def _post_started(
        self, request: InvokeRequest, session_key: str | None, deadline: float
    ) -> tuple[requests.Response, int, bool]:
        """POST, retrying a run the gateway says never started, within the scenario's timeout.

        Right after start-up OpenClaw may refuse the first runs with 502 "failed before entering
        the agent runner" (its session store is not ready yet); under load it answers 503 "did not
        start before admission timeout". Nothing ran, so a retry after a pause is safe and keeps
        CI from flaking; the pauses grow and stop at `deadline` (NOT_STARTED_RETRY_PAUSES_S).
        A 502 the run's log shows final (`request.refused_for_good`, asked during the pause) is
        not retried. Any other answer is returned as it is. Returns the last answer, the
        attempts made and whether that answer is such a final refusal.
        """
        timeout_s = max(1.0, min(request.timeout_s, deadline - self._clock()))
        response = self._post(request, session_key, timeout_s)
        attempts = 1
        refused: list[str] = []  # the gateway's ids of the runs it refused with a 502
        for pause_s in NOT_STARTED_RETRY_PAUSES_S:
            if not _never_started(response):
                break
            left_after_pause = deadline - self._clock() - pause_s
            if left_after_pause < MIN_RETRY_BUDGET_S:
                break  # a retry would run past the scenario's timeout
            paused_at = self._clock()
            run_id = _run_id_of(response)
            if response.status_code == 502 and run_id and request.refused_for_good:
                refused.append(run_id)
                # The pause is spent watching the log: the refusal's line may land a little
                # after the answer (OpenClaw writes its log file from a queue).
                if request.refused_for_good(refused, pause_s):
                    return response, attempts, True
            rest_s = pause_s - (self._clock() - paused_at)
            if rest_s > 0:
                self._sleep(rest_s)
            timeout_s = max(1.0, deadline - self._clock())
            # On a new connection: OpenClaw closes one idle for 5 s, and on a starved machine it
            # closed the refusal's as the retry went out on it, a failure that cannot tell
            # whether the run started.
            with sessions.session() as fresh:
                response = self._post(request, session_key, timeout_s, fresh)
            attempts += 1
        return response, attempts, False

    def _post(
        self,
        request: InvokeRequest,
        session_key: str | None,
        timeout_s: float | None = None,
        http: requests.Session | None = None,
    ) -> requests.Response:
        timeout_s = request.timeout_s if timeout_s is None else timeout_s
        body: dict[str, Any] = {
            "message": request.message,
            "name": request.name,
            "agentId": request.agent_id,
            "deliver": False,
            "waitForCompletion": True,
            "timeoutSeconds": int(max(1, round(timeout_s))),
        }
        if session_key:
            body["sessionKey"] = session_key
        if request.model:
            body["model"] = request.model
        if request.thinking:
            body["thinking"] = request.thinking
        return post_json(
            http or self._http,
            self.url,
            body,
            self._token,
            timeout_s + HTTP_GRACE_S,
            f"completion within {request.timeout_s:g} s",
        )

    def _result(self, response: requests.Response, session_key: str | None) -> InvokeResult:
        require_2xx(response, self.url)
        try:
            body = response.json()
        except ValueError:
            raise InvocationError(
                f"POST {self.url} → {response.status_code} but the body is "
                f"not JSON: {one_line(response.text, 120)}"
            ) from None
        if not isinstance(body, dict):
            raise InvocationError(f"POST {self.url}: unexpected answer {one_line(str(body), 120)}")
        run_id = body.get("runId")
        completion = body.get("completion")
        if not isinstance(completion, dict):
            raise InvocationError(
                "the gateway answered without a completion (is waitForCompletion supported?)",
                gateway_run_id=run_id,
            )
        status = str(completion.get("status"))
        if status != "ok":
            error = completion.get("error") or completion.get("message") or ""
            detail = (
                f": {one_line(json.dumps(error) if not isinstance(error, str) else error, 200)}"
            )
            raise InvocationError(
                f"run {run_id} completed with status '{status}'{detail if error else ''}",
                gateway_run_id=run_id,
                completion_status=status,
            )
        return InvokeResult(run_id, session_key, status, body)


class WebhookClient:
    """The old ClawSpec skill webhook (`trigger_mode: webhook`), kept for existing users.

    `POST {base}{gateway_webhook_endpoint}` with `skill_command`, `payload` (the params as JSON
    text), `test_mode`, the target and the session key; the answer's `status` (`ok`, `completed`,
    `accepted`...) and `runId`. The webhook may return before the skill finishes: use
    `timeout` on the artifact assertions to wait for its output.
    """

    FAILED = frozenset({"error", "failed", "failure", "timeout", "cancelled", "aborted"})

    def __init__(
        self,
        base_url: str,
        endpoint: str,
        token: str | None,
        session: requests.Session | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/" + endpoint.lstrip("/")
        self._token = token
        self._http = session or sessions.session()

    def invoke(self, request: InvokeRequest) -> InvokeResult:
        invoke = request.invoke.strip()
        is_command = invoke.startswith("/")
        payload = request.params if is_command else {"invoke": invoke, "params": request.params}
        body: dict[str, Any] = {
            "skill_command": invoke if is_command else (request.trigger or invoke),
            "payload": json.dumps(payload, sort_keys=True) if payload else "",
            "test_mode": bool(request.params.get("test_mode", True)),
            "target_type": request.target_type,
            "target_path": request.target_path,
        }
        if request.session_key:
            body["session_key"] = request.session_key
        response = post_json(
            self._http,
            self.url,
            body,
            self._token,
            request.timeout_s,
            f"answer within {request.timeout_s:g} s",
        )
        require_2xx(response, self.url)
        try:
            answer = response.json() if response.content else {}
        except ValueError:
            answer = {}
        answer = answer if isinstance(answer, dict) else {}
        run_id = answer.get("runId") or answer.get("run_id")
        status = str(answer.get("status", "accepted"))
        if status.lower() in self.FAILED:
            error = one_line(str(answer.get("error") or answer.get("message") or ""), 200)
            raise InvocationError(
                f"webhook run {run_id} answered status '{status}'"
                + (f": {error}" if error else ""),
                gateway_run_id=run_id,
            )
        return InvokeResult(run_id, request.session_key, status, answer)


def post_json(
    http: requests.Session,
    url: str,
    body: dict[str, Any],
    token: str | None,
    limit_s: float,
    waiting_for: str,
) -> requests.Response:
    """POST `body` with the Bearer token; map transport failures to InvocationError.

    `limit_s` is a deadline for the whole exchange (connect, headers and the last byte of the
    body), not a read timeout: a server that trickles its answer is cut off at it.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    started = time.monotonic()
    deadline = Deadline.after(limit_s, f"{fmt_number(limit_s)} s")

    def post() -> requests.Response:
        return request_within(
            http,
            "POST",
            url,
            json=body,
            headers=headers,
            deadline=deadline,
            connect_timeout_s=CONNECT_TIMEOUT_S,
        )

    try:
        try:
            return post()
        except requests.ConnectionError as exc:
            if deadline.passed() or not safe_to_resend(exc, time.monotonic() - started):
                raise
            # A keep-alive connection the gateway had just closed (idle): the request never
            # reached it. Once more, on a new connection.
            return post()
    except requests.ConnectionError as exc:
        raise InvocationError(
            f"gateway unreachable: POST {url}: {_reason(exc)}", unreachable=True
        ) from None
    except requests.Timeout:
        raise InvocationError(
            f"no {waiting_for} (POST {url})",
            timed_out=True,
            waited_s=time.monotonic() - started,
        ) from None
    except requests.RequestException as exc:
        raise InvocationError(f"POST {url} failed: {_reason(exc)}") from None


# What to do when nothing answers at the gateway URL in effect.
START_OR_POINT_ELSEWHERE = (
    "Start your OpenClaw gateway there, run with --bring-up to have ClawSpec start one for the "
    "run, or point ClawSpec at your gateway with --gateway-base-url URL (or gateway_base_url in "
    "clawspec.yaml, CLAWSPEC_GATEWAY_BASE_URL in the environment)"
)


def require_reachable(
    http: requests.Session, base_url: str, hint: str = START_OR_POINT_ELSEWHERE
) -> None:
    """Raise GatewayError (exit 3) when nothing answers at `base_url`; return when anything does.

    Asked once before the first scenario of a run against a gateway ClawSpec did not start, so
    a gateway that is not running is one clear error instead of every scenario erroring in turn.
    Any HTTP answer counts, whatever its status (the base URL may serve a page, a 404 or ask for
    a token): the question is only whether a server is there. A server that accepts the
    connection but is slow to answer counts too; the scenarios then meet it with their own
    timeouts. The request goes through `http`, so a proxy the environment configures is used.
    """

    def ask() -> None:
        timeouts = (CONNECT_TIMEOUT_S, CONNECT_TIMEOUT_S)
        http.get(base_url, timeout=timeouts, stream=True, allow_redirects=False).close()

    try:
        call_within(ask, Deadline.after(CONNECT_TIMEOUT_S + GRACE_S), f"GET {base_url}")
    except requests.ConnectTimeout:
        raise GatewayError(
            f"nothing answers at {base_url}: no connection within {CONNECT_TIMEOUT_S:g} s. " + hint
        ) from None
    except requests.ConnectionError as exc:
        raise GatewayError(f"nothing answers at {base_url} ({_reason(exc)}). " + hint) from None
    except (requests.RequestException, DeadlineExceeded):
        return  # connected (a slow or odd answer): a server is there


def require_2xx(response: requests.Response, url: str) -> None:
    """A non-2xx answer is an invocation error carrying the status and a body excerpt."""
    if not 200 <= response.status_code < 300:
        raise InvocationError(
            f"POST {url} → {response.status_code}: {one_line(response.text, 200)}",
            http_status=response.status_code,
            gateway_run_id=_run_id_of(response),
        )


def _run_id_of(response: requests.Response) -> str | None:
    """The `runId` of a refusal (OpenClaw names the run it did not start): its log lines tell
    why, e.g. a model override its model policy rejects."""
    try:
        body = response.json()
    except ValueError:
        return None
    run_id = body.get("runId") if isinstance(body, dict) else None
    return run_id if isinstance(run_id, str) else None


def _error_of(response: requests.Response) -> str:
    """The `error` of a refusal's JSON body (OpenClaw's words), else the body's start."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    return one_line(error if isinstance(error, str) else response.text, 200)


class RoutingClient:
    """Sends each request through the client of its trigger mode."""

    def __init__(self, clients: dict[str, GatewayClient]) -> None:
        self._clients = clients

    def invoke(self, request: InvokeRequest) -> InvokeResult:
        return self._clients[request.trigger_mode].invoke(request)


def _never_started(response: requests.Response) -> bool:
    return response.status_code in (409, 502, 503) and any(m in response.text for m in NOT_STARTED)


def _mentions_session_key(response: requests.Response) -> bool:
    return "sessionkey" in response.text.lower().replace("_", "").replace(" ", "")


def _reason(exc: Exception) -> str:
    """The cause of a transport failure in a few words, cut to one short line."""
    return one_line(transport_reason(exc), 160)

"""Invoking an agent through the gateway and waiting for it to finish (SPEC §4, §9)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests

from clawspec.text import one_line

CONNECT_TIMEOUT_S = 10
# The gateway holds the request until the run ends; give it a little beyond the run's own bound.
HTTP_GRACE_S = 5
# OpenClaw's answers when it refused a hook run before the run started, so nothing ran and a
# retry is safe: 502 right after start-up (its session store is not ready yet), and 503 when the
# run waited in the gateway's dispatch queue past its 15 s admission timeout (a busy gateway or
# machine; OpenClaw aborts the run's start-up when it answers this).
NOT_STARTED = ("before entering the agent runner", "did not start before admission timeout")
NOT_STARTED_RETRY_PAUSES_S = (1.0, 3.0)


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
        self, message: str, *, unreachable: bool = False, gateway_run_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.gateway_run_id = gateway_run_id


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
    ) -> None:
        self.url = base_url.rstrip("/") + "/" + hooks_path.strip("/") + "/agent"
        self._token = token
        self._http = session or requests.Session()
        self._on_warning = on_warning or (lambda message: None)
        self._session_keys_refused = False
        self._lock = threading.Lock()

    def invoke(self, request: InvokeRequest) -> InvokeResult:
        session_key = None if self._session_keys_refused else request.session_key
        response = self._post_started(request, session_key)
        if response.status_code == 400 and session_key and _mentions_session_key(response):
            # The gateway does not allow request session keys: retry once without, warn once
            # per run, and correlate by the returned runId instead (SPEC §9).
            with self._lock:
                first = not self._session_keys_refused
                self._session_keys_refused = True
            if first:
                self._on_warning(
                    "the gateway refused the request session key "
                    "(hooks.allowRequestSessionKey is off); correlating by run id"
                )
            session_key = None
            response = self._post_started(request, None)
        return self._result(response, session_key)

    def _post_started(self, request: InvokeRequest, session_key: str | None) -> requests.Response:
        """POST, retrying a run the gateway says never started.

        Right after start-up OpenClaw may refuse the first runs with 502 "failed before entering
        the agent runner" (its session store is not ready yet); under load it answers 503 "did not
        start before admission timeout". Nothing ran, so a retry after a short pause is safe and
        keeps CI from flaking; any other answer is returned as it is.
        """
        for pause_s in NOT_STARTED_RETRY_PAUSES_S:
            response = self._post(request, session_key)
            if not _never_started(response):
                return response
            time.sleep(pause_s)
        return self._post(request, session_key)

    def _post(self, request: InvokeRequest, session_key: str | None) -> requests.Response:
        body: dict[str, Any] = {
            "message": request.message,
            "name": request.name,
            "agentId": request.agent_id,
            "deliver": False,
            "waitForCompletion": True,
            "timeoutSeconds": int(max(1, round(request.timeout_s))),
        }
        if session_key:
            body["sessionKey"] = session_key
        return post_json(
            self._http,
            self.url,
            body,
            self._token,
            request.timeout_s + HTTP_GRACE_S,
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
        self._http = session or requests.Session()

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
    read_timeout_s: float,
    waiting_for: str,
) -> requests.Response:
    """POST `body` with the Bearer token; map transport failures to InvocationError."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        return http.post(
            url, json=body, headers=headers, timeout=(CONNECT_TIMEOUT_S, read_timeout_s)
        )
    except requests.ConnectionError as exc:
        raise InvocationError(
            f"gateway unreachable: POST {url}: {_reason(exc)}", unreachable=True
        ) from None
    except requests.Timeout:
        raise InvocationError(f"no {waiting_for} (POST {url})") from None
    except requests.RequestException as exc:
        raise InvocationError(f"POST {url} failed: {_reason(exc)}") from None


def require_2xx(response: requests.Response, url: str) -> None:
    """A non-2xx answer is an invocation error carrying the status and a body excerpt."""
    if not 200 <= response.status_code < 300:
        raise InvocationError(
            f"POST {url} → {response.status_code}: {one_line(response.text, 200)}"
        )


class RoutingClient:
    """Sends each request through the client of its trigger mode."""

    def __init__(self, clients: dict[str, GatewayClient]) -> None:
        self._clients = clients

    def invoke(self, request: InvokeRequest) -> InvokeResult:
        return self._clients[request.trigger_mode].invoke(request)


def _never_started(response: requests.Response) -> bool:
    return response.status_code in (502, 503) and any(m in response.text for m in NOT_STARTED)


def _mentions_session_key(response: requests.Response) -> bool:
    return "sessionkey" in response.text.lower().replace("_", "").replace(" ", "")


def _reason(exc: Exception) -> str:
    text = str(exc)
    for marker in (
        "Connection refused",
        "timed out",
        "Name or service not known",
        "Connection reset",
        "RemoteDisconnected",
    ):
        if marker in text:
            return marker.lower()
    return one_line(text, 160)

"""One conversation turn through OpenClaw's `POST /v1/chat/completions`, and its preflight.

OpenClaw's hooks never continue a conversation, its OpenAI-compatible chat endpoint does: every
request with the same `x-openclaw-session-key` runs in the same session, so the agent sees the
earlier turns. A request is one turn: the answer arrives when the turn's run has ended (a
sub-agent it spawned may still be running), its `id` (`chatcmpl_…`) is the run id the gateway's
log and trajectory store use, and `choices[0].message.content` is the reply.

What OpenClaw 2026.9.6 answers (checked on the gateway): 401 `{"error": {"message":
"Unauthorized"}}` for a wrong or missing token; 404 `text/plain "Not Found"` on both `/v1/models`
and `/v1/chat/completions` when `gateway.http.endpoints.chatCompletions.enabled` is off, 405 for
a wrong method; 400 `invalid_request_error` for a session key in a reserved namespace
(`subagent:`, `cron:`, `acp:`) or an unknown agent; 500 `{"error": {"message": "internal error"}}`
when the run failed (the cause is only in its log).

A turn is sent once: a 5xx, a cut answer or a timeout is the turn's error, since the agent may
have acted before it failed and a second request would be a second turn in the same session.
Only a connection the gateway refused outright is tried again, briefly: nothing reached it, so
nothing ran (a gateway restarting between turns).
"""

from __future__ import annotations

import json
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

import requests

from clawspec import secrets
from clawspec.net.deadline import GRACE_S, Deadline, Stopped, safe_url
from clawspec.net.deadline import request as request_within
from clawspec.net.failures import safe_to_resend, transport_reason
from clawspec.text import one_line

ChatErrorKind = Literal[
    "auth", "endpoint", "server", "cut", "timeout", "connection", "invalid", "interrupted"
]

CONNECT_TIMEOUT_S = 10.0
# The gateway answers when the turn's run has ended; the run itself is bounded by the turn's
# timeout, and the answer may take a little beyond it (the same grace as a hook run's).
HTTP_GRACE_S = GRACE_S
PREFLIGHT_TIMEOUT_S = CONNECT_TIMEOUT_S + GRACE_S
# Pauses before trying again a connection the gateway refused (nothing was sent): a gateway
# that restarts is back within a few seconds, one that is down stays refused.
REFUSED_RETRY_PAUSES_S = (0.5, 1.0, 2.0)
DETAIL_CHARS = 300  # how much of the gateway's words an error quotes

TOKEN_VARIABLES = (
    "CLAWSPEC_GATEWAY_AUTH_TOKEN (or OPENCLAW_GATEWAY_TOKEN; action input gateway_token)"
)
ENDPOINT_SETTING = "gateway.http.endpoints.chatCompletions.enabled"
RESERVED_NAMESPACES = ("subagent:", "cron:", "acp:")


@dataclass(frozen=True)
class ChatRequest:
    """One turn to send: `message` in the session `session_key` of agent `agent_id`."""

    base_url: str
    token: str = field(repr=False)
    agent_id: str
    session_key: str  # sent as x-openclaw-session-key (`agent:<id>:clawspec:<run>`)
    message: str
    timeout_s: float
    model: str | None = None  # a variant's `provider/model` (header x-openclaw-model)


@dataclass(frozen=True)
class ChatReply:
    """The gateway's answer to a turn."""

    run_id: str  # the response's `id` (`chatcmpl_…`): the run's id in the log and trajectory
    content: str | None  # choices[0].message.content: the reply (None: the run wrote none)
    usage: dict[str, Any] | None
    model: str | None  # the response's `model` (`openclaw/<agent id>`)
    waited_s: float


class ChatError(Exception):
    """A turn (or the preflight) got no reply; `str()` says what to do about it."""

    def __init__(
        self,
        kind: ChatErrorKind,
        detail: str,
        *,
        http_status: int | None = None,
        message: str | None = None,
        waited_s: float | None = None,
    ) -> None:
        super().__init__(message or detail)
        self.kind: ChatErrorKind = kind
        self.http_status = http_status
        self.detail = detail  # the gateway's words (or the transport's), cleaned and masked
        self.waited_s = waited_s


def chat_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/v1/chat/completions"


def models_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/v1/models"


def send(
    http: requests.Session, request: ChatRequest, stop: threading.Event | None = None
) -> ChatReply:
    """Send one turn and return its reply, or raise ChatError.

    The whole exchange ends by `timeout_s` + HTTP_GRACE_S (a deadline, not a read timeout: a
    gateway that trickles its answer cannot hold the turn longer). `stop` (the scenario
    abandoned: a second interrupt, the grace period's end) ends the pauses between attempts at
    a refused connection and the wait for a request in flight (ChatError `interrupted`): the
    gateway may still run the turn to its end, but nothing waits for it any more.
    """
    url = chat_url(request.base_url)
    headers = {
        "Authorization": f"Bearer {request.token}",
        "x-openclaw-session-key": request.session_key,
    }
    if request.model:
        headers["x-openclaw-model"] = request.model
    body = {
        "model": f"openclaw/{request.agent_id}",
        "messages": [{"role": "user", "content": request.message}],
        "stream": False,
    }
    limit_s = request.timeout_s + HTTP_GRACE_S
    deadline = Deadline.after(limit_s, f"the turn's timeout ({request.timeout_s:g} s)")
    started = time.monotonic()
    response = _exchange(
        http,
        "POST",
        url,
        deadline,
        token=request.token,
        stop=stop,
        waiting_for=f"reply within {request.timeout_s:g} s",
        json=body,
        headers=headers,
    )
    waited_s = time.monotonic() - started
    if not 200 <= response.status_code < 300:
        raise _refusal(response, "POST", url, request.token, request.session_key, request.agent_id)
    answer = _json_of(response, "POST", url, request.token)
    return _reply(answer, response, url, request.token, waited_s)


def preflight(http: requests.Session, base_url: str, token: str | None) -> None:
    """Ask `GET /v1/models` with the token before any turn: raise ChatError (`auth`,
    `endpoint`, `connection`, `timeout` or `server`) when a conversation cannot be held."""
    url = models_url(base_url)
    deadline = Deadline.after(PREFLIGHT_TIMEOUT_S)
    response = _exchange(
        http,
        "GET",
        url,
        deadline,
        token=token or "",
        stop=None,
        waiting_for=f"answer within {PREFLIGHT_TIMEOUT_S:g} s",
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )
    if not 200 <= response.status_code < 300:
        raise _refusal(response, "GET", url, token or "", None)


# --- the exchange ------------------------------------------------------------------------------


def _exchange(
    http: requests.Session,
    method: str,
    url: str,
    deadline: Deadline,
    *,
    token: str,
    stop: threading.Event | None,
    waiting_for: str,
    **kwargs: Any,
) -> requests.Response:
    """One request (tried again only while the connection is refused), transport failures
    mapped to ChatError."""
    shown = f"{method} {safe_url(url)}"
    started = time.monotonic()
    pauses = list(REFUSED_RETRY_PAUSES_S)
    stale = 1  # sends again after a keep-alive connection the gateway had just closed
    while True:
        sent = time.monotonic()
        try:
            # A request begun once `stop` was set is simply made: no turn starts after an
            # interrupt, only an attempt at a refused connection gets here, and ends at once.
            return request_within(
                http,
                method,
                url,
                deadline=deadline,
                connect_timeout_s=CONNECT_TIMEOUT_S,
                stop=stop if stop is not None and not stop.is_set() else None,
                **kwargs,
            )
        except Stopped:
            raise ChatError(
                "interrupted",
                "abandoned",
                message=f"{shown}: abandoned while waiting for the reply (interrupted)",
            ) from None
        except requests.Timeout:
            waited = time.monotonic() - started
            raise ChatError(
                "timeout",
                f"no {waiting_for}",
                message=f"no {waiting_for} ({shown}; waited {waited:.1f} s)",
                waited_s=waited,
            ) from None
        except requests.exceptions.ChunkedEncodingError as exc:
            detail = _clean(transport_reason(exc), token)
            raise ChatError(
                "cut",
                detail,
                message=f"{shown}: the gateway's answer was cut off ({detail})",
            ) from None
        except requests.ConnectionError as exc:
            if stale and safe_to_resend(exc, time.monotonic() - sent) and not deadline.passed():
                stale -= 1  # the request never reached the gateway: once more, a new connection
                continue
            refused = _refused(exc)
            if refused and pauses and deadline.remaining() > pauses[0] + 1.0:
                pause = pauses.pop(0)
                interrupted = stop.wait(pause) if stop is not None else _sleep(pause)
                if not interrupted:
                    continue
            detail = _clean(transport_reason(exc), token)
            if not refused:  # connected and sent, then the connection dropped: no full answer
                raise ChatError(
                    "cut",
                    detail,
                    message=f"{shown}: the connection closed before the answer ({detail})",
                ) from None
            raise ChatError(
                "connection",
                detail,
                message=(
                    f"gateway unreachable: {shown}: {detail}. Start the gateway there or point "
                    "ClawSpec at it (--gateway-base-url)"
                ),
            ) from None
        except requests.RequestException as exc:
            detail = _clean(transport_reason(exc), token)
            raise ChatError("connection", detail, message=f"{shown} failed: {detail}") from None


def _refusal(
    response: requests.Response,
    method: str,
    url: str,
    token: str,
    session_key: str | None,
    agent_id: str | None = None,
) -> ChatError:
    """The ChatError of a non-2xx answer, saying what to change."""
    status = response.status_code
    said = _clean(_error_text(response), token)
    shown = f"{method} {safe_url(url)} → {status}"
    if status in (401, 403):
        have = "the gateway token was refused" if token else "no gateway token is set"
        return ChatError(
            "auth",
            said,
            http_status=status,
            message=(
                f"{shown}: {have}. Set {TOKEN_VARIABLES} to the gateway's token "
                "(its gateway.auth.token)"
            ),
        )
    if status in (404, 405):
        return ChatError(
            "endpoint",
            said,
            http_status=status,
            message=(
                f"{shown} ({said}): the gateway's OpenAI-compatible chat endpoint is off, and "
                f"conversations need it: set {ENDPOINT_SETTING} to true in its openclaw.json"
            ),
        )
    # The gateway names its header when it refuses a key; any other 400 may quote a session
    # (a model call the provider refused, with the prompt's `session=agent:…`) and is its own.
    # The key is ClawSpec's own (`agent:<agent id>:clawspec:<run id>`, outside the reserved
    # namespaces): the user cannot change it, only what it is built from and where it goes.
    if status == 400 and session_key and "x-openclaw-session-key" in said:
        agent = f"agent '{one_line(agent_id, 80)}'" if agent_id else "the agent"
        return ChatError(
            "invalid",
            said,
            http_status=status,
            message=(
                f"{shown}: the gateway refused the session key '{one_line(session_key, 120)}' "
                f'that ClawSpec made for this conversation ("{said}"). ClawSpec keeps its '
                f"sessions out of OpenClaw's reserved namespaces ({', '.join(RESERVED_NAMESPACES)})"
                f"; check that {agent} is configured on this gateway and which OpenClaw version "
                "it runs (conversations were checked on 2026.9.5 and 2026.9.6)"
            ),
        )
    if 500 <= status < 600:
        return ChatError(
            "server",
            said,
            http_status=status,
            message=f'{shown}: the gateway answered "{said}" (its log says why)',
        )
    return ChatError("invalid", said, http_status=status, message=f'{shown}: "{said}"')


def _json_of(response: requests.Response, method: str, url: str, token: str) -> dict[str, Any]:
    """The answer's JSON object; a body that is not one is an `invalid` (or `cut`) ChatError."""
    text = response.content.decode("utf-8", errors="replace")
    try:
        answer = json.loads(text)
    except ValueError:
        shown = f"{method} {safe_url(url)} → {response.status_code}"
        came = _clean(text, token) or "an empty body"
        # A JSON answer that stops short is a cut stream (the gateway or a proxy gave up).
        kind: ChatErrorKind = "cut" if text.lstrip().startswith("{") else "invalid"
        what = "was cut off" if kind == "cut" else "is not JSON"
        return _raise(kind, came, f"{shown}, but the answer {what}: {came}", response)
    if not isinstance(answer, dict):
        shown = f"{method} {safe_url(url)} → {response.status_code}"
        came = _clean(text, token)
        return _raise(
            "invalid", came, f"{shown}, but the answer is not an object: {came}", response
        )
    return answer


def _reply(
    answer: dict[str, Any], response: requests.Response, url: str, token: str, waited_s: float
) -> ChatReply:
    """The reply of a 2xx chat completion, or an `invalid` ChatError naming what is missing."""
    shown = f"POST {safe_url(url)} → {response.status_code}"
    run_id = answer.get("id")
    choices = answer.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    problem = (
        "no `id`"
        if not isinstance(run_id, str) or not run_id
        else "no `choices[0].message`"
        if not isinstance(message, dict)
        else "a `content` that is not text"
        if content is not None and not isinstance(content, str)
        else None
    )
    if problem is not None:
        came = _clean(response.content.decode("utf-8", errors="replace"), token)
        _raise("invalid", came, f"{shown}, but the answer has {problem}: {came}", response)
    usage = answer.get("usage")
    model = answer.get("model")
    return ChatReply(
        run_id=str(run_id),
        content=content,
        usage=usage if isinstance(usage, dict) else None,
        model=model if isinstance(model, str) else None,
        waited_s=waited_s,
    )


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def _raise(kind: ChatErrorKind, detail: str, message: str, response: requests.Response) -> Any:
    raise ChatError(kind, detail, http_status=response.status_code, message=message)


# --- text --------------------------------------------------------------------------------------


def _error_text(response: requests.Response) -> str:
    """OpenClaw's `error.message` (or `error` as text), else the body itself."""
    text = response.content.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text or response.reason or ""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    return text


def _clean(text: str, token: str) -> str:
    """The gateway's words as one safe line: the token and every registered secret masked,
    control characters and unpaired surrogates made visible, cut to DETAIL_CHARS."""
    if token:
        text = text.replace(token, secrets.MASK)
    visible = "".join(_visible(ch) for ch in text)
    return one_line(visible, DETAIL_CHARS)


def _visible(ch: str) -> str:
    if ch in "\t\n\r":
        return " "
    category = unicodedata.category(ch)
    if category in ("Cc", "Cs") or ch in "\u2028\u2029":
        return f"\\u{ord(ch):04x}"
    return ch


def _refused(exc: requests.ConnectionError) -> bool:
    """Whether the connection itself failed (nothing was sent), not one that dropped later."""
    from urllib3.exceptions import NewConnectionError

    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, (NewConnectionError, ConnectionRefusedError)):
            return True
        reason = getattr(current, "reason", None)
        args = [a for a in getattr(current, "args", ()) if isinstance(a, BaseException)]
        todo.extend([current.__cause__, current.__context__, *args])
        if isinstance(reason, BaseException):
            todo.append(reason)
    return False

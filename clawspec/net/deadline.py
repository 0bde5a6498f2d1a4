"""Deadlines, not read timeouts, on network calls.

`requests`' `timeout=(connect, read)` bounds the connection and each wait *between* bytes: a
server that sends its headers and then one byte a second never trips it, and holds the caller as
long as it likes. `request()` enforces a total deadline on the monotonic clock instead:

- connecting and waiting for the headers get at most the time left: at the deadline one
  watchdog thread shuts the request's socket down (`watch.py`; a server may trickle its headers
  too). A session that is not ClawSpec's own (`sessions.py`) cannot be watched: its header
  phase runs in a worker thread the caller stops waiting for at the deadline;
- the body is streamed, and before every read the socket's timeout is set to the time left;
- once the deadline has passed the call raises `DeadlineExceeded`, which names the method, the URL
  (no credentials, no query string: tokens travel there) and the limit that was enforced.

`scope()` shares one deadline among all the calls made inside it, whatever their own limits: the
trace lookup's whole poll loop runs in one, so a request started at 3.9 s of a 4 s trace timeout
gets 0.1 s. `call_within()` bounds a call that cannot be bounded from outside (an SDK's request):
it runs in a worker thread and the caller stops waiting at the deadline. `request()` and
`call_within()` also take a `stop` event: once it is set the caller stops waiting at once
(`Stopped`), as for an abandoned scenario.

GRACE_S is the documented grace: the hook request may take the scenario's `timeout` plus this,
because the gateway ends the run at `timeoutSeconds` and then still has to send its answer. So a
scenario's invocation never outlives its `timeout` + GRACE_S, however slowly a server trickles.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests

from clawspec.net import watch
from clawspec.text import fmt_number

GRACE_S = 5.0
CONNECT_TIMEOUT_S = 10.0  # a connection takes at most this (or the time left, if less)
READ_SIZE = 64 * 1024  # at most this much per read; a read returns what has arrived
# No answer ClawSpec asks for is anywhere near this (a trace's spans, a GitHub listing); a
# server sending more (a bug, or hostile) would hold it all in memory: it is not read on.
MAX_BODY_BYTES = 64 * 1024 * 1024


class BodyTooLarge(requests.RequestException):
    """An answer longer than MAX_BODY_BYTES: not read to its end."""


_EXPIRED_SLACK_S = 0.05  # a socket timeout this close to the deadline is the deadline

T = TypeVar("T")


@dataclass(frozen=True)
class Deadline:
    """A point on the monotonic clock, and the limit it enforces (for messages)."""

    at: float
    limit: str  # e.g. "the trace timeout (4 s)"

    @classmethod
    def after(cls, seconds: float, limit: str | None = None) -> Deadline:
        """The deadline `seconds` from now; `limit` defaults to '<seconds> s'."""
        seconds = max(float(seconds), 0.0)
        return cls(time.monotonic() + seconds, limit or f"{fmt_number(seconds)} s")

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.remaining() <= 0

    def exceeded(self, what: str) -> DeadlineExceeded:
        """The error for `what` (e.g. 'GET http://host/path') not finishing in time."""
        return DeadlineExceeded(what, self.limit)


class DeadlineExceeded(requests.Timeout):
    """A call did not finish by its deadline. A `requests.Timeout`, so callers that handle
    timeouts handle it too; its message is safe to print (no credentials, no query)."""

    def __init__(self, what: str, limit: str) -> None:
        super().__init__(f"{what} did not finish within {limit}")
        self.what = what
        self.limit = limit


_SCOPE: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "clawspec_deadline", default=None
)


@contextmanager
def scope(deadline: Deadline) -> Iterator[Deadline]:
    """Make `deadline` bound every `request()` inside (an enclosing earlier deadline wins)."""
    effective = tightest(deadline)
    assert effective is not None
    token = _SCOPE.set(effective)
    try:
        yield effective
    finally:
        _SCOPE.reset(token)


def tightest(deadline: Deadline | None) -> Deadline | None:
    """The earlier of `deadline` and the enclosing scope's deadline (None: neither)."""
    outer = _SCOPE.get()
    if deadline is None or (outer is not None and outer.at < deadline.at):
        return outer
    return deadline


def safe_url(url: str) -> str:
    """`url` without user-info, query string or fragment: what a message may show."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return url.split("?", 1)[0].split("#", 1)[0]
    host = parts.hostname
    if ":" in host:  # IPv6
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def request(
    session: requests.Session,
    method: str,
    url: str,
    *,
    deadline: Deadline | None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    stop: threading.Event | None = None,
    **kwargs: Any,
) -> requests.Response:
    """Send a request that ends by `deadline` (and the enclosing `scope()`), body included.

    Returns the response with its body read (`.content`, `.text`, `.json()` work, the connection
    is back in the pool). Raises DeadlineExceeded when the deadline passes first, Stopped when
    `stop` is set while it waits for the answer; other failures raise what `requests` raises.
    """
    effective = tightest(deadline)
    if effective is None:
        raise ValueError("request() needs a deadline (or an enclosing scope())")
    what = f"{method} {safe_url(url)}"
    left = effective.remaining()
    if left <= 0:
        raise effective.exceeded(what)
    kwargs.pop("stream", None)
    kwargs.pop("timeout", None)
    timeout = (min(connect_timeout_s, left), left)
    if not watch.watchable(session, url):
        return _request_in_worker(session, method, url, effective, what, timeout, stop, kwargs)
    with watch.watching(effective.at, stop) as call:
        try:
            response = session.request(method, url, stream=True, timeout=timeout, **kwargs)
            _read_whole(response, effective, what)
        except (requests.RequestException, OSError) as exc:
            raise _why(exc, call.fired, effective, what) from None
        if call.fired is not None:  # a body without a length ends where its socket was shut
            raise Stopped(what) if call.fired == "stop" else effective.exceeded(what)
    return response


def _read_whole(response: requests.Response, deadline: Deadline, what: str) -> None:
    """Read the body by `deadline` and keep it in `response` (closed if that fails)."""
    try:
        body = _read_body(response, deadline, what)
    except BaseException:
        response.close()
        raise
    response._content = body  # what `requests` itself stores once it has read the body
    response._content_consumed = True


def _why(exc: BaseException, fired: str | None, deadline: Deadline, what: str) -> BaseException:
    """What a failed request raises: the deadline or the stop that ended it, else its error."""
    if fired == "stop":
        return Stopped(what)
    if fired == "deadline" or isinstance(exc, DeadlineExceeded):
        return exc if isinstance(exc, DeadlineExceeded) else deadline.exceeded(what)
    if isinstance(exc, requests.Timeout) and deadline.remaining() <= _EXPIRED_SLACK_S:
        return deadline.exceeded(what)
    # urllib3 reports a read timeout on the redirect path or the headers as a connection error
    timed_out = isinstance(exc, requests.ConnectionError) and "timed out" in str(exc).lower()
    if timed_out and deadline.remaining() <= _EXPIRED_SLACK_S:
        return deadline.exceeded(what)
    return exc


def _request_in_worker(
    session: requests.Session,
    method: str,
    url: str,
    effective: Deadline,
    what: str,
    timeout: tuple[float, float],
    stop: threading.Event | None,
    kwargs: dict[str, Any],
) -> requests.Response:
    """A session this module cannot watch (not ClawSpec's own): the header phase runs in a
    worker thread the caller stops waiting for at the deadline."""
    try:
        response = call_within(
            lambda: session.request(method, url, stream=True, timeout=timeout, **kwargs),
            effective,
            what,
            stop,
        )
    except (requests.RequestException, OSError) as exc:
        raise _why(exc, None, effective, what) from None
    _read_whole(response, effective, what)
    return response


def _read_body(response: requests.Response, deadline: Deadline, what: str) -> bytes:
    """Read the whole body, each read bounded by the time left; raise at the deadline."""
    from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError, SSLError

    raw = response.raw
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline.remaining()
        if left <= 0:
            raise deadline.exceeded(what)
        _set_socket_timeout(raw, left)
        try:
            chunk = raw.read1(READ_SIZE, decode_content=True)
        except ReadTimeoutError:
            raise deadline.exceeded(what) from None
        except TimeoutError:
            raise deadline.exceeded(what) from None
        except ProtocolError as exc:
            raise requests.exceptions.ChunkedEncodingError(exc) from None
        except DecodeError as exc:
            raise requests.exceptions.ContentDecodingError(exc) from None
        except SSLError as exc:
            raise requests.exceptions.SSLError(exc) from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise BodyTooLarge(
                f"{what}: the answer is longer than {MAX_BODY_BYTES // (1024 * 1024)} MiB; not "
                "read on"
            )
        chunks.append(chunk)


def _set_socket_timeout(raw: Any, seconds: float) -> None:
    connection = getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 0.001))


class Stopped(Exception):
    """The caller's `stop` event was set while it waited for a call (`call_within`, `request`):
    nothing waits for the call any more."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: no longer waited for (stopped)")
        self.what = what


# How often a wait that can be stopped looks at its `stop` event (the watchdog's too).
STOP_POLL_S = watch.STOP_POLL_S


def call_within(
    fn: Callable[[], T], deadline: Deadline, what: str, stop: threading.Event | None = None
) -> T:
    """Return `fn()`, or raise DeadlineExceeded when it has not returned by `deadline` (Stopped
    as soon as `stop` is set, when given).

    `fn` runs in a daemon worker thread (with this context, so `scope()` applies inside); at the
    deadline the caller stops waiting and the worker is abandoned: `fn` should bound itself as
    well (its own timeouts, a deadline check while it reads), so that the worker ends soon too.
    """
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome["value"] = context.run(fn)
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="clawspec-deadline-call", daemon=True)
    worker.start()
    if stop is None:
        worker.join(max(deadline.remaining(), 0.0))
    else:
        while worker.is_alive() and deadline.remaining() > 0:
            worker.join(min(STOP_POLL_S, max(deadline.remaining(), 0.0)))
            if stop.is_set() and worker.is_alive():
                raise Stopped(what)
    if worker.is_alive():
        raise deadline.exceeded(what)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]

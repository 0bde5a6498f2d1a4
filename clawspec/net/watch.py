"""Ending a request at its deadline from outside, without a thread per request.

`requests` bounds the connection and each wait between bytes, never a whole answer: a server
that trickles its status line keeps a read timeout from firing. The request therefore runs in
the caller's own thread, and one watchdog thread for the whole process shuts the request's
socket down when its deadline passes or its `stop` event is set; the caller's blocked read then
returns at once and `deadline.request()` names what happened. Running each request in a worker
thread of its own instead (what `deadline.call_within()` still does for SDK calls) cost two
thread switches and a thread start on every hook request: about 1.7 ms of a run's 4 ms between
an answer and the next request, measured on a busy 2-core machine (`docs/internals.md`).

A request can only be watched when it goes through ClawSpec's own session (`net/sessions.py`),
whose adapter makes every pool's connections say which request they carry (`Adapter`): a socket
is only reachable from there. `deadline.request()` falls back to a worker thread for any other
session.

Name resolution happens before a socket exists: a lookup that hangs is bounded by the system
resolver's own timeout, not by the deadline (the hook and chat requests go to an address given
in the settings, nearly always an IP or `localhost`).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests

# How often the watchdog looks at the `stop` events of the requests it watches (only while one
# of them has one): a stopped request ends within this.
STOP_POLL_S = 0.05

# .call: the Call this thread is sending, if any; .sent: the callback of `when_sent`
_current = threading.local()


class Call:
    """One watched request: its deadline, its `stop` event and, once it has one, its connection.

    `fired` says why the watchdog ended it ("deadline" or "stop"); None while it runs."""

    def __init__(self, at: float, stop: threading.Event | None) -> None:
        self.at = at
        self.stop = stop
        self.fired: str | None = None
        self._connection: Any = None

    def attach(self, connection: Any) -> None:
        """The connection this call's request is sent on (a new one, or one from the pool)."""
        with _WATCHDOG.lock:
            self._connection = connection
            connection.clawspec_call = self
            if self.fired is not None:
                _shut(connection)  # fired while no connection was known yet

    def fire(self, why: str) -> None:
        """End the request (the watchdog's lock held): its socket is shut down."""
        if self.fired is not None:
            return
        self.fired = why
        connection = self._connection
        # The connection may already carry another thread's request (this one finished and
        # returned it to the pool a moment before): shut only a connection still ours.
        if connection is not None and getattr(connection, "clawspec_call", None) is self:
            _shut(connection)

    def detach(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and getattr(connection, "clawspec_call", None) is self:
            connection.clawspec_call = None


def _shut(connection: Any) -> None:
    # An answer that closes its connection takes the socket away from it (http.client hands
    # it to the response): the one the connection last opened is kept for this.
    sock = getattr(connection, "sock", None) or getattr(connection, "clawspec_sock", None)
    if sock is None:
        return  # still connecting: the connect timeout (at most the time left) bounds it
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked read; close() alone may not


class _Watchdog:
    """One daemon thread ending watched calls at their deadline or stop (started on first use)."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self._calls: set[Call] = set()
        self._deadlines: list[tuple[float, int, Call]] = []  # a heap; finished calls linger
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._polling = False  # waking every STOP_POLL_S for the stop events

    def add(self, call: Call) -> None:
        with self.lock:
            earliest = self._deadlines[0][0] if self._deadlines else None
            self._calls.add(call)
            heapq.heappush(self._deadlines, (call.at, next(self._order), call))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="clawspec-deadlines", daemon=True
                )
                self._thread.start()
            elif (
                earliest is None
                or call.at < earliest
                or (call.stop is not None and not self._polling)
            ):
                self.lock.notify()  # an earlier wake-up, or stop events to look at

    def remove(self, call: Call) -> None:
        with self.lock:
            self._calls.discard(call)
            call.detach()

    def _run(self) -> None:
        with self.lock:
            while True:
                now = time.monotonic()
                while self._deadlines and (
                    self._deadlines[0][2] not in self._calls or self._deadlines[0][0] <= now
                ):
                    _, _, call = heapq.heappop(self._deadlines)
                    if call in self._calls:
                        call.fire("deadline")
                self._polling = False
                for call in self._calls:
                    if call.stop is not None:
                        self._polling = True
                        if call.stop.is_set():
                            call.fire("stop")
                wait = self._deadlines[0][0] - now if self._deadlines else None
                if self._polling:
                    wait = STOP_POLL_S if wait is None else min(wait, STOP_POLL_S)
                self.lock.wait(wait)


_WATCHDOG = _Watchdog()


@contextmanager
def watching(at: float, stop: threading.Event | None) -> Iterator[Call]:
    """Watch the request this thread sends inside (through an `Adapter`'s session)."""
    call = Call(at, stop)
    _WATCHDOG.add(call)
    before = getattr(_current, "call", None)
    _current.call = call
    try:
        yield call
    finally:
        _current.call = before
        _WATCHDOG.remove(call)


def when_sent(callback: Callable[[], None] | None) -> None:
    """Call `callback` once, in this thread, as soon as its next request through a watched
    session is written (before its answer is read); None forgets a callback not yet called.

    What the run lanes use to start a scenario's checks only once the lane's next request is on
    its way (runner/lanes.py)."""
    _current.sent = callback


class _Attaching:
    """Mixed into a pool's connection class: a request sent on it is attached to the caller's
    watched call. `request()` is urllib3's public method for sending one, on a new connection
    or one taken from the pool, in the caller's thread; `connect()` opens its socket."""

    clawspec_call: Call | None = None
    clawspec_sock: Any = None

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        with _WATCHDOG.lock:
            self.clawspec_sock = self.sock  # type: ignore[attr-defined]
            call = self.clawspec_call
            if call is not None and call.fired is not None:
                _shut(self)  # it fired while the connection was being made

    def request(self, *args: Any, **kwargs: Any) -> Any:
        call = getattr(_current, "call", None)
        if call is not None:
            call.attach(self)
        try:
            return super().request(*args, **kwargs)  # type: ignore[misc]
        finally:  # written (or failed): the answer is not read yet
            sent = getattr(_current, "sent", None)
            if sent is not None:
                _current.sent = None
                sent()


_watched_pools: dict[type, type] = {}


def _watched_pool(pool: type) -> type:
    """`pool` whose connections attach their requests (HTTP, HTTPS, SOCKS alike)."""
    watched = _watched_pools.get(pool)
    if watched is None:
        base = pool.ConnectionCls
        connection = type(f"Watched{base.__name__}", (_Attaching, base), {})
        watched = type(f"Watched{pool.__name__}", (pool,), {"ConnectionCls": connection})
        _watched_pools[pool] = watched
    return watched


def _watch_pools(manager: Any) -> Any:
    manager.pool_classes_by_scheme = {
        scheme: _watched_pool(pool) for scheme, pool in manager.pool_classes_by_scheme.items()
    }
    return manager


class Adapter(requests.adapters.HTTPAdapter):
    """requests' adapter whose connections (direct or through a proxy) can be watched."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        _watch_pools(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        known = proxy in self.proxy_manager
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        return manager if known else _watch_pools(manager)


def watchable(session: requests.Session, url: str) -> bool:
    """Whether a request of `session` to `url` goes through a watched adapter."""
    return isinstance(session.get_adapter(url), Adapter)

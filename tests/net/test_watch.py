"""ClawSpec's sessions send a request in the caller's thread; one watchdog ends it from outside.

Real HTTP on 127.0.0.1 (tests/support/slow_server.py) and real sockets. How a cut request is
named (deadline, stop) is in tests/security/test_slow_servers.py, for both kinds of session.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

from clawspec.net import deadline, sessions, watch
from clawspec.net.deadline import Deadline, DeadlineExceeded, Stopped, request
from tests.support.slow_server import Answer, SlowServer


def _no_worker(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a ClawSpec session's request went to a worker thread")


def test_a_request_runs_in_the_callers_thread_with_one_watchdog_for_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(deadline, "call_within", _no_worker)
    stop = threading.Event()
    with SlowServer() as server:
        http = sessions.session()
        answers = [
            request(
                http, "POST", f"{server.url}/{i}", json={}, deadline=Deadline.after(10), stop=stop
            )
            for i in range(30)
        ]
    assert [a.json() for a in answers] == [{"ok": True}] * 30
    assert [t.name for t in threading.enumerate()].count("clawspec-deadlines") == 1


def test_a_session_whose_request_was_cut_sends_the_next_one_whole() -> None:
    """The cut connection is not handed back to the pool half read."""
    http = sessions.session()
    with SlowServer(Answer(trickle_head_s=1.0)) as slow:
        with pytest.raises(DeadlineExceeded):
            request(http, "GET", slow.url + "/h", deadline=Deadline.after(0.5))
        assert slow.completed == 0
    with SlowServer(Answer(body=b'{"next": true}')) as quick:
        second = request(http, "GET", quick.url + "/n", deadline=Deadline.after(10))
        third = request(http, "GET", quick.url + "/n", deadline=Deadline.after(10))
    assert second.json() == third.json() == {"next": True}


class _Connection:
    """What the watchdog needs of a pooled connection: its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock


def _open(peer: socket.socket) -> bool:
    """Whether `peer`'s other end can still be read from (not shut down)."""
    peer.settimeout(0.2)
    try:
        return peer.recv(1) != b""
    except TimeoutError:
        return True


def test_a_late_deadline_never_cuts_the_next_request_on_the_same_connection() -> None:
    """A request ends and its connection goes back to the pool; another thread's request takes
    it; the first one's deadline then passing must leave it alone."""
    ours, peer = socket.socketpair()
    try:
        connection = _Connection(ours)
        first, second = watch.Call(0.0, None), watch.Call(0.0, None)
        first.attach(connection)
        second.attach(connection)  # the pool handed it on before the first was detached
        with watch._WATCHDOG.lock:
            first.fire("deadline")
        assert first.fired == "deadline"
        assert _open(peer)
        with watch._WATCHDOG.lock:
            second.fire("deadline")
        assert not _open(peer)
    finally:
        ours.close()
        peer.close()


def test_a_stop_set_before_the_connection_is_known_cuts_it_when_it_is() -> None:
    ours, peer = socket.socketpair()
    try:
        call = watch.Call(0.0, None)
        with watch._WATCHDOG.lock:
            call.fire("stop")
        call.attach(_Connection(ours))
        assert not _open(peer)
    finally:
        ours.close()
        peer.close()


def test_only_clawspec_sessions_are_watched() -> None:
    import requests

    assert watch.watchable(sessions.session(), "http://127.0.0.1:1/")
    assert watch.watchable(sessions.session(pool=4), "https://example.invalid/")
    assert not watch.watchable(requests.Session(), "http://127.0.0.1:1/")


@pytest.mark.parametrize("cut_by", ["deadline", "stop"])
def test_an_answer_without_a_length_cut_short_is_not_taken_for_a_whole_one(cut_by: str) -> None:
    """Its end is where the connection closes: a socket the watchdog shut down must not read
    as the end of the answer. Which cut it was shows in what is raised and its message (a stop
    ignored would end at the 30 s deadline instead), not in how long it took."""
    listener = socket.create_server(("127.0.0.1", 0))
    closing = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
            )
            while not closing.wait(0.05):  # a body that never ends, a little at a time
                try:
                    conn.sendall(b"x")
                except OSError:
                    return

    threading.Thread(target=serve, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/endless"
    stop = threading.Event()
    if cut_by == "stop":
        threading.Timer(0.5, stop.set).start()
    expected = DeadlineExceeded if cut_by == "deadline" else Stopped
    limit = Deadline.after(1, "1 s") if cut_by == "deadline" else Deadline.after(30)
    try:
        with pytest.raises(expected) as raised:
            request(sessions.session(), "GET", url, deadline=limit, stop=stop)
    finally:
        closing.set()
        listener.close()
    said = "did not finish within 1 s" if cut_by == "deadline" else ": no longer waited for"
    assert str(raised.value).startswith(f"GET {url}") and said in str(raised.value)


def test_when_sent_is_called_once_the_request_is_written_before_its_answer() -> None:
    # The server answers only after the callback ran: a callback called late (after the
    # answer) would find the answer sent, after the server's 30 s.
    release = threading.Event()
    calls: list[tuple[str, int]] = []
    with SlowServer(Answer(held_until=release)) as server:

        def sent() -> None:
            calls.append((threading.current_thread().name, server.completed))
            release.set()

        http = sessions.session()
        watch.when_sent(sent)
        answers = [request(http, "POST", server.url, json={}, deadline=Deadline.after(60))]
        answers.append(request(http, "POST", server.url, json={}, deadline=Deadline.after(60)))
        watch.when_sent(lambda: calls.append(("forgotten", -1)))
        watch.when_sent(None)
        answers.append(request(http, "POST", server.url, json={}, deadline=Deadline.after(60)))
    assert [answer.json() for answer in answers] == [{"ok": True}] * 3
    assert calls == [(threading.current_thread().name, 0)]  # once, in the sending thread

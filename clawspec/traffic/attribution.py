"""Which scenario a model request belongs to, when concurrent scenarios share one gateway.

What the real gateway sends (openclaw@2026.9.6, captured from the scripted provider): every
model call carries a W3C `traceparent` header whose trace id is the same for all calls of one
hook request, including those of the sub-agents it spawns (their runs are nested in the parent's
trace). The hook's `sessionKey` never reaches the provider (the run's session is
`agent:main:cron:<job uuid>`), and no other header names the run. The hook `message` does reach
it, verbatim, inside the first user message (in an `EXTERNAL_UNTRUSTED_CONTENT` block).

So: the first request of a new trace is attributed by finding a scenario's hook message in it
(the longest match wins), and its trace id is bound to that scenario; every later request of that
trace (the next turns, the sub-agents) follows the binding. A new trace can also continue an
earlier invocation: when a sub-agent finishes, the gateway announces its result to the parent
session in a new run (and trace), possibly after the scenario ended. The exact user-message
string that held the hook message (it also holds the gateway's unique job id) identifies it.
Two scenarios with the same hook message would be ambiguous, so the runner does not start the
second until the first is bound (`register` waits).

A conversation is registered with its first turn's message, which every later turn's request
holds in its history. The chat endpoint adds no unique id beside it, so a second scenario with
the same message would stay ambiguous for the whole conversation: it waits until the
conversation ends (`whole`), within the same bound.

A new trace without any scenario's message is the gateway's own run, not a scenario's: e.g. when
one scenario's hook run fails, the gateway tells the main session ("Hook writes-note (error)")
and that session calls the model. It belongs to nobody. Only a request without any trace (a
gateway that does not propagate trace context) goes to the only running scenario, if there is
exactly one.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clawspec.nested import strings_in

_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")
_ids = itertools.count(1)


def trace_id(headers: Mapping[str, str]) -> str | None:
    """The trace id of a W3C traceparent header (None if absent or malformed)."""
    value = next((v for k, v in headers.items() if k.lower() == "traceparent"), "")
    found = _TRACEPARENT.match(value.strip().lower())
    return found.group(1) if found else None


@dataclass
class Registration:
    """One scenario invocation the proxy may see traffic from."""

    scenario: str  # the scenario id ('<contract>::<name>')
    message: str  # the hook message sent to the gateway
    serial: int = field(default_factory=lambda: next(_ids))
    traces: set[str] = field(default_factory=set)
    anchors: set[str] = field(default_factory=set)  # request strings holding the message
    active: bool = True
    whole: bool = False  # a conversation: the message identifies it only while it runs alone
    released: threading.Event = field(default_factory=threading.Event)
    bound: threading.Event = field(default_factory=threading.Event)


class Attributor:
    """Thread-safe map of traces to registered scenario invocations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._registrations: list[Registration] = []
        self._traces: dict[str, Registration] = {}

    def register(
        self, scenario: str, message: str, wait_s: float = 60.0, whole: bool = False
    ) -> Registration:
        """Announce an invocation; first wait (up to `wait_s`) until no other running
        invocation with the same message is still waiting for its first model request (or,
        when either is a conversation, `whole`, until it has ended)."""
        message = message.strip()
        deadline = time.monotonic() + wait_s
        while True:
            with self._lock:
                blocking = [
                    r
                    for r in self._registrations
                    if r.active
                    and r.message == message
                    and (whole or r.whole or not r.bound.is_set())
                ]
                if not blocking or time.monotonic() >= deadline:
                    registration = Registration(scenario, message, whole=whole)
                    self._registrations.append(registration)
                    return registration
            first = blocking[0]
            event = first.released if (whole or first.whole) else first.bound
            event.wait(max(0.0, min(1.0, deadline - time.monotonic())))

    def release(self, registration: Registration) -> None:
        """The scenario is over: new traces no longer go to it (its known traces still do)."""
        with self._lock:
            registration.active = False
            registration.bound.set()
            registration.released.set()

    def attribute(self, headers: Mapping[str, str], body: Any) -> Registration | None:
        """The invocation this request belongs to, binding a new trace on first sight."""
        trace = trace_id(headers)
        texts = list(strings_in(body))
        with self._lock:
            chosen = self._traces.get(trace) if trace else None
            if chosen is None:
                chosen = self._by_content(texts, traced=trace is not None)
            if chosen is None:
                return None
            if trace and trace not in self._traces:
                self._traces[trace] = chosen
                chosen.traces.add(trace)
            if chosen.message:
                chosen.anchors.update(text for text in texts if chosen.message in text)
            chosen.bound.set()
            return chosen

    def _by_content(self, texts: list[str], traced: bool) -> Registration | None:
        """A request of a trace not seen before: whose hook message does it carry?

        The gateway's user message holds the hook message next to a job id unique to the hook
        request, so an exact earlier string (an anchor) identifies the invocation even when a
        later run of its session has a new trace: the sub-agent's completion announced back to
        the parent can come after the scenario ended, and must still count as its traffic.
        """
        matching = [r for r in self._registrations if r.message and _carries(texts, r.message)]
        if matching:
            longest = max(len(r.message) for r in matching)
            matching = [r for r in matching if len(r.message) == longest]
            seen = [r for r in matching if r.anchors.intersection(texts)]
            live = [r for r in seen if r.active]
            if live:
                return live[0]
            # An ended conversation's anchor is its plain first message, which a later
            # conversation with that message sends too: a running one claims it.
            replaced = all(r.whole for r in seen) and any(r.active for r in matching)
            if seen and not replaced:
                return seen[0]
            # else the first call of an invocation: a running one without calls yet, earliest
            return min(matching, key=lambda r: (not r.active, r.bound.is_set(), r.serial))
        if traced:
            return None  # a new trace that is no scenario's: the gateway's own run
        active = [r for r in self._registrations if r.active]
        return active[0] if len(active) == 1 else None


def _carries(texts: list[str], message: str) -> bool:
    return any(message in text for text in texts)

"""Model providers a run found unreachable: no new run starts on them.

With no route to a provider, OpenClaw retries each model call 8 times over about a minute and a
half before the run fails. Every later scenario on that provider would wait as long for the same
error, so once one run has failed that way (run_failure.unreachable_provider) the runs not yet
started on that provider, on that gateway, are skipped with the reason; other providers' go on.
A variant with a gateway of its own is kept apart: its config or environment may reach the
provider another way (a proxy, another baseUrl).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable


class Outages:
    """What is known unreachable, by gateway (its base URL) and key (`keys_of`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down: dict[tuple[str, str], str] = {}

    def record(self, gateway: str, keys: Iterable[str], reason: str) -> None:
        with self._lock:
            for key in keys:
                self._down.setdefault((gateway, key), reason)  # the first failure is named

    def record_gateway(self, gateway: str, reason: str) -> None:
        """Nothing answers at `gateway` (an advisory variant's own): no run starts on it."""
        self.record(gateway, [_WHOLE], reason)

    def reason(self, gateway: str, keys: Iterable[str]) -> str | None:
        """Why a run on `gateway` with these keys should not start; None: start it."""
        with self._lock:
            return next((r for k in (_WHOLE, *keys) if (r := self._down.get((gateway, k)))), None)


_WHOLE = "gateway"  # the key of a gateway that does not answer at all


def keys_of(model: str | None, agent_id: str) -> list[str]:
    """A run's keys: its model override's provider, or (without one) its agent, whose own
    model ClawSpec learns the provider of only from the gateway's log."""
    if model:
        return [f"provider:{model.split('/', 1)[0]}"] if "/" in model else [f"model:{model}"]
    return [f"agent:{agent_id}"]

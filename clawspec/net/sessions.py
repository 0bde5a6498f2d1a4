"""The HTTP sessions ClawSpec sends its requests with.

A plain `requests.Session` consults the environment on every request:

- `~/.netrc` (or `$NETRC`): its entry for the host, or its `default` entry, *replaces* any
  `Authorization` header the caller set. ClawSpec always sends credentials of its own (the
  gateway's hooks token, a trace backend's key, the GitHub token), so one `default` line in a
  user's netrc turned each of them into that Basic login, and the gateway answered 401;
- the proxy variables (`HTTP_PROXY`, `NO_PROXY`, ...) and the CA bundle (`REQUESTS_CA_BUNDLE`,
  `CURL_CA_BUNDLE`): finding the proxy walks the whole environment, several times a request
  (on a CI runner, a hundred variables and more).

`session()` makes one that never sends a netrc login (ClawSpec's requests carry the credentials
its settings name, or none: a `default` entry's password has no business going to a gateway's
health check in clear text, nor into a message a server echoes back unmasked), and reads the
proxy and CA settings once per origin (scheme, host and port): a session lives as long as the
run or the call that made it, and the environment does not change under it. What the
environment says is honoured as `requests` honours it, but for one thing: a loopback address
(127.0.0.0/8, ::1, localhost) is never sent through a proxy. A proxy cannot reach this
machine's loopback (its own is another), and a gateway ClawSpec starts always listens there:
with `http_proxy` set and no `NO_PROXY` for it, as on many company machines and self-hosted
runners, every call to it failed at the proxy.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests
from requests.auth import AuthBase

from clawspec.net import watch
from clawspec.net.loopback import is_loopback


class _AsSent(AuthBase):
    """The session's auth: the request with the credentials its caller gave it, nothing added."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        return request


class Session(requests.Session):
    """A `requests.Session` (see the module's docstring for what differs)."""

    def __init__(self, pool: int | None = None) -> None:
        super().__init__()
        # A session-wide auth: `requests` looks netrc up only for a request that has no auth
        # when the session has none either (a caller's own `auth=` still wins over this one).
        self.auth = _AsSent()
        # Its connections can be ended at a deadline from outside (net/watch.py).
        size = requests.adapters.DEFAULT_POOLSIZE if pool is None else pool
        for scheme in ("http://", "https://"):
            self.mount(scheme, watch.Adapter(pool_maxsize=size))
        self._settings: dict[tuple[str, ...], dict[str, Any]] = {}

    def merge_environment_settings(
        self,
        url: str,
        proxies: Any,
        stream: Any,
        verify: Any,
        cert: Any,
    ) -> dict[str, Any]:
        parts = urlsplit(url)
        key = (
            parts.scheme,
            parts.netloc,
            repr(sorted((proxies or {}).items())),
            repr(stream),
            repr(verify),
            repr(cert),
        )
        settings = self._settings.get(key)
        if settings is None:
            origin = f"{parts.scheme}://{parts.netloc}/"
            given = dict(proxies or {})
            if is_loopback(parts.hostname):
                given.setdefault("no_proxy", parts.hostname or "")
            settings = super().merge_environment_settings(origin, given, stream, verify, cert)
            self._settings[key] = settings
        # Each request gets its own copy: `requests` may add to the proxies it is given.
        return {**settings, "proxies": dict(settings["proxies"] or {})}


def session(pool: int | None = None) -> Session:
    """A session for ClawSpec's requests; `pool`: connections kept per host (requests' 10)."""
    return Session(pool)

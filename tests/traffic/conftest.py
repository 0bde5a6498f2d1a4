"""Helpers for the traffic tests: sessions with a proxy on 127.0.0.1, raw HTTP calls."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from clawspec import secrets as registry
from clawspec.traffic.normalize import Normalizer
from clawspec.traffic.session import TrafficSession

SECRET_KEY = "sk-live-CLAWSPEC-RECOGNISABLE-0123456789"
WORKSPACE = "/srv/checkout-a/workspace"


@contextmanager
def session(
    mode: str,
    upstreams: dict[str, str] | None = None,
    secrets: tuple[str, ...] = (),
    workspace: str = WORKSPACE,
) -> Iterator[TrafficSession]:
    normalizer = Normalizer.build(literals={workspace: "<clawspec:workspace>"})
    # A command's secrets registry, holding `secrets`: the keys the proxy sees join it.
    with registry.scope() as active:
        active.add(*secrets)
        traffic = TrafficSession(mode, normalizer, upstreams)
        traffic.start()
        try:
            yield traffic
        finally:
            traffic.stop()


def post(
    url: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, bytes, str]:
    """POST JSON; return (status, raw body bytes, content type)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    data = json.dumps(body).encode()
    conn.request(
        "POST",
        parts.path,
        body=data,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    return response.status, raw, response.getheader("Content-Type", "")


def cassette_texts(root: Path) -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted(root.rglob("*.json")))

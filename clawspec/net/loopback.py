"""This machine's loopback, as ClawSpec names and recognises it (standard library only).

`NAMES` are the names a loopback server of ClawSpec's binds to or a gateway it starts reaches
(the OTLP receiver, the model traffic proxy, a local model provider): what bring-up adds to the
gateway's `NO_PROXY`. `is_loopback` recognises any loopback host of a URL (127.0.0.0/8, ::1,
localhost and its subdomains), which ClawSpec never sends through a proxy.
"""

from __future__ import annotations

import ipaddress

NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str | None) -> bool:
    """Whether `host` (a URL's hostname: no brackets, no port) is this machine's loopback."""
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

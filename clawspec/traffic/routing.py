"""Send a gateway's model calls through the proxy: rewrite the providers' `baseUrl`s.

In bring-up mode ClawSpec generates the OpenClaw config, so it rewrites every provider of
`models.providers` to `<proxy>/<provider id>` and remembers the original base URL as that
provider's upstream (record mode forwards there). In target mode the user does the same by hand
in their `openclaw.json` (see the docs/gateway.md, "Hermetic runs").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Routes:
    """What routing a config through the proxy found out."""

    upstreams: dict[str, str] = field(default_factory=dict)  # provider -> original baseUrl
    models: dict[str, list[str]] = field(default_factory=dict)  # provider -> model ids
    keys: list[str] = field(default_factory=list)  # API keys, redacted from cassettes
    unrouted: list[str] = field(default_factory=list)  # providers without a baseUrl


class ProxyRoutes(Protocol):
    """What bring-up needs from the model traffic session."""

    @property
    def base_url(self) -> str: ...

    def route(self, routes: Routes) -> None: ...


def route_providers(config: dict[str, Any], proxy_base_url: str) -> Routes:
    """Point each provider of `config` at the proxy, in place, and say what was routed.

    Providers without a `baseUrl` (OpenClaw's built-in defaults) are left alone and listed in
    `unrouted`: their calls bypass the proxy (give them their real `baseUrl` to record them).
    """
    providers = (config.get("models") or {}).get("providers") or {}
    routes = Routes()
    for provider_id, provider in providers.items():
        if not isinstance(provider, dict) or not provider.get("baseUrl"):
            routes.unrouted.append(str(provider_id))
            continue
        routes.upstreams[provider_id] = str(provider["baseUrl"])
        if isinstance(provider.get("apiKey"), str):
            routes.keys.append(provider["apiKey"])
        provider["baseUrl"] = f"{proxy_base_url.rstrip('/')}/{provider_id}"
        routes.models[provider_id] = [
            str(model["id"])
            for model in provider.get("models") or []
            if isinstance(model, dict) and model.get("id")
        ]
    return routes

"""Send a gateway's model calls through the proxy: rewrite the providers' `baseUrl`s.

In bring-up mode ClawSpec generates the OpenClaw config, so it rewrites every provider of
`models.providers` to `<proxy>/<provider id>` and remembers the original base URL as that
provider's upstream (record mode forwards there). In target mode the user does the same by hand
in their `openclaw.json` (see the README, "Hermetic runs").
"""

from __future__ import annotations

from typing import Any, Protocol


class ProxyRoutes(Protocol):
    """What bring-up needs from the model traffic session."""

    @property
    def base_url(self) -> str: ...

    def route(
        self, upstreams: dict[str, str], models: dict[str, list[str]] | None = None
    ) -> None: ...


def route_providers(config: dict[str, Any], proxy_base_url: str) -> tuple[dict, dict, list]:
    """Point each provider of `config` at the proxy, in place.

    Return ({provider: original baseUrl}, {provider: [model ids]}, [API keys to redact from
    cassettes]). Providers without a
    `baseUrl` (OpenClaw's built-in defaults) are left alone: give them one to record them.
    """
    providers = (config.get("models") or {}).get("providers") or {}
    upstreams: dict[str, str] = {}
    models: dict[str, list[str]] = {}
    keys: list[str] = []
    for provider_id, provider in providers.items():
        if not isinstance(provider, dict) or not provider.get("baseUrl"):
            continue
        upstreams[provider_id] = str(provider["baseUrl"])
        if isinstance(provider.get("apiKey"), str):
            keys.append(provider["apiKey"])
        provider["baseUrl"] = f"{proxy_base_url.rstrip('/')}/{provider_id}"
        models[provider_id] = [
            str(model["id"])
            for model in provider.get("models") or []
            if isinstance(model, dict) and model.get("id")
        ]
    return upstreams, models, keys

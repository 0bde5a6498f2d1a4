"""Whether a brought-up gateway will have an API key for the model providers its config names.

A brought-up gateway starts with an empty state folder: no auth profiles, no `~/.openclaw/.env`.
Its model key can only come from the environment ClawSpec runs in (OpenClaw reads the
provider's variable, e.g. OPENAI_API_KEY) or from the OpenClaw config (`apiKey` of
`models.providers.<id>`, or `env.vars`). Without one every scenario would wait out its timeout
and fail with OpenClaw's "no API key" error; bring-up checks first and stops with a
configuration error that says what to set.

Only providers whose variables OpenClaw documents are checked: a custom or local provider may
need no key at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# OpenClaw's default model when the config names none (OpenClaw 2026.9.6).
DEFAULT_MODEL = "openai/gpt-6-astra"
# The environment variables OpenClaw reads each provider's key from (its docs, 2026.9.6).
PROVIDER_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
}
_VAR_REF = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


@dataclass(frozen=True)
class ProviderUse:
    """A provider the config names, for which agent and model, and whether it has a key."""

    provider: str
    model: str
    agent: str
    default: bool  # the model is OpenClaw's default: the config names none
    env_names: tuple[str, ...]  # where OpenClaw looks for its key; () = not known to ClawSpec
    has_key: bool | None  # None: ClawSpec cannot tell (a provider it does not know)
    variant: str | None = None  # the model is this variant's hook-request override


def provider_uses(
    config: Mapping[str, Any],
    agent_ids: Iterable[str],
    environ: Mapping[str, str],
    overrides: Mapping[str, str] | None = None,
) -> list[ProviderUse]:
    """The primary model provider of each agent, then of each model a hook request names
    (`overrides`: model -> the variant that names it), with whether a key is there for it."""
    agents = _mapping(config.get("agents"))
    default_model = _primary(_mapping(agents.get("defaults")).get("model"))
    entries = _agent_entries(agents)
    env = {**_config_env(config), **environ}  # the process environment wins, as in OpenClaw
    uses: dict[str, ProviderUse] = {}
    for agent in agent_ids:
        model = _primary(_mapping(entries.get(agent)).get("model")) or default_model
        ref = model or DEFAULT_MODEL
        if "/" not in ref:
            continue  # an alias or a bare model id: which provider is OpenClaw's choice
        provider = ref.split("/", 1)[0]
        if provider in uses:
            continue
        names = PROVIDER_ENV.get(provider, ())
        uses[provider] = ProviderUse(
            provider=provider,
            model=ref,
            agent=agent,
            default=model is None,
            env_names=names,
            has_key=_has_key(config, provider, names, env),
        )
    # A variant's `model` replaces the agent's for its runs: the gateway calls that provider
    # too, so its key is checked like the agents' (else the run fails minutes later instead).
    for ref, variant in (overrides or {}).items():
        provider = ref.split("/", 1)[0] if "/" in ref else None
        if provider is None or provider in uses:
            continue
        names = PROVIDER_ENV.get(provider, ())
        uses[provider] = ProviderUse(
            provider=provider,
            model=ref,
            agent="",
            default=False,
            env_names=names,
            has_key=_has_key(config, provider, names, env),
            variant=variant or None,
        )
    return list(uses.values())


def missing_key_messages(uses: Iterable[ProviderUse], config_name: str | None) -> list[str]:
    """One message per provider without a key: what to set, by name."""
    return [_message(use, config_name) for use in uses if use.has_key is False]


def _message(use: ProviderUse, config_name: str | None) -> str:
    which = (
        f"'{use.model}', OpenClaw's default model: the OpenClaw config names none"
        if use.default
        else f"'{use.model}'"
    )
    who = (
        f"variant '{use.variant}'"
        if use.variant
        else (f"agent '{use.agent}'" if use.agent else "a variant's model")
    )
    variables = " or ".join(use.env_names)
    where = (
        f"your OpenClaw config ({config_name})"
        if config_name
        else "an OpenClaw config (gateway.config; the action's openclaw_config)"
    )
    return (
        f"model provider '{use.provider}' has no API key ({who} uses {which}): "
        f"set {variables} in the environment clawspec runs in (in CI, from a secret), or "
        f'set models.providers.{use.provider}.apiKey in {where}, e.g. "${{{use.env_names[0]}}}"'
    )


def _has_key(
    config: Mapping[str, Any], provider: str, names: tuple[str, ...], env: Mapping[str, str]
) -> bool | None:
    entry = _mapping(_mapping(_mapping(config.get("models")).get("providers")).get(provider))
    key = entry.get("apiKey")
    if isinstance(key, str) and key.strip():
        refs = _VAR_REF.findall(key)
        return all(env.get(name) for name in refs) if refs else True
    if isinstance(key, Mapping):  # a SecretRef: only an env one can be checked here
        if key.get("source") == "env":
            return bool(env.get(str(key.get("id") or "")))
        return True
    if any(env.get(name) for name in names):
        return True
    if _mapping(config.get("auth")).get("profiles"):
        return None  # profiles may hold it: let the gateway tell
    return False if names else None


def _primary(model: Any) -> str | None:
    if isinstance(model, str) and model.strip():
        return model.strip()
    if isinstance(model, Mapping):
        return _primary(model.get("primary"))
    return None


def _agent_entries(agents: Mapping[str, Any]) -> dict[str, Any]:
    entries = dict(_mapping(agents.get("entries")))
    for item in agents.get("list") or []:  # the array form: [{id, model, ...}]
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            entries.setdefault(item["id"], item)
    return entries


def _config_env(config: Mapping[str, Any]) -> dict[str, str]:
    env = _mapping(config.get("env"))
    values = {**_mapping(env.get("vars"))}
    # `env: {KEY: "value"}` (besides `vars` and `shellEnv`) sets variables too.
    values.update({k: v for k, v in env.items() if k not in ("vars", "shellEnv")})
    return {str(k): str(v) for k, v in values.items() if isinstance(v, str) and v}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}

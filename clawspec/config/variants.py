"""Checks of `variants` against the gateway mode, made once the settings are valid: what a
variant asks for that the mode cannot give is refused before anything runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawspec.config.settings import Settings


# What a variant may set in each gateway mode: the others are refused before anything runs.
_VARIANT_MODE_FIELDS = {
    "target": ("openclaw_config", "openclaw_version", "env"),
    "bring_up": ("gateway_base_url", "hooks_token_env"),
}
_VARIANT_MODE_WHY = {
    "openclaw_config": "only ClawSpec's own gateway (bring-up mode) can take a config overlay; "
    "in target mode point the variant at a gateway you run with that config "
    "(gateway_base_url)",
    "openclaw_version": "only ClawSpec's own gateway (bring-up mode) can run another OpenClaw "
    "release; in target mode point the variant at a gateway running it (gateway_base_url)",
    "env": "it is the environment of a gateway ClawSpec starts (bring-up mode)",
    "gateway_base_url": "in bring-up mode ClawSpec starts every gateway itself; give the variant "
    "openclaw_config or openclaw_version instead, or run in target mode",
    "hooks_token_env": "it is the hooks token of a gateway_base_url, which bring-up mode does "
    "not use",
}


def variant_problems(settings: Settings) -> list[tuple[tuple[Any, ...], str]]:
    """(config location, message) of every variant field the gateway mode cannot honour."""
    mode = settings.gateway.mode
    problems = []
    for index, variant in enumerate(settings.variants):
        for name in _VARIANT_MODE_FIELDS[mode]:
            if getattr(variant, name):
                mode_name = "target" if mode == "target" else "bring-up"
                problems.append(
                    (
                        ("variants", index, name),
                        f"variant '{variant.name}': {name} is not allowed in {mode_name} mode: "
                        f"{_VARIANT_MODE_WHY[name]}",
                    )
                )
        if variant.hooks_token_env and not variant.gateway_base_url:
            problems.append(
                (
                    ("variants", index, "hooks_token_env"),
                    f"variant '{variant.name}': hooks_token_env needs gateway_base_url (the "
                    "gateway whose token it is)",
                )
            )
    return problems

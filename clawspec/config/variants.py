"""Checks of `variants` against the gateway mode, made once the settings are valid: what a
variant asks for that the mode cannot give is refused before anything runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from clawspec.config.settings import Settings, VariantSettings


# What a variant may set in each gateway mode: the others are refused before anything runs.
_VARIANT_MODE_FIELDS = {
    "target": ("openclaw_config", "openclaw_version", "env"),
    "bring_up": ("gateway_base_url", "hooks_token_env", "gateway_token_env", "openclaw_state_dir"),
}
# The fields that describe the gateway at a variant's gateway_base_url (target mode).
_OF_GATEWAY_URL = ("hooks_token_env", "gateway_token_env", "openclaw_state_dir")
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
    "gateway_token_env": "it is the gateway token of a gateway_base_url, which bring-up mode "
    "does not use (ClawSpec's own gateways get a token of their own)",
    "openclaw_state_dir": "it is the state folder of a gateway_base_url, which bring-up mode "
    "does not use (ClawSpec knows the state folders of its own gateways)",
}
_WHAT = {
    "hooks_token_env": "the gateway whose hooks token it is",
    "gateway_token_env": "the gateway whose token it is",
    "openclaw_state_dir": "the gateway whose state folder it is",
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
        if mode != "target" or variant.gateway_base_url:
            continue
        for name in _OF_GATEWAY_URL:
            if getattr(variant, name):
                problems.append(
                    (
                        ("variants", index, name),
                        f"variant '{variant.name}': {name} needs gateway_base_url ({_WHAT[name]})",
                    )
                )
    return problems


# How a variant's `thinking` reaches the turns of its conversations: "gateway" (the gateway's
# own default, `agents.defaults.thinkingDefault`), "directive" (a directive-only first message,
# `/think <level>`, sent before the first turn and not counted as one).
ThinkingRoute = Literal["gateway", "directive"]


def thinking_for_conversation(variant: VariantSettings | None) -> ThinkingRoute | None:
    """How `variant`'s thinking level is applied to a conversation (None: it sets none).

    OpenClaw's chat endpoint reads no thinking field from the request, so the level cannot
    travel with each turn as it does in a hook request; and on 2026.9.6 it passes a `/think`
    directive to the model as an ordinary message (docs/gateway.md, "Thinking"). So the route
    is "gateway": bring-up gives the variant a gateway of its own whose config sets the level
    (runner/gateways.py: `own_gateways`, `_overlay`), and target mode refuses the variant's
    conversations before any run (runner/chat_gateways.py), since ClawSpec cannot configure a
    gateway it did not start. The one place to change should a release honour the directive
    ("directive": the conversation then sends it first, not counted as a turn).
    """
    if variant is None or not variant.thinking:
        return None
    return "gateway"

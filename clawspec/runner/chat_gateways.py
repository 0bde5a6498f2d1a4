"""What the conversations of a run need of a gateway ClawSpec did not start, checked before
any scenario runs (target mode).

Conversations go through OpenClaw's chat endpoint (`POST /v1/chat/completions`), whatever
`trigger_mode` says (it picks how one-message scenarios are sent: the hooks and the old webhook
never continue a session). That endpoint takes the gateway token, not the hooks token, and is off
unless the gateway's config turns it on: a run would otherwise find out turn by turn, each turn
an error saying the same thing. So, once per gateway that holds a conversation: a token must be
set (checked before anything is contacted), and `GET /v1/models` with it must answer 2xx.
Bring-up gateways need none of this: ClawSpec makes their token and turns the endpoint on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawspec.config.variants import thinking_for_conversation
from clawspec.errors import ConfigError, GatewayError
from clawspec.gateway.chat import TOKEN_VARIABLES

if TYPE_CHECKING:
    import requests

    from clawspec.config.settings import Settings
    from clawspec.runner.gateways import RunGateways
    from clawspec.runner.scenario import ScenarioPlan


@dataclass(frozen=True)
class ChatGateway:
    """A gateway that holds conversations: its settings, the variant whose own gateway it is
    (None: the run's), the variable its token comes from when not the run's, and one
    conversation it holds (for messages)."""

    settings: Settings
    variant: str | None
    token_env: str | None
    example: str

    @property
    def whose(self) -> str:
        url = self.settings.gateway_base_url
        return f"variant '{self.variant}''s gateway at {url}" if self.variant else url

    @property
    def said(self) -> str:
        """What a message about it starts with."""
        on = f" on variant '{self.variant}'" if self.variant else ""
        return f"scenario {self.example} is a conversation{on}"


def conversations(plans: Sequence[ScenarioPlan]) -> list[ScenarioPlan]:
    return [p for p in plans if p.scenario.turns is not None]


def _named(plan: ScenarioPlan) -> str:
    return f"'{plan.identity.name}' ({plan.contract.display})"


def refuse_thinking(plans: Sequence[ScenarioPlan]) -> None:
    """Target mode: a variant whose `thinking` would reach its conversations through the
    gateway's own default cannot have them (ClawSpec cannot set that default on a gateway it did
    not start): a usage error naming each such variant, before anything runs."""
    found: dict[str, ScenarioPlan] = {}
    for plan in conversations(plans):
        variant = plan.variant
        if variant is not None and thinking_for_conversation(variant) == "gateway":
            found.setdefault(variant.name, plan)
    if not found:
        return
    lines = [
        f"variant '{name}': thinking '{plan.variant.thinking if plan.variant else ''}' cannot "
        f"apply to its conversations (scenario {_named(plan)}): OpenClaw's chat endpoint "
        "cannot set a thinking level per request. Set the level on that gateway "
        "(agents.defaults.thinkingDefault) and remove `thinking` from the variant, run in "
        "bring-up mode (the variant then gets a gateway of its own with that level), or "
        "leave the conversations out of this run (--scenario, --tag, --variant)"
        for name, plan in found.items()
    ]
    raise ConfigError("\n".join(lines))


def chat_gateways(gateways: RunGateways, plans: Sequence[ScenarioPlan]) -> list[ChatGateway]:
    """Each gateway (by URL, in plan order) that holds one of the plans' conversations."""
    found: dict[str, ChatGateway] = {}
    for plan in conversations(plans):
        variant = plan.variant
        gateway = gateways.by_variant.get(variant.name) if variant is not None else None
        if gateway is None or variant is None:
            target = ChatGateway(gateways.default.settings, None, None, _named(plan))
        else:
            target = ChatGateway(
                gateway.settings, variant.name, variant.gateway_token_env, _named(plan)
            )
        found.setdefault(target.settings.gateway_base_url, target)
    return list(found.values())


def require_tokens(targets: Sequence[ChatGateway]) -> None:
    """A usage error, before any gateway is contacted, for each gateway that holds a
    conversation without a gateway token to authorise it."""
    missing = [
        f"{t.said}: its turns go through the chat endpoint of {t.whose}, which needs the "
        f"gateway token, and none is set: set {_token_source(t)} to that gateway's "
        "gateway.auth.token"
        for t in targets
        if t.settings.gateway_auth_token is None
    ]
    if missing:
        raise ConfigError("\n".join(missing))


def require_chat(http: requests.Session, targets: Sequence[ChatGateway]) -> None:
    """Ask each gateway's chat endpoint (`GET /v1/models`) with its token: a refused token or
    an endpoint that is off is a usage error (the configuration must change), a gateway that
    does not answer is a gateway error (exit 3), as an unreachable one is."""
    from clawspec.gateway.chat import ChatError, preflight

    for target in targets:
        token = target.settings.gateway_auth_token
        try:
            preflight(
                http,
                target.settings.gateway_base_url,
                token.get_secret_value() if token is not None else None,
            )
        except ChatError as exc:
            said = f"{target.said}: "
            if exc.kind == "auth":
                text = str(exc)
                if target.token_env:  # the variant's token is not the run's
                    text = text.replace(TOKEN_VARIABLES, _token_source(target))
                raise ConfigError(said + text) from None
            if exc.kind == "endpoint":
                raise ConfigError(said + str(exc)) from None
            raise GatewayError(said + str(exc)) from None


def _token_source(target: ChatGateway) -> str:
    if target.token_env:
        return f"{target.token_env} (the variant's gateway_token_env)"
    return TOKEN_VARIABLES


__all__ = [
    "ChatGateway",
    "chat_gateways",
    "conversations",
    "refuse_thinking",
    "require_chat",
    "require_tokens",
]

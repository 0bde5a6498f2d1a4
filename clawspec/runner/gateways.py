"""The gateways of one run: the default one, and one per variant that needs its own.

Variants that change only what the hook request carries (`model`, `thinking`, `agent_id`) run
on the default gateway. In bring-up mode a variant with `openclaw_config`, `openclaw_version` or
`env` gets a gateway of its own, brought up like the default one (its overlay merged into the
same generated config, its OpenClaw release installed on first use); in target mode a variant
with `gateway_base_url` runs against that gateway. Every gateway started here is stopped when
the run ends, however it ends (an interrupt included: the caller's `with` unwinds).

Conversations go through the chat endpoint, which reads no thinking level: a variant with
`thinking` whose conversations need the gateway's own default (`thinking_for_conversation`)
gets a gateway of its own in bring-up mode, with that default in its config overlay.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from clawspec.config.variants import thinking_for_conversation
from clawspec.errors import ConfigError, GatewayError
from clawspec.gateway.managed import (
    GatewayVariant,
    RunGateway,
    brought_up,
    run_log_dir,
    run_receiver,
)

if TYPE_CHECKING:
    from clawspec.config.settings import Settings, VariantSettings
    from clawspec.runner.scenario import ScenarioPlan
    from clawspec.traffic.routing import ProxyRoutes


@dataclass(frozen=True)
class RunGateways:
    """`default`: the gateway of the plans without a gateway of their own (in bring-up mode,
    when every selected variant has its own, the first of those stands in); `by_variant`: the
    gateway of each variant that has its own."""

    default: RunGateway
    by_variant: dict[str, RunGateway] = field(default_factory=dict)


@contextmanager
def gateways_for_run(
    settings: Settings,
    workspace: Path,
    plans: Sequence[ScenarioPlan],
    report_dir: Path,
    environ: Mapping[str, str],
    model_proxy: ProxyRoutes | None = None,
    stop: threading.Event | None = None,
) -> Iterator[RunGateways]:
    """Start (bring-up) or point at (target) every gateway the plans need; stop them after
    (`stop`, the run's first interrupt, ends a bring-up still waiting: BringUpStopped).

    A brought-up gateway's log is kept in a folder of this run's own under `report_dir` (the
    settings' report folder; `managed.run_log_dir`), removed again when it stays empty."""
    own = own_gateways(plans, settings.gateway.mode == "bring_up")
    shared = [p for p in plans if p.variant is None or p.variant.name not in own]
    with ExitStack() as stack:
        # The receiver is entered first and stops after every gateway: their last spans land.
        settings = stack.enter_context(run_receiver(settings))
        bring_up = settings.gateway.mode == "bring_up"
        by_variant: dict[str, RunGateway] = {}
        default: RunGateway | None = None
        if not bring_up:
            default = RunGateway(settings)
            for name, variant in own.items():
                by_variant[name] = _target(settings, variant, environ)
        else:
            _check_model_keys(settings, workspace, plans, own, shared, model_proxy)
            log_dir = run_log_dir(report_dir)
            stack.callback(_remove_if_empty, log_dir)  # runs after every gateway's log is kept
            if shared:
                default = stack.enter_context(
                    brought_up(
                        settings,
                        workspace,
                        _agents(shared, settings),
                        log_dir,
                        model_proxy,
                        models=_models(shared),
                        stop=stop,
                    )
                )
            for name, variant in own.items():
                mine = [p for p in plans if p.variant is not None and p.variant.name == name]
                starting = brought_up(
                    settings,
                    workspace,
                    _agents(mine, settings),
                    log_dir,
                    model_proxy,
                    variant=GatewayVariant(
                        name,
                        overlay=_overlay(variant, mine, settings),
                        version=variant.openclaw_version,
                        env=dict(variant.env) or None,
                    ),
                    models=_models(mine),
                    stop=stop,
                )
                by_variant[name] = _started(stack, starting, settings, variant)
        started = [g for g in by_variant.values() if g.failed is None]
        if default is None and not started:  # nothing to run on: the first failure says why
            raise GatewayError(next(iter(by_variant.values())).failed or "no gateway started")
        yield RunGateways(default or started[0], by_variant)


def _started(
    stack: ExitStack,
    starting: AbstractContextManager[RunGateway],
    settings: Settings,
    variant: VariantSettings,
) -> RunGateway:
    """A variant's gateway, started. For an advisory variant's gateway that did not start, a
    stand-in with the reason its runs are skipped: an advisory variant never fails the job, so
    the other variants go on."""
    try:
        return stack.enter_context(starting)
    except GatewayError as exc:
        if variant.required:
            raise
        return RunGateway(
            settings,
            failed=f"not run: the gateway of advisory variant {variant.name} did not start "
            f"({exc}); the other variants went on",
        )


def own_gateways(plans: Sequence[ScenarioPlan], bring_up: bool) -> dict[str, VariantSettings]:
    """The variants that run on a gateway of their own, by name, in plan order: those with
    their own config, release, environment or URL, and (bring-up) those whose conversations
    take their thinking level from the gateway's default."""
    own: dict[str, VariantSettings] = {}
    for p in plans:
        variant = p.variant
        if variant is None or variant.name in own:
            continue
        by_default = (
            bring_up
            and p.scenario.turns is not None
            and thinking_for_conversation(variant) == "gateway"
        )
        if variant.own_gateway or by_default:
            own[variant.name] = variant
    return own


def _overlay(
    variant: VariantSettings, plans: Sequence[ScenarioPlan], settings: Settings
) -> dict[str, Any] | None:
    """The config overlay of a variant's own gateway: its `openclaw_config`, and when its
    conversations take the thinking level from the gateway, that level as the default of every
    agent and of each agent its plans run (an agent's own `thinkingDefault` in your
    openclaw.json would otherwise win). Merged last: the variant's `thinking` is the more
    specific of the two."""
    conversing = any(p.scenario.turns is not None for p in plans)
    if not conversing or thinking_for_conversation(variant) != "gateway":
        return variant.openclaw_config
    from clawspec.gateway.bringup import deep_merge

    level = {"thinkingDefault": variant.thinking}
    agents = {agent: dict(level) for agent in _agents(plans, settings)}
    overlay = {"agents": {"defaults": dict(level), "entries": agents}}
    return deep_merge(variant.openclaw_config or {}, overlay)


def _remove_if_empty(folder: Path) -> None:
    """A run whose gateway never started leaves no empty log folder behind."""
    with suppress(OSError):
        folder.rmdir()


def _agents(plans: Sequence[ScenarioPlan], settings: Settings) -> list[str]:
    return sorted({p.agent_id(settings.default_agent_id) for p in plans})


def _models(plans: Sequence[ScenarioPlan]) -> dict[str, str]:
    """The model overrides the plans' hook requests carry, in order, each with the (first)
    variant that names it."""
    models: dict[str, str] = {}
    for p in plans:
        if p.variant is not None and p.variant.model:
            models.setdefault(p.variant.model, p.variant.name)
    return models


def _check_model_keys(
    settings: Settings,
    workspace: Path,
    plans: Sequence[ScenarioPlan],
    own: Mapping[str, VariantSettings],
    shared: Sequence[ScenarioPlan],
    model_proxy: ProxyRoutes | None,
) -> None:
    """Stop before any gateway starts when one of them would call a model provider without a
    key (its agents' models and the variants' `model`): every gateway's missing keys at once,
    not the second gateway's after the first one has started."""
    if settings.gateway.command:
        return  # the user's own gateway command may get its keys from anywhere
    from clawspec.gateway.bringup import ModelKeyMissing, missing_model_keys
    from clawspec.gateway.managed import bring_up_options

    options = []
    if shared:
        options.append(
            bring_up_options(
                settings, workspace, _agents(shared, settings), model_proxy, models=_models(shared)
            )
        )
    for name, variant in own.items():
        mine = [p for p in plans if p.variant is not None and p.variant.name == name]
        gateway = GatewayVariant(
            name, overlay=_overlay(variant, mine, settings), env=dict(variant.env) or None
        )
        options.append(
            bring_up_options(
                settings,
                workspace,
                _agents(mine, settings),
                model_proxy,
                variant=gateway,
                models=_models(mine),
            )
        )
    missing = list(dict.fromkeys(m for o in options for m in missing_model_keys(o)))
    if missing:
        raise ModelKeyMissing("\n".join(missing))


def _target(settings: Settings, variant: VariantSettings, environ: Mapping[str, str]) -> RunGateway:
    """A target-mode variant's gateway: its URL, its own hooks and gateway tokens when it names
    them, and its own state folder (never the default gateway's: its records are not there)."""
    update: dict[str, object] = {
        "gateway_base_url": variant.gateway_base_url,
        "openclaw_state_dir": variant.openclaw_state_dir,
    }
    for field_name, setting, whose in (
        ("hooks_token_env", "hooks_token", "hooks token"),
        ("gateway_token_env", "gateway_auth_token", "gateway token (its gateway.auth.token)"),
    ):
        name = getattr(variant, field_name)
        if not name:
            continue
        token = environ.get(name)
        if not token:
            raise ConfigError(
                f"variant '{variant.name}': {field_name} names {name}, which is not set: set it "
                f"to the {whose} of {variant.gateway_base_url}"
            )
        from clawspec.secrets import register

        register(token)  # masked in every output from now on
        update[setting] = SecretStr(token)
    return RunGateway(settings.model_copy(update=update))

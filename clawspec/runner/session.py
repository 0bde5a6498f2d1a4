"""One run, once its contracts are loaded: select, bring the gateway (and the model-traffic
proxy) up, run the scenarios, write every report (also when interrupted).

Its module-level imports are what running needs beyond loading: `clawspec.api.run` imports this
module while a large suite's files are parsed in another process (contracts/parse_ahead.py).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import requests

from clawspec.assertions import REGISTRY
from clawspec.assertions.base import Need
from clawspec.ci_context import CIContext
from clawspec.crash import CRASH_LOG_NAME, Faults, InternalError, Noted, is_bug
from clawspec.errors import BringUpStopped, GatewayError
from clawspec.gateway.client import START_OR_POINT_ELSEWHERE, require_reachable
from clawspec.gateway.timezone import gateway_timezone
from clawspec.net import sessions
from clawspec.reports.publish import publish, report_json_path
from clawspec.runner.budget import Budget, limits_for
from clawspec.runner.finish import RunResult, finish
from clawspec.runner.gateways import RunGateways, gateways_for_run
from clawspec.runner.lanes import worker_count
from clawspec.runner.outages import Outages
from clawspec.runner.plans import this_part
from clawspec.runner.run import GuardedListener, RunListener, execute, unrun_report
from clawspec.runner.scenario import RunEnv, ScenarioPlan
from clawspec.runner.traffic import (
    require_variant_cassettes,
    traffic_for_run,
    traffic_warnings,
)
from clawspec.status import Status

if TYPE_CHECKING:
    from clawspec.config.settings import Settings, VariantSettings
    from clawspec.contracts.loaded import Loaded
    from clawspec.gateway.managed import RunGateway
    from clawspec.reports.model import RunReport


def run_loaded(
    handed: list[Loaded],
    environ: Mapping[str, str],
    listener: RunListener,
    *,
    scenarios: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
    stop: threading.Event | None = None,
    abandon: threading.Event | None = None,
) -> RunResult:
    """Run what `handed` (a list holding the one `Loaded`, which this takes out) selects.

    The contracts are taken out of the list so that no caller's frame keeps them alive: they are
    let go once the scenarios have run, before the results become models again, so a big run's
    memory never holds both.

    A bug anywhere in the run (the listener, a lane thread, a report writer) does not cost the
    reports: what finished is written, then `InternalError` is raised (clawspec/crash.py).
    """
    loaded = handed.pop()
    settings = loaded.settings
    context = CIContext.from_environ(environ)  # once per run: the shard, the outputs, history
    faults = Faults()
    listener = GuardedListener(listener, faults)
    plans, as_shard = _this_part(loaded, context, listener, scenarios, tags, exclude_tags)
    # Nothing to run (no scenario a change touches, more shards than scenarios): a run that
    # says so, and passes.
    if not plans:
        return finish(as_shard(unrun_report([], "")), settings, environ, context=context)
    report_dir = report_json_path(settings).parent
    talking = _conversations(plans, settings)
    try:
        with (
            traffic_for_run(settings, loaded.workspace, listener.on_warning) as traffic,
            # The gateway logs go under the report folder, not beside a JSON report elsewhere.
            gateways_for_run(
                settings, loaded.workspace, plans, Path(settings.report_dir), environ, traffic, stop
            ) as gateways,
        ):
            kept_logs = [g.kept_log for g in _all(gateways) if g.kept_log is not None]
            gateway = gateways.default
            settings = gateway.settings
            http = _http_session(worker_count(settings.concurrency, len(plans)))
            # A brought-up gateway was waited for; a target is asked whether it answers.
            outages = (
                _require_targets(http, gateways, talking, loaded.settings.variants)
                if settings.gateway.mode != "bring_up"
                else Outages()
            )
            env = RunEnv(
                settings,
                loaded.workspace,
                gateway_client(settings, http, listener),
                http,
                environ,
                gateway_timezone(settings),
                stop=stop or threading.Event(),
                # The command line as typed, for the crash log of an assertion's bug.
                bugs=Noted(report_dir, ["clawspec", *sys.argv[1:]]),
                gateway_log=gateway.log_path,
                traffic=traffic,
                openclaw_version=gateway.openclaw_version,
                kept_log=gateway.kept_log,
                outages=outages,  # shared by every variant's environment
                gateway_ended=gateway.ended,
            )
            from clawspec.evidence.trace import run_backend

            # Also without trace assertions: a scenario that does not pass looks its trace up
            # for the report.
            if needs_trace(plans) or settings.trace_backend != "none":
                env.trace_backend = run_backend(settings, environ)
            env.by_variant = _variant_envs(env, gateways, listener)
            listener.on_run_start(len(plans))
            budget = Budget(limits_for(settings, context))
            outcome = execute(plans, env, listener, settings.concurrency, abandon, faults, budget)
    except BringUpStopped:
        # Interrupted before anything ran: the gateway is stopped, the reports say so (130).
        return finish(_interrupted_at_start(as_shard, plans), settings, environ, context=context)
    except GatewayError as exc:
        # Nothing could run; CI still gets reports that say why, then exit 3.
        _publish_unreachable(as_shard(unrun_report(plans, str(exc))), settings, context)
        raise
    except Exception as exc:
        if not is_bug(exc):
            raise
        # A bug around the scenarios (the proxy, the gateway, the trace backend): the reports
        # say that nothing finished and why.
        faults.add("the run", exc)
        why = f"not run: an internal error in ClawSpec stopped the run (see {CRASH_LOG_NAME})"
        report = as_shard(unrun_report(plans, why, Status.SKIP))
        _finish_broken(report, settings, environ, context, faults, report_dir)
    if traffic is not None:  # said once the proxy has stopped: late calls are counted too
        with faults.guard("the model-traffic summary"):
            results = outcome.run.results.results()
            invoked = any(s.run_id and s.gateway_run_id for s in results)
            for warning in traffic_warnings(traffic, invoked):
                listener.on_warning(warning)
    # The contracts are done with: let them go before the results become models again.
    del loaded, plans, talking
    built: RunReport | None = None
    with faults.guard("building the report"):
        built = as_shard(outcome.run.report())
    if faults or built is None:
        _finish_broken(built, settings, environ, context, faults, report_dir)
    report = built
    return replace(
        finish(
            report,
            settings,
            environ,
            context=context,
            gateway_unreachable=outcome.gateway_unreachable,
        ),
        gateway_logs=[path for path in kept_logs if path.is_file()],
    )


def _interrupted_at_start(
    as_shard: Callable[[RunReport], RunReport], plans: list[ScenarioPlan]
) -> RunReport:
    why = "not run: the run was interrupted while the gateway was starting"
    return as_shard(unrun_report(plans, why, Status.SKIP)).model_copy(update={"interrupted": True})


def _publish_unreachable(unrun: RunReport, settings: Settings, context: CIContext) -> None:
    """Reports that say why nothing could run (exit 3 follows). The outcome's code is imported
    here: the report model it needs must not load before a run's first hook request."""
    from clawspec.reports.outcome import decide, policy_for

    verdict = decide(unrun, policy_for(settings, gateway_unreachable=True))
    publish(unrun, settings, context=context, outcome=verdict)


def _conversations(plans: list[ScenarioPlan], settings: Settings) -> list[ScenarioPlan]:
    """The plans that are conversations; in target mode, a variant whose thinking level cannot
    reach them is refused here, before any gateway is contacted."""
    talking = [p for p in plans if p.scenario.turns is not None]
    if talking and settings.gateway.mode != "bring_up":
        from clawspec.runner.chat_gateways import refuse_thinking

        refuse_thinking(talking)
    return talking


def _require_targets(
    http: requests.Session,
    gateways: RunGateways,
    talking: list[ScenarioPlan],
    variants: Sequence[VariantSettings],
) -> Outages:
    """Target mode, before any run: every gateway answers, and those that hold conversations
    have a gateway token (checked before any is contacted) and a chat endpoint that takes it.

    A gateway only advisory variants use that does not answer stops nothing else: it is
    returned as an outage, its runs are skipped with the reason, the others go on (an advisory
    variant never fails the job). Any other is a GatewayError (exit 3) naming its variant."""
    chat: list[Any] = []
    if talking:
        from clawspec.runner.chat_gateways import chat_gateways, require_tokens

        chat = chat_gateways(gateways, talking)
        require_tokens(chat)
    advisory = {v.name for v in variants if not v.required}
    # Each gateway's URL: the variants with their own gateway there (none: the run's own).
    users: dict[str, list[str]] = {gateways.default.settings.gateway_base_url: []}
    for name, gateway in gateways.by_variant.items():
        users.setdefault(gateway.settings.gateway_base_url, []).append(name)
    down = Outages()
    unreachable: set[str] = set()
    for url, own in users.items():
        mine = bool(own) and url != gateways.default.settings.gateway_base_url  # variants only
        names = ", ".join(own)
        hint = f"Start it, or correct the gateway_base_url of variant {names}"
        try:
            require_reachable(http, url, hint if mine else START_OR_POINT_ELSEWHERE)
        except GatewayError as exc:
            if not mine or not set(own) <= advisory:
                raise GatewayError(f"variant {names}: {exc}" if mine else str(exc)) from None
            unreachable.add(url)
            down.record_gateway(
                url,
                f"not run: the gateway of advisory variant {names} could not be reached "
                f"({exc}); the other variants went on",
            )
    # Not asked again through its chat endpoint: its conversations are skipped with the rest.
    chat = [target for target in chat if target.settings.gateway_base_url not in unreachable]
    if chat:
        from clawspec.runner.chat_gateways import require_chat

        require_chat(http, chat)
    return down


def _all(gateways: RunGateways) -> list[Any]:
    """Each gateway once (the default may be a variant's own, standing in)."""
    found = [gateways.default, *gateways.by_variant.values()]
    return [g for i, g in enumerate(found) if not any(g is other for other in found[:i])]


def _variant_envs(env: RunEnv, gateways: RunGateways, listener: RunListener) -> dict[str, RunEnv]:
    """The environment of each variant with a gateway of its own: that gateway's settings,
    client and log; everything else (the stop event, the trace backend, the proxy) shared."""
    return {
        name: replace(
            env,
            settings=gateway.settings,
            client=gateway_client(gateway.settings, env.http, listener),
            gateway_log=gateway.log_path,
            openclaw_version=gateway.openclaw_version,
            kept_log=gateway.kept_log,
            by_variant={},
            outages=env.outages if gateway.failed is None else _down(gateway),
            gateway_ended=gateway.ended,
        )
        for name, gateway in gateways.by_variant.items()
    }


def _down(gateway: RunGateway) -> Outages:
    """The outages of a variant whose gateway did not start: none of its runs starts."""
    down = Outages()
    down.record_gateway(gateway.settings.gateway_base_url, gateway.failed or "")
    return down


def _this_part(
    loaded: Loaded,
    context: CIContext,
    listener: RunListener,
    scenarios: Sequence[str],
    tags: Sequence[str],
    exclude_tags: Sequence[str],
) -> tuple[list[ScenarioPlan], Callable[[RunReport], RunReport]]:
    """What this machine runs (`selection.this_part`), its recordings checked, and what its
    report says about that part."""
    part = this_part(loaded, context, listener.on_warning, scenarios, tags, exclude_tags)
    require_variant_cassettes(part.plans, loaded.settings, loaded.workspace)
    return part.plans, part.mark


def _http_session(workers: int) -> requests.Session:
    """One pooled connection per worker (requests keeps 10 by default; more would be opened
    and thrown away for every hook request at higher concurrency)."""
    return sessions.session(pool=max(10, workers))


def _finish_broken(
    report: RunReport | None,
    settings: Settings,
    environ: Mapping[str, str],
    context: CIContext,
    faults: Faults,
    report_dir: Path,
) -> NoReturn:
    """Write every output of a run a bug stopped (not stored as a baseline), then raise."""
    written: list[Path] = []
    if report is not None:
        try:
            written = finish(report, settings, environ, context=context, complete=False).written
        except InternalError as late:
            faults.extend(late.faults)
            written = late.written
    faults.raise_if_any(report_dir=report_dir, written=written)
    raise AssertionError("unreachable: the run has faults")


def needs_trace(plans: Sequence[ScenarioPlan]) -> bool:
    """True when a selected scenario has a trace assertion (the registry says which need it)."""
    return any(
        Need.TRACE in REGISTRY[assertion.type].needs
        for plan in plans
        for assertion in plan.scenario.assertions()
    )


def gateway_client(settings: Settings, http: requests.Session, listener: RunListener) -> Any:
    """The client for each trigger mode (hooks: hook token; webhook: gateway token)."""
    from clawspec.gateway.client import HooksClient, RoutingClient, WebhookClient

    hooks_token = settings.hooks_token.get_secret_value() if settings.hooks_token else None
    auth = settings.gateway_auth_token
    webhook_token = auth.get_secret_value() if auth else hooks_token
    return RoutingClient(
        {
            "hooks": HooksClient(
                settings.gateway_base_url,
                settings.hooks_path,
                hooks_token,
                http,
                on_warning=listener.on_warning,
            ),
            "webhook": WebhookClient(
                settings.gateway_base_url, settings.gateway_webhook_endpoint, webhook_token, http
            ),
        }
    )

"""The Python API: `clawspec.validate(...)` and `clawspec.run(...)`, used by the CLI too."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec.config import Settings, load_settings, locate_config
from clawspec.contracts.discovery import discover
from clawspec.errors import ExitCode, GatewayError, UsageError
from clawspec.secrets import register_settings, scoped

# Only what loading and validating need is imported at module level: `clawspec validate` must
# not import HTTP clients, the runner or the report writers; `run` imports them when called.
# The contract loader (and the assertion models it builds) is imported once the files are
# known, while they are being parsed (`load`).
if TYPE_CHECKING:
    import requests

    from clawspec.contracts.loader import LoadedContract
    from clawspec.reports.model import RunReport, ShardInfo
    from clawspec.runner.run import RunListener
    from clawspec.runner.scenario import ScenarioPlan

# Re-exported: part of the Python API (`clawspec.api.finish`, `RunResult`, `Loaded`).
from clawspec.gateway.timezone import gateway_timezone
from clawspec.runner.finish import RunResult, finish, save_baseline
from clawspec.runner.loaded import Loaded

__all__ = [
    "Loaded",
    "RunResult",
    "finish",
    "gateway_timezone",
    "load",
    "plan",
    "run",
    "save_baseline",
    "shard_plans",
    "validate",
]


class _Quiet:
    def on_run_start(self, total: int, secrets: list[str]) -> None:
        pass

    def on_scenario_done(self, result: Any) -> None:
        pass

    def on_warning(self, message: str) -> None:
        pass


def load(
    paths: Sequence[str | Path],
    *,
    config: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    parse_ahead: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> Loaded:
    """Read the configuration and load and validate every contract named by `paths`.

    With `parse_ahead` (the CLI), a large suite's files are parsed in a forked process while
    this one builds the assertion models and runs `meanwhile` (see contracts/parse_ahead.py).
    """
    from clawspec.contracts.limits import ContractLimits
    from clawspec.contracts.parse_ahead import parsing_ahead

    environ = dict(os.environ if environ is None else environ)
    paths = list(paths) or ["."]
    settings = load_settings(locate_config(config, Path(paths[0])), environ, flags)
    # Before any contract is read: what the contracts reference is masked from here on.
    register_settings(settings, environ)
    workspace = (settings.workspace or Path.cwd()).resolve()
    files = discover(paths, settings.scenario_patterns)
    limits = ContractLimits.from_settings(settings)
    with parsing_ahead(files, enabled=parse_ahead, limits=limits) as ahead:
        if meanwhile is not None:
            meanwhile()
        from clawspec.contracts.loader import load_contracts

        parsed = ahead.results() if ahead is not None else None
        loaded = load_contracts(files, workspace, environ, parsed, limits)
        return Loaded(settings, workspace, loaded)


def validate(paths: Sequence[str | Path], **options: Any) -> list[LoadedContract]:
    """Load and validate contracts; raise ContractError listing every problem."""
    return load(paths, **options).contracts


def plan(
    loaded: Loaded,
    scenarios: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
) -> list[ScenarioPlan]:
    """Select the scenarios to run, in contract order."""
    from clawspec.contracts.loader import select_scenarios
    from clawspec.runner.scenario import ScenarioPlan

    chosen = select_scenarios(loaded.contracts, scenarios, tags, exclude_tags)
    if not chosen:
        raise UsageError("no scenario matches the given --scenario/--tag/--exclude-tag filters")
    return [ScenarioPlan(contract, index, scenario) for contract, index, scenario in chosen]


def shard_plans(
    plans: Sequence[ScenarioPlan],
    settings: Settings,
    environ: Mapping[str, str],
    warn: Callable[[str], None],
) -> tuple[list[ScenarioPlan], ShardInfo | None]:
    """This machine's part of the selection (`shard`), in contract order, and its report block.

    Contracts are all loaded and validated before this, so a broken contract fails every
    shard, not only the one that would have run it.
    """
    if not settings.shard:
        return list(plans), None
    from clawspec.sharding.durations import durations_for
    from clawspec.sharding.split import resolve_shard, split_selection

    shard = resolve_shard(settings.shard, environ)
    if shard is None:
        warn("--shard auto: CI_NODE_INDEX/CI_NODE_TOTAL are not set; running the whole selection")
        return list(plans), None
    durations = durations_for(settings, environ, warn)
    part = split_selection([p.id for p in plans], shard, durations)
    return [plans[i] for i in part.positions], part.info


def needs_trace(plans: Sequence[ScenarioPlan]) -> bool:
    """True when a selected scenario has a trace assertion (the registry says which need it)."""
    from clawspec.assertions import REGISTRY
    from clawspec.assertions.base import Need

    return any(
        Need.TRACE in REGISTRY[assertion.type].needs
        for plan in plans
        for assertion in (*plan.scenario.given, *plan.scenario.then)
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


# What running needs beyond loading (HTTP client, gateway, runner, report writers).
_RUN_MODULES = (
    "requests",
    "clawspec.gateway.managed",
    "clawspec.reports.publish",
    "clawspec.runner.lanes",
    "clawspec.runner.run",
    "clawspec.runner.scenario",
    "clawspec.runner.traffic",
)


def _import_runner() -> None:
    """`run` imports its modules while a large suite's files are parsed in another process."""
    import importlib

    for name in _RUN_MODULES:
        importlib.import_module(name)


@scoped  # the run's secrets registry (the CLI's, else one for this call): clawspec/secrets.py
def run(
    paths: Sequence[str | Path],
    *,
    config: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    scenarios: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
    listener: RunListener | None = None,
    stop: threading.Event | None = None,
    abandon: threading.Event | None = None,
    parse_ahead: bool = False,
) -> RunResult:
    """Run the selected scenarios and write the reports (also when interrupted).

    `parse_ahead`: as for `load`; the runner's modules are imported while the files are parsed.
    """
    from clawspec.speed.collector import collector_paused

    # Modules and contracts live until the run ends: the collector would only re-scan them
    # before the first hook request (see speed/collector.py).
    with collector_paused():
        environ = dict(os.environ if environ is None else environ)
        loaded = load(
            paths,
            config=config,
            environ=environ,
            flags=flags,
            parse_ahead=parse_ahead,
            meanwhile=_import_runner,
        )
        import requests

        from clawspec.gateway.managed import gateway_for_run
        from clawspec.reports.publish import publish, report_json_path
        from clawspec.runner.lanes import worker_count
        from clawspec.runner.run import execute, unrun_report
        from clawspec.runner.scenario import RunEnv
        from clawspec.runner.traffic import traffic_for_run, traffic_warnings
    settings = loaded.settings
    listener = listener or _Quiet()
    selection = plan(loaded, scenarios, tags, exclude_tags)
    plans, shard = shard_plans(selection, settings, environ, listener.on_warning)

    def as_shard(report: RunReport) -> RunReport:
        return report.model_copy(update={"shard": shard}) if shard else report

    if not plans:  # more shards than scenarios: this one has nothing to run, and says so
        return finish(as_shard(unrun_report([], "")), settings, environ)
    agent_ids = {p.agent_id(settings.default_agent_id) for p in plans}
    report_dir = report_json_path(settings).parent
    try:
        with (
            traffic_for_run(settings, loaded.workspace, listener.on_warning) as traffic,
            gateway_for_run(settings, loaded.workspace, agent_ids, report_dir, traffic) as gateway,
        ):
            settings = gateway.settings
            http = requests.Session()
            # One pooled connection per worker (requests keeps 10 by default; more would be
            # opened and thrown away for every hook request at higher concurrency).
            pool = max(10, worker_count(settings.concurrency, len(plans)))
            http.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=pool))
            http.mount("https://", requests.adapters.HTTPAdapter(pool_maxsize=pool))
            env = RunEnv(
                settings,
                loaded.workspace,
                gateway_client(settings, http, listener),
                http,
                environ,
                gateway_timezone(settings),
                stop=stop or threading.Event(),
                gateway_log=gateway.log_path,
                traffic=traffic,
            )
            if needs_trace(plans):
                from clawspec.evidence.trace import run_backend

                env.trace_backend = run_backend(settings, environ)
            listener.on_run_start(len(plans), settings.secret_values())
            outcome = execute(plans, env, listener, settings.concurrency, abandon)
    except GatewayError as exc:
        # Nothing could run; CI still gets reports that say why, then exit 3.
        publish(as_shard(unrun_report(plans, str(exc))), settings, environ)
        raise
    if traffic is not None:  # said once the proxy has stopped: late calls are counted too
        results = outcome.run.results.results()
        invoked = any(s.run_id and s.gateway_run_id for s in results)
        for warning in traffic_warnings(traffic, invoked):
            listener.on_warning(warning)
    # The contracts are done with: let them go before the results become models again, so a
    # big run's memory never holds both (issue 14).
    del loaded, selection, plans
    report = outcome.run.report()
    result = finish(as_shard(report), settings, environ)
    if outcome.gateway_unreachable and not report.interrupted:
        result = replace(result, exit_code=ExitCode.GATEWAY)
    return result

"""The gateway of one `clawspec run`: the configured target, or one brought up for the run."""

from __future__ import annotations

import itertools
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from clawspec.config.settings import Settings
from clawspec.errors import GatewayError
from clawspec.text import redact

if TYPE_CHECKING:
    from clawspec.gateway.bringup import BringUpOptions, RunningGateway
    from clawspec.traffic.routing import ProxyRoutes

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class RunGateway:
    """Settings pointing at the gateway in effect, its log when ClawSpec knows it, and where
    the log is kept after the run (a brought-up gateway's, secrets masked)."""

    settings: Settings
    log_path: Path | None = None
    kept_log: Path | None = None
    # Why it is not there: an advisory variant's gateway that did not start (its runs are
    # skipped with this reason; the run goes on).
    failed: str | None = None
    # A brought-up gateway: how its process ended, once it has (GatewayProcess.ended).
    ended: Callable[[], str | None] | None = None
    # The OpenClaw release it runs, when known (a brought-up gateway's launcher says; a target
    # is not asked): stored with the model calls it records, named when a replay misses.
    openclaw_version: str | None = None


@contextmanager
def gateway_for_run(
    settings: Settings,
    workspace: Path,
    agent_ids: Iterable[str],
    log_dir: Path,
    model_proxy: ProxyRoutes | None = None,
) -> Iterator[RunGateway]:
    """Yield the gateway to run against; in bring-up mode start it and always stop it.

    With the `local` trace backend (explicit, or the default in bring-up mode) an OTLP receiver
    runs for the run (see `trace_receiver`); in bring-up mode ClawSpec's plugin exports to it.

    Raises GatewayError (exit 3) when bring-up fails. After the run the gateway's log is copied
    into `log_dir` (secrets masked; see `run_log_dir`) and its private state folder is removed.
    """
    with run_receiver(settings) as effective:
        if effective.gateway.mode != "bring_up":
            yield RunGateway(effective)
            return
        # The receiver (entered first) stops after the gateway: the plugin's last spans land.
        with brought_up(effective, workspace, agent_ids, log_dir, model_proxy) as gateway:
            yield gateway


@contextmanager
def run_receiver(settings: Settings) -> Iterator[Settings]:
    """With the `local` trace backend, run the OTLP receiver and yield settings pointing at it;
    else yield `settings` as they are."""
    with ExitStack() as stack:
        if uses_local_backend(settings):
            endpoint = stack.enter_context(trace_receiver(settings))
            settings = settings.model_copy(
                update={
                    "observability": settings.observability.model_copy(
                        update={"backend": "local", "url": endpoint}
                    )
                }
            )
        yield settings


def uses_local_backend(settings: Settings) -> bool:
    """`observability.backend: local`, or no backend configured in bring-up mode."""
    backend = settings.observability.backend
    return backend == "local" or (backend is None and settings.gateway.mode == "bring_up")


@contextmanager
def trace_receiver(settings: Settings) -> Iterator[str]:
    """Yield the endpoint (base URL) of the OTLP receiver the run's spans go to.

    - `observability.url` set and something already listening there: use it (a receiver the user
      keeps running, `python -m clawspec.traces.receiver`); LocalBackend asks it over HTTP.
    - `observability.url` set to a free loopback port: start an in-process receiver there.
    - no url: an in-process receiver on a free port (bring-up: ClawSpec configures the plugin),
      or on 127.0.0.1:4318 (target mode: point your gateway's exporter there); if 4318 is taken,
      use whatever listens there, as above.
    """
    # Imported here: the receiver (http.server, OTLP decoding) is needed only with this backend,
    # and everything `clawspec run` imports before its first hook request delays that request.
    from clawspec.traces.receiver import DEFAULT_PORT, OtlpReceiver, normalize_endpoint

    url = settings.observability.url
    if url:
        endpoint = normalize_endpoint(url)
        parts = urlsplit(endpoint)
        host, port = parts.hostname or "", parts.port
        if host not in LOOPBACK_HOSTS or port is None or _listening(host, port):
            yield endpoint
            return
    else:
        host = "127.0.0.1"
        port = 0 if settings.gateway.mode == "bring_up" else DEFAULT_PORT
    receiver = OtlpReceiver(port, host)
    try:
        receiver.start()
    except OSError:
        yield f"http://{host}:{port}"  # taken meanwhile: read whatever answers there
        return
    try:
        yield receiver.endpoint
    finally:
        receiver.stop()


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class GatewayVariant:
    """What makes a brought-up gateway a variant's own: its config overlay, OpenClaw release and
    environment (None everywhere: the run's default gateway)."""

    name: str
    overlay: dict[str, Any] | None = None
    version: str | None = None
    env: dict[str, str] | None = None


@contextmanager
def brought_up(
    settings: Settings,
    workspace: Path,
    agent_ids: Iterable[str],
    log_dir: Path,
    model_proxy: ProxyRoutes | None = None,
    *,
    variant: GatewayVariant | None = None,
    models: Mapping[str, str] | None = None,
    stop: threading.Event | None = None,
) -> Iterator[RunGateway]:
    """Start a gateway from the run's generated config (a variant's overlay merged last; its
    OpenClaw release installed on first use), yield it, always stop it. `models`: the hook
    requests' model overrides (model -> the variant naming it), made usable in its config.
    `stop` set while it starts: it is stopped and BringUpStopped raised."""
    from clawspec.gateway.bringup import GatewayProcess

    command = settings.gateway.command
    if variant is not None and variant.version:
        from clawspec.gateway.install import InstallError, ensure_openclaw

        try:
            command = [str(ensure_openclaw(variant.version)), "gateway", "run"]
        except InstallError as exc:
            said = str(exc)  # the installer's own messages name the release already
            if not said.startswith("cannot install"):
                said = f"cannot install OpenClaw {variant.version}: {said}"
            raise GatewayError(f"variant '{variant.name}': {said}") from None
    options = bring_up_options(
        settings, workspace, agent_ids, model_proxy, variant=variant, models=models
    )
    process = GatewayProcess(replace(options, command=command), stop)
    name = f"openclaw-gateway-{variant.name}.log" if variant else "openclaw-gateway.log"
    kept = log_dir / name
    whose = f" for variant '{variant.name}'" if variant else ""
    # Starting and waiting for /readyz takes a minute or more on a busy machine: say so, or
    # the install line is followed by silence until the first verdict.
    _progress(f"starting the OpenClaw gateway{whose} (its log: {kept})")
    started = time.monotonic()
    try:
        with process as gateway:
            _progress(f"gateway{whose} ready in {time.monotonic() - started:.0f} s")
            yield _running(settings, gateway, kept, process.ended)
    finally:
        # Also when it never got ready: what it wrote is kept where the progress line said,
        # and its private folder (the generated config holding the run's tokens) goes.
        written = process.written
        if written is not None:
            _keep_log(written, kept)
        if process.state_dir is not None:
            shutil.rmtree(process.state_dir, ignore_errors=True)


def _running(
    settings: Settings, gateway: RunningGateway, kept: Path, ended: Callable[[], str | None]
) -> RunGateway:
    """The run's settings pointing at the started gateway; `ended` says how its process ended."""
    return RunGateway(
        settings.model_copy(
            update={
                "gateway_base_url": gateway.base_url,
                "hooks_path": gateway.hooks_path,
                "hooks_token": SecretStr(gateway.hooks_token),
                "gateway_auth_token": SecretStr(gateway.gateway_token),
                "plugin_output": str(gateway.plugin_output_path),
                # Its run records (the replies) are in the state folder it was started with.
                "openclaw_state_dir": str(gateway.state_dir),
            }
        ),
        gateway.log_path,
        kept,
        ended=ended,
        openclaw_version=gateway.openclaw_version,
    )


def bring_up_options(
    settings: Settings,
    workspace: Path,
    agent_ids: Iterable[str],
    model_proxy: ProxyRoutes | None = None,
    *,
    variant: GatewayVariant | None = None,
    models: Mapping[str, str] | None = None,
) -> BringUpOptions:
    """How `brought_up` starts a gateway (the command: the run's; a variant's release is
    installed only when its gateway starts)."""
    from clawspec.gateway.bringup import BringUpOptions

    local = settings.observability.backend == "local" and settings.observability.url
    return BringUpOptions(
        command=settings.gateway.command,
        # A relative openclaw.json is relative to the workspace (the clawspec.yaml folder).
        user_config=workspace / settings.gateway.config if settings.gateway.config else None,
        ready_timeout_s=settings.gateway.ready_timeout,
        # A fixed port is the default gateway's; a variant's takes a free one.
        port=settings.gateway.port if variant is None else None,
        agent_ids=sorted(set(agent_ids)),
        default_workspace=workspace,
        otlp_endpoint=settings.observability.url if local else None,
        model_proxy=model_proxy,
        extra_config=variant.overlay if variant is not None else None,
        env=variant.env if variant is not None and variant.env else None,
        models=tuple(models or {}),
        model_variants=dict(models or {}),
    )


# Under the report folder, each run's brought-up gateway logs get a folder of their own.
GATEWAY_LOGS_DIR = "gateway-logs"


def run_log_dir(report_dir: Path, now: datetime | None = None) -> Path:
    """Reserve this run's folder for its gateway logs: `<report_dir>/gateway-logs/<UTC start,
    20260101T120000Z>` (`-2`, `-3`… when a run that started in the same second has it).

    A folder per run, not one file in the report folder: the next run must not overwrite the
    log of the run before, which a developer may still be reading. Created here (mkdir fails
    on a taken name), so two runs at once cannot pick the same one.
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    for attempt in itertools.count(1):
        folder = report_dir / GATEWAY_LOGS_DIR / (stamp if attempt == 1 else f"{stamp}-{attempt}")
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        except OSError:
            pass  # unwritable: keeping the log fails quietly, as with a missing log
        return folder
    raise AssertionError("unreachable")


def _progress(message: str) -> None:
    """A progress line on stderr, like the installer's (never in a report)."""
    print(f"clawspec: {message}", file=sys.stderr, flush=True)


def _keep_log(source: Path, target: Path) -> None:
    """Copy the gateway's log for CI artifacts, masking the run's secrets line by line (the
    bring-up tokens were registered when they were made)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with (
            source.open(encoding="utf-8", errors="replace") as src,
            target.open("w", encoding="utf-8") as dst,
        ):
            for line in src:
                dst.write(redact(line))
    except OSError:
        pass  # a missing log is reported by the assertions that need it

"""Bring-up mode: start a real OpenClaw gateway with a generated config, wait until ready, stop it.

The gateway runs in its own process group (`start_new_session=True`) because it starts helper
processes; stopping signals the whole group (SIGTERM, then SIGKILL after a grace period) so no
process outlives ClawSpec.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from clawspec.errors import BringUpStopped, ConfigError, GatewayError
from clawspec.gateway import json5
from clawspec.gateway.bootstrap_files import BootstrapGuard
from clawspec.gateway.watchdog import Watchdog
from clawspec.net import loopback
from clawspec.secrets import config_credentials
from clawspec.secrets import register as register_secrets
from clawspec.text import redact, strip_ansi
from clawspec.traffic.routing import ProxyRoutes, route_providers

if TYPE_CHECKING:
    import requests

    from clawspec.gateway.model_keys import ProviderUse

PLUGIN_DIR = Path(__file__).resolve().parent / "openclaw_plugin"
PLUGIN_ID = "clawspec"
HOOKS_PATH = "/hooks"
PROBE_S = 2.0  # each /readyz probe ends within this (a deadline: see clawspec/net/deadline.py)
# Headless: no update checks, no mDNS, no telemetry.
_QUIET_ENV = {
    name: "1"
    for name in ("CI", "OPENCLAW_NO_AUTO_UPDATE", "OPENCLAW_DISABLE_BONJOUR", "DO_NOT_TRACK")
}


def loopback_unproxied(env: dict[str, str]) -> dict[str, str]:
    """`no_proxy` and `NO_PROXY` for the gateway: the environment's own entries (OpenClaw reads
    `no_proxy` first, as undici does) and the loopback names.

    OpenClaw sends its model calls through `http_proxy` / `https_proxy` when they are set, to
    a provider on loopback too unless NO_PROXY names it; and a proxy cannot reach this
    machine's loopback (its own is another). With a proxy in the environment and no NO_PROXY
    for loopback, as on many company machines and self-hosted runners, every model call of a
    brought-up gateway to ClawSpec's traffic proxy or a local provider failed.
    """
    given = env.get("no_proxy", env.get("NO_PROXY", ""))
    entries = [entry for entry in re.split(r"[,\s]+", given) if entry]
    entries += [name for name in loopback.NAMES if name not in entries]
    combined = ",".join(entries)
    return {"no_proxy": combined, "NO_PROXY": combined}


@dataclass(frozen=True)
class BringUpOptions:
    command: list[str] | None = None  # None: <openclaw launcher> gateway run
    user_config: Path | None = None  # the user's openclaw.json (JSON5) to merge our settings into
    port: int | None = None  # None: a free port on 127.0.0.1
    ready_timeout_s: float = 120.0
    stop_grace_s: float = 10.0
    agent_ids: list[str] | tuple[str, ...] = ("main",)
    extra_config: dict[str, Any] | None = None  # deep-merged last
    state_dir: Path | None = None  # None: a fresh private temp dir
    env: dict[str, str] | None = field(default=None)
    # agents.defaults.workspace when neither the user's config nor extra_config sets one
    # (ClawSpec passes its own workspace root so contract paths and agent files line up).
    default_workspace: Path | None = None
    # OTLP/HTTP endpoint ClawSpec's plugin exports spans to (its `otlpEndpoint`); None: no export.
    otlp_endpoint: str | None = None
    # Hermetic runs: the model traffic proxy every provider's baseUrl is pointed at.
    model_proxy: ProxyRoutes | None = None
    # Models hook requests name (variants' per-request overrides): made usable in the config.
    models: tuple[str, ...] = ()
    # The variant that names each of `models`, for the message when its provider has no key.
    model_variants: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunningGateway:
    base_url: str
    hooks_token: str = field(repr=False)
    gateway_token: str = field(repr=False)
    hooks_path: str
    log_path: Path
    plugin_output_path: Path
    state_dir: Path
    workspace: Path
    pid: int
    # The OpenClaw release it runs, when its launcher says (gateway/release.py); None when that
    # cannot be told (a command of the user's own that is not an openclaw package's launcher).
    openclaw_version: str | None = None


def find_openclaw() -> str | None:
    """$CLAWSPEC_OPENCLAW_BIN, else `openclaw` on PATH, else the pinned version in ClawSpec's
    cache if it is installed there (`ensure_openclaw` installs it)."""
    from clawspec.gateway.install import OPENCLAW_VERSION, install_dir, installed, node_package

    from_env = os.environ.get("CLAWSPEC_OPENCLAW_BIN")
    if from_env:
        return from_env
    on_path = shutil.which("openclaw")
    if on_path:
        return on_path
    with contextlib.suppress(GatewayError):  # no Node package for this platform
        cached = installed(install_dir(), OPENCLAW_VERSION, f"{node_package()}@24")
        return str(cached) if cached else None
    return None


def _release(launcher: str) -> str | None:
    """The release `launcher` runs (recorded with the model traffic), else None."""
    from clawspec.gateway.release import launcher_release

    release = launcher_release(launcher)
    return release.version if release is not None else None


def gateway_config(log_path: Path | None) -> dict[str, Any] | None:
    """The config of the brought-up gateway that writes `log_path`: both are in its state
    folder (logs/openclaw.log, openclaw.json). None for another gateway's log or none."""
    if log_path is None or log_path.name != "openclaw.log" or log_path.parent.name != "logs":
        return None
    try:
        loaded = json.loads((log_path.parent.parent / "openclaw.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


class ModelKeyMissing(ConfigError):
    """A provider the gateway's config names has no API key: found before anything runs."""


def missing_model_keys(options: BringUpOptions) -> list[str]:
    """One message per model provider the gateway would call without a key: the agents'
    models and the hook requests' overrides (`options.models`), in its generated config."""
    from clawspec.gateway.model_keys import missing_key_messages

    uses = _provider_uses(options, {**os.environ, **(options.env or {})})
    user_config = options.user_config
    return missing_key_messages(uses, user_config.name if user_config else None)


def models_used(options: BringUpOptions) -> list[str]:
    """The models the gateway's agents and the hook requests' overrides would call, in its
    generated config (OpenClaw's default where the config names none)."""
    return list(dict.fromkeys(use.model for use in _provider_uses(options, dict(os.environ))))


def _provider_uses(options: BringUpOptions, environ: dict[str, str]) -> list[ProviderUse]:
    """Which provider each agent and hook override would call, read from the config bring-up
    would generate (where its files would go does not matter here)."""
    from clawspec.gateway.model_keys import provider_uses

    placeholder = Path(tempfile.gettempdir())
    config = build_config(
        options,
        state_dir=placeholder,
        port=0,
        gateway_token="",
        hooks_token="",
        plugin_output=placeholder,
    )
    overrides = {m: options.model_variants.get(m, "") for m in options.models}
    return provider_uses(config, options.agent_ids, environ, overrides)


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Return base with `over` merged in: nested dicts merge, everything else is replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def build_config(
    options: BringUpOptions,
    *,
    state_dir: Path,
    port: int,
    gateway_token: str,
    hooks_token: str,
    plugin_output: Path,
) -> dict[str, Any]:
    """The gateway config: the user's file (if any), our settings over it, extra_config last."""
    base: dict[str, Any] = {}
    if options.user_config is not None:
        try:
            loaded = json5.loads(Path(options.user_config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GatewayError(f"cannot read OpenClaw config {options.user_config}: {exc}") from exc
        if not isinstance(loaded, dict):
            raise GatewayError(f"OpenClaw config {options.user_config} is not an object")
        base = loaded
        # A model provider may echo its key in an error the gateway logs or returns.
        register_secrets(*config_credentials(base, os.environ))
    plugin_config: dict[str, Any] = {"outputPath": str(plugin_output)}
    if options.otlp_endpoint:
        plugin_config["otlpEndpoint"] = options.otlp_endpoint
    ours: dict[str, Any] = {
        "gateway": {
            "mode": "local",
            "port": port,
            "bind": "loopback",
            "auth": {"mode": "token", "token": gateway_token},
            "tailscale": {"mode": "off"},
            "http": {"endpoints": {"chatCompletions": {"enabled": True}}},
        },
        "discovery": {"mdns": {"mode": "off"}},
        "update": {"checkOnStart": False},
        "telemetry": {"enabled": False},
        "logging": {"level": "debug", "file": str(state_dir / "logs" / "openclaw.log")},
        "diagnostics": {"enabled": True},
        "hooks": {
            "enabled": True,
            "token": hooks_token,
            "path": HOOKS_PATH,
            "allowedAgentIds": list(options.agent_ids),
            "allowRequestSessionKey": True,
        },
        "plugins": {
            "entries": {PLUGIN_ID: {"enabled": True, "config": plugin_config}},
        },
    }
    config = deep_merge(base, ours)
    # Lists are replaced by deep_merge; for plugins we add ours to the user's instead.
    plugins = config["plugins"]
    load = plugins.setdefault("load", {})
    load["paths"] = _with(load.get("paths"), str(PLUGIN_DIR))
    if "allow" in plugins or not base:
        plugins["allow"] = _with(plugins.get("allow"), PLUGIN_ID)
    agents = config.setdefault("agents", {})
    entries = agents.setdefault("entries", {})
    for agent_id in options.agent_ids:
        entries.setdefault(agent_id, {"name": agent_id})
    if options.extra_config:
        config = deep_merge(config, options.extra_config)
    defaults = config.setdefault("agents", {}).setdefault("defaults", {})
    defaults.setdefault("workspace", str(options.default_workspace or state_dir / "workspace"))
    for model in options.models:
        make_usable(config, model)
    return config


def make_usable(config: dict[str, Any], model: str) -> None:
    """Let hook requests select `model` (`provider/model`, or an alias): add it to every model
    allow-list the config sets (`agents.defaults.modelPolicy.allow`, an agent's own), and to
    its provider's model list when the config lists that provider's models (a copy of the
    first entry's metadata with the id replaced). A provider the config does not list is left
    to OpenClaw's own catalog."""
    agents = config.get("agents") or {}
    policies = [agents.get("defaults") or {}] + [
        entry for entry in (agents.get("entries") or {}).values() if isinstance(entry, dict)
    ]
    for owner in policies:
        allow = (owner.get("modelPolicy") or {}).get("allow")
        if isinstance(allow, list) and allow and not model_allowed(model, allow):
            owner["modelPolicy"]["allow"] = [*allow, model]
    provider, _, model_id = model.partition("/")
    entry = ((config.get("models") or {}).get("providers") or {}).get(provider)
    if not model_id or not isinstance(entry, dict) or not isinstance(entry.get("models"), list):
        return
    listed = [m for m in entry["models"] if isinstance(m, dict)]
    if any(m.get("id") == model_id for m in listed):
        return
    template = {k: v for k, v in (listed[0] if listed else {}).items() if k not in ("id", "name")}
    entry["models"] = [*entry["models"], {"id": model_id, "name": model_id, **template}]


def model_allowed(model: str, allow: list[Any]) -> bool:
    """Whether an allow-list admits `model`: an exact entry, or a trailing-`*` prefix."""
    for entry in allow:
        text = str(entry)
        if text == model or (text.endswith("*") and model.startswith(text[:-1])):
            return True
    return False


def _with(items: Any, item: str) -> list[Any]:
    out = list(items) if isinstance(items, list) else []
    return out if item in out else [*out, item]


def _tail(path: Path, n: int) -> list[str]:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return [line.rstrip("\n") for line in deque(fh, maxlen=n)]
    except OSError:
        return []


def _condense_log_line(line: str) -> str:
    """tslog JSON line -> 'time LEVEL message' (the raw JSON is hard to read in an error)."""
    try:
        rec = json.loads(line)
        level = rec.get("_meta", {}).get("logLevelName", "")
        return f"{rec.get('time', '')} {level} {rec.get('message') or rec.get('1') or ''}".strip()
    except (ValueError, AttributeError):
        return line


def _proc_stats() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, pgrp) for every live, non-zombie process (scan /proc: no psutil)."""
    out: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # After the ')' that ends the command name: state, ppid, pgrp, ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z":
            out[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return out


def _family(leader: int) -> set[int]:
    """The leader's process group plus all its descendants (some helpers call setsid)."""
    stats = _proc_stats()
    members = {pid for pid, (_, pgrp) in stats.items() if pgrp == leader}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    todo = [leader]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in members:
                members.add(child)
                todo.append(child)
    members.discard(os.getpid())
    return members


def _signal_all(pgid: int, pids: set[int], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


ENDED_WAIT_S = 1.0
# How long a gateway gets to stop by itself once the run was interrupted (OpenClaw ignores a
# second SIGTERM while it drains its work, which an interrupted run abandons anyway).
INTERRUPTED_STOP_GRACE_S = 2.0


class GatewayProcess:
    """Context manager: `with GatewayProcess(opts) as gw:` yields a ready RunningGateway."""

    def __init__(
        self,
        options: BringUpOptions,
        stop: threading.Event | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.options = options
        # The run's first interrupt: waiting for readiness ends at once (nothing has run yet).
        self._stop = stop or threading.Event()
        # What `stop()` times its grace period by (tests: a fake clock and its recorded sleep).
        self._clock = clock
        self._sleep = sleep
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._output_path: Path | None = None
        self._log_path: Path | None = None
        self._state_dir: Path | None = None
        self._watchdog: Watchdog | None = None
        self._bootstrap: BootstrapGuard | None = None
        self.running: RunningGateway | None = None

    @property
    def state_dir(self) -> Path | None:
        """Its private folder (the generated config, its tokens), once made."""
        return self._state_dir

    @property
    def written(self) -> Path | None:
        """What it wrote: its log, or (when it stopped before writing one) its own output."""
        for path in (self._log_path, self._output_path):
            if path is not None and path.is_file():
                return path
        return None

    # -- start -------------------------------------------------------------------------------
    def __enter__(self) -> RunningGateway:
        try:
            return self._start()
        except BaseException:
            self.stop()  # also on KeyboardInterrupt while waiting: never leave it behind
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _start(self) -> RunningGateway:
        opts = self.options
        if not opts.command:  # ClawSpec's own OpenClaw: check its keys before installing it
            self._check_model_keys()
        command = list(opts.command) if opts.command else self._default_command()
        if "/" in command[0] and not os.path.isabs(command[0]):
            # The gateway starts in its state folder; keep `./bin/openclaw` meaning ours.
            command[0] = os.path.abspath(command[0])
        port = opts.port if opts.port is not None else _free_port()
        if not _port_is_free(port):
            raise GatewayError(
                f"gateway bring-up failed: port {port} on 127.0.0.1 is already in use"
            )
        state_dir = self._state_dir = self._make_state_dir()
        gateway_token, hooks_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        register_secrets(gateway_token, hooks_token)  # masked in every output from now on
        plugin_output = state_dir / "logs" / "clawspec-plugin.jsonl"
        config = build_config(
            opts,
            state_dir=state_dir,
            port=port,
            gateway_token=gateway_token,
            hooks_token=hooks_token,
            plugin_output=plugin_output,
        )
        if opts.model_proxy is not None:
            opts.model_proxy.route(route_providers(config, opts.model_proxy.base_url))
        workspace = Path(str(config["agents"]["defaults"]["workspace"])).expanduser()
        workspace.mkdir(parents=True, exist_ok=True)
        self._bootstrap = BootstrapGuard.before(workspace)  # taken back out in `stop`
        (state_dir / "logs").mkdir(parents=True, exist_ok=True)
        self._log_path = Path(config["logging"]["file"])
        config_path = state_dir / "openclaw.json"
        fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds tokens
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(config, fh, indent=2)
        env = {
            **os.environ,
            **_QUIET_ENV,
            "HOME": str(state_dir),
            "OPENCLAW_STATE_DIR": str(state_dir),
            "OPENCLAW_CONFIG_PATH": str(config_path),
            "CLAWSPEC_PLUGIN_OUTPUT": str(plugin_output),
            **(opts.env or {}),
        }
        env.update(loopback_unproxied(env))
        self._output_path = state_dir / "gateway.out"
        with self._output_path.open("wb") as out:
            try:
                self._proc = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=state_dir,
                    start_new_session=True,
                )
            except OSError as exc:
                raise GatewayError(
                    f"gateway bring-up failed: cannot start {shlex.join(command)}: {exc.strerror}"
                ) from exc
        # Stops it, restores the workspace and removes its state folder should ClawSpec be
        # killed without its cleanup.
        self._watchdog = Watchdog(
            self._proc.pid, state_dir, self.options.stop_grace_s, self._bootstrap
        )
        base_url = f"http://127.0.0.1:{port}"
        self._wait_ready(base_url, command)
        self.running = RunningGateway(
            base_url=base_url,
            hooks_token=hooks_token,
            gateway_token=gateway_token,
            hooks_path=HOOKS_PATH,
            log_path=self._log_path,
            plugin_output_path=plugin_output,
            state_dir=state_dir,
            workspace=workspace,
            pid=self._proc.pid,
            openclaw_version=_release(command[0]),
        )
        return self.running

    def _default_command(self) -> list[str]:
        launcher = find_openclaw()
        if launcher is None:
            from clawspec.gateway.install import ensure_openclaw

            launcher = str(ensure_openclaw())  # first use: the pinned version, into the cache
        return [launcher, "gateway", "run"]

    def _check_model_keys(self) -> None:
        """Stop before anything starts when a model provider the gateway would use has no key.

        Only for the OpenClaw ClawSpec starts itself: a `gateway.command` of the user's own may
        get its keys from anywhere."""
        missing = missing_model_keys(self.options)
        if missing:
            raise ModelKeyMissing("\n".join(missing))

    def _make_state_dir(self) -> Path:
        if self.options.state_dir is None:
            return Path(tempfile.mkdtemp(prefix="clawspec-gateway-"))  # mode 0700
        path = Path(self.options.state_dir)
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path

    def _wait_ready(self, base_url: str, command: list[str]) -> None:
        assert self._proc is not None
        from clawspec.net import sessions

        deadline = time.monotonic() + self.options.ready_timeout_s
        last = "no answer"
        session = sessions.session()
        while True:
            if self._stop.is_set():
                raise BringUpStopped("interrupted while the gateway was starting")
            code = self._proc.poll()
            if code is not None:
                self._fail(f"gateway exited with code {code} before it was ready", command)
            ready, last = self._probe(session, base_url, deadline)
            if ready:
                return
            if time.monotonic() >= deadline:
                self._fail(
                    f"gateway not ready after {self.options.ready_timeout_s:g}s "
                    f"(last /readyz: {last})",
                    command,
                )
            self._stop.wait(0.25)

    @staticmethod
    def _probe(session: requests.Session, base_url: str, ready_by: float) -> tuple[bool, str]:
        """GET /readyz; only a JSON body with ready:true counts (the UI answers 200 to anything).
        Each probe ends within 2 s (a deadline, not a read timeout) and by `ready_by`."""
        import requests

        from clawspec.net.deadline import Deadline, request

        left = min(PROBE_S, max(ready_by - time.monotonic(), 0.1))
        try:
            resp = request(session, "GET", f"{base_url}/readyz", deadline=Deadline.after(left))
        except requests.RequestException as exc:
            return False, type(exc).__name__
        if not resp.ok:  # 503 while starting
            return False, f"HTTP {resp.status_code}"
        try:
            data = json.loads(resp.content)
        except ValueError:
            return False, f"HTTP {resp.status_code}, not JSON"
        return isinstance(data, dict) and data.get("ready") is True, f"HTTP {resp.status_code}"

    def _fail(self, what: str, command: list[str]) -> None:
        self.stop()
        lines = self.last_log_lines(20)
        message = f"gateway bring-up failed: {what}; command: {shlex.join(command)}"
        raise GatewayError("\n".join([message, *lines]) if lines else message)

    # -- stop --------------------------------------------------------------------------------
    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL after stop_grace_s. Idempotent, lock-free."""
        proc = self._proc
        if proc is None or self._stopped:
            return
        self._stopped = True
        pgid = proc.pid  # start_new_session: the leader's pid is the group id
        # Collect descendants before signalling: once the leader dies they are re-parented.
        family = _family(pgid) if proc.poll() is None else set()
        _signal_all(pgid, family, signal.SIGTERM)
        # After an interrupt what the gateway still drains is abandoned work, and a CI runner
        # that cancels a job kills ClawSpec soon after its first signal: the reports, written
        # once the gateway is stopped, must not wait out the whole grace period for it.
        grace = self.options.stop_grace_s
        if self._stop.is_set():
            grace = min(grace, INTERRUPTED_STOP_GRACE_S)
        deadline = self._clock() + grace
        alive = family
        while self._clock() < deadline:
            proc.poll()  # reap the leader so it does not linger as a zombie
            alive = family & set(_proc_stats())
            if proc.returncode is not None and not alive and not _family(pgid):
                break
            self._sleep(0.1)
        _signal_all(pgid, alive | _family(pgid), signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if self._watchdog is not None:  # stopped here: the watchdog has nothing to do
            self._watchdog.release()
        if self._bootstrap is not None:  # the gateway is gone: nothing writes them again
            self._bootstrap.restore()

    def ended(self, wait_s: float = ENDED_WAIT_S) -> str | None:
        """How the gateway's process ended, when it did on its own (not stopped by ClawSpec):
        'exited with code 1', 'was killed by signal 9'; None while it runs. Asked after a
        request found it gone: a dying process closes its sockets before its exit status is
        there to read, so that is waited for a moment (`wait_s`)."""
        proc = self._proc
        if proc is None or self._stopped:
            return None
        try:
            code = proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None
        return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    # -- logs --------------------------------------------------------------------------------
    def last_log_lines(self, n: int = 20) -> list[str]:
        """Last lines of the captured stdout/stderr, then of the JSON log; secrets redacted."""
        lines: list[str] = []
        if self._output_path is not None:
            lines += [f"[stdout] {line}" for line in _tail(self._output_path, n) if line.strip()]
        if self._log_path is not None:
            lines += [f"[log] {_condense_log_line(line)}" for line in _tail(self._log_path, n)]
        # The gateway colours its console output: its escapes are no part of a message.
        lines = [redact(strip_ansi(line)) for line in lines]
        return lines[-n:] if len(lines) > n else lines

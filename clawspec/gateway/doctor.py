"""What `clawspec doctor` finds: the gateway a run would use, and what is missing for it.

Exit codes follow `clawspec run`'s: 2 for what the configuration lacks (a model key, an
unreadable OpenClaw config), 3 for a gateway that cannot be started or reached (no OpenClaw and
no npm to install it, nothing answering at the target URL), 0 when nothing is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec.config.settings import Settings, VariantSettings
from clawspec.errors import ExitCode
from clawspec.gateway import json5

if TYPE_CHECKING:
    from clawspec.gateway.model_keys import ProviderUse

_RANK = {ExitCode.OK: 0, ExitCode.USAGE: 1, ExitCode.GATEWAY: 2}


@dataclass
class Diagnosis:
    lines: list[str] = field(default_factory=list)
    exit_code: ExitCode = ExitCode.OK

    def ok(self, what: str, text: str) -> None:
        self.lines.append(f"  ok       {what}: {text}")

    def note(self, what: str, text: str) -> None:
        """Something a run may need, depending on its assertions: not missing."""
        self.lines.append(f"  note     {what}: {text}")

    def missing(self, what: str, text: str, code: ExitCode) -> None:
        self.lines.append(f"  MISSING  {what}: {text}")
        if _RANK[code] > _RANK[self.exit_code]:
            self.exit_code = code


def diagnose(
    settings: Settings,
    config_path: Path | None,
    environ: Mapping[str, str],
    variants: Sequence[VariantSettings] = (),
    conversations: Sequence[str] = (),
) -> Diagnosis:
    """What a run would use and lack; `variants`: the selected ones, whose models need keys;
    `conversations`: the selected contracts' conversations (named), which need the chat
    endpoint and the gateway token."""
    report = Diagnosis()
    where = f"config {config_path}" if config_path else "no clawspec.yaml (defaults)"
    mode = settings.gateway.mode
    report.lines.append(f"clawspec doctor: {where}; gateway mode {mode}")
    if mode == "bring_up":
        _bring_up(report, settings, environ, variants)
        if conversations:
            report.ok(
                "conversations",
                f"{_counted(conversations)}: bring-up makes the gateway token and turns the "
                "chat endpoint on",
            )
        report.ok("state dir", "bring-up's own (each gateway's run records are read there)")
    else:
        _target(report, settings)
        _target_chat(report, settings, environ, variants, conversations)
        _state_dirs(report, settings, variants)
    report.lines.append(
        "nothing missing" if report.exit_code == ExitCode.OK else "something is missing (above)"
    )
    return report


def _bring_up(
    report: Diagnosis,
    settings: Settings,
    environ: Mapping[str, str],
    variants: Sequence[VariantSettings],
) -> None:
    from clawspec.gateway.bringup import find_openclaw
    from clawspec.gateway.install import (
        CACHE_ENV,
        OPENCLAW_VERSION,
        cache_root,
        install_dir,
        node_package,
    )

    cache = cache_root(environ)
    source = f"${CACHE_ENV}" if environ.get(CACHE_ENV) else "default"
    report.ok("cache", f"{cache} ({source})")
    if settings.gateway.command:
        report.ok("openclaw", f"gateway.command: {' '.join(settings.gateway.command)}")
    else:
        launcher = find_openclaw()
        if launcher is not None:
            report.ok("openclaw", f"{launcher}, {_version([launcher, '--version'])}")
            node_home = install_dir(OPENCLAW_VERSION, environ) / "node" / "node_modules"
            with_node = Path(launcher).parent.parent / "node" / "node_modules"
            ours = with_node == node_home
            node = node_home / node_package() / "bin" / "node" if ours else shutil.which("node")
            if node:
                report.ok("node", f"{node}, {_version([str(node), '--version'])}")
        elif shutil.which("npm"):
            report.ok(
                "openclaw",
                f"not installed yet: the first bring-up installs OpenClaw {OPENCLAW_VERSION} "
                f"and Node 24 into {install_dir(OPENCLAW_VERSION, environ)} with npm "
                f"({shutil.which('npm')})",
            )
        else:
            report.missing(
                "openclaw",
                "not found (CLAWSPEC_OPENCLAW_BIN, PATH, the cache) and no npm to install it: "
                "install Node.js with npm, or set CLAWSPEC_OPENCLAW_BIN",
                ExitCode.GATEWAY,
            )
    config = _openclaw_config(report, settings)
    if config is None:
        return
    _model_keys(report, config, settings, environ, variants)


def _openclaw_config(report: Diagnosis, settings: Settings) -> dict[str, Any] | None:
    name = settings.gateway.config
    if not name:
        report.ok("config", "none (gateway.config unset): OpenClaw's defaults")
        return {}
    path = (settings.workspace or Path.cwd()) / name
    try:
        loaded = json5.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        report.missing("config", f"cannot read {path}: {exc}", ExitCode.USAGE)
        return None
    if not isinstance(loaded, dict):
        report.missing("config", f"{path} is not an object", ExitCode.USAGE)
        return None
    report.ok("config", str(path))
    return loaded


def _model_keys(
    report: Diagnosis,
    config: dict[str, Any],
    settings: Settings,
    environ: Mapping[str, str],
    variants: Sequence[VariantSettings],
) -> None:
    """The keys of the providers every gateway of a run would call: the agents' models and the
    selected variants' `model` on the default gateway, then each variant with a gateway of its
    own (its config overlay and environment applied), as `clawspec run` checks them."""
    from clawspec.gateway.bringup import deep_merge
    from clawspec.gateway.model_keys import provider_uses

    entries = ((config.get("agents") or {}).get("entries") or {}).keys()
    agents = list(dict.fromkeys([settings.default_agent_id, *entries]))
    name = Path(settings.gateway.config).name if settings.gateway.config else None
    shared = [v for v in variants if not v.own_gateway]
    seen: set[tuple[str, str, bool | None]] = set()
    overrides: dict[str, str] = {}
    for v in shared:
        if v.model:
            overrides.setdefault(v.model, v.name)  # the first variant naming it, as the run says
    extra = [v.agent_id for v in shared if v.agent_id]
    for use in provider_uses(config, [*agents, *extra], environ, overrides):
        _model_key(report, use, name, seen)
    for variant in (v for v in variants if v.own_gateway):
        merged = deep_merge(config, variant.openclaw_config or {})
        env = {**environ, **variant.env}
        mine = [*agents, variant.agent_id] if variant.agent_id else agents
        own = {variant.model: variant.name} if variant.model else {}
        for use in provider_uses(merged, mine, env, own):
            _model_key(report, use, name, seen)


def _model_key(
    report: Diagnosis, use: ProviderUse, name: str | None, seen: set[tuple[str, str, bool | None]]
) -> None:
    from clawspec.gateway.model_keys import missing_key_messages

    if (use.provider, use.model, use.has_key) in seen:
        return  # another gateway of the run calls it the same way: said once
    seen.add((use.provider, use.model, use.has_key))
    if use.has_key is None:
        report.ok("model key", f"{use.provider}: not checked (a provider ClawSpec does not know)")
    elif use.has_key:
        who = f", variant '{use.variant}'" if use.variant else ""
        report.ok("model key", f"{use.provider} ({use.model}{who}): found")
    else:
        (message,) = missing_key_messages([use], name)
        report.missing("model key", message, ExitCode.USAGE)


def _target(report: Diagnosis, settings: Settings) -> None:
    import requests

    from clawspec.net import sessions

    url = settings.gateway_base_url.rstrip("/")
    try:
        with sessions.session() as http:
            answer = http.get(f"{url}/readyz", timeout=3)
        ready = answer.ok and (answer.json() or {}).get("ready") is True
    except (requests.RequestException, ValueError, AttributeError) as exc:
        report.missing(
            "gateway",
            f"nothing answers at {url} ({type(exc).__name__}): start your gateway, set "
            "gateway_base_url, or run with --bring-up",
            ExitCode.GATEWAY,
        )
    else:
        if ready:
            report.ok("gateway", f"{url} is ready")
        else:
            report.missing(
                "gateway",
                f"{url} answers but is not ready: {url}/readyz answered HTTP "
                f'{answer.status_code} without {{"ready": true}} (an OpenClaw gateway says so '
                "once it can take runs, 503 before; a 200 page instead is not an OpenClaw "
                "gateway's answer: check gateway_base_url)",
                ExitCode.GATEWAY,
            )
    if settings.hooks_token is None:
        report.missing(
            "hooks token",
            "CLAWSPEC_HOOKS_TOKEN is not set (the gateway's hooks.token)",
            ExitCode.USAGE,
        )
    else:
        report.ok("hooks token", "set")


def _counted(conversations: Sequence[str]) -> str:
    first = conversations[0]
    more = len(conversations) - 1
    return f"{first}" + (f" and {more} more conversation{'s' if more > 1 else ''}" if more else "")


def _target_chat(
    report: Diagnosis,
    settings: Settings,
    environ: Mapping[str, str],
    variants: Sequence[VariantSettings],
    conversations: Sequence[str],
) -> None:
    """Conversations go through each gateway's chat endpoint with its gateway token: the token
    must be set and the endpoint must take it (as `clawspec run` checks before any run); a
    variant's `thinking` cannot reach them on a gateway ClawSpec did not start."""
    if not conversations:
        return
    from clawspec.config.variants import thinking_for_conversation
    from clawspec.gateway.chat import TOKEN_VARIABLES

    held = _counted(conversations)
    gateways: list[tuple[str, str, str | None, str]] = []  # (label, URL, token, its source)
    if any(v.gateway_base_url is None for v in variants) or not variants:
        token = settings.gateway_auth_token
        gateways.append(
            (
                "gateway token",
                settings.gateway_base_url,
                token.get_secret_value() if token is not None else None,
                TOKEN_VARIABLES,
            )
        )
    for variant in variants:
        if thinking_for_conversation(variant) == "gateway":
            report.missing(
                "thinking",
                f"variant '{variant.name}' sets thinking '{variant.thinking}', which cannot "
                f"apply to conversations ({held}) in target mode: OpenClaw's chat endpoint "
                "cannot set a thinking level per request; `clawspec run` refuses it",
                ExitCode.USAGE,
            )
        if variant.gateway_base_url is None:
            continue
        if variant.gateway_token_env:
            token_value = environ.get(variant.gateway_token_env) or None
            source = f"{variant.gateway_token_env} (variant '{variant.name}''s gateway_token_env)"
        else:
            token = settings.gateway_auth_token
            token_value = token.get_secret_value() if token is not None else None
            source = TOKEN_VARIABLES
        gateways.append(
            (f"variant '{variant.name}' token", variant.gateway_base_url, token_value, source)
        )
    for label, url, token_value, source in dict.fromkeys(gateways):
        if token_value is None:
            report.missing(
                label,
                f"conversations ({held}) go through the chat endpoint of {url} with the gateway "
                f"token, and none is set: set {source} to its gateway.auth.token",
                ExitCode.USAGE,
            )
            continue
        _chat_endpoint(report, label, url, token_value, source)


def _chat_endpoint(report: Diagnosis, label: str, url: str, token: str, source: str) -> None:
    from clawspec.gateway.chat import TOKEN_VARIABLES, ChatError, preflight
    from clawspec.net import sessions

    try:
        with sessions.session() as http:
            preflight(http, url, token)
    except ChatError as exc:
        text = str(exc).replace(TOKEN_VARIABLES, source)
        code = ExitCode.USAGE if exc.kind in ("auth", "endpoint") else ExitCode.GATEWAY
        report.missing("chat endpoint", text, code)
    else:
        report.ok(label, "set")
        report.ok("chat endpoint", f"{url}/v1/models answers with the token")


def _state_dirs(report: Diagnosis, settings: Settings, variants: Sequence[VariantSettings]) -> None:
    """Where each gateway's run records are read: needed by the reply and run-record
    assertions of one-message scenarios (a conversation's reply comes with its answer)."""
    from clawspec.gateway.trajectory.layout import holds_agent_stores

    run_setting = "openclaw_state_dir (CLAWSPEC_OPENCLAW_STATE_DIR or OPENCLAW_STATE_DIR)"
    places = [("state dir", settings.openclaw_state_dir, run_setting)]
    places += [
        (
            f"variant '{v.name}' state dir",
            v.openclaw_state_dir,
            f"the variant's openclaw_state_dir (for {v.gateway_base_url})",
        )
        for v in variants
        if v.gateway_base_url is not None
    ]
    for label, folder, setting in places:
        if folder is None:
            report.note(
                label,
                "not set: reply and run-record assertions of one-message scenarios are errors "
                f"without it; set {setting} to the gateway's state folder",
            )
        elif not Path(folder).is_dir():
            report.missing(label, f"{folder} is not a folder", ExitCode.USAGE)
        elif not holds_agent_stores(Path(folder)):
            report.note(
                label,
                f"{folder} has no agents/ folder: no agent has run with it yet, or it is not "
                "the gateway's state folder (the gateway's OPENCLAW_STATE_DIR, ~/.openclaw by "
                "default)",
            )
        else:
            report.ok(label, folder)


def _version(command: list[str]) -> str:
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=60, check=False, env=os.environ
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"does not run ({exc})"
    first = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return first[0] if proc.returncode == 0 and first else f"does not run (exit {proc.returncode})"


__all__ = ["Diagnosis", "diagnose"]

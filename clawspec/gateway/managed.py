"""The gateway of one `clawspec run`: the configured target, or one brought up for the run."""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from clawspec.config import Settings
from clawspec.text import redact


@dataclass(frozen=True)
class RunGateway:
    """Settings pointing at the gateway in effect, and its log when ClawSpec knows it."""

    settings: Settings
    log_path: Path | None = None


@contextmanager
def gateway_for_run(
    settings: Settings, workspace: Path, agent_ids: Iterable[str], report_dir: Path
) -> Iterator[RunGateway]:
    """Yield the gateway to run against; in bring-up mode start it and always stop it.

    Raises GatewayError (exit 3) when bring-up fails. After the run the gateway's log is copied
    into the report folder (secrets masked) and its private state folder is removed.
    """
    if settings.gateway.mode != "bring_up":
        yield RunGateway(settings)
        return
    from clawspec.gateway.bringup import BringUpOptions, GatewayProcess

    options = BringUpOptions(
        command=settings.gateway.command,
        # A relative openclaw.json is relative to the workspace (the clawspec.yaml folder).
        user_config=workspace / settings.gateway.config if settings.gateway.config else None,
        ready_timeout_s=settings.gateway.ready_timeout,
        agent_ids=sorted(set(agent_ids)),
        default_workspace=workspace,
    )
    process = GatewayProcess(options)
    with process as gateway:
        secrets = [gateway.hooks_token, gateway.gateway_token]
        effective = settings.model_copy(
            update={
                "gateway_base_url": gateway.base_url,
                "hooks_path": gateway.hooks_path,
                "hooks_token": SecretStr(gateway.hooks_token),
                "gateway_auth_token": SecretStr(gateway.gateway_token),
                "plugin_output": str(gateway.plugin_output_path),
            }
        )
        try:
            yield RunGateway(effective, gateway.log_path)
        finally:
            process.stop()
            _keep_log(gateway.log_path, report_dir / "openclaw-gateway.log", secrets)
            shutil.rmtree(gateway.state_dir, ignore_errors=True)


def _keep_log(source: Path, target: Path, secrets: list[str]) -> None:
    """Copy the gateway's log for CI artifacts, masking the run's tokens line by line."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with (
            source.open(encoding="utf-8", errors="replace") as src,
            target.open("w", encoding="utf-8") as dst,
        ):
            for line in src:
                dst.write(redact(line, secrets))
    except OSError:
        pass  # a missing log is reported by the assertions that need it

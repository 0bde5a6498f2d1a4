"""Where OpenClaw keeps its agents' stores under a gateway's state folder, and which agent a
session key names."""

from __future__ import annotations

from pathlib import Path

STORE_FILE = "openclaw-agent.sqlite"
SETTING_HINT = (
    "set openclaw_state_dir (environment CLAWSPEC_OPENCLAW_STATE_DIR or OPENCLAW_STATE_DIR, "
    "action input openclaw_state_dir) to the state folder of the gateway (its "
    "OPENCLAW_STATE_DIR)"
)


def store_path(state_dir: Path, agent: str) -> Path:
    """Where OpenClaw keeps `agent`'s store under the gateway's state folder."""
    return Path(state_dir) / "agents" / agent / "agent" / STORE_FILE


def holds_agent_stores(state_dir: Path) -> bool:
    """Whether any agent ever ran with `state_dir` as its gateway's state folder (the folder
    `store_path` puts every agent's store in exists)."""
    return (Path(state_dir) / "agents").is_dir()


def agent_of(session_key: str) -> str | None:
    """The agent an agent-scoped session key names (`agent:<id>:…`), else None."""
    parts = session_key.split(":", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "agent" and parts[1] else None

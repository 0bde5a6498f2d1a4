"""A skill's `requires.env` (SKILL.md front matter, `metadata.openclaw.requires.env`, or the
legacy `metadata.clawdbot`): the variables OpenClaw needs set before it offers the skill to an
agent. Each must be in the gateway's environment or given by the OpenClaw config
(`skills.entries.<key>.env`, or `skills.entries.<key>.apiKey` for the skill's `primaryEnv`;
`<key>` is `metadata.openclaw.skillKey`, else the skill's name). Where one is unset the skill is
hidden: its scenarios fail for a reason the contract does not show. `init`, `doctor` and `lint`
say so (a warning: the variable may well be set where the contracts run).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _block(front: Mapping[str, Any]) -> dict[str, Any]:
    meta = front.get("metadata")
    block = meta.get("openclaw") or meta.get("clawdbot") if isinstance(meta, dict) else None
    return block if isinstance(block, dict) else {}


def required_env(front: Mapping[str, Any]) -> list[str]:
    """The names in `requires.env`, in order (not a list of names: none)."""
    requires = _block(front).get("requires")
    names = requires.get("env") if isinstance(requires, dict) else None
    if not isinstance(names, list):
        return []
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n.strip()))


def unset_env(
    front: Mapping[str, Any],
    environ: Mapping[str, str],
    openclaw_config: Mapping[str, Any] | None = None,
    folder: str = "",
) -> list[str]:
    """The `requires.env` names neither `environ` nor the OpenClaw config provides."""
    block = _block(front)
    key = str(block.get("skillKey") or front.get("name") or folder)
    skills = (openclaw_config or {}).get("skills")
    entries = skills.get("entries") if isinstance(skills, dict) else None
    entry = entries.get(key) if isinstance(entries, dict) else None
    entry = entry if isinstance(entry, dict) else {}
    given = set(entry.get("env") or {}) if isinstance(entry.get("env"), dict) else set()
    if entry.get("apiKey") and isinstance(block.get("primaryEnv"), str):
        given.add(block["primaryEnv"])
    return [n for n in required_env(front) if not environ.get(n) and n not in given]


def unset_message(names: list[str]) -> str:
    """e.g. "requires.env TRELLO_API_KEY, TRELLO_TOKEN not set here: …"."""
    return (
        f"requires.env {', '.join(names)} not set here: OpenClaw hides the skill from the agent "
        "where they are unset (set them where the contracts run, or give them in openclaw.json's "
        "skills.entries.<skill>.env)"
    )

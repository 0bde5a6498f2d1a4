"""What an OpenClaw workspace holds: its skills and agents, as `init` and `coverage` see them.

Skills are `skills/<name>/SKILL.md` (OpenClaw also finds grouped layouts such as
`skills/team/<name>/SKILL.md`; a folder with a SKILL.md ends the search below it). Agents are
folders holding a SOUL.md at any depth under `agents/` (`agents/<id>/SOUL.md`, or grouped as
`agents/marketing/<id>/SOUL.md`; a folder with a SOUL.md ends the search below it) and the agents
of the workspace's `openclaw.json` (`agents.entries`, or the legacy `agents.list`). An agent's id
is its folder name, never a path (legacy ClawSpec built it from the absolute path).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawspec.contracts.discovery import PRUNED_DIRS
from clawspec.lint.document import read_document

MAX_SKILL_DEPTH = 6  # OpenClaw searches skill roots up to 6 levels deep


@dataclass(frozen=True)
class Target:
    """A skill or an agent of the workspace."""

    kind: str  # skill | agent
    key: str  # `skills/newsletter`, `agents/brand`: the contract's `target.path`
    name: str  # skill name / agent id
    source: str | None = None  # SKILL.md / SOUL.md relative to the workspace, if any
    trigger: str | None = None  # a skill's slash command
    tools: tuple[str, ...] = ()  # declared tools, when the files say which


@dataclass
class Workspace:
    """The targets found, in a stable order, and the OpenClaw config read (if any)."""

    root: Path
    skills: list[Target] = field(default_factory=list)
    agents: list[Target] = field(default_factory=list)
    openclaw_config: Path | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def targets(self) -> list[Target]:
        return [*self.skills, *self.agents]


def _marked_files(base: Path, marker: str, max_depth: int | None = None) -> list[Path]:
    """Every `marker` file (SKILL.md, SOUL.md) in a folder below `base`, not below another."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(base):
        depth = len(Path(folder).relative_to(base).parts)
        if marker in files and depth > 0:
            found.append(Path(folder, marker))
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS and d != "tests")
        if max_depth is not None and depth >= max_depth:
            dirs[:] = []
    return sorted(found)


def _skill_files(root: Path) -> list[Path]:
    return _marked_files(root / "skills", "SKILL.md", MAX_SKILL_DEPTH)


def _words(value: Any) -> tuple[str, ...]:
    """`allowed-tools` is a space-delimited string in the AgentSkills spec; lists also occur."""
    if isinstance(value, str):
        return tuple(value.replace(",", " ").split())
    if isinstance(value, list):
        return tuple(str(v) for v in value if str(v).strip())
    return ()


def skill_trigger(front: dict[str, Any], folder: str) -> str:
    """The slash command: `command`, else the first of `triggers` (strings or `{command: …}`),
    else the skill's `name` (what OpenClaw registers), else the folder name."""
    candidates: list[Any] = [front.get("command")]
    triggers = front.get("triggers")
    for item in triggers if isinstance(triggers, list) else [triggers]:
        candidates.append(item.get("command") if isinstance(item, dict) else item)
    candidates += [front.get("name"), folder]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            text = candidate.strip()
            return text if text.startswith("/") else f"/{text}"
    return f"/{folder}"


def _skill(root: Path, path: Path) -> Target:
    doc = read_document(path, path.relative_to(root).as_posix())
    front = doc.frontmatter or {}
    folder = path.parent.name
    tools = _words(front.get("allowed-tools"))
    if front.get("command-dispatch") == "tool" and front.get("command-tool"):
        tools = (*tools, str(front["command-tool"]))
    name = str(front.get("name") or folder)
    return Target(
        "skill",
        path.parent.relative_to(root).as_posix(),
        name,
        doc.display,
        skill_trigger(front, folder),
        tuple(dict.fromkeys(tools)),
    )


def _openclaw_agents(config: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Agent id → declared tools (`tools.allow`), from `agents.entries` or `agents.list`."""
    agents = config.get("agents") if isinstance(config, dict) else None
    if not isinstance(agents, dict):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    entries = agents.get("entries")
    items = list(entries.items()) if isinstance(entries, dict) else []
    roster = agents.get("list")
    for item in roster if isinstance(roster, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            items.append((item["id"], item))
    for agent_id, entry in items:
        tools = entry.get("tools") if isinstance(entry, dict) else None
        allow = tools.get("allow") if isinstance(tools, dict) else None
        found[str(agent_id)] = _words(allow)
    return found


def read_openclaw_config(path: Path) -> dict[str, Any]:
    """Parse an openclaw.json (JSON5); raise ValueError with the file name when it cannot."""
    from clawspec.gateway.json5 import JSON5Error, loads

    try:
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, JSON5Error) as exc:
        raise ValueError(f"{path}: cannot read OpenClaw config: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: an OpenClaw config must be an object")
    return data


def skills_config(given: str | Path | None, root: Path) -> dict[str, Any] | None:
    """The OpenClaw config whose `skills.entries` may give a skill's `requires.env`: the one
    given (`gateway.config`), else the workspace's `openclaw.json`; None when there is none or
    it cannot be read (said elsewhere: `init`, `doctor`)."""
    path = Path(given) if given else root / "openclaw.json"
    try:
        return read_openclaw_config(path) if path.is_file() else None
    except ValueError:
        return None


def skills_missing_env(
    workspace: Workspace, environ: Mapping[str, str]
) -> list[tuple[Target, list[str]]]:
    """Each skill whose `requires.env` neither `environ` nor the OpenClaw config provides,
    with those names (clawspec/lint/requires.py)."""
    from clawspec.lint.requires import unset_env

    config = skills_config(workspace.openclaw_config, workspace.root)
    found = []
    for skill in workspace.skills:
        if skill.source is None:
            continue
        front = read_document(workspace.root / skill.source, skill.source).frontmatter or {}
        names = unset_env(front, environ, config, Path(skill.key).name)
        if names:
            found.append((skill, names))
    return found


def discover_workspace(root: Path, openclaw_config: Path | None = None) -> Workspace:
    """Find the workspace's skills and agents (never raises for a broken file)."""
    root = root.resolve()
    workspace = Workspace(root)
    workspace.skills = [_skill(root, path) for path in _skill_files(root)]
    config_path = openclaw_config or root / "openclaw.json"
    declared: dict[str, tuple[str, ...]] = {}
    if config_path.is_file():
        workspace.openclaw_config = config_path
        try:
            declared = _openclaw_agents(read_openclaw_config(config_path))
        except ValueError as exc:
            workspace.problems.append(str(exc))
    agents: dict[str, Target] = {}
    for soul in _marked_files(root / "agents", "SOUL.md"):
        agent_id = soul.parent.name
        key = soul.parent.relative_to(root).as_posix()
        source = soul.relative_to(root).as_posix()
        if agent_id in agents:  # agents/a/brand and agents/b/brand: one id, the first is kept
            workspace.problems.append(
                f"{source}: agent id '{agent_id}' is already {agents[agent_id].source}; ignored"
            )
            continue
        agents[agent_id] = Target("agent", key, agent_id, source, None, declared.get(agent_id, ()))
    for agent_id, tools in declared.items():
        agents.setdefault(
            agent_id, Target("agent", f"agents/{agent_id}", agent_id, None, None, tools)
        )
    workspace.agents = list(agents.values())
    return workspace

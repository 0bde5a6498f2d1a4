"""OpenClaw's workspace bootstrap files, taken back out of the user's repository after a run.

OpenClaw writes `AGENTS.md`, `SOUL.md`, `IDENTITY.md`, `USER.md` (and, in an empty workspace,
`BOOTSTRAP.md`) into every agent workspace it prepares, and `git init`s an agent workspace it
creates. In bring-up mode the workspace is the user's repository: the root for the default
agent, a folder per other agent (`brand/`). Turning the bootstrap off
(`agents.defaults.skipBootstrap`) would keep them out, but the agents would then run without
OpenClaw's workspace guidance in their prompts: not the agents a user's own gateway runs, and
not what recorded model traffic holds. So bring-up lets OpenClaw bootstrap as users' own gateways
do, and removes afterwards exactly what the run added: the bootstrap files that were not there
before, and the `.git` of an agent folder the run created. Files the agents wrote (their
artifacts) stay.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

# The gateway's watchdog (gateway/watchdog.py) runs this file by its path, with the standard
# library only, when ClawSpec was killed before it could restore the workspace itself: it
# imports nothing else.

NAMES = (
    "AGENTS.md",
    "SOUL.md",
    "IDENTITY.md",
    "USER.md",
    "BOOTSTRAP.md",
    "HEARTBEAT.md",
    "TOOLS.md",
)


@dataclass(frozen=True)
class BootstrapGuard:
    """What existed before the gateway started: bootstrap files at the workspace root and in its
    folders (agent workspaces), and the folders themselves."""

    workspace: Path
    folders: frozenset[str]
    files: frozenset[str]

    @classmethod
    def before(cls, workspace: Path) -> BootstrapGuard:
        folders = frozenset(_folders(workspace))
        return cls(workspace, folders, frozenset(_bootstrap_files(workspace, folders)))

    def to_json(self) -> str:
        return json.dumps(
            {"workspace": str(self.workspace), "folders": sorted(self.folders),
             "files": sorted(self.files)}
        )  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> BootstrapGuard:
        data = json.loads(text)
        return cls(Path(data["workspace"]), frozenset(data["folders"]), frozenset(data["files"]))

    def restore(self) -> list[str]:
        """Remove what the run added; returns the removed paths, relative to the workspace."""
        removed: list[str] = []
        now = set(_folders(self.workspace))
        for rel in sorted(set(_bootstrap_files(self.workspace, now)) - self.files):
            with contextlib.suppress(OSError):
                (self.workspace / rel).unlink()
                removed.append(rel)
        for folder in sorted(now - self.folders):
            git = self.workspace / folder / ".git"
            if git.is_dir():  # OpenClaw's `git init` of an agent workspace it created
                shutil.rmtree(git, ignore_errors=True)
                removed.append(f"{folder}/.git")
            with contextlib.suppress(OSError):
                (self.workspace / folder).rmdir()  # only if nothing else is left in it
        return removed


def _folders(workspace: Path) -> list[str]:
    try:
        return [p.name for p in workspace.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def _bootstrap_files(workspace: Path, folders: frozenset[str] | set[str]) -> list[str]:
    out = [name for name in NAMES if (workspace / name).is_file()]
    for folder in folders:
        out += [f"{folder}/{name}" for name in NAMES if (workspace / folder / name).is_file()]
    return out

"""`clawspec init`: write the starter files, never overwriting anything without `--force`.

When none of the files exist they are written. When some exist, init only lists what it would
do (a dry run) unless `--force` (replace them) or `--skip-existing` (write only the missing
ones) says otherwise, so running it twice changes nothing. The report folder is added to the
workspace's `.gitignore` (created if missing, appended to otherwise, left alone if it already
ignores the folder).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from clawspec.authoring.scaffold import ACTION_USES, WORKFLOW, PlannedFile, plan_files
from clawspec.authoring.workspace import discover_workspace, skills_missing_env
from clawspec.errors import UsageError
from clawspec.lint.requires import unset_message
from clawspec.text import console_line

GITIGNORE = ".gitignore"
REPORT_DIR = "clawspec-reports/"  # the report_dir of the clawspec.yaml init writes
IGNORE_BLOCK = f"# ClawSpec's reports (clawspec run)\n{REPORT_DIR}\n"


@dataclass(frozen=True)
class InitAction:
    """What happens to one planned file."""

    path: str
    action: str  # create | replace | keep (exists, unchanged) | skip (exists, differs) | append


@dataclass(frozen=True)
class InitResult:
    actions: list[InitAction]
    written: bool
    notes: list[str]

    @property
    def refused(self) -> bool:
        """Files exist and differ, and neither --force nor --skip-existing was given: nothing
        was written (a script must not go on as if the workspace were set up)."""
        return not self.written and any(a.action == "skip" for a in self.actions)


def initialize(
    root: Path,
    *,
    openclaw_config: Path | None = None,
    force: bool = False,
    skip_existing: bool = False,
    dry_run: bool = False,
) -> InitResult:
    """Plan the files for the workspace at `root` and write them as the flags allow."""
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder")
    if openclaw_config is not None and not openclaw_config.is_file():
        raise UsageError(f"--openclaw-config: no such file '{openclaw_config}'")
    if force and skip_existing:
        raise UsageError("--force and --skip-existing exclude each other")
    workspace = discover_workspace(root, openclaw_config)
    notes = list(workspace.problems)
    for skill, names in skills_missing_env(workspace, os.environ):
        notes.append(f"{skill.source}: {unset_message(names)}")
    if not workspace.targets:
        notes.append(
            "no skills (a SKILL.md under skills/) or agents (a SOUL.md under agents/, "
            f"openclaw.json) in {root}"
        )
    planned = plan_files(workspace)
    actions = [_action(root, item, force) for item in planned]
    conflicts = [a for a in actions if a.action in ("replace", "skip")]
    ignore = _ignore_action(root)
    write = not dry_run and (force or skip_existing or not conflicts)
    if write:
        for item, action in zip(planned, actions, strict=True):
            if action.action in ("create", "replace"):
                target = root / item.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(item.text, encoding="utf-8")
        _ignore_reports(root, ignore)
        if any(a.path == WORKFLOW and a.action in ("create", "replace") for a in actions):
            notes.append(
                f"{WORKFLOW}: replace {ACTION_USES} in its `uses:` line with the repository "
                "you take ClawSpec from and a commit you trust (see the comment there)"
            )
    elif conflicts and not dry_run:
        notes.append(
            f"{len(conflicts)} file(s) already exist and differ; nothing was written. "
            "Run with --force to replace them or --skip-existing to write only the missing ones."
        )
    return InitResult([*actions, ignore], write, notes)


def _action(root: Path, item: PlannedFile, force: bool) -> InitAction:
    path = root / item.path
    if not path.exists():
        return InitAction(item.path, "create")
    try:
        same = path.read_text(encoding="utf-8") == item.text
    except (OSError, UnicodeDecodeError):
        same = False
    if same:
        return InitAction(item.path, "keep")
    return InitAction(item.path, "replace" if force else "skip")


def _ignore_action(root: Path) -> InitAction:
    """Whether `.gitignore` needs the report folder: create, append, or keep (ignored already)."""
    path = root / GITIGNORE
    if not path.exists():
        return InitAction(GITIGNORE, "create")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return InitAction(GITIGNORE, "skip")  # not a file init can read: left alone
    folder = REPORT_DIR.strip("/")
    if any(line.strip().strip("/") == folder for line in lines):
        return InitAction(GITIGNORE, "keep")
    return InitAction(GITIGNORE, "append")


def _ignore_reports(root: Path, action: InitAction) -> None:
    path = root / GITIGNORE
    if action.action == "create":
        path.write_text(IGNORE_BLOCK, encoding="utf-8")
    elif action.action == "append":
        text = path.read_text(encoding="utf-8")
        gap = "\n" if text and not text.endswith("\n") else ""
        path.write_text(f"{text}{gap}{IGNORE_BLOCK}", encoding="utf-8")


VERBS = {
    (True, "create"): "created",
    (True, "replace"): "replaced",
    (True, "keep"): "unchanged",
    (True, "skip"): "kept (exists)",
    (True, "append"): "appended to",
    (False, "create"): "would create",
    (False, "replace"): "would replace",
    (False, "keep"): "unchanged",
    (False, "skip"): "exists (kept)",
    (False, "append"): "would append to",
}


def describe(result: InitResult) -> str:
    """One line per file, then the notes and what to do next."""
    lines = [f"{VERBS[(result.written, a.action)]:>14}  {a.path}" for a in result.actions]
    lines += [f"note: {note}" for note in result.notes]
    contracts = [a for a in result.actions if a.path.endswith((".yaml", ".yml"))]
    contracts = [a for a in contracts if not a.path.startswith((".github/", "clawspec.yaml"))]
    if result.written and any(a.action in ("create", "replace") for a in result.actions):
        if contracts:
            lines.append(
                "next: clawspec validate && clawspec run --bring-up, then clawspec bless "
                "CONTRACT --scenario NAME to propose what the agent does in every run (clawspec "
                "docs getting-started-in-an-existing-workspace)"
            )
        else:  # nothing to validate yet: `validate` would only say "no contract files found"
            lines.append(
                "next: write a contract in skills/<name>/tests/scenarios.yaml, or add a skill or "
                "an agent and run clawspec init again (clawspec docs contracts)"
            )
    return "\n".join(console_line(line) for line in lines)

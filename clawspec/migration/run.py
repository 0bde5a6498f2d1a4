"""`clawspec migrate PATH…`: find ClawSpec 0.1 files, rewrite them, say what changed.

A file whose constructs have no equivalent is left as it is and reported (exit 2) unless
`--drop-unsupported` removes them, which is then listed with the other changes. Handoff and
pipeline files become `<name>.clawspec.yaml` contracts beside them (the 0.1 file is removed),
so the default `scenario_patterns` find them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from clawspec.contracts.discovery import PRUNED_DIRS, display_path
from clawspec.errors import UsageError
from clawspec.migration import contracts as m

HEADER = (
    "# Migrated from ClawSpec 0.1 by `clawspec migrate` (comments of the original are not kept).\n"
)
CONFIG_NAMES = ("clawspec.yaml", "clawspec.yml")
CLAWSPEC_FILES = "**/*.clawspec.yaml"


@dataclass
class FileResult:
    """What happened to one file."""

    path: str
    written: str | None = None  # the file written (may differ from `path`)
    changes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS)
                found += [Path(folder, f) for f in sorted(files) if f.endswith((".yaml", ".yml"))]
        else:
            raise UsageError(f"{raw}: no such file or folder")
    return found


def agent_folders(root: Path) -> dict[str, str]:
    """`agents-marketing-brand` (0.1's id) → `brand` for every agents/**/SOUL.md under root."""
    found = {}
    for soul in (root / "agents").rglob("SOUL.md") if (root / "agents").is_dir() else []:
        parts = soul.parent.relative_to(root).parts
        found["-".join(parts)] = parts[-1]
    return found


def legacy_baselines(root: Path) -> dict[str, Any]:
    """0.1's `<report_dir>/baselines.yaml` (report_dir from its clawspec.yaml, default
    `reports`): scenario name → {metrics: {name: {p50, p95, …}}}."""
    report_dir = "reports"
    config = root / "clawspec.yaml"
    try:
        data = yaml.safe_load(config.read_text("utf-8")) if config.is_file() else None
        if isinstance(data, dict) and data.get("report_dir"):
            report_dir = str(data["report_dir"])
        path = root / report_dir / "baselines.yaml"
        found = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    baselines = found.get("baselines") if isinstance(found, dict) else None
    return baselines if isinstance(baselines, dict) else {}


def _caller(path: Path, root: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The invocation of a handoff: the trigger of the skill whose tests/ folder holds it."""
    from clawspec.authoring.workspace import skill_trigger
    from clawspec.lint.document import read_document

    for folder in path.parents:
        contract = folder / "tests" / "scenarios.yaml"
        if contract.is_file():
            data = yaml.safe_load(contract.read_text("utf-8")) or {}
            target = data.get("target") if isinstance(data, dict) else None
            if isinstance(target, dict) and target.get("trigger"):
                return str(target["trigger"]), target
        skill = folder / "SKILL.md"
        if skill.is_file():
            front = read_document(skill, str(skill)).frontmatter or {}
            trigger = skill_trigger(front, folder.name)
            rel = folder.resolve().relative_to(root.resolve()).as_posix()
            return trigger, {"type": "skill", "path": rel, "trigger": trigger}
        if folder == root:
            break
    return None, None


def migrate_file(
    path: Path, root: Path, *, invoke: str | None, drop: bool, dry_run: bool
) -> FileResult | None:
    """Migrate one file; None when it is not a ClawSpec 0.1 file."""
    result = FileResult(display_path(path))
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        result.errors.append(f"cannot read: {str(exc).splitlines()[0]}")
        return result
    target = path
    if path.name in CONFIG_NAMES and isinstance(data, dict):
        from clawspec.migration.config_options import rewrite_legacy_options

        new, located = rewrite_legacy_options(data)
        rewrite = m.Rewrite(new, [message for _, message in located])
        patterns = new.get("scenario_patterns")
        if isinstance(patterns, list) and CLAWSPEC_FILES not in patterns:
            # Migrated handoffs and pipelines are `*.clawspec.yaml` files (current default).
            patterns.append(CLAWSPEC_FILES)
            rewrite.changes.append(f"scenario_patterns: added '{CLAWSPEC_FILES}'")
    elif isinstance(data, dict) and "handoff" in data:
        found_invoke, caller = _caller(path, root)
        rewrite = m.migrate_handoff(data, invoke or found_invoke, caller, agent_folders(root))
        target = path.with_name(f"{path.stem}.clawspec.yaml")
    elif isinstance(data, dict) and "pipeline" in data:
        rewrite = m.migrate_pipeline(data, agent_folders(root))
        target = path.with_name(f"{path.stem}.clawspec.yaml")
    elif isinstance(data, dict) and {"target", "scenarios"} <= set(data):
        rewrite = m.migrate_contract(data, legacy_baselines(root))
    elif isinstance(data, dict) and "waves" in data:
        result.notes.append(
            "ClawSpec 0.1 coverage ledger: not used any more (`clawspec coverage` reads the "
            "workspace); the file can be deleted"
        )
        return result
    else:
        return None
    if rewrite.unsupported and not drop:
        result.errors += [f"no equivalent: {u}" for u in rewrite.unsupported]
        result.errors.append("nothing written; --drop-unsupported removes these and migrates")
        return result
    result.changes = rewrite.changes + [f"dropped: {u}" for u in rewrite.unsupported]
    if path.name not in CONFIG_NAMES:
        result.errors += _still_invalid(rewrite.data)
    if result.errors or not result.changes or dry_run:
        return result
    text = HEADER + yaml.safe_dump(rewrite.data, sort_keys=False, allow_unicode=True, width=100)
    target.write_text(text, encoding="utf-8")
    if target != path:
        path.unlink()
        result.changes.append(f"removed {result.path} (now {display_path(target)})")
    result.written = display_path(target)
    return result


def _still_invalid(data: dict[str, Any]) -> list[str]:
    from clawspec.contracts.models import Contract

    try:
        Contract.model_validate(data)
    except ValidationError as exc:
        return [
            f"after migration still invalid: {'.'.join(map(str, e['loc']))}: {e['msg']}"
            for e in exc.errors(include_url=False)[:5]
        ]
    return []


def migrate_paths(
    paths: list[str], root: Path, *, invoke: str | None, drop: bool, dry_run: bool
) -> list[FileResult]:
    """Migrate every ClawSpec 0.1 file named by `paths` (files, or folders searched)."""
    results = []
    for path in _files(paths):
        result = migrate_file(path, root, invoke=invoke, drop=drop, dry_run=dry_run)
        if result is not None:
            results.append(result)
    return results


def describe(results: list[FileResult], dry_run: bool) -> tuple[str, str]:
    """(stdout, stderr) text: changes per file, then errors."""
    out, err = [], []
    for result in results:
        if result.errors:
            err += [f"error: {result.path}: {e}" for e in result.errors]
            continue
        if result.notes:
            out += [f"{result.path}: {note}" for note in result.notes]
            continue
        if not result.changes:
            out.append(f"{result.path}: already in the current format")
            continue
        verb = "would change" if dry_run else f"migrated → {result.written}"
        out.append(f"{result.path}: {verb}")
        out += [f"  - {change}" for change in result.changes]
    if not results:
        out.append("no ClawSpec 0.1 files found")
    return "\n".join(out), "\n".join(err)

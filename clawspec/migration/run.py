"""`clawspec migrate PATH…`: find legacy ClawSpec files, rewrite them, say what changed.

Files are recognised by their shape (`scenarios` of `when`/`then` or legacy ClawSpec's
`steps`/`assertions`/`regression`, `handoff:`, `pipeline:`, `waves:`, `baselines:`,
`clawspec.yaml`), with or without `version`; a coverage ledger or a baselines file is not
rewritten, and migrate says why; when none is found, each YAML file's reason is printed.
Warnings and errors name `file:line:column` of the original file. A file with a construct that
has no equivalent, or that needs something only the user knows, is left as it is and reported
(exit 2); with `--drop-unsupported` constructs with no equivalent are removed and warned about
instead. Handoff and pipeline files become `<name>.clawspec.yaml` contracts beside them (the
legacy file is removed), so the default `scenario_patterns` find them. The result is checked by the
contract loader itself: what is still invalid is reported as `clawspec validate` reports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clawspec.contracts.discovery import PRUNED_DIRS, display_path
from clawspec.contracts.loader import load_contract
from clawspec.errors import UsageError
from clawspec.inputs.source import DuplicateKeys, SourceDoc, SourceError, parse_yaml
from clawspec.migration import contracts as m
from clawspec.migration.agents import AgentIds
from clawspec.migration.rewrite import Note, Rewrite

HEADER = (
    "# Migrated from legacy ClawSpec by `clawspec migrate` (comments of the original are not "
    "kept).\n"
)
CONFIG_NAMES = ("clawspec.yaml", "clawspec.yml")
CLAWSPEC_FILES = "**/*.clawspec.yaml"
SCENARIO_KEYS = {"when", "then", "given", "steps", "assertions", "regression"}
TOP_KEYS = ("scenarios", "handoff", "pipeline", "waves", "baselines")


@dataclass
class FileResult:
    """What happened to one file."""

    path: str
    written: str | None = None  # the file written (may differ from `path`)
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # each `file:line:column: text`
    errors: list[str] = field(default_factory=list)  # each `file[:line:column]: text`
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # why this is not a legacy ClawSpec file
    explicit: bool = False  # named on the command line (not found in a folder)


def _files(paths: list[str]) -> list[tuple[Path, bool]]:
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append((path, True))
        elif path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS)
                found += [
                    (Path(folder, f), False) for f in sorted(files) if f.endswith((".yaml", ".yml"))
                ]
        else:
            raise UsageError(f"{raw}: no such file or folder")
    return found


def classify(path: Path, data: Any) -> tuple[str | None, str]:
    """(kind, "") for a legacy ClawSpec file, else (None, why it is not one)."""
    if path.name in CONFIG_NAMES and isinstance(data, dict):
        return "config", ""
    if data is None:
        return None, "empty file"
    if not isinstance(data, dict):
        return None, f"the document is a {type(data).__name__}, not a mapping"
    for kind in ("handoff", "pipeline", "waves"):
        if kind in data:
            return kind, ""
    if isinstance(data.get("baselines"), dict) and "scenarios" not in data:
        return "baselines", ""
    if "scenarios" not in data:
        keys = ", ".join(map(str, list(data)[:6])) + (", …" if len(data) > 6 else "")
        wanted = ", ".join(f"'{k}'" for k in TOP_KEYS)
        return None, f"no {wanted} at the top (found: {keys or 'nothing'})"
    scenarios = data["scenarios"]
    shaped = isinstance(scenarios, list) and any(
        isinstance(s, dict) and SCENARIO_KEYS & set(s) for s in scenarios
    )
    if shaped or "target" in data:
        return "contract", ""
    return None, (
        "'scenarios' holds no scenario (a mapping with when/then, or legacy ClawSpec's "
        "steps/assertions/regression)"
    )


def legacy_baselines(root: Path) -> dict[str, Any]:
    """Legacy ClawSpec's `<report_dir>/baselines.yaml` (report_dir from its clawspec.yaml, default
    `reports`): scenario name → {metrics: {name: {p50, p95, …}}}."""
    report_dir = "reports"
    config = root / "clawspec.yaml"
    try:
        data = yaml.safe_load(config.read_text("utf-8")) if config.is_file() else None
        if isinstance(data, dict) and data.get("report_dir"):
            report_dir = str(data["report_dir"])
        path = root / report_dir / "baselines.yaml"
        found = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return {}
    baselines = found.get("baselines") if isinstance(found, dict) else None
    return baselines if isinstance(baselines, dict) else {}


def _skill_target(folder: Path, root: Path) -> dict[str, Any]:
    from clawspec.authoring.workspace import skill_trigger
    from clawspec.lint.document import read_document

    skill = folder / "SKILL.md"
    front = read_document(skill, str(skill)).frontmatter or {} if skill.is_file() else {}
    rel = folder.resolve().relative_to(root.resolve()).as_posix()
    return {"type": "skill", "path": rel, "trigger": skill_trigger(front, folder.name)}


def _caller(path: Path, root: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The invocation of a handoff: the trigger of the skill whose tests/ folder holds it."""
    for folder in path.parents:
        contract = folder / "tests" / "scenarios.yaml"
        try:
            data = yaml.safe_load(contract.read_text("utf-8")) if contract.is_file() else None
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
            data = None  # reported when that file itself is migrated
        target = data.get("target") if isinstance(data, dict) else None
        # An agent target's legacy ClawSpec `trigger` is the agent's id, not a message to send.
        if isinstance(target, dict) and target.get("type") == "skill" and target.get("trigger"):
            return str(target["trigger"]), target
        if (folder / "SKILL.md").is_file():
            target = _skill_target(folder, root)
            return target["trigger"], target
        if folder == root:
            break
    return None, None


def folder_target(path: Path, root: Path) -> tuple[dict[str, Any], str] | None:
    """The target a contract's place implies: the skill or agent whose `tests/` folder holds it."""
    tests = next((f for f in path.parents if f.name == "tests"), None)
    owner = tests.parent if tests else None
    if owner is None or not owner.resolve().is_relative_to(root.resolve()):
        return None
    rel = owner.resolve().relative_to(root.resolve())
    why = f"the file is in {rel.as_posix()}/tests/"
    if (owner / "SKILL.md").is_file() or (rel.parts[:1] == ("skills",)):
        return _skill_target(owner, root), why
    if (owner / "SOUL.md").is_file() or (rel.parts[:1] == ("agents",)):
        return {"type": "agent", "path": rel.as_posix()}, why
    return None


# The legacy handoff files this migration has renamed to `*.clawspec.yaml`, by their old
# resolved path, with their legacy data: a pipeline migrated after its handoff still finds it.
Renamed = dict[Path, dict[str, Any]]


def _rewrite(
    kind: str,
    path: Path,
    doc: SourceDoc,
    root: Path,
    invoke: str | None,
    renamed: Renamed | None = None,
) -> Rewrite:
    data = doc.data
    if kind == "config":
        from clawspec.config_options import rewrite_legacy_options

        new, located = rewrite_legacy_options(data)
        rewrite = Rewrite(new, [Note(loc, message) for loc, message in located])
        patterns = new.get("scenario_patterns")
        if isinstance(patterns, list) and CLAWSPEC_FILES not in patterns:
            # Migrated handoffs and pipelines are `*.clawspec.yaml` files (current default).
            patterns.append(CLAWSPEC_FILES)
            rewrite.change(("scenario_patterns",), f"scenario_patterns: added '{CLAWSPEC_FILES}'")
        return rewrite
    agents = AgentIds.scan(root)
    if kind == "handoff":
        found_invoke, caller = _caller(path, root)
        return m.migrate_handoff(data, invoke or found_invoke, caller, agents)
    if kind == "pipeline":
        pipeline = data.get("pipeline")
        skill = pipeline.get("skill_path") if isinstance(pipeline, dict) else None
        skill_path = skill if isinstance(skill, str) and skill else None
        return m.migrate_pipeline(
            data, agents, lambda ref: find_handoff(ref, path, root, skill_path, renamed)
        )
    return m.migrate_contract(data, legacy_baselines(root), agents, folder_target(path, root))


def find_handoff(
    reference: str,
    pipeline: Path,
    root: Path,
    skill_path: str | None = None,
    renamed: Renamed | None = None,
) -> m.HandoffFile:
    """A stage's `handoff_contract`: beside the pipeline file, then from the skill's folder (the
    one whose `tests/` holds the pipeline, or the pipeline's `skill_path`: legacy ClawSpec's own
    examples wrote `tests/handoffs/x.yaml` from there), then from the workspace root. A handoff
    this migration already renamed is read as it was."""
    tests = next((f for f in pipeline.parents if f.name == "tests"), None)
    bases = [
        pipeline.parent,
        *([tests.parent] if tests is not None else []),
        *([root / skill_path] if skill_path else []),
        root,
    ]
    tried = list(dict.fromkeys(os.path.abspath(base / reference) for base in bases))
    for name in tried:
        candidate = Path(name)
        earlier = (renamed or {}).get(candidate.resolve())
        if earlier is not None:
            return m.HandoffFile(display_path(candidate), earlier)
        if candidate.is_file():
            shown = display_path(candidate)
            try:
                data = yaml.safe_load(candidate.read_text("utf-8"))
            except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
                return m.HandoffFile(shown, why_not=f"cannot read {shown}: {exc}")
            if classify(candidate, data)[0] != "handoff":
                return m.HandoffFile(
                    shown, why_not=f"{shown} is not a legacy ClawSpec handoff file"
                )
            return m.HandoffFile(shown, data)
        migrated = candidate.with_name(f"{candidate.stem}.clawspec.yaml")
        if migrated.is_file():
            return m.HandoffFile(
                reference,
                why_not=f"it is already migrated to {display_path(migrated)}, a contract run on "
                "its own; copy its `then` here to check the handoff inside the pipeline run",
            )
    looked = " or ".join(display_path(Path(p)) for p in tried)
    return m.HandoffFile(reference, why_not=f"no such file ({looked})")


def _baselines_note(data: dict[str, Any]) -> str:
    names = ", ".join(f"'{n}'" for n in list(data["baselines"])[:5])
    more = ", …" if len(data["baselines"]) > 5 else ""
    return (
        "legacy ClawSpec baselines file: not migrated, the current baseline format cannot hold it "
        "(a baseline is now a stored run report with each scenario's results and evidence, "
        "`--baseline dir:PATH --save-baseline`; this file has only duration and token "
        f"statistics). Its statistics for {names}{more} become the absolute limits of those "
        "scenarios' `regression:` blocks when their contracts are migrated; then start a "
        "baseline with `clawspec run . --save-baseline` and delete this file"
    )


def _located(doc: SourceDoc, shown: str, note: Note, prefix: str = "") -> str:
    mark = doc.key_mark(note.loc)
    return f"{shown}:{mark.line}:{mark.column}: {prefix}{note.text}"


def migrate_file(
    path: Path,
    root: Path,
    *,
    invoke: str | None,
    drop: bool,
    dry_run: bool,
    renamed: Renamed | None = None,
) -> FileResult:
    """Migrate one file (`skipped` says why when it is not a legacy ClawSpec file); a handoff
    file it renames is added to `renamed`."""
    shown = display_path(path)
    result = FileResult(shown)
    try:
        text = path.read_text(encoding="utf-8")
        doc = parse_yaml(text, path)
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(f"{shown}: cannot read: {exc}")
        return result
    except DuplicateKeys as exc:  # every key given twice, at once: one run to fix them all
        for dup in exc.doc.duplicates:
            at = f"{shown}:{dup.mark.line}:{dup.mark.column}"
            result.errors.append(f"{at}: cannot read: {dup.message}")
        return result
    except SourceError as exc:
        result.errors.append(f"{shown}:{exc.mark.line}:{exc.mark.column}: cannot read: {exc}")
        return result
    kind, why = classify(path, doc.data)
    if kind is None:
        result.skipped = why
        return result
    if kind == "baselines":
        result.notes.append(_baselines_note(doc.data))
        return result
    if kind == "waves":
        result.notes.append(
            "legacy ClawSpec coverage ledger: not used any more (`clawspec coverage` reads the "
            "workspace); the file can be deleted"
        )
        return result
    rewrite = _rewrite(kind, path, doc, root, invoke, renamed)
    target = (
        path if kind in ("config", "contract") else path.with_name(f"{path.stem}.clawspec.yaml")
    )
    result.warnings = [_located(doc, shown, n) for n in rewrite.warnings]
    result.errors = [_located(doc, shown, n) for n in rewrite.manual]
    if drop:
        result.warnings += [_located(doc, shown, n, "dropped: ") for n in rewrite.unsupported]
    else:
        result.errors += [_located(doc, shown, n, "no equivalent: ") for n in rewrite.unsupported]
    if result.errors:
        hint = "; --drop-unsupported removes the constructs with no equivalent"
        result.errors.append(
            f"{shown}: nothing written" + (hint if rewrite.unsupported and not drop else "")
        )
        return result
    result.changes = [note.text for note in rewrite.changes]
    new_text = text
    if result.changes:
        dumped = yaml.safe_dump(rewrite.data, sort_keys=False, allow_unicode=True, width=100)
        new_text = HEADER + dumped
    if kind != "config":
        result.errors += _still_invalid(target, new_text, root, bool(result.changes), dry_run)
    if not result.changes or dry_run:
        return result
    target.write_text(new_text, encoding="utf-8")
    if target != path:
        path.unlink()
        if kind == "handoff" and renamed is not None:
            renamed[path.resolve()] = doc.data
        result.changes.append(f"removed {shown} (now {display_path(target)})")
    result.written = display_path(target)
    return result


class _AnyEnvironment(dict[str, str]):
    """Every `{{env.NAME}}` counts as set: migrate warns about the ones it introduces."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return ""


def _still_invalid(path: Path, text: str, root: Path, changed: bool, dry_run: bool) -> list[str]:
    """The contract loader's own messages for `text` as it would be at `path`."""
    try:
        doc = parse_yaml(text, path)
    except DuplicateKeys as exc:  # the loader names every one, with the file's other problems
        doc = exc.doc
    except SourceError as exc:  # only a file we did not rewrite can fail here
        return [f"{display_path(path)}:{exc.mark.line}:{exc.mark.column}: {exc}"]
    found = load_contract(path, root, _AnyEnvironment(), (text, doc))
    if not isinstance(found, list):
        return []
    shown = display_path(path)
    if not changed:
        head = f"{shown}: nothing to migrate, but invalid in the current format (fix by hand):"
    elif dry_run:
        head = f"{shown}: would still be invalid after migration (lines of the migrated file):"
    else:
        head = f"{shown}: migrated, but still invalid (fix by hand):"
    return [head, *(problem.text for problem in found)]


def migrate_paths(
    paths: list[str], root: Path, *, invoke: str | None, drop: bool, dry_run: bool
) -> list[FileResult]:
    """Migrate every legacy ClawSpec file named by `paths` (files, or folders searched)."""
    results = []
    renamed: Renamed = {}
    for path, explicit in _files(paths):
        result = migrate_file(
            path, root, invoke=invoke, drop=drop, dry_run=dry_run, renamed=renamed
        )
        result.explicit = explicit
        results.append(result)
    return results


def describe(results: list[FileResult], dry_run: bool) -> tuple[str, str]:
    """(stdout, stderr) text: changes per file, then warnings and errors."""
    out, err = [], []
    taken = [r for r in results if r.skipped is None]
    for result in results:
        err += [f"warning: {w}" for w in result.warnings]
        err += [f"error: {e}" for e in result.errors]
        if result.skipped is not None:
            if result.explicit or not taken:
                out.append(f"{result.path}: not a legacy ClawSpec file: {result.skipped}")
            continue
        if result.notes:
            out += [f"{result.path}: {note}" for note in result.notes]
        elif result.changes and (result.written or dry_run):
            verb = "would change" if dry_run else f"migrated → {result.written}"
            out.append(f"{result.path}: {verb}")
            out += [f"  - {change}" for change in result.changes]
        elif not result.changes and not result.errors:
            out.append(f"{result.path}: already in the current format")
    if not taken:
        out.insert(0, "no legacy ClawSpec files found")
    return "\n".join(out), "\n".join(err)

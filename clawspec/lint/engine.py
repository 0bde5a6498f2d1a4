"""`clawspec lint`: find SKILL.md/SOUL.md files, run the enabled rules, decide the exit code."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clawspec.contracts.discovery import PRUNED_DIRS, display_path
from clawspec.errors import ExitCode, UsageError
from clawspec.lint.document import KINDS, is_contract, read_document
from clawspec.lint.rules import RULES, SEVERITIES, LintOptions, Rule
from clawspec.lint.suppress import Ignore, disabled_in_file, ignored_by_config


@dataclass(frozen=True)
class Finding:
    """One rule's finding at a position."""

    rule: str
    severity: str  # error | warning
    file: str
    line: int
    column: int
    message: str

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class LintReport:
    """Every finding, in file then line order, and the files checked."""

    files: list[str]
    findings: list[Finding] = field(default_factory=list)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def exit_code(self, strict: bool) -> ExitCode:
        """Errors fail; warnings fail only with --strict."""
        if self.count("error") or (strict and self.count("warning")):
            return ExitCode.FAILED
        return ExitCode.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "errors": self.count("error"),
            "warnings": self.count("warning"),
            "findings": [asdict(f) for f in self.findings],
        }


def find_documents(
    paths: Sequence[str | Path],
    contract_patterns: Sequence[str] = (),
    workspace: Path | None = None,
) -> list[Path]:
    """SKILL.md, SOUL.md and contract files named by `paths` (files as given, folders searched;
    contracts are the files `contract_patterns` match from the `workspace` root, as
    `clawspec run` finds them)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if path.name not in KINDS and not is_contract(path):
                raise UsageError(f"{raw}: lint reads SKILL.md, SOUL.md and contract (YAML) files")
            found.append(path)
        elif path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS)
                found.extend(Path(folder, name) for name in sorted(files) if name in KINDS)
            if contract_patterns:
                from clawspec.contracts.discovery import discover

                with contextlib.suppress(UsageError):  # a folder without contracts
                    found.extend(discover([path], contract_patterns, workspace=workspace))
        else:
            raise UsageError(f"{raw}: no such file or folder")
    unique = {p.resolve(): p for p in reversed(found)}
    return sorted(unique.values(), key=lambda p: p.as_posix())


def effective_rules(overrides: Mapping[str, Any]) -> dict[str, Rule]:
    """The rules that run, with severities from `lint.rules` in clawspec.yaml (its rule ids
    and settings are checked with the rest of the configuration, `clawspec.config.lint_rules`)."""
    chosen: dict[str, Rule] = {}
    for rule_id, rule in RULES.items():
        setting = overrides.get(rule_id, True)
        if setting in (False, "off"):
            continue
        severity = setting if setting in SEVERITIES else rule.severity
        chosen[rule_id] = Rule(rule.id, severity, rule.kinds, rule.summary, rule.check)
    return chosen


def lint_files(
    files: Sequence[Path],
    overrides: Mapping[str, Any] | None = None,
    options: LintOptions | None = None,
    ignores: Sequence[Ignore] = (),
    base: Path | None = None,
) -> LintReport:
    """Run every enabled rule on each file; a file that cannot be read only gets that finding.
    Rules the file disables in a comment, or `ignores` (globs relative to `base`) match, are
    not run on it."""
    rules = effective_rules(overrides or {})
    options = options or LintOptions()
    findings: list[Finding] = []
    shown = []
    for path in files:
        doc = read_document(path, display_path(path))
        shown.append(doc.display)
        silenced = disabled_in_file(doc) | ignored_by_config(path, base or Path.cwd(), ignores)
        for rule in rules.values():
            if doc.kind not in rule.kinds or rule.id in silenced:
                continue
            if doc.unreadable and rule.id != "file-unreadable":
                continue
            for line, column, message in rule.check(doc, options):
                findings.append(Finding(rule.id, rule.severity, doc.display, line, column, message))
    findings.sort(key=lambda f: (f.file, f.line, f.column, f.severity != "error", f.rule))
    return LintReport(shown, findings)

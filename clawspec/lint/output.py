"""Lint results for people and for CI: terminal lines, JSON, GitHub annotations and summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.lint.engine import LintReport
from clawspec.reports.github.markdown import code_span, table_cell
from clawspec.text import console_line, pluralize

if TYPE_CHECKING:
    from clawspec.ci_context import CIContext

SUMMARY_ROWS = 200  # the job summary has a 1 MiB budget shared with other steps


def render_terminal(report: LintReport) -> str:
    """`file:line:column: severity [rule] message` lines and a count line."""
    lines = [
        console_line(f"{f.location()}: {f.severity} [{f.rule}] {f.message}")
        for f in report.findings
    ]
    lines.append(_totals(report))
    return "\n".join(lines)


def _totals(report: LintReport) -> str:
    return (
        f"{pluralize(report.count('error'), 'error')}, "
        f"{pluralize(report.count('warning'), 'warning')} in "
        f"{pluralize(len(report.files), 'file')}"
    )


def render_json(report: LintReport) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def render_summary(report: LintReport, strict: bool) -> str:
    """The job-summary section: totals, then one row per finding (capped)."""
    verdict = "failed" if report.exit_code(strict) else "passed"
    lines = [
        f"## ClawSpec lint: {verdict}",
        "",
        _totals(report) + ("" if not strict else " (strict)"),
    ]
    if report.findings:
        lines += ["", "| severity | rule | where | message |", "|---|---|---|---|"]
        for finding in report.findings[:SUMMARY_ROWS]:
            # paths and messages come from the linted files: data, never markup (see markdown.py)
            where = code_span(finding.location(), table=True)
            message = table_cell(finding.message)
            lines.append(f"| {finding.severity} | `{finding.rule}` | {where} | {message} |")
        if len(report.findings) > SUMMARY_ROWS:
            lines.append(
                f"\n… and {len(report.findings) - SUMMARY_ROWS} more (see the JSON output)"
            )
    return "\n".join(lines) + "\n"


def publish_github(report: LintReport, strict: bool, context: CIContext) -> None:
    """On GitHub Actions: annotations on the offending lines and a job-summary section."""
    from clawspec.reports.github.annotations import cap_annotations, repo_relative
    from clawspec.reports.github.commands import Annotation, GitHubRunner

    runner = GitHubRunner(context)
    root = context.github.workspace
    candidates = [
        Annotation(
            "error" if finding.severity == "error" else "warning",
            finding.message,
            f"ClawSpec lint: {finding.rule}",
            repo_relative(finding.file, root, Path.cwd()),
            finding.line,
        )
        for finding in report.findings
    ]
    for annotation in cap_annotations(
        candidates, where="All findings are in the job summary."
    ).annotations:
        runner.annotate(annotation)
    runner.append_summary(render_summary(report, strict))

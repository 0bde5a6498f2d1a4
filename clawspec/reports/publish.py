"""Write every output of a finished run (called from a `finally`: also when interrupted)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from clawspec.config import Settings
from clawspec.reports.json_report import write_json
from clawspec.reports.model import RunReport

REPORT_JSON_NAME = "clawspec-report.json"


def report_json_path(settings: Settings) -> Path:
    return Path(settings.report_json or Path(settings.report_dir) / REPORT_JSON_NAME)


def publish(report: RunReport, settings: Settings, environ: Mapping[str, str]) -> list[Path]:
    """Write the JSON report (and the other configured outputs); return the files written."""
    secrets = settings.secret_values()
    return [write_json(report, report_json_path(settings), secrets)]

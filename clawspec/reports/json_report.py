"""The JSON report (SPEC §7): the report model serialised, secrets masked."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from clawspec.reports.model import RunReport
from clawspec.text import clean


def render_json(report: RunReport, secrets: Iterable[str] = ()) -> str:
    """Serialise the report; every string passes through `clean` (controls, secrets)."""
    data = report.model_dump(mode="json")
    return json.dumps(_clean(data, list(secrets)), indent=2, ensure_ascii=False) + "\n"


def _clean(data: object, secrets: list[str]) -> object:
    if isinstance(data, str):
        return clean(data, secrets)
    if isinstance(data, list):
        return [_clean(item, secrets) for item in data]
    if isinstance(data, dict):
        return {key: _clean(value, secrets) for key, value in data.items()}
    return data


def write_json(report: RunReport, path: Path, secrets: Iterable[str] = ()) -> Path:
    """Write the JSON report atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(render_json(report, secrets), encoding="utf-8")
    partial.replace(path)
    return path


def schema_path() -> Path:
    """The JSON Schema of the report, shipped in the package."""
    return Path(__file__).resolve().parent.parent / "schemas" / "report.schema.json"


def generate_schema() -> str:
    """Render the schema from the report model (`python -m clawspec.reports.json_report`)."""
    schema = RunReport.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ClawSpec run report"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    schema_path().write_text(generate_schema(), encoding="utf-8")
    print(f"wrote {schema_path()}")

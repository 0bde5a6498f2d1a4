"""The JSON report (SPEC §7): the report model serialised, secrets masked."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

from clawspec.reports.model import RunReport
from clawspec.text import clean


def render_json(report: RunReport, secrets: Iterable[str] = ()) -> str:
    """Serialise the report; every string passes through `clean` (controls, secrets)."""
    return "".join(_chunks(report, list(secrets)))


def _chunks(report: RunReport, secrets: list[str]) -> Iterator[str]:
    """The text of `json.dumps(report, indent=2)`, one scenario at a time: a report of 10,000
    scenarios is never held as one tree of dicts next to its models."""
    head = _clean(report.model_dump(mode="json", exclude={"scenarios"}), secrets)
    marker = f"scenarios-{uuid.uuid4().hex}"  # unique: no report text can contain it
    head["scenarios"] = marker  # type: ignore[index]
    ordered = {name: head[name] for name in type(report).model_fields if name in head}  # type: ignore[operator]
    before, after = json.dumps(ordered, indent=2, ensure_ascii=False).split(f'"{marker}"')
    yield before + "["
    for number, scenario in enumerate(report.scenarios):
        text = json.dumps(_clean(scenario.model_dump(mode="json"), secrets), indent=2,
                          ensure_ascii=False)  # fmt: skip
        yield ("\n    " if number == 0 else ",\n    ") + text.replace("\n", "\n    ")
    yield ("\n  ]" if report.scenarios else "]") + after + "\n"


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
    with partial.open("w", encoding="utf-8") as handle:
        handle.writelines(_chunks(report, list(secrets)))
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

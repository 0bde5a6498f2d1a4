"""The JSON report (SPEC §7): the report model serialised, secrets masked."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import pydantic_core

from clawspec.reports.model import RunReport
from clawspec.text import clean


def render_json(report: RunReport, secrets: Iterable[str] = ()) -> str:
    """Serialise the report; every string passes through `clean` (controls, secrets)."""
    return "".join(_chunks(report, list(secrets)))


def _chunks(report: RunReport, secrets: list[str]) -> Iterator[str]:
    """The report as indented JSON, one scenario at a time: a report of 10,000 scenarios is
    never held as one tree of dicts next to its models."""
    head = _clean(report.model_dump(mode="json", exclude={"scenarios"}), secrets)
    marker = f"scenarios-{uuid.uuid4().hex}"  # unique: no report text can contain it
    head["scenarios"] = marker  # type: ignore[index]
    ordered = {name: head[name] for name in type(report).model_fields if name in head}  # type: ignore[operator]
    before, after = json.dumps(ordered, indent=2, ensure_ascii=False).split(f'"{marker}"')
    needles = _needles(secrets)
    yield before + "["
    for number, scenario in enumerate(report.scenarios):
        text = _scenario_json(scenario.model_dump(mode="json"), secrets, needles)
        yield ("\n    " if number == 0 else ",\n    ") + text.replace("\n", "\n    ")
    yield ("\n  ]" if report.scenarios else "]") + after + "\n"


# What `clean` would change, as it appears in compact JSON text: an escaped C0 control (ANSI
# sequences start with ESC), DEL or a C1 control (not escaped), or a secret (escaped form).
_DIRTY = re.compile(r"\\u00|[\x7f-\x9f]")


def _needles(secrets: list[str]) -> list[str]:
    kept = [s for s in secrets if s and len(s) >= 4]
    return list({*kept, *(json.dumps(s, ensure_ascii=False)[1:-1] for s in kept)})


def _scenario_json(data: dict, secrets: list[str], needles: list[str]) -> str:
    """One scenario as indented JSON. Most scenarios have nothing to clean: the compact C
    encoder tells, and the indented text then comes from pydantic's serializer (json's own
    indented encoder is pure Python and took most of the time of a large report)."""
    compact = json.dumps(data, ensure_ascii=False)
    if _DIRTY.search(compact) or any(needle in compact for needle in needles):
        data = _clean(data, secrets)
    try:
        return pydantic_core.to_json(data, indent=2).decode()
    except (ValueError, UnicodeError):  # e.g. a lone surrogate: the standard encoder copes
        return json.dumps(data, indent=2, ensure_ascii=False)


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

"""The JSON report: the report model serialised, secrets masked."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic_core

from clawspec.reports.atomic import write_atomic
from clawspec.reports.model import RunReport, ScenarioResult
from clawspec.secrets import registered
from clawspec.text import cleaner


def render_json(report: RunReport) -> str:
    """Serialise the report; every string passes through `clean` (controls, secrets)."""
    return "".join(_chunks(report))


def _chunks(report: RunReport) -> Iterator[str]:
    """The report as indented JSON, one scenario at a time: a report of 10,000 scenarios is
    never held as one tree of dicts next to its models."""
    head = clean_data(report.model_dump(mode="json", exclude={"scenarios"}))
    marker = f"scenarios-{uuid.uuid4().hex}"  # unique: no report text can contain it
    head["scenarios"] = marker  # type: ignore[index]
    ordered = {name: head[name] for name in type(report).model_fields if name in head}  # type: ignore[operator]
    before, after = json.dumps(ordered, indent=2, ensure_ascii=False).split(f'"{marker}"')
    needles = _needles()
    yield before + "["
    for number, scenario in enumerate(report.scenarios):
        text = _scenario_json(scenario, needles)
        yield ("\n    " if number == 0 else ",\n    ") + text.replace("\n", "\n    ")
    yield ("\n  ]" if report.scenarios else "]") + after + "\n"


# What `clean` would change, as it looks in JSON text (ensure_ascii=False): C0 controls other than
# tab/LF/CR are written as \u00XX, \b or \f; DEL and C1 controls stay raw. An escaped backslash
# followed by such letters also matches: that only costs the slow path, never a miss.
_NEEDS_CLEAN = re.compile(r"\\u00[01][0-9a-fA-F]|\\[bf]|[\x7f-\x9f]")
_C1 = re.compile(r"[\x7f-\x9f]")


def _needs_clean(text: str) -> bool:
    """`_NEEDS_CLEAN.search(text)`, answered by substring tests where they suffice (the regex
    over 10,000 scenarios' text took most of the report's time)."""
    if "\\" in text and _NEEDS_CLEAN.search(text):
        return True
    return "\x7f" in text or (not text.isascii() and _C1.search(text) is not None)


def _needles() -> list[str]:
    """The registered secrets as the JSON text may hold them (the registry keeps each value's
    JSON spellings too; the escaping here is that of `ensure_ascii=False`)."""
    kept = registered()
    return list({*kept, *(json.dumps(s, ensure_ascii=False)[1:-1] for s in kept)})


def _scenario_json(scenario: ScenarioResult, needles: list[str]) -> str:
    """One scenario as indented JSON. Most scenarios have nothing to clean: pydantic's
    serializer writes them straight from the model (json's own indented encoder is pure Python
    and took most of the time of a large report; a dict of the scenario first, another third),
    and the text itself tells whether anything needs cleaning."""
    try:
        text = scenario.model_dump_json(indent=2)
    except (ValueError, UnicodeError):  # e.g. a lone surrogate: the standard encoder copes
        text = ""
    if text and not _needs_clean(text) and not any(needle in text for needle in needles):
        return text
    data = clean_data(scenario.model_dump(mode="json"))
    try:
        return pydantic_core.to_json(data, indent=2).decode()
    except (ValueError, UnicodeError):
        return json.dumps(data, indent=2, ensure_ascii=False)


def dumps_clean(data: object, **options: Any) -> str:
    """`json.dumps` of `data` with every string cleaned (controls stripped, secrets masked).

    A secret inside a string appears in the JSON text as its own JSON escaping (escaping is
    per character), so when neither a secret nor a control character shows up in the text the
    text is already clean; only then is the string-by-string walk skipped.
    """
    text = json.dumps(data, ensure_ascii=False, **options)
    if not _needs_clean(text) and not any(s in text for s in _needles()):
        return text
    return json.dumps(clean_data(data), ensure_ascii=False, **options)


def clean_data(data: object) -> Any:
    """Every string of a JSON-like structure through `clean` (keys included: they may be ids)."""
    text = cleaner()  # large reports have ~200 strings per scenario

    def walk(value: object) -> object:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {text(str(key)): walk(item) for key, item in value.items()}
        return value

    return walk(data)


def write_json(report: RunReport, path: Path) -> Path:
    """Write the JSON report atomically, one scenario at a time."""
    return write_atomic(path, _chunks(report))


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

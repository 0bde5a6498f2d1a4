"""Reading what agents write: Markdown headings, front matter, YAML/JSON data, dotted keys."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from clawspec.inputs.source import safe_load
from clawspec.markdown_doc import split_front_matter
from clawspec.text import cut, one_line

_MISSING = object()


class DataError(ValueError):
    """A file that should hold YAML/JSON data could not be parsed."""


class NoFrontMatterError(DataError):
    """A Markdown file has no front matter at all (the agent did not write the fields)."""


# Every file an assertion reads goes through `read_text`: at most this many bytes (+1) are ever
# in memory, a larger file is an error (`limits.file_max_bytes`, docs/guide.md "Limits").
DEFAULT_MAX_BYTES = 16 * 1024 * 1024


class NotTextError(DataError):
    """A file assertions read as text holds bytes that are not UTF-8."""


class NotAFileError(DataError):
    """A folder where an assertion reads a file."""


class TooLargeError(DataError):
    """A file larger than assertions read (`limits.file_max_bytes`)."""


def read_text(
    path: Path, max_bytes: int = DEFAULT_MAX_BYTES, *, errors: str = "strict", shown: str = ""
) -> str:
    """The UTF-8 text of `path` (universal newlines, as `Path.read_text`), reading at most
    `max_bytes` + 1 bytes: a larger file raises TooLargeError, naming the limit's setting;
    with strict `errors`, bytes that are not UTF-8 raise NotTextError (a DataError, the
    assertion's verdict: an agent may write anything), as does a folder where the file
    should be. Any other OSError passes through."""
    try:
        opened = path.open("rb")
    except IsADirectoryError:
        raise NotAFileError(f"'{shown or path.name}' is a folder, not a file") from None
    with opened as handle:
        size = os.fstat(handle.fileno()).st_size  # a file known too large is not read at all
        data = handle.read(max_bytes + 1) if size <= max_bytes else b""
        if size > max_bytes or len(data) > max_bytes:
            size = max(size, len(data))
            raise TooLargeError(
                f"'{shown or path.name}' is {size:,} bytes, over the limit of {max_bytes:,} "
                "bytes for files assertions read (limits.file_max_bytes)"
            )
    try:
        text = data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise NotTextError(
            f"'{shown or path.name}' is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start:,} (line {line:,}) cannot be read as UTF-8"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def load_data(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Parse a YAML or JSON file (JSON is parsed strictly when the suffix says so)."""
    text = read_text(path, max_bytes)
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise DataError(f"'{path.name}' is not valid {kind}: {_first_line(exc)}") from None


def document_fields(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Return the data whose keys `fields` checks: YAML/JSON content, or Markdown front matter."""
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        return load_data(path, max_bytes)
    front, _ = split_front_matter(read_text(path, max_bytes))
    if front is None:
        raise NoFrontMatterError(f"'{path.name}' has no YAML front matter")
    try:
        return safe_load(front) or {}
    except yaml.YAMLError as exc:
        raise DataError(
            f"front matter of '{path.name}' is not valid YAML: {_first_line(exc)}"
        ) from None


def lookup(data: Any, key: str) -> Any:
    """Return the value at `key` (a literal key first, else a dotted path), or MISSING."""
    if isinstance(data, dict) and key in data:
        return data[key]
    current = data
    for part in key.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def is_missing(value: Any) -> bool:
    return value is _MISSING


def same_value(actual: Any, expected: Any) -> bool:
    """Equality without coercion: '0' != 0, True != 1; lists equal item by item."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(map(same_value, actual, expected))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(
            same_value(actual[k], expected[k]) for k in expected
        )
    if isinstance(actual, int | float) and isinstance(expected, int | float):
        return actual == expected
    return type(actual) is type(expected) and actual == expected


def subset_mismatches(actual: Any, expected: dict[str, Any], prefix: str = "") -> list[str]:
    """Describe every way `expected` is not a recursive subset of `actual`."""
    problems = []
    for key, want in expected.items():
        name = f"{prefix}{key}"
        got = lookup(actual, str(key))
        if is_missing(got):
            problems.append(f"{name}: missing")
        elif isinstance(want, dict) and isinstance(got, dict):
            problems.extend(subset_mismatches(got, want, f"{name}."))
        elif not same_value(got, want):
            problems.append(f"{name}: expected {_show(want)}, found {_show(got)}")
    return problems


def _show(value: Any) -> str:
    return cut(json.dumps(value, ensure_ascii=False, default=str), 80)


def _first_line(exc: Exception) -> str:
    return one_line(str(exc), 200)

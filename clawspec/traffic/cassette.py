"""Cassettes: one pretty-printed JSON file per model call, `<dir>/<contract>/<scenario>/<n>.json`.

Plain JSON so that a pull request's diff shows what changed in a recording. A file holds the
request (method, path, endpoint, provider, body) and the response (status, content type, and
either the JSON body or every SSE event's lines, verbatim, with the delay before it). No request
header is stored except the content type and API version headers: authorization and API keys
never reach the disk, and known secret values are redacted from both bodies before writing.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from clawspec.secrets import MASK, registered
from clawspec.text import redact

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.identity import ScenarioIdentity

# The format this ClawSpec writes. 2 added `openclaw_version`: a ClawSpec that reads only 1
# refuses a field it does not know (`extra="forbid"`), so the version says why instead. A file
# of format 1 (no OpenClaw release) is still read.
FORMAT = 2
READABLE = (1, 2)
# Request headers worth keeping (they change the answer, never carry a credential).
KEPT_REQUEST_HEADERS = ("content-type", "anthropic-version", "anthropic-beta", "openai-beta")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class SseEvent(BaseModel):
    """One Server-Sent Event: its lines as received (`event: x`, `data: {...}`)."""

    model_config = ConfigDict(extra="forbid")

    lines: list[str]
    delay_ms: int = Field(0, ge=0, description="Time since the previous event when recorded.")


class RecordedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str = "POST"
    path: str
    endpoint: str
    provider: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None


class RecordedResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int
    content_type: str = "application/json"
    body: Any = None  # JSON body of a non-streamed answer (or its text)
    events: list[SseEvent] | None = None  # a streamed answer, event by event


class Cassette(BaseModel):
    """One recorded model call."""

    model_config = ConfigDict(extra="forbid")

    clawspec_cassette: int = Field(FORMAT, description="The file format's version: FORMAT.")
    scenario: str
    index: int = Field(ge=1, description="Order of the call within the scenario when recorded.")
    recorded_at: str
    openclaw_version: str | None = Field(
        None,
        description="The OpenClaw release of the gateway that made the call; null when it "
        "could not be told (a target gateway, a gateway command of your own, format 1).",
    )
    request: RecordedRequest
    response: RecordedResponse

    @field_validator("clawspec_cassette")
    @classmethod
    def _known_format(cls, version: int) -> int:
        if version not in READABLE:
            newer = " or upgrade ClawSpec" if version > FORMAT else ""
            raise ValueError(
                f"format version {version}, and this ClawSpec reads versions "
                f"{READABLE[0]} to {FORMAT}: record it again (clawspec run --model-traffic "
                f"record){newer}"
            )
        return version


@dataclass(frozen=True)
class CassetteFile:
    path: Path
    cassette: Cassette


@dataclass
class LoadProblem:
    path: Path
    message: str


@dataclass
class Loaded:
    files: list[CassetteFile] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)


def safe_name(name: str) -> str:
    """A scenario name as a folder name (no separators, nothing hidden)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "_"
    return cleaned[:120]


def contract_folder(contract_path: str) -> PurePosixPath:
    """`skills/x/tests/scenarios.yaml` -> `skills/x/tests/scenarios` (a relative POSIX path)."""
    parts = [safe_name(part) for part in PurePosixPath(contract_path).parts if part not in ("/",)]
    parts = [p for p in parts if p not in ("", "_")] or ["_"]
    last = re.sub(r"\.(ya?ml)$", "", PurePosixPath(contract_path).name) or "_"
    return PurePosixPath(*parts[:-1], safe_name(last))


def cassette_root(settings: Settings, workspace: Path) -> Path:
    """`cassette_dir`, relative to the workspace unless absolute."""
    path = Path(settings.cassette_dir)
    return path if path.is_absolute() else workspace / path


def scenario_dir(root: Path, contract_path: str, scenario: str) -> Path:
    return root / Path(contract_folder(contract_path)) / safe_name(scenario)


def identity_dir(root: Path, identity: ScenarioIdentity) -> Path:
    """A scenario run's cassette folder: its contract path (relative to the workspace root)
    and identity name, and a sub-folder per variant (each variant's model calls differ)."""
    folder = scenario_dir(root, identity.contract, identity.name)
    return folder if identity.variant is None else folder / safe_name(identity.variant)


def load_dir(folder: Path) -> Loaded:
    """Every cassette in one scenario folder, in recorded order; unreadable files as problems."""
    out = Loaded()
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json"), key=_numeric):
        try:
            cassette = Cassette.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            out.problems.append(LoadProblem(path, f"not a ClawSpec cassette: {_first_error(exc)}"))
            continue
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            out.problems.append(LoadProblem(path, f"cannot be read: {why}"))
            continue
        out.files.append(CassetteFile(path, cassette))
    out.files.sort(key=lambda f: f.cassette.index)
    return out


def _first_error(exc: ValidationError) -> str:
    """What is wrong, in a line: invalid JSON and where, or the first field and its problem."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _numeric(path: Path) -> tuple[int, str]:
    return (int(path.stem), "") if path.stem.isdigit() else (1 << 30, path.stem)


def write_dir(folder: Path, cassettes: Iterable[Cassette]) -> list[Path]:
    """Replace a scenario's recording with these cassettes (secrets masked: the registry's,
    which holds the keys the proxy saw and bring-up routed; clawspec/secrets.py)."""
    # Written beside it, then swapped in: a write that fails (a full disk, a read-only folder)
    # leaves the recording there was, not half of one or none.
    folder.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        names = []
        for cassette in cassettes:
            data = redact_data(mask_streamed(cassette.model_dump(mode="json")))
            (fresh / f"{cassette.index}.json").write_text(pretty(data), encoding="utf-8")
            names.append(f"{cassette.index}.json")
        old = folder.with_name(fresh.name + ".old")
        if folder.exists():
            folder.rename(old)
        fresh.rename(folder)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return [folder / name for name in names]


def pretty(data: dict[str, Any]) -> str:
    """Indented JSON, except one line per tool definition: the gateway sends ~40 tools with
    deep JSON schemas on every call, identical from call to call; indenting them would more than
    double the file and bury the messages a reviewer reads in a diff."""
    body = data.get("request", {}).get("body")
    tools = body.get("tools") if isinstance(body, dict) else None
    if not isinstance(tools, list) or not tools:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    lines = {f"\u0000tool-{i}\u0000": tool for i, tool in enumerate(tools)}
    body["tools"] = list(lines)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    for marker, tool in lines.items():
        compact = json.dumps(tool, ensure_ascii=False, separators=(", ", ": "))
        text = text.replace(json.dumps(marker), compact)
    body["tools"] = tools
    return text + "\n"


def mask_streamed(data: dict[str, Any]) -> dict[str, Any]:
    """A streamed answer with every secret masked across its events: a model streams a few
    characters an event, so a secret it echoes is split over several (`sk-HUNT-prov` then
    `ider-key`), which no event holds whole. The texts at one place of every event's JSON
    (`choices[0].delta.content`, `delta.text`, …) are joined in order; a secret found in the
    joined text becomes `***` in the first event it starts in and is taken out of the others."""
    response = data.get("response")
    events = response.get("events") if isinstance(response, dict) else None
    secrets = registered()
    if not isinstance(events, list) or not secrets:
        return data
    parsed: dict[tuple[int, int], Any] = {}  # (event, line) -> its `data:` JSON
    # place in the JSON -> the (event, line, text) there, in order
    streams: dict[tuple[Any, ...], list[tuple[int, int, str]]] = {}
    for e, event in enumerate(events):
        for n, line in enumerate(event.get("lines") or []):
            if not isinstance(line, str) or not line.startswith("data:"):
                continue
            try:
                payload = json.loads(line[5:])
            except ValueError:
                continue
            parsed[(e, n)] = payload
            for path, text in _strings(payload, ()):
                streams.setdefault(path, []).append((e, n, text))
    changed: set[tuple[int, int]] = set()
    for path, places in streams.items():
        texts = [text for _, _, text in places]
        joined = "".join(texts)
        if not any(secret in joined for secret in secrets):
            continue
        masked: list[list[str | None]] = [list(text) for text in texts]
        for secret in secrets:
            start = joined.find(secret)
            while start >= 0:
                _blank(masked, texts, start, start + len(secret))
                start = joined.find(secret, start + len(secret))
        for (e, n, text), chars in zip(places, masked, strict=True):
            new = "".join(c for c in chars if c is not None)
            if new != text:
                _put(parsed[(e, n)], path, new)
                changed.add((e, n))
    for e, n in changed:
        events[e]["lines"][n] = "data: " + json.dumps(parsed[(e, n)], ensure_ascii=False)
    return data


def _blank(masked: list[list[str | None]], texts: list[str], start: int, end: int) -> None:
    """Mask the characters [start, end) of the joined `texts`: MASK in the first, gone after."""
    offset, first = 0, True
    for k, text in enumerate(texts):
        low, high = max(start, offset), min(end, offset + len(text))
        if low < high:
            for i in range(low - offset, high - offset):
                masked[k][i] = None
            if first:
                masked[k][low - offset] = MASK
                first = False
        offset += len(text)


def _strings(value: Any, path: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def _put(value: Any, path: tuple[Any, ...], new: str) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def redact_data(data: Any) -> Any:
    """Every string in `data` with each secret masked (`text.redact`)."""
    if isinstance(data, dict):
        return {key: redact_data(value) for key, value in data.items()}
    if isinstance(data, list):
        return [redact_data(item) for item in data]
    if isinstance(data, str):
        return redact(data)
    return data


def kept_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers if k.lower() in KEPT_REQUEST_HEADERS}

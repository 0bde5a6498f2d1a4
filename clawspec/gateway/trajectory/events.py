"""The event format (the edge: pydantic, through its public API): the trajectory events
OpenClaw writes, as far as ClawSpec reads them.

Every event's `traceSchema`/`schemaVersion` is checked: an unknown one is an error naming both,
never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from clawspec.gateway.trajectory.cuts import bound_marker
from clawspec.gateway.trajectory.errors import BadEvent, UnknownSchema

TRACE_SCHEMA = "openclaw-trajectory"
SCHEMA_VERSIONS = frozenset({1})


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Envelope(_Model):
    type: str
    runId: str | None = None
    sessionId: str | None = None
    sessionKey: str | None = None
    provider: str | None = None
    modelId: str | None = None
    data: dict[str, Any] | None = None


class ToolCallData(_Model):
    toolCallId: str
    name: str
    args: Any = None


class ToolResultData(_Model):
    toolCallId: str
    name: str
    success: bool | None = None
    result: Any = None


class _Cost(_Model):
    total: float | None = None


class UsageData(_Model):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    total: int | None = None
    cost: _Cost | None = None


class Outcome(_Model):
    """The flags model.completed, trace.artifacts and session.ended share."""

    stopReason: str | None = None
    aborted: bool = False
    externalAbort: bool = False
    timedOut: bool = False
    idleTimedOut: bool = False
    timedOutDuringCompaction: bool = False
    timedOutDuringToolExecution: bool = False
    timedOutByRunBudget: bool = False


def _text_or_marker(value: Any) -> Any:
    if isinstance(value, str) or bound_marker(value) is not None:
        return value
    raise ValueError(
        "Input should be a valid string, or OpenClaw's marker of a text it did not keep"
    )


# A text OpenClaw writes as is, or as its marker when it does not keep it (a string over 32,768
# characters becomes `{"truncated": true, "reason": "trajectory-field-size-limit", …}`).
_Text = Annotated[Any, AfterValidator(_text_or_marker)]


class ModelCompleted(Outcome):
    assistantTexts: list[_Text] = []
    usage: UsageData | None = None


class Artifacts(Outcome):
    finalStatus: str | None = None
    messagingToolSentTexts: list[_Text] = []
    messagingToolSentTargets: list[dict[str, Any]] = []


class Prompt(_Model):
    prompt: _Text | None = None


M = TypeVar("M", bound=_Model)


@dataclass(frozen=True)
class Event:
    seq: int
    envelope: Envelope
    cut: bool  # only the envelope could be read within the bounds


def event_data(event: Event, model: type[M], where: str) -> M:
    try:
        return model.model_validate(event.envelope.data or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'data'}: {err['msg']}"
            for err in exc.errors(include_input=False, include_url=False)
        )
        raise BadEvent(
            f"{where}: event {event.seq} ({event.envelope.type}) of {TRACE_SCHEMA} version 1 "
            f"does not read as that version writes it ({problems}); the store may come from an "
            "OpenClaw release ClawSpec does not support yet"
        ) from None


def check_version(raw: Mapping[str, Any], where: str) -> None:
    """Raise UnknownSchema unless the event is `openclaw-trajectory` version 1."""
    schema, version = raw.get("traceSchema"), raw.get("schemaVersion")
    if schema == TRACE_SCHEMA and type(version) is int and version in SCHEMA_VERSIONS:
        return
    known = ", ".join(str(v) for v in sorted(SCHEMA_VERSIONS))
    raise UnknownSchema(
        f"{where}: an event has traceSchema {schema!r}, schemaVersion {version!r}; ClawSpec reads "
        f"traceSchema {TRACE_SCHEMA!r} version {known}: use an OpenClaw release ClawSpec supports "
        "or a ClawSpec release that reads this version",
        schema,
        version,
    )

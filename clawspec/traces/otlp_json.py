"""OTLP/JSON trace export requests decoded into `ReceivedSpan`s (the receiver's own span record),
and the attribute values that tie a span to a run or session (what the span store indexes).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from clawspec.text import cut

_HEX = re.compile(r"^[0-9a-fA-F]*$")
# Attribute keys whose string values identify a run or session (normalized: lower case, no `.`/`_`).
_CORRELATION_SUFFIXES = ("sessionkey", "sessionid", "runid", "conversationid", "threadid")
_MAX_KEY_VALUE = 512


class MalformedRequest(ValueError):
    """The body is not a valid OTLP export request (HTTP 400)."""


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as received; times in epoch nanoseconds (0: unknown)."""

    trace_id: str
    span_id: str
    name: str
    parent_span_id: str | None = None
    kind: int = 0
    start_ns: int = 0
    end_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=dict)
    resource: Mapping[str, Any] = field(default_factory=dict)
    scope: str | None = None
    status_code: int = 0  # 0 unset, 1 ok, 2 error
    status_message: str | None = None
    events: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["events"] = list(self.events)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReceivedSpan:
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        values["events"] = tuple(values.get("events") or ())
        return cls(**values)


# -- OTLP/JSON (and decoded protobuf) → ReceivedSpan -----------------------------------------


def _id(value: Any, size: int, what: str) -> str:
    """OTLP/JSON ids are hex; tolerate base64 (protobuf-JSON mapping) too. Empty → ''."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise MalformedRequest(f"{what} is not a string")
    if len(value) == size * 2 and _HEX.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size:
        return raw.hex()
    raise MalformedRequest(f"{what} {cut(value, 40)!r} is not {size} bytes of hex")


def _nanos(value: Any, what: str) -> int:
    if value in (None, ""):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise MalformedRequest(f"{what} {value!r} is not an integer") from exc


def any_value(value: Any) -> Any:
    """An OTLP AnyValue object → a plain Python value."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError) as exc:
            raise MalformedRequest(f"intValue {value['intValue']!r} is not an integer") from exc
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError) as exc:
            raise MalformedRequest(f"doubleValue {value['doubleValue']!r} is not a number") from exc
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values"))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any) -> dict[str, Any]:
    if items in (None, ""):
        return {}
    if not isinstance(items, list):
        raise MalformedRequest("attributes is not a list")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise MalformedRequest("attribute without a string key")
        out[item["key"]] = any_value(item.get("value"))
    return out


def _list(value: Any, what: str) -> list[Any]:
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise MalformedRequest(f"{what} is not a list")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise MalformedRequest(f"{what} is not an object")
    return value


def spans_from_request(doc: Any) -> list[ReceivedSpan]:
    """An ExportTraceServiceRequest in OTLP/JSON shape → spans. Raises MalformedRequest."""
    if not isinstance(doc, Mapping):
        raise MalformedRequest("the request is not a JSON object")
    out: list[ReceivedSpan] = []
    for raw_rs in _list(doc.get("resourceSpans"), "resourceSpans"):
        rs = _mapping(raw_rs, "resourceSpans[]")
        resource = attributes(_mapping(rs.get("resource"), "resource").get("attributes"))
        scope_spans = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")
        for raw_ss in _list(scope_spans, "scopeSpans"):
            ss = _mapping(raw_ss, "scopeSpans[]")
            scope = _mapping(ss.get("scope"), "scope").get("name")
            for raw in _list(ss.get("spans"), "spans"):
                out.append(_span(_mapping(raw, "span"), resource, scope))
    return out


def _span(raw: Mapping[str, Any], resource: dict[str, Any], scope: Any) -> ReceivedSpan:
    trace_id = _id(raw.get("traceId"), 16, "traceId")
    span_id = _id(raw.get("spanId"), 8, "spanId")
    if not trace_id or not span_id:
        raise MalformedRequest("a span without traceId or spanId")
    status = _mapping(raw.get("status"), "status")
    code = status.get("code", 0)
    if isinstance(code, str):  # protobuf-JSON enums may come as names
        code = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, 0)
    events = tuple(
        {
            "name": event.get("name", ""),
            "time_ns": _nanos(event.get("timeUnixNano"), "event timeUnixNano"),
            "attributes": attributes(event.get("attributes")),
        }
        for event in (_mapping(e, "event") for e in _list(raw.get("events"), "events"))
    )
    kind = raw.get("kind", 0)
    return ReceivedSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=_id(raw.get("parentSpanId"), 8, "parentSpanId") or None,
        name=str(raw.get("name") or ""),
        kind=kind if isinstance(kind, int) else 0,
        start_ns=_nanos(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        end_ns=_nanos(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
        attributes=attributes(raw.get("attributes")),
        resource=resource,
        scope=scope if isinstance(scope, str) else None,
        status_code=int(code) if isinstance(code, int) else 0,
        status_message=status.get("message") or None,
        events=events,
    )


def correlation_values(attrs: Mapping[str, Any]) -> set[str]:
    """String values of attributes naming a session or run (`openclaw.session_key`,
    `session.id`, `openclaw.run_id`, `gen_ai.conversation.id`, ...)."""
    out = set()
    for key, value in attrs.items():
        norm = key.lower().replace("_", "").replace(".", "").replace("-", "")
        if (
            isinstance(value, str)
            and 0 < len(value) <= _MAX_KEY_VALUE
            and norm.endswith(_CORRELATION_SUFFIXES)
        ):
            out.add(value)
    return out

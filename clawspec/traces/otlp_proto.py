"""A minimal protobuf wire-format decoder for OTLP trace export requests (no protobuf package).

`decode_export_request(body)` turns an `ExportTraceServiceRequest`
(opentelemetry/proto/collector/trace/v1) into the same structure as OTLP/JSON — camelCase keys,
hex trace/span ids, times as integers, attribute values as `{"stringValue": ...}` objects — so the
receiver has one code path for both encodings. Only the fields ClawSpec reads are decoded;
unknown fields are skipped as the wire format allows. Malformed input raises `ProtoError`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

VARINT, I64, LEN, I32 = 0, 1, 2, 5
MAX_DEPTH = 32  # nested AnyValue arrays/kvlists deeper than this are refused


class ProtoError(ValueError):
    """The bytes are not a valid protobuf message of the expected shape."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at `pos`; return (value, next position)."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtoError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtoError("varint too long")


def fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) for each field of a message.

    Values: int for varint, bytes for length-delimited, raw 8/4 bytes for fixed64/fixed32.
    """
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoError("field number 0")
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == I64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == LEN:
            size, pos = read_varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == I32:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ProtoError(f"unsupported wire type {wire}")
        if pos > end:
            raise ProtoError("truncated field")
        yield number, wire, value


def _expect(wire: int, want: int, what: str) -> None:
    if wire != want:
        raise ProtoError(f"{what}: wire type {wire}, expected {want}")


def _text(value: bytes, what: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtoError(f"{what} is not UTF-8") from exc


def _fixed64(value: bytes) -> int:
    return int(struct.unpack("<Q", value)[0])


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def any_value(data: bytes, depth: int = 0) -> dict[str, Any]:
    """AnyValue → its OTLP/JSON object (`{"stringValue": "x"}`, `{"intValue": 3}`, ...)."""
    if depth > MAX_DEPTH:
        raise ProtoError("attribute values nested too deeply")
    out: dict[str, Any] = {}
    for number, wire, value in fields(data):
        if number == 1:
            _expect(wire, LEN, "stringValue")
            out = {"stringValue": _text(value, "stringValue")}
        elif number == 2:
            _expect(wire, VARINT, "boolValue")
            out = {"boolValue": bool(value)}
        elif number == 3:
            _expect(wire, VARINT, "intValue")
            out = {"intValue": _signed64(value)}
        elif number == 4:
            _expect(wire, I64, "doubleValue")
            out = {"doubleValue": struct.unpack("<d", value)[0]}
        elif number == 5:
            _expect(wire, LEN, "arrayValue")
            values = [any_value(v, depth + 1) for n, w, v in fields(value) if n == 1 and w == LEN]
            out = {"arrayValue": {"values": values}}
        elif number == 6:
            _expect(wire, LEN, "kvlistValue")
            kvs = [key_value(v, depth + 1) for n, w, v in fields(value) if n == 1 and w == LEN]
            out = {"kvlistValue": {"values": kvs}}
        elif number == 7:
            _expect(wire, LEN, "bytesValue")
            out = {"bytesValue": value.hex()}
    return out


def key_value(data: bytes, depth: int = 0) -> dict[str, Any]:
    key, value = "", {}
    for number, wire, raw in fields(data):
        if number == 1:
            _expect(wire, LEN, "key")
            key = _text(raw, "attribute key")
        elif number == 2:
            _expect(wire, LEN, "value")
            value = any_value(raw, depth)
    return {"key": key, "value": value}


def _message(
    data: bytes, handlers: dict[int, tuple[int, str, Callable[[Any], Any]]], repeated: set[int]
) -> dict[str, Any]:
    """Decode a message with `handlers`: field number → (wire type, JSON name, converter)."""
    out: dict[str, Any] = {}
    for number, wire, value in fields(data):
        handler = handlers.get(number)
        if handler is None:
            continue
        want, name, convert = handler
        _expect(wire, want, name)
        if number in repeated:
            out.setdefault(name, []).append(convert(value))
        else:
            out[name] = convert(value)
    return out


def _str(what: str) -> Callable[[bytes], str]:
    return lambda value: _text(value, what)


_KV = (LEN, "attributes", key_value)
_RESOURCE = {1: _KV, 2: (VARINT, "droppedAttributesCount", int)}
_SCOPE = {
    1: (LEN, "name", _str("scope name")),
    2: (LEN, "version", _str("scope version")),
    3: _KV,
}
_STATUS = {2: (LEN, "message", _str("status message")), 3: (VARINT, "code", int)}
_EVENT = {
    1: (I64, "timeUnixNano", _fixed64),
    2: (LEN, "name", _str("event name")),
    3: _KV,
}
_SPAN = {
    1: (LEN, "traceId", bytes.hex),
    2: (LEN, "spanId", bytes.hex),
    3: (LEN, "traceState", _str("traceState")),
    4: (LEN, "parentSpanId", bytes.hex),
    5: (LEN, "name", _str("span name")),
    6: (VARINT, "kind", int),
    7: (I64, "startTimeUnixNano", _fixed64),
    8: (I64, "endTimeUnixNano", _fixed64),
    9: _KV,
    11: (LEN, "events", lambda v: _message(v, _EVENT, {3})),
    15: (LEN, "status", lambda v: _message(v, _STATUS, set())),
}
_SCOPE_SPANS = {
    1: (LEN, "scope", lambda v: _message(v, _SCOPE, {3})),
    2: (LEN, "spans", lambda v: _message(v, _SPAN, {9, 11})),
    3: (LEN, "schemaUrl", _str("schemaUrl")),
}
_RESOURCE_SPANS = {
    1: (LEN, "resource", lambda v: _message(v, _RESOURCE, {1})),
    2: (LEN, "scopeSpans", lambda v: _message(v, _SCOPE_SPANS, {2})),
    3: (LEN, "schemaUrl", _str("schemaUrl")),
}
_REQUEST = {1: (LEN, "resourceSpans", lambda v: _message(v, _RESOURCE_SPANS, {2}))}


def decode_export_request(body: bytes) -> dict[str, Any]:
    """ExportTraceServiceRequest bytes → the OTLP/JSON-shaped dict `{"resourceSpans": [...]}`."""
    try:
        decoded = _message(body, _REQUEST, {1})
    except (struct.error, IndexError, RecursionError) as exc:
        raise ProtoError(f"malformed protobuf: {exc}") from exc
    decoded.setdefault("resourceSpans", [])
    return decoded

"""The embedded OTLP/HTTP receiver: both encodings, errors, bounds, concurrency, read-back."""

from __future__ import annotations

import gzip
import json
import struct
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest

from clawspec.traces.otlp_json import ReceivedSpan, spans_from_request
from clawspec.traces.otlp_proto import ProtoError, decode_export_request
from clawspec.traces.receiver import FIND_PATH, HEALTH_PATH, OtlpReceiver, running_receiver
from clawspec.traces.span_store import SpanStore, TraceMatch

TRACE = "4e0098c09fba733f1d10995901d406e9"
OTHER = "f053c351aa00bb11cc22dd33ee44ff55"

# -- a tiny protobuf encoder (test side only) -------------------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def fixed64(number: int, value: int) -> bytes:
    return tag(number, 1) + struct.pack("<Q", value)


def any_value(value: Any) -> bytes:
    if isinstance(value, bool):
        return tag(2, 0) + varint(int(value))
    if isinstance(value, int):
        return tag(3, 0) + varint(value)
    if isinstance(value, float):
        return tag(4, 1) + struct.pack("<d", value)
    if isinstance(value, list):
        return ld(5, b"".join(ld(1, any_value(v)) for v in value))
    return ld(1, str(value).encode())


def kv(key: str, value: Any) -> bytes:
    return ld(1, key.encode()) + ld(2, any_value(value))


def pb_span(
    trace_id: str,
    span_id: str,
    name: str,
    attrs: dict[str, Any],
    parent: str | None = None,
    start_ns: int = 1_000_000_000,
    end_ns: int = 2_000_000_000,
    status: tuple[int, str] | None = None,
) -> bytes:
    out = ld(1, bytes.fromhex(trace_id)) + ld(2, bytes.fromhex(span_id))
    if parent:
        out += ld(4, bytes.fromhex(parent))
    out += ld(5, name.encode()) + tag(6, 0) + varint(1)
    out += fixed64(7, start_ns) + fixed64(8, end_ns)
    out += b"".join(ld(9, kv(k, v)) for k, v in attrs.items())
    out += ld(11, fixed64(1, end_ns) + ld(2, b"exception") + ld(3, kv("exception.message", "x")))
    if status:
        out += ld(15, ld(2, status[1].encode()) + tag(3, 0) + varint(status[0]))
    out += ld(99, b"unknown field, skipped")
    return out


def pb_request(spans: list[bytes], resource: dict[str, Any] | None = None) -> bytes:
    res = ld(1, b"".join(ld(1, kv(k, v)) for k, v in (resource or {}).items()))
    scope = ld(1, ld(1, b"clawspec") + ld(2, b"1.0.0"))
    scope_spans = ld(2, scope + b"".join(ld(2, s) for s in spans))
    return ld(1, res + scope_spans)


def json_span(trace_id: str, span_id: str, name: str, attrs: dict[str, Any], **extra: Any):
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"stringValue": v}

    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": str(extra.pop("start_ns", 1_000_000_000)),
        "endTimeUnixNano": str(extra.pop("end_ns", 2_000_000_000)),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        **extra,
    }


def json_request(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "x"}}]
                },
                "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}],
            }
        ]
    }


def post(url: str, body: bytes, ctype: str, encoding: str | None = None) -> tuple[int, bytes, str]:
    headers = {"Content-Type": ctype}
    if encoding:
        headers["Content-Encoding"] = encoding
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read(), resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers.get("Content-Type", "")


@pytest.fixture
def receiver():
    with OtlpReceiver(0) as rec:
        yield rec


# -- protobuf decoding -------------------------------------------------------------------------


def test_protobuf_request_decodes_to_the_json_shape() -> None:
    body = pb_request(
        [
            pb_span(
                TRACE,
                "a21817cfa5bd91b9",
                "openclaw.model.call",
                {
                    "gen_ai.request.model": "fake-model",
                    "gen_ai.usage.input_tokens": 1000,
                    "neg": -5,
                    "ratio": 0.5,
                    "ok": True,
                    "list": ["a", 2],
                },
                parent="43103f7a31f1b2b9",
                status=(2, "boom"),
            )
        ],
        resource={"service.name": "openclaw"},
    )
    spans = spans_from_request(decode_export_request(body))
    assert len(spans) == 1
    span = spans[0]
    assert (span.trace_id, span.span_id, span.parent_span_id) == (
        TRACE,
        "a21817cfa5bd91b9",
        "43103f7a31f1b2b9",
    )
    assert span.name == "openclaw.model.call"
    assert (span.start_ns, span.end_ns, span.kind) == (1_000_000_000, 2_000_000_000, 1)
    assert span.attributes == {
        "gen_ai.request.model": "fake-model",
        "gen_ai.usage.input_tokens": 1000,
        "neg": -5,
        "ratio": 0.5,
        "ok": True,
        "list": ["a", 2],
    }
    assert span.resource == {"service.name": "openclaw"}
    assert (span.status_code, span.status_message, span.scope) == (2, "boom", "clawspec")
    assert span.events[0]["name"] == "exception"
    assert span.events[0]["attributes"] == {"exception.message": "x"}


@pytest.mark.parametrize(
    "body",
    [
        b"\x0a\xff\xff\xff\xff\x0f",  # length beyond the end
        b"\x0a\x02\x12",  # truncated nested message
        b"\x0b",  # wire type 3 (groups)
        b"\x08" + b"\xff" * 11,  # varint too long
        b"\x09\x00",  # resourceSpans with the wrong wire type
    ],
)
def test_malformed_protobuf_raises(body: bytes) -> None:
    with pytest.raises(ProtoError):
        decode_export_request(body)


def test_empty_protobuf_is_an_empty_request() -> None:
    assert decode_export_request(b"") == {"resourceSpans": []}


# -- HTTP ----------------------------------------------------------------------------------------


def test_json_ingestion_answers_empty_response_and_stores(receiver: OtlpReceiver) -> None:
    body = json.dumps(
        json_request(
            [
                json_span(
                    TRACE,
                    "43103f7a31f1b2b9",
                    "openclaw.run",
                    {"openclaw.session_key": "agent:main:cron:j:run:s", "n": 3},
                    status={"code": 2, "message": "bad"},
                )
            ]
        )
    ).encode()
    status, answer, ctype = post(receiver.traces_url, body, "application/json")
    assert (status, answer, ctype) == (200, b"{}", "application/json")
    match = receiver.store.find(["agent:main:cron:j:run:s"])
    assert match.by == "key" and match.trace_ids == (TRACE,)
    span = match.spans[0]
    assert span.attributes == {"openclaw.session_key": "agent:main:cron:j:run:s", "n": 3}
    assert (span.status_code, span.status_message) == (2, "bad")


def test_protobuf_ingestion_answers_empty_protobuf(receiver: OtlpReceiver) -> None:
    body = pb_request([pb_span(TRACE, "a21817cfa5bd91b9", "openclaw.model.call", {})])
    status, answer, ctype = post(
        receiver.traces_url + "/", body, "application/x-protobuf; charset=binary"
    )
    assert (status, answer, ctype) == (200, b"", "application/x-protobuf")
    assert len(receiver.store) == 1


def test_gzip_bodies_are_accepted(receiver: OtlpReceiver) -> None:
    body = gzip.compress(json.dumps(json_request([json_span(TRACE, "1" * 16, "a", {})])).encode())
    status, _, _ = post(receiver.traces_url, body, "application/json", encoding="gzip")
    assert status == 200
    assert len(receiver.store) == 1


def test_other_content_types_get_415(receiver: OtlpReceiver) -> None:
    status, answer, _ = post(receiver.traces_url, b"x", "text/plain")
    assert status == 415
    assert "application/x-protobuf" in json.loads(answer)["error"]
    assert receiver.rejected == 1


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (b"{not json", "application/json"),
        (b"[1, 2]", "application/json"),
        (json.dumps({"resourceSpans": {"x": 1}}).encode(), "application/json"),
        (
            json.dumps(json_request([json_span("zz", "1" * 16, "a", {})])).encode(),
            "application/json",
        ),
        (json.dumps(json_request([json_span(TRACE, "", "a", {})])).encode(), "application/json"),
        (b"\x0a\xff\xff\xff\xff\x0f", "application/x-protobuf"),
    ],
)
def test_malformed_bodies_get_400(receiver: OtlpReceiver, body: bytes, ctype: str) -> None:
    status, answer, _ = post(receiver.traces_url, body, ctype)
    assert status == 400
    assert "malformed OTLP request" in json.loads(answer)["error"]
    assert len(receiver.store) == 0


def test_unknown_path_is_404_and_health_answers(receiver: OtlpReceiver) -> None:
    status, _, _ = post(receiver.endpoint + "/v1/metrics", b"{}", "application/json")
    assert status == 404
    with urllib.request.urlopen(receiver.endpoint + HEALTH_PATH, timeout=5) as resp:
        health = json.loads(resp.read())
    assert health["ok"] is True and health["spans"] == 0


def test_find_endpoint_serves_matches(receiver: OtlpReceiver) -> None:
    receiver.store.add(
        [ReceivedSpan(TRACE, "1" * 16, "openclaw.hook", attributes={"session.id": "hook:x:1"})]
    )
    url = f"{receiver.endpoint}{FIND_PATH}?key=nope&key=hook:x:1"
    with urllib.request.urlopen(url, timeout=5) as resp:
        match = TraceMatch.from_json(json.loads(resp.read()))
    assert match.by == "key" and match.trace_ids == (TRACE,)
    assert match.spans[0].attributes == {"session.id": "hook:x:1"}


def test_registry_tracks_running_receivers() -> None:
    with OtlpReceiver(0) as rec:
        assert running_receiver(rec.endpoint) is rec
        assert running_receiver(rec.traces_url + "/") is rec
    assert running_receiver(rec.endpoint) is None


def test_only_loopback_binds() -> None:
    with pytest.raises(ValueError, match="loopback"):
        OtlpReceiver(0, "0.0.0.0")


def test_concurrent_exporters_lose_nothing(receiver: OtlpReceiver) -> None:
    def export(worker: int) -> None:
        for batch in range(10):
            spans = [
                json_span(f"{worker:02x}" * 16, f"{batch:04x}{i:012x}", "s", {}) for i in range(20)
            ]
            status, _, _ = post(
                receiver.traces_url, json.dumps(json_request(spans)).encode(), "application/json"
            )
            assert status == 200

    threads = [threading.Thread(target=export, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(receiver.store) == 8 * 10 * 20
    assert receiver.store.trace_count == 8
    assert receiver.requests == 80


# -- the store -----------------------------------------------------------------------------------


def _span(trace: str, span: str, **kw: Any) -> ReceivedSpan:
    return ReceivedSpan(trace, span, kw.pop("name", "s"), **kw)


def test_store_drops_oldest_traces_beyond_the_bound() -> None:
    store = SpanStore(max_spans=10)
    for t in range(5):
        store.add(
            [
                _span(f"{t:032x}", f"{t:08x}{i:08x}", attributes={"openclaw.run_id": f"r{t}"})
                for i in range(4)
            ]
        )
    assert len(store) <= 10
    assert store.trace_count == 2
    assert store.find(["r0"]).by == "none"  # dropped with its index entries
    assert store.find(["r4"]).trace_ids == (f"{4:032x}",)
    assert store.dropped_traces == 3


def test_resent_span_replaces_the_earlier_copy() -> None:
    store = SpanStore()
    store.add([_span(TRACE, "1" * 16, name="old")])
    store.add([_span(TRACE, "1" * 16, name="new")])
    assert len(store) == 1
    assert store.find([TRACE]).spans[0].name == "new"


def test_window_matches_only_a_single_trace() -> None:
    store = SpanStore()
    store.add([_span(TRACE, "1" * 16, start_ns=100, end_ns=200)])
    assert store.find([], (150, 300)).by == "window"
    assert store.find([], (300, 400)).by == "none"
    store.add([_span(OTHER, "2" * 16, start_ns=180, end_ns=260)])
    ambiguous = store.find([], (150, 300))
    assert (ambiguous.by, ambiguous.candidates, ambiguous.spans) == ("ambiguous", 2, ())


def test_traces_linked_by_parent_span_are_merged() -> None:
    store = SpanStore()
    store.add([_span(TRACE, "1" * 16, attributes={"session.id": "hook:a"})])
    store.add([_span(OTHER, "2" * 16, parent_span_id="1" * 16)])  # a child with its own trace
    match = store.find(["hook:a"])
    assert set(match.trace_ids) == {TRACE, OTHER}
    assert len(match.spans) == 2
    assert set(store.find([OTHER]).trace_ids) == {TRACE, OTHER}  # and from the child upwards

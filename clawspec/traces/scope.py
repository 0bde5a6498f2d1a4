"""Only the scenario's own spans: a trace id alone does not make a span part of the run.

OpenClaw may run something else under the hook request's trace id: a heartbeat of the main
session (`agent:main:main`) has been seen there with a failing `openclaw.message` span, which
then failed the scenario's `no_span_errors`. Every backend's trace is cut down to the spans of the
run's own sessions and of the sub-agents it spawned before any assertion reads it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.model import Span, Trace

_KEY, _ID = "openclaw.session_key", "openclaw.session_id"
# A sub-agent's session: `agent:<id>:subagent:<uuid>`, or `agent:<id>:acp:<uuid>` (ACP runtime).
CHILD_SESSION = re.compile(r":(?:subagent|acp):")


def only_this_run(trace: Trace, query: TraceQuery) -> Trace:
    """Keep the spans of the run's own sessions and of the sub-agents it spawned.

    The run's sessions are those on its hook span (matched by hook run id or by the session key
    ClawSpec sent) and those the gateway log tied to it; a sub-agent session joins when its span
    hangs below a kept span, at any depth (OpenClaw's sub-agent keys are flat at every depth). A
    span without session attributes belongs to its nearest ancestor that has them (kept when
    there is none). Without a hook span or log ids there is nothing to tell runs apart by: the
    trace is kept whole.
    """
    ours = {
        ("openclaw.hook_run_id", query.gateway_run_id),
        ("openclaw.logical_session_key", query.session_key),
        ("session.id", query.session_key),
    }
    sessions = set(query.related_ids)
    for span in trace.spans:
        if span.name == "openclaw.hook" and any(
            value and span.attributes.get(name) == value for name, value in ours
        ):
            sessions.update(v for v in (_session(span, _KEY), _session(span, _ID)) if v)
    if not sessions:
        return trace
    by_id = {span.id: span for span in trace.spans}

    def owner(span: Span) -> Span | None:
        seen: set[str] = set()
        node: Span | None = span
        while node is not None and node.id not in seen:
            if _session(node, _KEY) or _session(node, _ID):
                return node
            seen.add(node.id)
            node = by_id.get(node.parent_id or "")
        return None

    def in_scope(span: Span | None) -> bool:
        return span is None or bool({_session(span, _KEY), _session(span, _ID)} & sessions)

    grew = True
    while grew:  # sub-agents of sessions in scope, at any depth
        grew = False
        for span in trace.spans:
            key = _session(span, _KEY)
            if not key or key in sessions or not CHILD_SESSION.search(key):
                continue
            parent = by_id.get(span.parent_id or "")
            if parent is not None and in_scope(owner(parent)):
                sessions.update(v for v in (key, _session(span, _ID)) if v)
                grew = True
    kept = tuple(span for span in trace.spans if in_scope(owner(span)))
    return trace if len(kept) == len(trace.spans) else replace(trace, spans=kept)


def _session(span: Span, attribute: str) -> str | None:
    value = span.attributes.get(attribute)
    return value if isinstance(value, str) and value else None

"""What a scenario's run did, condensed for the reports (`ScenarioResult.evidence`).

Built after the assertions from the evidence they already gathered: the run-scoped log index,
the plugin records, the fetched trace and OpenClaw's run record. When no assertion read the log,
the run's slice of the active gateway log is indexed once without waiting for late lines (a
report must not slow every scenario down); when there is no log (target mode without log
access) the tools come from the trace, if one was fetched, else stay empty. The tokens and cost
come from the run record wherever it can be read (its `model.completed` usage; read here, briefly,
when no assertion did); where the plugin's events count otherwise, `disagreement` says so rather
than one being silently chosen. Each tool call's arguments come from the run record
(`clawspec.reports.tool_args`: matched, masked and cut there); arguments OpenClaw itself cut
before recording them are marked cut too (`args_cut`, their recorded JSON text as `args`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from clawspec.evidence.context import RunInfo
from clawspec.evidence.cost import UNKNOWN_MODEL, plugin_cost, usage_cost
from clawspec.evidence.record import RunRecords, args_cuts, report_records
from clawspec.evidence.spans import CALL_ID_ATTRIBUTES, by_start, delegation_spans, tool_spans
from clawspec.evidence.store import Evidence
from clawspec.evidence.usage import Counted, disagreement, record_usage
from clawspec.gateway.logs.index import LogIndex
from clawspec.gateway.logs.scope import hook_session_keys
from clawspec.gateway.plugin_records import PluginRecord, read_plugin_records
from clawspec.gateway.refusals import AnswerReader
from clawspec.reports.model import ScenarioEvidence, SpanRecord, TokenTotals, ToolCallRecord
from clawspec.reports.tool_args import DEFAULT_ARGS_BYTES, with_args
from clawspec.text import one_line
from clawspec.traces.model import Span, SpanType, Trace

if TYPE_CHECKING:
    from clawspec.config.settings import ModelPrice, Settings

MAX_SPANS = 200  # spans kept per scenario; the rest are counted in `spans_omitted`
MAX_TOOLS = 500  # a runaway tool loop must not blow up the report
# A found run whose sub-agents are still running gets this long before the report indexes it;
# plugin records get as long to settle (their last usage line follows the run's end).
LATE_LINES_S = 1.0
_PLUGIN_POLL_S = 0.1


def scenario_evidence(
    evidence: Evidence,
    run: RunInfo,
    stop: threading.Event | None = None,
    pricing: Mapping[str, ModelPrice] | None = None,
    settings: Settings | None = None,
) -> ScenarioEvidence | None:
    """Condense the run's evidence; None when there is none at all (no log, no trace).

    `pricing` (the config's `model_pricing`) prices the usage that carries no native cost;
    `settings` say where the gateway's run record is (`openclaw_state_dir`)."""
    index = _log_index(evidence, run, stop)
    trace = evidence.built_trace()
    trace = trace if isinstance(trace, Trace) else None
    keys = hook_session_keys(index) if index is not None else []
    found = report_records(evidence, run, settings, keys, LATE_LINES_S, stop)
    recorded = _record_tokens(found, pricing or {})
    if index is None and trace is None and recorded is None and found is None:
        return None
    records = _plugin_records(evidence, index, stop) if index is not None else []
    tools = _log_tools(index, records) if index is not None else []
    call_ids = [call.tool_call_id for call in index.tool_calls] if index is not None else []
    if not tools and trace is not None:
        tools = _trace_tools(trace)
        call_ids = [_call_id(span) for span in tool_spans(trace)]
    limit = settings.limits.tool_args_bytes if settings is not None else DEFAULT_ARGS_BYTES
    tools = [
        _cut_by_openclaw(t) for t in with_args(tools[:MAX_TOOLS], call_ids, found, limit, MAX_TOOLS)
    ]
    if index is not None:
        delegations = list(index.subagents)
    else:
        delegations = list(dict.fromkeys(delegation_spans(trace)[1])) if trace else []
    spans, omitted = _spans(trace) if trace is not None else ([], 0)
    return ScenarioEvidence(
        tools=tools[:MAX_TOOLS],  # also the record's own calls, when there is no log
        delegations=delegations,
        tokens=_agreed(recorded, _tokens(index, records, trace, pricing or {})),
        models=_models(index, records, trace),
        spans=spans,
        spans_omitted=omitted,
    )


def _cut_by_openclaw(tool: ToolCallRecord) -> ToolCallRecord:
    """`tool` with `args_cut` set when OpenClaw itself cut its arguments before recording them
    (its `{"truncated": true, "reason": "trajectory-…-limit"}` markers stand in the cut parts):
    `args` is then their JSON text as recorded, markers included, `args_bytes` unknown."""
    if tool.args_cut or tool.args is None:
        return tool
    if not any(cut.reason.startswith("trajectory-") for cut in args_cuts(tool.args)):
        return tool
    text = json.dumps(tool.args, ensure_ascii=False, separators=(",", ":"), default=str)
    return tool.model_copy(update={"args": text, "args_cut": True, "args_bytes": None})


# -- the log -----------------------------------------------------------------------------


def _log_index(evidence: Evidence, run: RunInfo, stop: threading.Event | None) -> LogIndex | None:
    """The index an assertion built for this run, else a quick one of the active log's slice."""
    built = [index for index in evidence.built_log_indexes() if index.found]
    active = evidence.gateway_log
    for index in built:
        if active is not None and index.path == active:
            return index
    if built:
        return built[0]
    if active is None or not active.is_file():
        return None
    index = LogIndex.build(
        active,
        evidence.log_offset,
        run_ids=(run.run_id, run.gateway_run_id),
        session_keys=(run.session_key,),
        started_at=run.started_at.timestamp(),
        inode=evidence.log_inode,
        subagent_wait_s=LATE_LINES_S,
        poll_interval_s=_PLUGIN_POLL_S,
        stop=stop,
        answers=_answers(evidence),
        later=evidence.logs_after_start,
    )
    return index if index.found else None


def _answers(evidence: Evidence) -> AnswerReader | None:
    """The plugin's answers to the run's calls: a refused call is not listed as a call."""
    path = evidence.plugin_output
    return AnswerReader(path, evidence.plugin_offset) if path is not None else None


def _log_tools(index: LogIndex, records: list[PluginRecord]) -> list[ToolCallRecord]:
    """The log's tool starts in order; ends from the log, errors and agents from the plugin."""
    ends: dict[tuple[str | None, str | None], PluginRecord] = {}
    for rec in records:
        if rec.kind == "tool" and rec.phase in ("completed", "error", "blocked"):
            ends[(rec.run_id, rec.tool_call_id)] = rec
    tools: list[ToolCallRecord] = []
    for call in index.tool_calls:
        end = ends.get((call.run_id, call.tool_call_id)) if call.tool_call_id else None
        tools.append(
            ToolCallRecord(
                name=call.name,
                agent=index.agent_of(call.run_id) or (end.agent_id if end else None),
                run_id=call.run_id,
                started_at=call.time,
                ended_at=index.tool_ended_at(call) or (_iso(end.ts) if end else None),
                error=bool(end and end.phase in ("error", "blocked")),
            )
        )
    return tools


def _plugin_records(
    evidence: Evidence, index: LogIndex, stop: threading.Event | None
) -> list[PluginRecord]:
    """The plugin records an assertion read, else the run's slice read now (briefly settled)."""
    for records in evidence.built_plugin_records():
        if records:
            return list(records)
    path = evidence.plugin_output
    if path is None or not path.is_file():
        return []
    records = read_plugin_records(path, evidence.plugin_offset)
    deadline = time.monotonic() + LATE_LINES_S
    stop = stop or threading.Event()
    while not index.plugin_settled(records) and time.monotonic() < deadline:
        if stop.wait(_PLUGIN_POLL_S):
            break
        records = read_plugin_records(path, evidence.plugin_offset)
    return records


def _tokens(
    index: LogIndex | None,
    records: list[PluginRecord],
    trace: Trace | None,
    pricing: Mapping[str, ModelPrice],
) -> TokenTotals | None:
    """Plugin model calls first, then the log's usage lines, then the trace's LLM spans.

    The cost is known only when every part of the usage has one (native, else `model_pricing`
    for its model); otherwise it is null and `unpriced` names the models: never a partial sum
    that would read as the whole.
    """
    if index is not None and (usage := index.usage_from_plugin(records)) is not None:
        cost, unpriced = plugin_cost(records, index.owns, pricing)
        return TokenTotals(
            input=usage.input, output=usage.output, total=usage.total, cost_usd=cost,
            unpriced=unpriced, source="plugin",
        )  # fmt: skip
    if index is not None and (legacy := index.legacy_usage) is not None:
        return TokenTotals(
            input=legacy.input,
            output=legacy.output,
            total=legacy.total,
            unpriced=[UNKNOWN_MODEL],  # the legacy lines name no model
            source="log",
        )
    if trace is None:
        return None
    llm = trace.of_type(SpanType.LLM)
    if not llm:
        return None
    inputs = [s.input_tokens for s in llm if s.input_tokens is not None]
    outputs = [s.output_tokens for s in llm if s.output_tokens is not None]
    totals = [s.tokens for s in llm if s.tokens is not None]
    if trace.cost_usd is not None:
        cost, unpriced = trace.cost_usd, []
    else:
        cost, unpriced = usage_cost(
            ((s.cost_usd, s.model, s.input_tokens, s.output_tokens) for s in llm), pricing
        )
    return TokenTotals(
        input=sum(inputs) if inputs else None,
        output=sum(outputs) if outputs else None,
        total=sum(totals) if totals else None,
        cost_usd=cost,
        unpriced=unpriced,
        source="trace",
    )


def _record_tokens(
    found: RunRecords | None, pricing: Mapping[str, ModelPrice]
) -> TokenTotals | None:
    """The usage OpenClaw's run record gives the scope's runs and their sub-agents (one
    `model.completed` per run, summed over its model calls), when every run in it ended with
    its usage recorded; else None (never a partial sum)."""
    usage = record_usage(found, pricing) if found is not None else None
    if usage is None:
        return None
    counted = usage.counted
    return TokenTotals(
        input=counted.input,
        output=counted.output,
        total=counted.total,
        cost_usd=counted.cost_usd,
        unpriced=list(usage.unpriced),
        source="run record",
    )


def _agreed(recorded: TokenTotals | None, other: TokenTotals | None) -> TokenTotals | None:
    """The run record's figures when there are any, else `other`'s; where the plugin's events
    give them too and they differ, `disagreement` says what the plugin counted."""
    if recorded is None:
        return other
    if other is None or other.source != "plugin":
        return recorded
    differ = disagreement(_counted(recorded), _counted(other))
    return recorded if differ is None else recorded.model_copy(update={"disagreement": differ})


def _counted(totals: TokenTotals) -> Counted:
    return Counted(totals.input, totals.output, totals.total, totals.cost_usd)


def _models(index: LogIndex | None, records: list[PluginRecord], trace: Trace | None) -> list[str]:
    """provider/model of the run's model calls in order of first use: the plugin's records of
    calls that answered, else the trace's LLM spans."""
    found: list[str] = []
    if index is not None:
        found = [
            _model_ref(rec.provider, rec.model)
            for rec in records
            if rec.kind == "model_call" and rec.phase == "completed" and rec.model
            and index.owns(rec)
        ]  # fmt: skip
    if not found and trace is not None:
        found = [span.model for span in trace.of_type(SpanType.LLM) if span.model]
    return list(dict.fromkeys(found))


def _model_ref(provider: str | None, model: str | None) -> str:
    model = model or ""
    if not provider or model.startswith(f"{provider}/"):
        return model
    return f"{provider}/{model}"


# -- the trace ---------------------------------------------------------------------------


def _trace_tools(trace: Trace) -> list[ToolCallRecord]:
    """Tool spans in start order, each in the lane of its nearest agent span."""
    by_id = {span.id: span for span in trace.spans}
    return [
        ToolCallRecord(
            name=span.tool_name or span.name,
            agent=_agent_above(span, by_id),
            run_id=_str_attribute(span, "openclaw.run_id"),
            started_at=_iso(span.start_ms),
            ended_at=_iso(span.end_ms),
            error=span.error is not None,
        )
        for span in tool_spans(trace)
    ]


def _agent_above(span: Span, by_id: dict[str, Span]) -> str | None:
    seen: set[str] = set()
    node: Span | None = span
    while node is not None and node.id not in seen:
        seen.add(node.id)
        if node.agent_name:
            return node.agent_name
        if agent := _str_attribute(node, "openclaw.agent_id"):
            return agent
        node = by_id.get(node.parent_id or "")
    return None


def _spans(trace: Trace) -> tuple[list[SpanRecord], int]:
    """The first MAX_SPANS spans in start order (parents start before their children)."""
    ordered = by_start(trace.spans)
    kept = [
        SpanRecord(
            id=span.id,
            parent_id=span.parent_id,
            name=one_line(span.name, 200),
            type=span.type.value,
            start_ms=span.start_ms,
            end_ms=span.end_ms
            if span.end_ms is not None or span.start_ms is None or span.duration_ms is None
            else span.start_ms + span.duration_ms,
            model=span.model,
            input_tokens=span.input_tokens,
            output_tokens=span.output_tokens,
            cost_usd=span.cost_usd,
            error=one_line(span.error, 300) if span.error is not None else None,
        )
        for span in ordered[:MAX_SPANS]
    ]
    return kept, max(0, len(ordered) - MAX_SPANS)


def _call_id(span: Span) -> str | None:
    """The tool call id a tool span carries, to match it with the run record's call."""
    return next((found for key in CALL_ID_ATTRIBUTES if (found := _str_attribute(span, key))), None)


def _str_attribute(span: Span, key: str) -> str | None:
    value = span.attributes.get(key)
    return value if isinstance(value, str) and value else None


def _iso(epoch_ms: float | None) -> str | None:
    if epoch_ms is None:
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds")

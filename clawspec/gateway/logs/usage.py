"""The token usage of the runs in scope, from the ClawSpec plugin's records.

The plugin records each model call's tokens with its runId, session and traceId. Once `scope`
has settled which runs and sessions are the scenario's, these functions pick their records
(`owns`: by runId, else by session, never by traceId alone: a heartbeat run may share the
hook's trace), sum their usage (`usage_from_plugin`), and say whether the plugin has written
everything about them yet (`plugin_settled`). `LogIndex`'s methods of the same names call them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from clawspec.gateway.plugin_records import PluginRecord, TokenUsage

if TYPE_CHECKING:
    from clawspec.gateway.logs.index import LogIndex


def usage_from_plugin(index: LogIndex, records: Iterable[PluginRecord]) -> TokenUsage | None:
    """Sum the plugin's model-call usage of the runs in scope (None: no record of them).

    `model_call` records are summed (`model_usage` is a per-turn summary of the same calls
    and is used only when no call record exists). Records are matched by runId, else by
    session; never by traceId alone (a heartbeat run may share the hook's trace).
    """
    calls: list[PluginRecord] = []
    summaries: list[PluginRecord] = []
    for rec in records:
        if not index.owns(rec):
            continue
        if rec.kind == "model_call" and rec.phase in ("completed", "error"):
            calls.append(rec)
        elif rec.kind == "model_usage":
            summaries.append(rec)
    chosen = calls or summaries
    if not chosen:
        return None
    inp = sum(r.input_tokens or 0 for r in chosen)
    out = sum(r.output_tokens or 0 for r in chosen)
    total = sum(r.total_tokens or (r.input_tokens or 0) + (r.output_tokens or 0) for r in chosen)
    return TokenUsage(inp, out, total, len(chosen))


def plugin_settled(index: LogIndex, records: Iterable[PluginRecord]) -> bool:
    """Every harness run of the runs in scope has ended in `records` (the plugin writes a
    run's last model-call usage after `run.completed`; `harness` completion comes last)."""
    open_runs: dict[str, int] = {}
    for rec in records:
        if rec.kind == "harness" and rec.run_id in index.run_ids:
            step = 1 if rec.phase == "started" else -1
            open_runs[rec.run_id] = open_runs.get(rec.run_id, 0) + step
    return all(count <= 0 for count in open_runs.values())


def owns(index: LogIndex, rec: PluginRecord) -> bool:
    """The record is about a run in scope: by runId, else by session (never traceId)."""
    if rec.run_id:
        return rec.run_id in index.run_ids
    return bool(
        (rec.session_key and rec.session_key in index.session_keys)
        or (rec.session_id and rec.session_id in index.session_ids)
    )

"""The run's gateway log as shared evidence: indexed once per (log, run), waited for as the
scenario's timeout allows, and honest about what it could not see.

The log may lag behind the hook's answer, and a spawned sub-agent may start many seconds after
its parent ended: the index waits for both (`EvalContext.evidence_wait_s`). A verdict that the
missing lines could still change is then `error` with the reason (`RunLog.undecided`), never a
pass of a negative assertion without the evidence it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from threading import Event

from clawspec.evidence.context import EvalContext, Verdict
from clawspec.evidence.store import LogKey, PluginKey
from clawspec.gateway.logs import scope
from clawspec.gateway.logs.facts import Hook
from clawspec.gateway.logs.index import DEBUG_HINT, LogIndex
from clawspec.gateway.logs.lines import (
    BLOCK_BYTES,
    Interrupted,
    Match,
    Pattern,
    json_message,
    lines_of,
)
from clawspec.gateway.plugin_records import PluginRecord, TokenUsage, read_plugin_records
from clawspec.gateway.refusals import AnswerReader
from clawspec.gateway.tool_search import CONTROLS, SPAWN_TOOL
from clawspec.text import one_line, pluralize, quote_list

__all__ = [
    "BLOCK_BYTES",
    "Interrupted",
    "RunLog",
    "first_line_matching",
    "line_matcher",
    "log_files",
]


# What to do when the gateway's log is not where ClawSpec looks: a gateway of your own writes
# it where its `logging.file` says (at debug level for the tool lines), or ClawSpec starts one.
LOG_NOT_FOUND_FIX = (
    "point `gateway_log_pattern` at the log your gateway writes (its `logging.file`, at "
    "`logging.level: debug`), or run with --bring-up to have ClawSpec start the gateway"
)


class RunLog:
    """The run's log index (shared by the scenario's assertions) or why it is unusable.

    The log may lag behind the hook's answer, and a spawned sub-agent may start many seconds
    after its parent ended: the index waits for both up to `ctx.evidence_wait_s()` (derived
    from the scenario's timeout). Evidence still missing then makes `undecided` turn a verdict
    that the missing lines could change into `error`.
    """

    def __init__(
        self, index: LogIndex, label: str, problem: Verdict | None, timeout_s: float = 0.0
    ) -> None:
        self.index = index
        self.label = label
        self.problem = problem
        self.timeout_s = timeout_s

    def undecided(self, verdict_text: str) -> Verdict | None:
        """`error` when the run's evidence is incomplete (a pass of a negative assertion or a
        fail of a positive one could still flip), else None: the verdict stands."""
        if not self.index.pending:
            return None
        shown = "; ".join(self.index.pending[:3])
        more = len(self.index.pending) - 3
        shown += f"; and {more} more" if more > 0 else ""
        return Verdict.errored(
            f"{verdict_text}, but the run's log is incomplete after waiting "
            f"{self.index.waited_s:.1f} s: {shown} (the wait follows the scenario's timeout of "
            f"{self.timeout_s:g} s; raise `timeout` if the gateway is slow)"
        )

    def calls_named(self, tool: str) -> int:
        """Calls of `tool` in the run: real calls, or Tool Search's own controls when named."""
        calls = self.index.tool_search_calls if tool in CONTROLS else self.index.tool_calls
        return sum(1 for call in calls if call.name == tool)

    def refused_spawns(self) -> str:
        """`refused` for the tool that starts sub-agents (`sessions_spawn`)."""
        return self.refused(SPAWN_TOOL)

    def refused(self, *tools: str, also: bool = False) -> str:
        """What the gateway refused of the run's attempts to call `tools` (none named: any
        tool), as a clause to add to a verdict, else "": "'sessions_spawn' was attempted once
        but refused by the gateway: "Tool sessions_spawn not found"" ("was also attempted"
        with `also`: beside calls that ran)."""
        attempts = [r for r in self.index.refused_calls if not tools or r.call.name in tools]
        if not attempts:
            return ""
        names = list(dict.fromkeys(r.call.name for r in attempts))
        answers = list(dict.fromkeys(r.answer for r in attempts))
        shown = "; ".join(f'"{one_line(answer, 200)}"' for answer in answers[:3])
        if len(answers) > 3:
            shown += f"; and {len(answers) - 3} more"
        times = _times(len(attempts))
        return (
            f"{quote_list(names)} {'was' if len(names) == 1 else 'were'}"
            f"{' also' if also else ''} attempted {times} but "
            f"refused by the gateway: {shown}"
        )

    def token_usage(self, ctx: EvalContext) -> tuple[TokenUsage | None, str]:
        """The run's token usage and what it was counted from (plugin first, then log)."""
        index = self.index
        plugin = ctx.evidence.plugin_output
        source = "no plugin output configured"
        if plugin is not None:
            offset = ctx.evidence.plugin_offset

            def load() -> list[PluginRecord]:
                records: list[PluginRecord] = []

                def settled() -> bool:
                    records[:] = read_plugin_records(plugin, offset)
                    return index.plugin_settled(records)

                ctx.wait_until(settled, ctx.evidence_wait_s())
                return records

            key = PluginKey(plugin, offset, tuple(sorted(index.run_ids)))
            usage = index.usage_from_plugin(ctx.evidence.plugin_records(key, load))
            if usage is not None:
                return usage, "model call"
            source = f"none in plugin output '{plugin}'"
        if index.legacy_usage is not None:
            return index.legacy_usage, "log usage line"
        return None, source

    def token_cost(self, ctx: EvalContext) -> tuple[float | None, list[str]]:
        """The run's cost from the plugin records `token_usage` read (native cost, else
        `model_pricing`): (None, models without a price) when it cannot be known."""
        from clawspec.evidence.cost import UNKNOWN_MODEL, plugin_cost

        plugin = ctx.evidence.plugin_output
        if plugin is None:
            return None, [UNKNOWN_MODEL]  # legacy usage lines name no model
        offset = ctx.evidence.plugin_offset
        key = PluginKey(plugin, offset, tuple(sorted(self.index.run_ids)))
        records = ctx.evidence.plugin_records(key, lambda: read_plugin_records(plugin, offset))
        if not any(self.index.owns(r) for r in records):
            return None, [UNKNOWN_MODEL]
        return plugin_cost(records, self.index.owns, ctx.settings.model_pricing)

    @classmethod
    def load(
        cls, ctx: EvalContext, log_path: str | Path | None, run_id: str | None, kind: str = ""
    ) -> RunLog:
        """Index the log once per (path, run) and check the run is in it."""
        active = ctx.evidence.gateway_log
        if isinstance(log_path, str):
            path: Path | None = ctx.path(log_path)
        else:
            path = log_path or active
        kind = kind or ("gateway log" if log_path is None else "log")
        ours = {ctx.run.run_id, ctx.run.gateway_run_id} - {None}
        if run_id and run_id not in ours:
            ids: tuple[str, ...] = (run_id,)
            keys: tuple[str, ...] = ()
            label = run_id
        else:
            ids = tuple(i for i in (ctx.run.run_id, ctx.run.gateway_run_id) if i)
            keys = (ctx.run.session_key,) if ctx.run.session_key else ()
            label = ctx.run.run_id
        if path is None:
            index = LogIndex(Path(), ids, keys, exists=False)
            return cls(index, label, Verdict.errored("no gateway log configured (set log_path)"))
        if path.is_dir():
            index = LogIndex(path, ids, keys, exists=False)
            return cls(index, label, Verdict.errored(f"{kind} '{log_path or path}' is a folder"))
        is_active = active is not None and _same_file(path, active)
        offset = ctx.evidence.log_offset if is_active else 0

        wait_s = ctx.evidence_wait_s()
        plugin = ctx.evidence.plugin_output

        def build() -> LogIndex:
            return LogIndex.build(
                path,
                offset,
                run_ids=ids,
                session_keys=keys,
                hook_run=ctx.run.gateway_run_id if keys else None,
                started_at=ctx.run.started_at.timestamp(),
                inode=ctx.evidence.log_inode if is_active else None,
                wait_s=wait_s,
                subagent_wait_s=wait_s,
                poll_interval_s=ctx.poll_interval_s,
                stop=ctx.stop,
                clock=ctx.clock,
                tail_bytes=None if is_active else tail,
                # The plugin's answers tell a refused call from a real one (gateway.refusals).
                answers=AnswerReader(plugin, ctx.evidence.plugin_offset) if plugin else None,
                later=ctx.evidence.logs_after_start if is_active else None,
            )

        # A log other than the active one has no offset recorded at the run's start: it is read
        # from its last `limits.log_tail_bytes` only, and every verdict says so (the label).
        tail = ctx.settings.limits.log_tail_bytes
        index = ctx.evidence.log_index(LogKey(path, offset, ids, keys), build)
        if index.skipped_bytes:
            label += (
                f" (in the last {tail / 1024 / 1024:g} MiB of the log: limits.log_tail_bytes; "
                f"{index.skipped_bytes:,} bytes before them not read)"
            )
        timeout = ctx.timeout_s
        if not index.exists:
            text = f"{kind} '{path}' not found"
            if log_path is None:  # the gateway's own: where it is, is a setting
                text += f": {LOG_NOT_FOUND_FIX}"
            return cls(index, label, Verdict.errored(text), timeout)
        if not index.found:
            text = _not_found(kind, path, label, ids, keys, index, is_active)
            problem = Verdict.errored(text)
            return cls(index, label, problem, timeout)
        return cls(index, label, None, timeout)


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _not_found(
    kind: str,
    path: Path,
    label: str,
    ids: tuple[str, ...],
    keys: tuple[str, ...],
    index: LogIndex,
    since_start: bool,
) -> str:
    """Say what was looked for, what the log held and how long it was waited for, and the
    likely cause: no debug lines (the run's completion came without them), no line at all,
    or only other runs' lines (slow)."""
    head = f"run {label} not found in {kind} '{path}'"
    ended = scope.completion(index)
    if ended is not None:
        return head + _completed_without_run_lines(*ended)
    looked = f"run id {' or '.join(repr(i) for i in ids)}"
    if keys:
        looked += f", session key {' or '.join(repr(k) for k in keys)}"
    lines = pluralize(index.lines_read, "line")
    # Only the active gateway log has an offset recorded at the run's start; any other log is
    # read from its start (or its last `limits.log_tail_bytes`), lines from before the run too.
    where = "written since the run started"
    if not since_start:
        where = "read (this log has no offset from the run's start: older lines included)"
    seen = f"{lines} {where}, {pluralize(index.run_starts_seen, 'run')}"
    if not index.lines_read:
        hint = "is this the log the gateway writes? (gateway_log_pattern)"
    elif not index.run_starts_seen:
        hint = DEBUG_HINT
    else:
        hint = "the gateway had not logged this run yet: raise the scenario's `timeout`"
    return (
        f"{head} after waiting {index.waited_s:.1f} s (looked for {looked}; saw {seen} started; "
        f"{hint})"
    )


def _completed_without_run_lines(hook: Hook, debug_lines: int) -> str:
    """The gateway logged the run's completion but none of its run lines: no later line can
    find it, so this is said at once, with what to change."""
    status = f"status {hook.status}" if hook.status else "no status"
    done = f": the gateway logged its completion (gateway/hooks run {hook.run_id}, {status})"
    if not debug_lines:
        return (
            f"{done} but no debug line of it: {DEBUG_HINT} (at info level the gateway logs "
            'only the completion); set `logging: { level: "debug" }` in the gateway\'s OpenClaw '
            "config (openclaw.json; `clawspec run --bring-up` sets it)"
        )
    session = f"session {hook.session_id}" if hook.session_id else "its session"
    return (
        f"{done} and {pluralize(debug_lines, 'debug line')} of its request, but no "
        f"`embedded run start` line of {session}: the run ended before an agent run started"
    )


def _same_file(a: Path, b: Path) -> bool:
    if a == b:
        return True  # the usual case, without resolving both paths for every assertion
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def log_files(ctx: EvalContext, path: Path) -> list[Path]:
    """`path`; when it is the active gateway log, followed by the files that log went on in
    after the run's start (a dated log's next days: OpenClaw moves on at midnight)."""
    active = ctx.evidence.gateway_log
    if active is None or not _same_file(path, active):
        return [path]
    return [path, *ctx.evidence.logs_after_start()]


def first_line_matching(path: Path, pattern: str, stop: Event | None = None) -> Match:
    """The first line of the whole file `path` that `pattern` matches, and how many lines were
    read. The raw bytes decide for most lines (only those that may match are decoded); one state
    per file for the whole process: a pattern asked again reads only the lines added since (the
    gateway log grows with every scenario). Raises
    `lines.Interrupted` soon after `stop` is set (the scenario abandoned)."""
    return lines_of(path).first_match(Pattern(pattern), stop)


def line_matcher(pattern: str) -> Callable[[str], bool]:
    """Return a predicate: the raw line, or a JSON line's `message`, contains or matches
    `pattern`; an invalid regex is used as plain text only."""
    compiled = Pattern(pattern)

    def matches(line: str) -> bool:
        if compiled.hit(line):
            return True
        message = json_message(line)
        return message is not None and compiled.hit(message)

    return matches

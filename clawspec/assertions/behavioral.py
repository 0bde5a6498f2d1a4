"""Behavioral assertions: HTTP answers, logs, routing decisions, tool calls, token budgets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from clawspec.assertions import documents
from clawspec.assertions.base import Assertion, EvalContext, Need, Verdict, WorkspacePath
from clawspec.assertions.registry import register
from clawspec.text import fmt_number, one_line, pluralize, quote_list

# The log readers are needed only to evaluate: `clawspec validate` builds these models without
# importing them (tests/test_startup.py); each evaluator imports what it reads.
if TYPE_CHECKING:
    from clawspec.gateway.logs import LogIndex
    from clawspec.gateway.plugin_records import PluginRecord, TokenUsage

LOG_PATH = Field(None, description="Gateway log file (default: the active gateway log).")
RUN_ID = Field(None, description="Run to scope the search to (default: this scenario's run).")
LOG_EXAMPLE = 'log_path: /tmp/openclaw/openclaw-{{today}}.log\nrun_id: "{{run_id}}"'


@register(
    category="behavioral",
    needs={Need.GATEWAY},
    example="endpoint: http://127.0.0.1:18789/health\nexpected_status: 200",
)
class GatewayResponse(Assertion):
    """A live HTTP GET to an endpoint answers with the expected status code."""

    type: Literal["gateway_response"]
    endpoint: str = Field(description="Full URL, or a path starting with '/' on the gateway.")
    expected_status: int = Field(description="Expected HTTP status code.")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        url = self.endpoint
        if url.startswith("/"):
            url = ctx.settings.gateway_base_url.rstrip("/") + url
        import requests  # only runs that use it pay for importing it

        from clawspec.net import deadline as net

        try:  # a deadline for the whole answer, not a read timeout (README: deadlines)
            status = net.request(
                ctx.evidence.http,
                "GET",
                url,
                deadline=net.Deadline.after(10, "10 s"),
                allow_redirects=False,
            ).status_code
        except requests.RequestException as exc:
            return Verdict.failed(f"GET {url} failed: {one_line(str(exc), 160)}")
        text = f"GET {url} → {status}"
        if status == self.expected_status:
            return Verdict.passed(text, status, self.expected_status)
        return Verdict.failed(
            f"{text}, expected {self.expected_status}", status, self.expected_status
        )


@register(
    category="behavioral",
    needs={Need.FILES},
    example='path: memory/logs/run.log\npattern: "approved"',
)
class LogEntry(Assertion):
    """A log file has at least one line matching a pattern (substring or regex)."""

    type: Literal["log_entry"]
    path: WorkspacePath = Field(description="Log file. Supports templates ({{gateway_log}}).")
    pattern: str = Field(description="Substring or regular expression (invalid regex = text).")
    run_id: str | None = Field(None, description="Only lines of this run (gateway log).")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        if self.run_id is not None:
            return self._evaluate_run_scoped(ctx)
        from clawspec.gateway.log_lines import Pattern, lines_of

        try:
            # One index per file for the whole process: no scenario re-reads or re-parses the
            # lines an earlier one already read (the gateway log grows with every scenario).
            found = lines_of(ctx.path(self.path)).first_match(Pattern(self.pattern))
        except FileNotFoundError:
            return Verdict.failed(f"log '{self.path}' not found")
        if found.line is not None:
            return Verdict.passed(
                f"line {found.line} of '{self.path}' matches '{self.pattern}'", found.line
            )
        return Verdict.failed(
            f"no line of '{self.path}' matches '{self.pattern}' ({found.lines:,} lines read)"
        )

    def _evaluate_run_scoped(self, ctx: EvalContext) -> Verdict:
        """Only the run's lines count; a missing log or run is `error` (SPEC §9)."""
        scoped = RunLog.load(ctx, ctx.path(self.path), self.run_id, "log")
        if scoped.problem:
            return scoped.problem
        matches = line_matcher(self.pattern)
        lines = scoped.index.lines()
        where = "" if scoped.index.start_offset == 0 else " (counted from the run's start)"
        if scoped.index.skipped_bytes:
            where = " (counted from the first line read)"
        for number, text in lines:
            if matches(text):
                return Verdict.passed(
                    f"line {number}{where} of '{self.path}' matches '{self.pattern}' "
                    f"in run {scoped.label}",
                    number,
                )
        text = (
            f"no line of run {scoped.label} in '{self.path}' matches '{self.pattern}' "
            f"({pluralize(len(lines), 'line')} of the run)"
        )
        return scoped.undecided(text) or Verdict.failed(text)


def line_matcher(pattern: str) -> Callable[[str], bool]:
    """Return a predicate: the raw line, or a JSON line's `message`, contains or matches
    `pattern` (SPEC §9); an invalid regex is used as plain text only."""
    from clawspec.gateway.log_lines import Pattern, json_message

    compiled = Pattern(pattern)

    def matches(line: str) -> bool:
        if compiled.hit(line):
            return True
        message = json_message(line)
        return message is not None and compiled.hit(message)

    return matches


DECISION_KEYS = ("routed_to", "selected_agent", "decision", "agent", "route")


@register(
    category="behavioral",
    needs={Need.FILES},
    example="state_path: memory/router-state.yaml\nexpected_agent: agents/marketing/brand",
)
class DecisionRoutedTo(Assertion):
    """A routing state file records a decision to a specific agent."""

    type: Literal["decision_routed_to"]
    state_path: WorkspacePath = Field(description="YAML/JSON router state file.")
    expected_agent: str = Field(description="Agent id or path expected as the decision.")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        try:
            data = documents.load_data(ctx.path(self.state_path))
        except FileNotFoundError:
            return Verdict.failed(f"router state '{self.state_path}' not found")
        except documents.DataError as exc:
            return Verdict.errored(str(exc))
        key, decision = _decision(data)
        if key is None:
            return Verdict.failed(
                f"'{self.state_path}' records no routing decision "
                f"(looked for {quote_list(DECISION_KEYS)})"
            )
        choices = decision if isinstance(decision, list) else [decision]
        names = [name for name in map(_agent_name, choices) if name is not None]
        want = self.expected_agent.strip("/")
        if not names:
            return Verdict.failed(
                f"'{self.state_path}': {key} names no agent (a string, or a mapping's 'agent')"
            )
        if want in names:
            return Verdict.passed(f"{key} = '{want}'", want, want)
        return Verdict.failed(f"routed to {quote_list(names)}, expected '{want}'", names, want)


def _decision(data: object) -> tuple[str | None, object]:
    if isinstance(data, dict):
        for key in DECISION_KEYS:
            if key in data and data[key] is not None:
                return key, data[key]
    return None, None


def _agent_name(choice: object) -> str | None:
    if isinstance(choice, dict):
        choice = choice.get("agent")
    return choice.strip("/") if isinstance(choice, str) else None


# The log-based assertions below are scoped to the scenario's run (SPEC §9 "Logs").


@register(
    category="behavioral",
    needs={Need.LOG},
    example=f"tool: sessions_spawn\n{LOG_EXAMPLE}",
)
class ToolWasCalled(Assertion):
    """A tool was called during the run (gateway log)."""

    type: Literal["tool_was_called"]
    tool: str = Field(description="Tool name (exact, case-sensitive).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        if scoped.problem:
            return scoped.problem
        counts = scoped.index.tool_counts()
        count = _calls_named(scoped.index, self.tool)
        if count:
            return Verdict.passed(
                f"tool '{self.tool}' called {pluralize(count, 'time')} in run {scoped.label}",
                count,
            )
        seen = f"tools called: {_counted(counts)}" if counts else "no tools called"
        text = f"tool '{self.tool}' not called in run {scoped.label}; {seen}"
        return scoped.undecided(text) or Verdict.failed(text, 0)


@register(
    category="behavioral",
    needs={Need.LOG},
    example=f"tool: resend.send\n{LOG_EXAMPLE}",
    negative=True,
)
class ToolNotCalled(Assertion):
    """A tool was not called during the run; needs the run found in the log."""

    type: Literal["tool_not_called"]
    tool: str = Field(description="Tool name that must not appear (exact).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        if scoped.problem:
            return scoped.problem
        calls = scoped.index.tool_calls
        count = _calls_named(scoped.index, self.tool)
        if count:
            return Verdict.failed(
                f"tool '{self.tool}' called {pluralize(count, 'time')} in run {scoped.label}",
                count,
                0,
            )
        text = (
            f"tool '{self.tool}' not called in run {scoped.label} "
            f"({pluralize(len(calls), 'tool call')} seen)"
        )
        return scoped.undecided(text) or Verdict.passed(text, 0, 0)


@register(
    category="behavioral",
    needs={Need.LOG},
    example=f"to_agent: agents-marketing-brand\n{LOG_EXAMPLE}",
)
class DelegationOccurred(Assertion):
    """The run delegated to a named sub-agent (gateway log)."""

    type: Literal["delegation_occurred"]
    to_agent: str = Field(description="Agent id of the spawned sub-agent (exact).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        if scoped.problem:
            return scoped.problem
        agents = scoped.index.subagents
        if self.to_agent in agents:
            return Verdict.passed(
                f"run {scoped.label} delegated to '{self.to_agent}'", self.to_agent, self.to_agent
            )
        if agents:
            text = (
                f"no delegation to '{self.to_agent}' in run {scoped.label}; "
                f"delegated to: {quote_list(agents)}"
            )
        else:
            text = f"no delegation in run {scoped.label} (expected '{self.to_agent}')"
        return scoped.undecided(text) or Verdict.failed(text, agents, self.to_agent)


@register(
    category="behavioral",
    needs={Need.LOG},
    example=f"allowed_tools: [read, write, memory.search]\n{LOG_EXAMPLE}",
    negative=True,
)
class ToolNotPermitted(Assertion):
    """No tool outside the allowed list was called during the run."""

    type: Literal["tool_not_permitted"]
    allowed_tools: list[str] = Field(description="Permitted tool names; any other fails.")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        if scoped.problem:
            return scoped.problem
        counts = scoped.index.tool_counts()
        allowed = set(self.allowed_tools)
        forbidden = {name: n for name, n in counts.items() if name not in allowed}
        if forbidden:
            return Verdict.failed(
                f"forbidden tools called in run {scoped.label}: {_counted(forbidden)}",
                sorted(forbidden),
                self.allowed_tools,
            )
        calls = sum(counts.values())
        text = f"{pluralize(calls, 'tool call')} in run {scoped.label}, all allowed"
        return scoped.undecided(text) or Verdict.passed(text, sorted(counts), self.allowed_tools)


@register(
    category="behavioral",
    needs={Need.LOG},
    example=f"{LOG_EXAMPLE}\nmax_total_tokens: 12000\nmax_output_tokens: 4000",
)
class TokenBudget(Assertion):
    """The run's summed token usage stays within the limits."""

    one_of = (("max_total_tokens", "max_input_tokens", "max_output_tokens"),)
    type: Literal["token_budget"]
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID
    max_total_tokens: int | None = Field(None, ge=0, description="Maximum total tokens.")
    max_input_tokens: int | None = Field(None, ge=0, description="Maximum input tokens.")
    max_output_tokens: int | None = Field(None, ge=0, description="Maximum output tokens.")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        if scoped.problem:
            return scoped.problem
        usage, source = _usage(ctx, scoped.index)
        if usage is None:
            return Verdict.skipped(
                f"no token usage records for run {scoped.label} ({source}; "
                "the log has no token fields)"
            )
        measured = {"input": usage.input, "output": usage.output, "total": usage.total}
        limits = {
            name: limit
            for name, limit in (
                ("total", self.max_total_tokens),
                ("input", self.max_input_tokens),
                ("output", self.max_output_tokens),
            )
            if limit is not None
        }
        over = [
            f"{name} tokens {fmt_number(measured[name])} > {fmt_number(limit)}"
            for name, limit in limits.items()
            if measured[name] > limit
        ]
        if over:
            return Verdict.failed("; ".join(over), measured, limits)
        within = "; ".join(
            f"{name} tokens {fmt_number(measured[name])} ≤ {fmt_number(limit)}"
            for name, limit in limits.items()
        )
        text = f"{within} ({pluralize(usage.calls, source)})"
        return scoped.undecided(text) or Verdict.passed(text, measured, limits)


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

    @classmethod
    def load(
        cls, ctx: EvalContext, log_path: str | Path | None, run_id: str | None, kind: str = ""
    ) -> RunLog:
        """Index the log once per (path, run) and check the run is in it (SPEC §9 "Logs")."""
        from clawspec.gateway.logs import LogIndex

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
        is_active = active is not None and _same_file(path, active)
        offset = ctx.evidence.log_offset if is_active else 0

        wait_s = ctx.evidence_wait_s()

        def build() -> LogIndex:
            return LogIndex.build(
                path,
                offset,
                run_ids=ids,
                session_keys=keys,
                started_at=ctx.run.started_at.timestamp(),
                inode=ctx.evidence.extra.get("log_inode") if is_active else None,
                wait_s=wait_s,
                subagent_wait_s=wait_s,
                poll_interval_s=ctx.poll_interval_s,
                stop=ctx.stop,
                clock=ctx.clock,
                tail_bytes=None if is_active else tail,
            )

        # A log other than the active one has no offset recorded at the run's start: it is read
        # from its last `limits.log_tail_bytes` only, and every verdict says so (the label).
        tail = ctx.settings.limits.log_tail_bytes
        index = ctx.evidence.cached(f"log_index|{path}|{offset}|{ids}|{keys}", build)
        if index.skipped_bytes:
            label += (
                f" (in the last {tail / 1024 / 1024:g} MiB of the log: limits.log_tail_bytes; "
                f"{index.skipped_bytes:,} bytes before them not read)"
            )
        timeout = ctx.timeout_s
        if not index.exists:
            return cls(index, label, Verdict.errored(f"{kind} '{path}' not found"), timeout)
        if not index.found:
            problem = Verdict.errored(_not_found(kind, path, label, ids, keys, index))
            return cls(index, label, problem, timeout)
        return cls(index, label, None, timeout)


def _not_found(
    kind: str,
    path: Path,
    label: str,
    ids: tuple[str, ...],
    keys: tuple[str, ...],
    index: LogIndex,
) -> str:
    """Say what was looked for, what the log held and how long it was waited for, and the
    likely cause: no line at all, no debug run lines, or only other runs' lines (slow)."""
    from clawspec.gateway.logs import DEBUG_HINT

    looked = f"run id {' or '.join(repr(i) for i in ids)}"
    if keys:
        looked += f", session key {' or '.join(repr(k) for k in keys)}"
    lines = pluralize(index.lines_read, "line")
    seen = f"{lines} written since the run started, {pluralize(index.run_starts_seen, 'run')}"
    if not index.lines_read:
        hint = "is this the log the gateway writes? (gateway_log_pattern)"
    elif not index.run_starts_seen:
        hint = DEBUG_HINT
    else:
        hint = "the gateway had not logged this run yet: raise the scenario's `timeout`"
    return (
        f"run {label} not found in {kind} '{path}' after waiting {index.waited_s:.1f} s "
        f"(looked for {looked}; saw {seen} started; {hint})"
    )


def _calls_named(index: LogIndex, tool: str) -> int:
    """Calls of `tool` in the run: real calls, or Tool Search's own controls when named."""
    from clawspec.gateway.tool_search import CONTROLS

    calls = index.tool_search_calls if tool in CONTROLS else index.tool_calls
    return sum(1 for call in calls if call.name == tool)


def _usage(ctx: EvalContext, index: LogIndex) -> tuple[TokenUsage | None, str]:
    """Return the run's token usage and what it was counted from (plugin first, then log)."""
    plugin = ctx.evidence.plugin_output
    source = "no plugin output configured"
    if plugin is not None:
        offset = ctx.evidence.plugin_offset
        from clawspec.gateway.plugin_records import read_plugin_records

        def load() -> list[PluginRecord]:
            records: list[PluginRecord] = []

            def settled() -> bool:
                records[:] = read_plugin_records(plugin, offset)
                return index.plugin_settled(records)

            ctx.wait_until(settled, ctx.evidence_wait_s())
            return records

        scope = ",".join(sorted(index.run_ids))
        records = ctx.evidence.cached(f"plugin_records|{plugin}|{offset}|{scope}", load)
        usage = index.usage_from_plugin(records)
        if usage is not None:
            return usage, "model call"
        source = f"none in plugin output '{plugin}'"
    if index.legacy_usage is not None:
        return index.legacy_usage, "log usage line"
    return None, source


def _same_file(a: Path, b: Path) -> bool:
    if a == b:
        return True  # the usual case, without resolving both paths for every assertion
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def _counted(counts: dict[str, int]) -> str:
    """Return "'write' (2), 'read' (1)" capped like quote_list."""
    items = [f"'{name}' ({count})" for name, count in counts.items()]
    shown = ", ".join(items[:5])
    return shown + (f" … and {len(items) - 5} more" if len(items) > 5 else "")

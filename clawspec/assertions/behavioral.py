"""Behavioral assertions: HTTP answers, logs, routing decisions, tool calls, token budgets."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from clawspec.assertions import documents
from clawspec.assertions.base import Assertion, EvalContext, Verdict, WorkspacePath
from clawspec.assertions.registry import register
from clawspec.text import fmt_number, fmt_usd, one_line, pluralize, quote_list

# The log readers are needed only to evaluate: `clawspec validate` builds these models without
# importing them (tests/test_startup.py); each evaluator imports what it reads.
if TYPE_CHECKING:
    from clawspec.evidence.log import RunLog
    from clawspec.evidence.usage import Counted

LOG_PATH = Field(None, description="Gateway log file (default: the active gateway log).")
RUN_ID = Field(None, description="Run to scope the search to (default: this scenario's run).")
LOG_EXAMPLE = 'log_path: /tmp/openclaw/openclaw-{{today}}.log\nrun_id: "{{run_id}}"'


@register(
    category="behavioral",
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

        try:  # a deadline for the whole answer, not a read timeout (docs/guide.md: deadlines)
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
        from clawspec.evidence.log import BLOCK_BYTES, Interrupted, first_line_matching, log_files

        # The gateway's dated log goes on in the next day's file after midnight: those count.
        files = log_files(ctx, ctx.path(self.path))
        read, missing, unsearched = 0, 0, 0
        for number, file in enumerate(files):
            shown = f"'{self.path}'"
            if number:
                shown = f"'{file}' (the log went on there after '{self.path}')"
            try:
                found = first_line_matching(file, self.pattern, ctx.stop)
            except FileNotFoundError:
                missing += 1
                continue
            except IsADirectoryError:
                return Verdict.errored(f"log {shown} is a folder, not a file")
            except Interrupted as exc:
                return Verdict.errored(f"log {shown} not searched to its end: {exc}")
            if found.line is not None:
                return Verdict.passed(
                    f"line {found.line} of {shown} matches '{self.pattern}'", found.line
                )
            read += found.lines
            unsearched += found.unsearched
        if missing == len(files):
            return Verdict.failed(f"log '{self.path}' not found")
        later = len(files) - 1
        also = f" and the {pluralize(later, 'file')} it went on in" if later else ""
        text = f"no line of '{self.path}'{also} matches '{self.pattern}' ({read:,} lines read)"
        if unsearched:  # one of them may hold the match: not a verdict on the whole log
            return Verdict.errored(
                f"{text}, but {pluralize(unsearched, 'line')} longer than "
                f"{BLOCK_BYTES // (1024 * 1024)} MiB {'was' if unsearched == 1 else 'were'} "
                "not searched (lines that long are counted, not read)"
            )
        return Verdict.failed(text)

    def _evaluate_run_scoped(self, ctx: EvalContext) -> Verdict:
        """Only the run's lines count; a missing log or run is `error`."""
        from clawspec.evidence.log import RunLog, line_matcher

        scoped = RunLog.load(ctx, ctx.path(self.path), self.run_id, "log")
        if scoped.problem:
            return scoped.problem
        matches = line_matcher(self.pattern)
        lines = scoped.index.lines()
        where = "" if scoped.index.start_offset == 0 else " (counted from the run's start)"
        if scoped.index.skipped_bytes:
            where = " (counted from the first line read)"
        if len(scoped.index.segments) > 1:  # rotated, or gone on in the next day's file
            where = f" (counted from the run's start, in {len(scoped.index.segments)} files)"
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


DECISION_KEYS = ("routed_to", "selected_agent", "decision", "agent", "route")


@register(
    category="behavioral",
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


# The log-based assertions below are scoped to the scenario's run (docs/gateway.md).
_Judge = Callable[[Any, EvalContext, "RunLog"], Verdict]


def _on_run_log(judge: _Judge) -> Callable[[Any, EvalContext], Verdict]:
    """Make `judge(self, ctx, scoped)` an evaluator over the run's log (`log_path`, `run_id`):
    a log or run that cannot be found is the evaluator's `error`, with the reason."""

    @functools.wraps(judge)
    def evaluate(self: Any, ctx: EvalContext) -> Verdict:
        from clawspec.evidence.log import RunLog

        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        return scoped.problem or judge(self, ctx, scoped)

    return evaluate


@register(
    category="behavioral",
    example=f"tool: sessions_spawn\n{LOG_EXAMPLE}",
)
class ToolWasCalled(Assertion):
    """A tool was called during the run (gateway log)."""

    type: Literal["tool_was_called"]
    tool: str = Field(description="Tool name (exact, case-sensitive).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    @_on_run_log
    def evaluate(self, ctx: EvalContext, scoped: RunLog) -> Verdict:
        counts = scoped.index.tool_counts()
        count = scoped.calls_named(self.tool)
        # A call the gateway refused without running the tool is not a call of it.
        refused = scoped.refused(self.tool)
        if count:
            also = scoped.refused(self.tool, also=True)
            return Verdict.passed(
                f"tool '{self.tool}' called {pluralize(count, 'time')} in run {scoped.label}"
                + (f" ({also})" if also else ""),
                count,
            )
        seen = f"tools called: {_counted(counts)}" if counts else "no tools called"
        why = f": {refused};" if refused else ";"
        text = f"tool '{self.tool}' not called in run {scoped.label}{why} {seen}"
        return scoped.undecided(text) or Verdict.failed(text, 0)


@register(
    category="behavioral",
    example=f"tool: resend.send\n{LOG_EXAMPLE}",
    negative=True,
)
class ToolNotCalled(Assertion):
    """A tool was not called during the run; needs the run found in the log."""

    type: Literal["tool_not_called"]
    tool: str = Field(description="Tool name that must not appear (exact).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    @_on_run_log
    def evaluate(self, ctx: EvalContext, scoped: RunLog) -> Verdict:
        calls = scoped.index.tool_calls
        count = scoped.calls_named(self.tool)
        if count:
            return Verdict.failed(
                f"tool '{self.tool}' called {pluralize(count, 'time')} in run {scoped.label}",
                count,
                0,
            )
        # An attempt the gateway refused ran nothing: the tool was not called (said, though).
        refused = scoped.refused(self.tool)
        text = (
            f"tool '{self.tool}' not called in run {scoped.label} "
            f"({pluralize(len(calls), 'tool call')} seen{'; ' + refused if refused else ''})"
        )
        return scoped.undecided(text) or Verdict.passed(text, 0, 0)


@register(
    category="behavioral",
    example=f"to_agent: agents-marketing-brand\n{LOG_EXAMPLE}",
)
class DelegationOccurred(Assertion):
    """The run delegated to a named sub-agent (gateway log)."""

    type: Literal["delegation_occurred"]
    to_agent: str = Field(description="Agent id of the spawned sub-agent (exact).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    @_on_run_log
    def evaluate(self, ctx: EvalContext, scoped: RunLog) -> Verdict:
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
        # A spawn the gateway refused started no sub-agent: say so rather than leave it a guess.
        refused = scoped.refused_spawns()
        text += f": {refused}" if refused else ""
        return scoped.undecided(text) or Verdict.failed(text, agents, self.to_agent)


@register(
    category="behavioral",
    example=f"allowed_tools: [read, write, memory.search]\n{LOG_EXAMPLE}",
    negative=True,
)
class ToolNotPermitted(Assertion):
    """No tool outside the allowed list was called during the run."""

    type: Literal["tool_not_permitted"]
    allowed_tools: list[str] = Field(description="Permitted tool names; any other fails.")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID

    @_on_run_log
    def evaluate(self, ctx: EvalContext, scoped: RunLog) -> Verdict:
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
        # Attempts the gateway refused ran nothing: they pass, and are named.
        refused_names = {r.call.name for r in scoped.index.refused_calls} - allowed
        refused = scoped.refused(*sorted(refused_names)) if refused_names else ""
        text += f"; {refused}" if refused else ""
        return scoped.undecided(text) or Verdict.passed(text, sorted(counts), self.allowed_tools)


@register(
    category="behavioral",
    example=f"{LOG_EXAMPLE}\nmax_total_tokens: 12000\nmax_output_tokens: 4000",
)
class TokenBudget(Assertion):
    """The run's summed token usage stays within the limits."""

    one_of = (("max_total_tokens", "max_input_tokens", "max_output_tokens", "max_cost_usd"),)
    type: Literal["token_budget"]
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID
    max_total_tokens: int | None = Field(None, ge=0, description="Maximum total tokens.")
    max_input_tokens: int | None = Field(None, ge=0, description="Maximum input tokens.")
    max_output_tokens: int | None = Field(None, ge=0, description="Maximum output tokens.")
    max_cost_usd: float | None = Field(
        None,
        ge=0,
        description="Maximum cost in USD: the usage's native cost, else model_pricing (no trace "
        "backend needed); a cost that cannot be known is an error naming the model to price.",
    )

    def evaluate(self, ctx: EvalContext) -> Verdict:
        from clawspec.evidence.log import RunLog

        # The log is one source among others: a run record or a conversation's chat responses
        # count the usage without it, so only when neither does is an unreadable log the verdict.
        scoped = RunLog.load(ctx, self.log_path, self.run_id)
        measured_usage = _measured_usage(ctx, scoped, self.run_id)
        if isinstance(measured_usage, Verdict):
            return measured_usage
        usage = measured_usage
        measured: dict[str, float] = {
            "input": usage.counted.input or 0,
            "output": usage.counted.output or 0,
            "total": usage.counted.total or 0,
        }
        limits: dict[str, float] = {
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
        within_parts = [
            f"{name} tokens {fmt_number(measured[name])} ≤ {fmt_number(limit)}"
            for name, limit in limits.items()
            if measured[name] <= limit
        ]
        if self.max_cost_usd is not None:
            cost = usage.counted.cost_usd
            if cost is None:
                # Unknown is never $0: the limit cannot be checked, and that is not a pass.
                return Verdict.errored(
                    f"cost of run {scoped.label} unknown ({usage.source}): no native cost and no "
                    f"model_pricing for {quote_list(list(usage.unpriced))}; add it to "
                    "model_pricing"
                )
            measured["cost_usd"] = cost
            limits["cost_usd"] = self.max_cost_usd
            compared = f"cost {fmt_usd(cost)} {'>' if cost > self.max_cost_usd else '≤'} "
            compared += fmt_usd(self.max_cost_usd)
            (over if cost > self.max_cost_usd else within_parts).append(compared)
        said = f" ({usage.source})"
        if usage.disagreement:  # decided on the record; the other count is named, not dropped
            said += f"; {usage.disagreement}: decided on the run record"
        if over:
            return Verdict.failed("; ".join(over) + said, measured, limits)
        text = "; ".join(within_parts) + said
        if usage.from_record or scoped.problem:  # complete, sub-agents included (no log lines
            return Verdict.passed(text, measured, limits)  # to await), or counted without them
        return scoped.undecided(text) or Verdict.passed(text, measured, limits)


@dataclass(frozen=True)
class _Usage:
    """The usage `token_budget` judges, where it was counted, and how the plugin's events
    count otherwise when they do."""

    counted: Counted
    unpriced: tuple[str, ...]
    source: str
    from_record: bool = False
    disagreement: str | None = None


def _measured_usage(ctx: EvalContext, scoped: RunLog, run_id: str | None) -> _Usage | Verdict:
    """The run's usage from OpenClaw's run record when it can be read (bring-up always; target
    mode with `openclaw_state_dir`), compared with the plugin's events; else the plugin's
    events, else the log's usage lines, saying why the record was not used; else a
    conversation's chat responses. A run with no usage at all is skipped (the log has no token
    fields); with an unreadable log and no other count, the log's problem is the verdict."""
    from clawspec.evidence.record import RunRecords, run_records
    from clawspec.evidence.usage import Counted, disagreement, record_usage

    own = run_id is None or run_id in {ctx.run.run_id, ctx.run.gateway_run_id}
    recorded, why_not = None, ""
    if own and ctx.settings.openclaw_state_dir:
        found = run_records(ctx)
        if isinstance(found, RunRecords):
            recorded = record_usage(found, ctx.settings.model_pricing)
            why_not = "" if recorded else "the run record has no usage for every run"
        else:
            why_not = f"the run record was not read: {found.message}"
    if scoped.problem is not None and recorded is None:
        return _chat_usage(ctx) or scoped.problem
    plugin_usage, source = (None, "") if scoped.problem else scoped.token_usage(ctx)
    plugin: Counted | None = None
    unpriced: tuple[str, ...] = ()
    if plugin_usage is not None:
        cost, missing = scoped.token_cost(ctx)
        plugin = Counted(plugin_usage.input, plugin_usage.output, plugin_usage.total, cost)
        unpriced = tuple(missing)
    if recorded is not None:
        differ = disagreement(recorded.counted, plugin) if source == "model call" else None
        return _Usage(
            recorded.counted,
            recorded.unpriced,
            f"from the run record, {pluralize(recorded.runs, 'run')}",
            from_record=True,
            disagreement=differ,
        )
    if plugin is None or plugin_usage is None:
        chat = _chat_usage(ctx)
        if chat is not None:
            return chat
        because = f"; {why_not}" if why_not else ""
        return Verdict.skipped(
            f"no token usage records for run {scoped.label} ({source}; the log has no token "
            f"fields{because})"
        )
    where = f"{pluralize(plugin_usage.calls, source)}"
    where += " in the plugin's events" if source == "model call" else ""
    where += f"; {why_not}" if why_not else ""
    return _Usage(plugin, unpriced, f"from {where}")


def _chat_usage(ctx: EvalContext) -> _Usage | None:
    """A conversation's usage as its chat responses gave it, when every answered turn in scope
    did: the last source, when neither the run record nor the plugin's events count it."""
    from clawspec.evidence.usage import Counted

    transcript = ctx.run.transcript
    if not transcript or any(e.usage is None for e in transcript if e.reply is not None):
        return None
    given = [e.usage for e in transcript if e.usage is not None]
    if not given:
        return None
    counted = Counted(sum(u[0] for u in given), sum(u[1] for u in given), sum(u[2] for u in given))
    return _Usage(counted, (), f"from {pluralize(len(given), 'chat response')}")


def _counted(counts: dict[str, int]) -> str:
    """Return "'write' (2), 'read' (1)" capped like quote_list."""
    items = [f"'{name}' ({count})" for name, count in counts.items()]
    shown = ", ".join(items[:5])
    return shown + (f" … and {len(items) - 5} more" if len(items) > 5 else "")

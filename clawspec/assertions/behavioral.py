"""Behavioral assertions: HTTP answers, logs, routing decisions, tool calls, token budgets."""

from __future__ import annotations

import json
import re
from typing import Literal

import requests
from pydantic import Field

from clawspec.assertions import documents
from clawspec.assertions.base import Assertion, EvalContext, Need, Verdict, WorkspacePath
from clawspec.assertions.registry import register
from clawspec.text import one_line, quote_list

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
        try:
            status = ctx.evidence.http.get(url, timeout=10, allow_redirects=False).status_code
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
            return Verdict.errored("run-scoped log_entry is not implemented yet")
        path = ctx.path(self.path)
        matches = line_matcher(self.pattern)
        count = 0
        try:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                for count, line in enumerate(handle, start=1):
                    if matches(line.rstrip("\n")):
                        return Verdict.passed(
                            f"line {count} of '{self.path}' matches '{self.pattern}'", count
                        )
        except FileNotFoundError:
            return Verdict.failed(f"log '{self.path}' not found")
        return Verdict.failed(
            f"no line of '{self.path}' matches '{self.pattern}' ({count:,} lines read)"
        )


def line_matcher(pattern: str):
    """Return a predicate: the raw line, or a JSON line's `message`, contains or matches
    `pattern` (SPEC §9); an invalid regex is used as plain text only."""
    try:
        regex: re.Pattern[str] | None = re.compile(pattern)
    except re.error:
        regex = None

    def hit(text: str) -> bool:
        return pattern in text or bool(regex and regex.search(text))

    def matches(line: str) -> bool:
        if hit(line):
            return True
        if line.startswith("{"):
            try:
                message = json.loads(line).get("message")
            except (ValueError, AttributeError):
                return False
            return isinstance(message, str) and hit(message)
        return False

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
        names = [_agent_name(c) for c in choices]
        want = self.expected_agent.strip("/")
        if want in names:
            return Verdict.passed(f"{key} = '{want}'", want, want)
        return Verdict.failed(
            f"routed to {quote_list([str(n) for n in names])}, expected '{want}'", names, want
        )


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
    implemented=False,
    example=f"tool: sessions_spawn\n{LOG_EXAMPLE}",
)
class ToolWasCalled(Assertion):
    """A tool was called during the run (gateway log)."""

    type: Literal["tool_was_called"]
    tool: str = Field(description="Tool name (exact, case-sensitive).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID


@register(
    category="behavioral",
    needs={Need.LOG},
    implemented=False,
    example=f"tool: resend.send\n{LOG_EXAMPLE}",
)
class ToolNotCalled(Assertion):
    """A tool was not called during the run; needs the run found in the log."""

    type: Literal["tool_not_called"]
    tool: str = Field(description="Tool name that must not appear (exact).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID


@register(
    category="behavioral",
    needs={Need.LOG},
    implemented=False,
    example=f"to_agent: agents-marketing-brand\n{LOG_EXAMPLE}",
)
class DelegationOccurred(Assertion):
    """The run delegated to a named sub-agent (gateway log)."""

    type: Literal["delegation_occurred"]
    to_agent: str = Field(description="Agent id of the spawned sub-agent (exact).")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID


@register(
    category="behavioral",
    needs={Need.LOG},
    implemented=False,
    example=f"allowed_tools: [read, write, memory.search]\n{LOG_EXAMPLE}",
)
class ToolNotPermitted(Assertion):
    """No tool outside the allowed list was called during the run."""

    type: Literal["tool_not_permitted"]
    allowed_tools: list[str] = Field(description="Permitted tool names; any other fails.")
    log_path: WorkspacePath | None = LOG_PATH
    run_id: str | None = RUN_ID


@register(
    category="behavioral",
    needs={Need.LOG},
    implemented=False,
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

"""Trace assertions: evaluate the run's spans from the observability backend.

All ten read one `Trace` per scenario (`evidence.trace.scenario_trace`); when it cannot be had,
each of them is `skip` with the same reason. `warn` only where data is missing by design:
`delegation_path` without sub-agent data, `trace_cost` without cost data.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import Field, model_validator

from clawspec.assertions.base import Assertion, EvalContext, Need, Status, Verdict, WorkspacePath
from clawspec.assertions.documents import TooLargeError, read_text
from clawspec.assertions.registry import register
from clawspec.inputs.source import safe_load
from clawspec.text import capped as capped_text
from clawspec.text import fmt_duration_ms, fmt_number, fmt_usd, one_line, pluralize, quote_list

# The trace readers are needed only to evaluate: `clawspec validate` builds these models without
# importing them (tests/test_startup.py); each evaluator imports what it reads.
if TYPE_CHECKING:
    from clawspec.evidence.spans import Trace

SHOWN = 10  # names shown in a one-line message before "… and N more"
_Evaluate = Callable[[Any, "EvalContext"], Verdict]


_Judge = Callable[[Any, "EvalContext", "Trace"], Verdict]


def _on_trace(flips: Callable[[Any, Verdict], bool]) -> Callable[[_Judge], _Evaluate]:
    """Make `judge(self, ctx, trace)` an evaluator: it gets the scenario's trace (looked up once
    per scenario), or the evaluator is `skip` with the reason the trace cannot be had; and a
    verdict that missing spans could change is `error` while the trace is incomplete
    (`Trace.pending`: a spawned sub-agent never showed up or did not finish).

    `flips(assertion, verdict)` says whether more spans could change this verdict: a pass of
    an upper bound (a budget, "not invoked"), a fail of something that must appear. A negative
    assertion never passes without the evidence it needs.
    """

    def decorate(judge: _Judge) -> _Evaluate:
        @functools.wraps(judge)
        def evaluate(self: Any, ctx: EvalContext) -> Verdict:
            from clawspec.evidence.spans import TraceUnavailable
            from clawspec.evidence.trace import scenario_trace

            trace = scenario_trace(ctx)
            if isinstance(trace, TraceUnavailable):
                return Verdict.skipped(trace.reason)
            verdict = judge(self, ctx, trace)
            if verdict.status in (Status.SKIP, Status.ERROR) or not trace.pending:
                return verdict
            if not flips(self, verdict):
                return verdict
            shown = "; ".join(trace.pending[:3])
            more = len(trace.pending) - 3
            shown += f"; and {more} more" if more > 0 else ""
            return Verdict.errored(
                f"{verdict.message}, but the trace is incomplete: {shown} (the wait follows "
                f"the scenario's timeout of {ctx.timeout_s:g} s; raise `timeout` if the "
                "gateway is slow)"
            )

        return evaluate

    return decorate


def _passed(assertion: Any, verdict: Verdict) -> bool:
    return verdict.status == Status.PASS


def _not_passed(assertion: Any, verdict: Verdict) -> bool:
    return verdict.status in (Status.FAIL, Status.WARN)


def _call_count_flips(assertion: LlmCallCount, verdict: Verdict) -> bool:
    if verdict.status == Status.PASS:
        return assertion.max is not None
    return assertion.min is not None and verdict.value < assertion.min


def _sequence_flips(assertion: ToolSequence, verdict: Verdict) -> bool:
    return assertion.mode == "strict" or verdict.status == Status.FAIL


def _model_flips(assertion: ModelUsed, verdict: Verdict) -> bool:
    return _not_passed(assertion, verdict) if assertion.expected else _passed(assertion, verdict)


@register(category="trace", needs={Need.TRACE}, example="min: 1\nmax: 4")
class LlmCallCount(Assertion):
    """The number of LLM spans in the trace is within bounds."""

    one_of = (("min", "max"),)
    type: Literal["llm_call_count"]
    min: int | None = Field(None, ge=0, description="Minimum number of LLM calls.")
    max: int | None = Field(
        None, ge=0, description="Maximum number of LLM calls. Must not be below `min`."
    )

    @model_validator(mode="after")
    def _min_not_above_max(self) -> LlmCallCount:
        # No count passes both bounds: a load error, not a failure found only at run time.
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(
                f"min ({self.min}) is greater than max ({self.max}): no count can pass"
            )
        return self

    @_on_trace(_call_count_flips)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import SpanType

        count = len(trace.of_type(SpanType.LLM))
        calls = pluralize(count, "LLM call")
        limit = {"min": self.min, "max": self.max}
        if self.min is not None and count < self.min:
            return Verdict.failed(f"{calls} < min {self.min}", count, limit)
        if self.max is not None and count > self.max:
            return Verdict.failed(f"{calls} > max {self.max}", count, limit)
        bounds = [f"{name} {bound}" for name, bound in limit.items() if bound is not None]
        return Verdict.passed(f"{calls} (within {', '.join(bounds)})", count, limit)


def subsequence_gap(expected: list[str], actual: list[str]) -> int | None:
    """Return the index of the first expected item not found in order, or None if all are."""
    position = 0
    for index, name in enumerate(expected):
        try:
            position = actual.index(name, position) + 1
        except ValueError:
            return index
    return None


def capped(items: list[str], sep: str = ", ", *, quote: bool = False) -> str:
    """Join at most SHOWN items, then "… and N more"."""
    return capped_text(items, SHOWN, sep, quote=quote)


@register(
    category="trace",
    needs={Need.TRACE},
    example="expected: [memory.search, resend.send]\nmode: ordered",
)
class ToolSequence(Assertion):
    """Tool calls appear in the expected order (ordered, strict or contains)."""

    type: Literal["tool_sequence"]
    expected: list[str] = Field(min_length=1, description="Tool names in order.")
    mode: Literal["ordered", "strict", "contains"] = Field("ordered", description="Match mode.")

    @_on_trace(_sequence_flips)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import tool_names_judged

        # Tool Search's wrappers count as the tools they call, unless a control is expected.
        actual = tool_names_judged(trace, self.expected)
        shown = f"[{capped(actual, quote=True)}]" if actual else "[] (no tool calls)"
        problem = self._problem(actual)
        if problem:
            return Verdict.failed(f"{problem}; actual {shown}", actual, self.expected)
        expected = pluralize(len(self.expected), "expected tool")
        return Verdict.passed(f"{expected} matched ({self.mode}) in {shown}", actual, self.expected)

    def _problem(self, actual: list[str]) -> str | None:
        """Say how `actual` misses the expected tools in this mode, or None when it matches."""
        if self.mode == "contains":
            missing = [name for name in dict.fromkeys(self.expected) if name not in actual]
            return f"not called: {capped(missing, quote=True)}" if missing else None
        if self.mode == "strict":
            if actual == self.expected:
                return None
            pairs = zip(actual, self.expected, strict=False)
            at = next((i for i, (a, e) in enumerate(pairs) if a != e), None)
            at = min(len(actual), len(self.expected)) if at is None else at
            return (
                f"tool sequence differs at position {at + 1}: expected {_at(self.expected, at)}, "
                f"found {_at(actual, at)}"
            )
        gap = subsequence_gap(self.expected, actual)
        if gap is None:
            return None
        after = f" after '{self.expected[gap - 1]}'" if gap else ""
        return f"tool '{self.expected[gap]}'{after} not called in order"


def _at(names: list[str], index: int) -> str:
    return f"'{names[index]}'" if index < len(names) else "nothing"


@register(category="trace", needs={Need.TRACE}, example="expected: claude-sonnet-4-6")
class ModelUsed(Assertion):
    """A model (by substring) was, or was not, used in the LLM spans."""

    exactly_one_of = (("expected", "not_expected"),)
    type: Literal["model_used"]
    expected: str | None = Field(None, description="Substring that must appear in a model name.")
    not_expected: str | None = Field(None, description="Substring no model name may contain.")

    @_on_trace(_model_flips)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import SpanType

        llm = trace.of_type(SpanType.LLM)
        models = list(dict.fromkeys(span.model for span in llm if span.model))
        calls = pluralize(len(llm), "LLM span")
        if llm and not models:
            # No evidence either way: a negative check must not pass vacuously.
            return Verdict.skipped(f"no model recorded on the trace's {calls}")
        used = f"models used: {quote_list(models, SHOWN)}" if models else "no LLM spans"
        needle = (self.expected or self.not_expected or "").lower()
        matching = [model for model in models if needle in model.lower()]
        if self.expected is not None:
            if not matching:
                return Verdict.failed(f"no model matching '{self.expected}'; {used}", models)
            return Verdict.passed(f"model '{matching[0]}' used ({calls}); {used}", models)
        if matching:
            count = sum(1 for span in llm if span.model in matching)
            return Verdict.failed(
                f"model '{matching[0]}' matching '{self.not_expected}' used in "
                f"{pluralize(count, 'LLM span')}; {used}",
                models,
            )
        return Verdict.passed(f"no model matching '{self.not_expected}' in {calls}; {used}", models)


@register(
    category="trace",
    needs={Need.TRACE},
    example="expected: [orchestrator, copywriter, brand-guardian]",
)
class DelegationPath(Assertion):
    """Sub-agent delegations followed the expected path (ordered subsequence)."""

    type: Literal["delegation_path"]
    expected: list[str] = Field(min_length=1, description="Agent names, in order.")
    routing_path: WorkspacePath | None = Field(None, description="Fallback routing data file.")
    routing_decisions: WorkspacePath | None = Field(None, description="Fallback routing file.")
    state_path: WorkspacePath | None = Field(None, description="Fallback router state file.")

    @_on_trace(_not_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import delegation_spans, routing_agents

        roots, subagents = delegation_spans(trace)
        if subagents:
            return self._match([*roots, *subagents], "sub-agent spans")
        notes: list[str] = []
        for raw in (self.routing_path, self.routing_decisions, self.state_path):
            if raw is None:
                continue
            path = ctx.path(raw)
            if not path.is_file():
                notes.append(f"'{raw}' not found")
                continue
            try:
                text = read_text(path, ctx.settings.limits.file_max_bytes, shown=raw)
                data = json.loads(text) if path.suffix == ".json" else safe_load(text)
            except TooLargeError as exc:
                return Verdict.errored(str(exc))
            except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                return Verdict.errored(f"cannot read routing data '{raw}': {first}")
            agents = routing_agents(data)
            if agents:
                return self._match(agents, f"routing data '{raw}'")
            notes.append(f"no agents listed in '{raw}'")
        fallback = "; ".join(notes) if notes else "no routing fallback configured"
        return Verdict.warned(
            f"no sub-agent spans in trace '{trace.id}' and no routing data ({fallback}); "
            "delegation path not checked",
            None,
            self.expected,
        )

    def _match(self, actual: list[str], source: str) -> Verdict:
        folded = [name.lower() for name in actual]
        gap = subsequence_gap([name.lower() for name in self.expected], folded)
        shown = capped(actual, " → ")
        if gap is not None:
            after = f" after '{self.expected[gap - 1]}'" if gap else ""
            return Verdict.failed(
                f"delegation to '{self.expected[gap]}'{after} not found; "
                f"actual path {shown} (from {source})",
                actual,
                self.expected,
            )
        return Verdict.passed(
            f"delegation path {' → '.join(self.expected)} found in {shown} (from {source})",
            actual,
            self.expected,
        )


@register(category="trace", needs={Need.TRACE}, example="max_tokens: 8000\nspan_type: llm")
class PerSpanBudget(Assertion):
    """No single span exceeds a token budget."""

    type: Literal["per_span_budget"]
    max_tokens: int = Field(ge=0, description="Maximum tokens per span.")
    span_type: Literal["llm", "tool", "agent", "general"] = Field("llm", description="Span type.")
    span_name: str | None = Field(None, description="Only spans whose name contains this.")

    @_on_trace(_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import SpanType

        spans = [
            span
            for span in trace.of_type(SpanType(self.span_type))
            if self.span_name is None or self.span_name in span.name
        ]
        named = f" named like '{self.span_name}'" if self.span_name else ""

        def kind(count: int) -> str:
            return pluralize(count, f"{self.span_type} span") + named

        if not spans:
            return Verdict.skipped(f"no {self.span_type} span{named} in trace '{trace.id}'")
        counted = [(span, span.tokens) for span in spans if span.tokens is not None]
        if not counted:
            return Verdict.skipped(f"no token counts on the trace's {kind(len(spans))}")
        limit = fmt_number(self.max_tokens)
        over = [(span, tokens) for span, tokens in counted if tokens > self.max_tokens]
        largest = max(tokens for _, tokens in counted)
        if over:
            listed = [f"'{span.name}' {fmt_number(tokens)}" for span, tokens in over]
            return Verdict.failed(
                f"{pluralize(len(over), 'span')} over {limit} tokens: {capped(listed)}",
                largest,
                self.max_tokens,
                tuple(
                    f"{span.type} span '{span.name}' (id {span.id}): {fmt_number(tokens)} tokens "
                    f"> {limit}"
                    for span, tokens in over
                ),
            )
        return Verdict.passed(
            f"largest of {kind(len(counted))}: {fmt_number(largest)} tokens ≤ {limit}",
            largest,
            self.max_tokens,
        )


@register(
    category="trace",
    needs={Need.TRACE},
    example="max_input_tokens: 20000\nmax_output_tokens: 8000",
)
class TraceTokenBudget(Assertion):
    """Total token usage across all spans stays within bounds."""

    one_of = (("max_input_tokens", "max_output_tokens"),)
    type: Literal["trace_token_budget"]
    max_input_tokens: int | None = Field(None, ge=0, description="Maximum total input tokens.")
    max_output_tokens: int | None = Field(None, ge=0, description="Maximum total output tokens.")

    @_on_trace(_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import counted_spans, span_usage

        spans, source = counted_spans(trace, span_usage)
        if not spans:
            return Verdict.skipped(f"no input/output token counts in trace '{trace.id}'")
        totals = {
            "input": (self.max_input_tokens, sum(s.input_tokens or 0 for s in spans)),
            "output": (self.max_output_tokens, sum(s.output_tokens or 0 for s in spans)),
        }
        checked = [(label, m, total) for label, (m, total) in totals.items() if m is not None]
        checked.sort(key=lambda item: item[2] <= item[1])  # the exceeded limits first
        parts = [
            f"{label} tokens {fmt_number(total)} {'>' if total > m else '≤'} {fmt_number(m)}"
            for label, m, total in checked
        ]
        status = Status.FAIL if any(total > m for _, m, total in checked) else Status.PASS
        message = f"{', '.join(parts)} (summed over {source})"
        value = {label: total for label, _, total in checked}
        limit = {label: m for label, m, _ in checked}
        return Verdict(status, message, value, limit)


@register(category="trace", needs={Need.TRACE}, example="max_ms: 30000")
class TraceDuration(Assertion):
    """The trace's wall-clock duration does not exceed a maximum."""

    type: Literal["trace_duration"]
    max_ms: float = Field(ge=0, description="Maximum duration in milliseconds.")

    @_on_trace(_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import trace_duration_ms

        measured = trace_duration_ms(trace)
        if measured is None:
            return Verdict.skipped(f"no timing data in trace '{trace.id}'")
        duration, source = measured
        over = duration > self.max_ms
        message = (
            f"trace duration {fmt_duration_ms(duration)} {'>' if over else '≤'} "
            f"{fmt_duration_ms(self.max_ms)} (from {source})"
        )
        value = round(duration, 3)
        status = Status.FAIL if over else Status.PASS
        return Verdict(status, message, value, self.max_ms)


@register(category="trace", needs={Need.TRACE}, example="max_usd: 0.05")
class TraceCost(Assertion):
    """The trace's total cost does not exceed a maximum (native cost, else model_pricing)."""

    type: Literal["trace_cost"]
    max_usd: float = Field(ge=0, description="Maximum cost in USD.")

    @_on_trace(_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import counted_spans, estimate_cost

        if trace.cost_usd is not None:
            return self._compare(trace.cost_usd, f"native cost of trace '{trace.id}'")
        spans, source = counted_spans(trace, lambda s: s.cost_usd)
        if spans:
            return self._compare(sum(s.cost_usd or 0.0 for s in spans), f"native cost of {source}")
        cost, priced, unpriced = estimate_cost(trace, ctx.settings.model_pricing)
        estimated = f"estimated from model_pricing for {pluralize(priced, 'span')}"
        if not unpriced and priced:
            return self._compare(cost, estimated)
        if priced and cost > self.max_usd:  # a lower bound already over the limit
            return self._compare(cost, f"{estimated}; not priced: {quote_list(unpriced)}")
        if not priced and not unpriced:
            return Verdict.warned(
                f"no cost data and no token counts in trace '{trace.id}'; cost not checked",
                None,
                self.max_usd,
            )
        return Verdict.warned(
            f"no cost data and no model_pricing for {quote_list(unpriced)}; cost not checked",
            None,
            self.max_usd,
        )

    def _compare(self, cost: float, source: str) -> Verdict:
        value = round(cost, 8)
        if cost > self.max_usd:
            return Verdict.failed(
                f"trace cost {fmt_usd(cost)} > {fmt_usd(self.max_usd)} ({source})",
                value,
                self.max_usd,
            )
        return Verdict.passed(
            f"trace cost {fmt_usd(cost)} ≤ {fmt_usd(self.max_usd)} ({source})", value, self.max_usd
        )


@register(category="trace", needs={Need.TRACE}, example="{}")
class NoSpanErrors(Assertion):
    """No span in the trace has an error."""

    type: Literal["no_span_errors"]

    @_on_trace(_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        from clawspec.evidence.spans import by_start

        errored = [span for span in by_start(trace.spans) if span.error and str(span.error).strip()]
        if not errored:
            return Verdict.passed(f"no errors in {pluralize(len(trace.spans), 'span')}", 0, 0)
        listed = [
            f"{span.type} '{span.name}': {one_line(str(span.error), 200)}" for span in errored
        ]
        first = listed[0]
        more = f" … and {len(listed) - 1} more" if len(listed) > 1 else ""
        return Verdict.failed(
            f"{pluralize(len(errored), 'span')} with errors: {first}{more}",
            len(errored),
            0,
            tuple(listed),
        )


@register(category="trace", needs={Need.TRACE}, example="tool: resend.send", negative=True)
class ToolNotInvoked(Assertion):
    """A tool was not called in the trace; needs the trace found."""

    type: Literal["tool_not_invoked"]
    tool: str = Field(description="Tool name that must not appear in any tool span.")

    @_on_trace(_passed)
    def evaluate(self, ctx: EvalContext, trace: Trace) -> Verdict:
        # Positive evidence: only a found trace can show the tool was not called;
        # without one the evaluator skips (`_on_trace`).
        from clawspec.evidence.spans import tool_names_judged

        names = tool_names_judged(trace, [self.tool])
        count = names.count(self.tool)
        if count:
            return Verdict.failed(
                f"tool '{self.tool}' invoked {pluralize(count, 'time')} "
                f"(in {pluralize(len(trace.spans), 'span')} of trace '{trace.id}')",
                count,
                0,
            )
        others = f": {quote_list(dict.fromkeys(names), SHOWN)}" if names else ""
        return Verdict.passed(
            f"tool '{self.tool}' not invoked among {pluralize(len(names), 'tool call')}{others}",
            0,
            0,
        )

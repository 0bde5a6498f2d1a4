"""The one report model: the JSON report (SPEC §7) and the input of every renderer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clawspec.assertions.base import Status
from clawspec.config import parse_skip_budget
from clawspec.errors import ExitCode


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AssertionResult(_Frozen):
    """One evaluated assertion."""

    phase: Literal["given", "then"]
    index: int = Field(description="0-based position in its phase.")
    type: str
    line: int = Field(description="Line of the assertion's mapping in the contract.")
    status: Status
    message: str
    value: Any = None
    limit: Any = None
    details: list[str] = Field(
        default_factory=list, description="More lines: each judge call, each violating item."
    )
    usage: dict[str, Any] | None = Field(
        None, description="LLM judge usage: model, calls, input/output tokens, cost_usd."
    )


class TraceRef(_Frozen):
    """Where the scenario's trace lives."""

    backend: str
    id: str
    url: str | None = None


class ScenarioResult(_Frozen):
    """One scenario run."""

    id: str = Field(description="'<contract>::<scenario name>'.")
    contract: str
    line: int
    name: str
    target: str
    status: Status
    message: str = Field(description="Why the scenario is not pass; empty for pass.")
    run_id: str | None
    gateway_run_id: str | None = None
    duration_ms: int
    trace: TraceRef | None = None
    assertions: list[AssertionResult] = Field(default_factory=list)


class Totals(_Frozen):
    scenarios: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    warned: int = 0

    def counts(self) -> list[tuple[str, int]]:
        """(status word, count) in display order, for every status that occurred."""
        pairs = (
            ("passed", self.passed),
            ("failed", self.failed),
            ("errored", self.errored),
            ("warned", self.warned),
            ("skipped", self.skipped),
        )
        return [(word, n) for word, n in pairs if n]

    @classmethod
    def of(cls, scenarios: Iterable[ScenarioResult]) -> Totals:
        statuses = [s.status for s in scenarios]
        return cls(
            scenarios=len(statuses),
            passed=statuses.count(Status.PASS),
            failed=statuses.count(Status.FAIL),
            errored=statuses.count(Status.ERROR),
            skipped=statuses.count(Status.SKIP),
            warned=statuses.count(Status.WARN),
        )


class RunReport(_Frozen):
    """A whole run: serialised, this is the JSON report."""

    version: str = Field(description="Version of ClawSpec that wrote the report.")
    run_id: str
    started_at: str
    duration_ms: int
    interrupted: bool = False
    totals: Totals
    scenarios: list[ScenarioResult]


def scenario_status(statuses: Iterable[Status]) -> Status:
    """Combine assertion statuses (SPEC §5): error > fail > warn > pass > skip."""
    seen = set(statuses)
    for status in (Status.ERROR, Status.FAIL, Status.WARN, Status.PASS):
        if status in seen:
            return status
    return Status.SKIP


def skip_budget_exceeded(totals: Totals, max_skipped: str | None) -> bool:
    """True when skipped scenarios exceed the budget (a count, or a ratio of all scenarios)."""
    if max_skipped is None or totals.scenarios == 0:
        return False
    kind, limit = parse_skip_budget(max_skipped)
    if kind == "count":
        return totals.skipped > limit
    return totals.skipped / totals.scenarios > limit


def exit_code(report: RunReport, max_skipped: str | None, fail_on: str = "fail") -> ExitCode:
    """Map a finished report to the process exit code (SPEC §5).

    `fail_on` relaxes it for report-only jobs: `error` ignores plain failures, `never` ignores
    both. The skip budget applies in every mode: it exists to stop silent outages.
    """
    if report.interrupted:
        return ExitCode.INTERRUPTED
    totals = report.totals
    counted = {"fail": totals.failed + totals.errored, "error": totals.errored, "never": 0}
    if counted[fail_on] or skip_budget_exceeded(totals, max_skipped):
        return ExitCode.FAILED
    return ExitCode.OK

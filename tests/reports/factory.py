"""Build `RunReport`s for renderer tests: one scenario per status, or many."""

from __future__ import annotations

from typing import Any

from clawspec.assertions.base import Status
from clawspec.reports.model import AssertionResult, RunReport, ScenarioResult, Totals, TraceRef

CONTRACT = "skills/newsletter/tests/scenarios.yaml"


def assertion(status: str, message: str = "", **kw: Any) -> AssertionResult:
    data: dict[str, Any] = {
        "phase": "then",
        "index": 0,
        "type": "artifact_exists",
        "line": 12,
        "status": Status(status),
        "message": message or f"{status} message",
    }
    data.update(kw)
    return AssertionResult(**data)


def scenario(name: str, status: str, *assertions: AssertionResult, **kw: Any) -> ScenarioResult:
    data: dict[str, Any] = {
        "id": f"{kw.get('contract', CONTRACT)}::{name}",
        "contract": CONTRACT,
        "line": 5,
        "name": name,
        "target": "skills/newsletter",
        "status": Status(status),
        "message": "" if status == "pass" else f"{name} is {status}",
        "run_id": f"run-{name}",
        "gateway_run_id": f"gw-{name}",
        "duration_ms": 1500,
        "assertions": list(assertions),
    }
    data.update(kw)
    if "example" not in kw:  # the runner writes the name as written (a row's has no `[row]`)
        data.setdefault("scenario", name)
    return ScenarioResult(**data)


def report(*scenarios: ScenarioResult, interrupted: bool = False) -> RunReport:
    return RunReport(
        version="0.1.0",
        run_id="run-0001",
        started_at="2026-11-22T10:00:00+00:00",
        duration_ms=sum(s.duration_ms for s in scenarios),
        interrupted=interrupted,
        totals=Totals.of(scenarios),
        scenarios=list(scenarios),
    )


def mixed_report() -> RunReport:
    """One scenario per status, with a trace link and judge usage on some."""
    trace = TraceRef(backend="phoenix", id="t-1", url="http://127.0.0.1:6006/trace/t-1")
    usage = {
        "model": "claude-sonnet-4-5",
        "calls": 3,
        "input_tokens": 1200,
        "output_tokens": 300,
        "cost_usd": 0.0081,
    }
    return report(
        scenario("smoke", "pass", assertion("pass", "file present"), trace=trace),
        scenario(
            "tool-check",
            "fail",
            assertion("pass", "ok", index=0, line=20),
            assertion(
                "fail", "tool 'send_email' was not called", index=1, line=22, type="tool_was_called"
            ),
            line=17,
        ),
        scenario("broken", "error", message="gateway unreachable: POST /hooks/agent", line=30),
        scenario(
            "traces",
            "skip",
            assertion("skip", "no observability backend configured", type="trace_duration"),
            message="no observability backend configured",
            line=40,
        ),
        scenario(
            "judged",
            "warn",
            assertion("warn", "no cost data", type="trace_cost", line=52),
            assertion("pass", "score 4 >= 3", index=1, type="llm_judge", line=54, usage=usage),
            line=50,
        ),
        contract_scenario("other", "pass"),
    )


def contract_scenario(name: str, status: str) -> ScenarioResult:
    return scenario(
        name,
        status,
        assertion(status),
        contract="agents/router/tests/scenarios.yaml",
        target="agents/router",
        id=f"agents/router/tests/scenarios.yaml::{name}",
    )

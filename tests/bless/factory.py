"""Attempts and reports built in code, for the bless tests."""

from __future__ import annotations

from typing import Any

from clawspec.reports.model import (
    AttemptEvidence,
    AttemptRun,
    AttemptStats,
    FileSeen,
    RunReport,
    ScenarioResult,
    ToolCallRecord,
    Totals,
)
from clawspec.status import Status


def call(name: str, **args: Any) -> ToolCallRecord:
    return ToolCallRecord(name=name, agent="main", args=args or None)


def evidence(
    tools: list[ToolCallRecord],
    *,
    tokens: int | None = 1000,
    reply: str | None = "Done. The draft is saved.",
    files: list[FileSeen] | None = None,
    delegations: list[str] | None = None,
    variables: dict[str, str] | None = None,
    completed: bool | None = True,
    turns: list[AttemptEvidence] | None = None,
) -> AttemptEvidence:
    return AttemptEvidence(
        tools=tools,
        delegations=delegations or [],
        files=files or [],
        reply=reply,
        tokens=tokens,
        completed=completed,
        variables=variables or {},
        turns=turns,
    )


def result(
    contract: str,
    scenario: str,
    digest: str | None,
    runs: list[tuple[Status, AttemptEvidence | None]],
    *,
    recording: str | None = None,
    example: str | None = None,
) -> ScenarioResult:
    attempt_runs = [
        AttemptRun(
            run_id=f"r{i}",
            status=status,
            duration_ms=1000 + i,
            tokens=seen.tokens if seen else None,
            message="" if status == Status.PASS else "then[0] failed",
            recording=recording,
            evidence=seen,
        )
        for i, (status, seen) in enumerate(runs)
    ]
    passes = sum(1 for s, _ in runs if s in (Status.PASS, Status.WARN))
    name = scenario if example is None else f"{scenario}[{example}]"
    return ScenarioResult(
        id=f"{contract}::{name}",
        contract=contract,
        line=3,
        name=name,
        scenario=scenario,
        example=example,
        target="agents/demo",
        status=Status.PASS,
        message="",
        run_id="r0",
        duration_ms=5000,
        contract_digest=digest,
        attempts=AttemptStats(
            attempts=len(runs),
            passes=passes,
            pass_rate=passes / len(runs),
            ci_low=0.0,
            ci_high=1.0,
            runs=attempt_runs,
        ),
    )


def report(*results: ScenarioResult) -> RunReport:
    return RunReport(
        version="0",
        run_id="run",
        started_at="2026-11-29T00:00:00+00:00",
        duration_ms=1,
        totals=Totals.of(results),
        scenarios=list(results),
    )

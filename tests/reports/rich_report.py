"""A report using every part of the model the HTML report shows, with `text` in every string.

`rich_report("<script>…")` puts the given text into every field a person could influence
(contract paths, names, tags, messages, details, tool and span names, URLs, metadata) so the
XSS test can show none of it executes; `rich_report()` is the same report with plain text.
"""

from __future__ import annotations

from clawspec.assertions.base import Status
from clawspec.reports.model import (
    AttemptRun,
    AttemptStats,
    BaselineRef,
    CheckRef,
    Comparison,
    MergeInfo,
    PassRate,
    RunReport,
    RunSource,
    ScenarioChange,
    ScenarioEvidence,
    ScenarioResult,
    ScenarioTrend,
    ShardInfo,
    SpanRecord,
    TokenTotals,
    ToolCallRecord,
    Totals,
    TraceRef,
)
from tests.reports.factory import assertion

T0 = 1_795_311_814_000.0  # epoch ms


def _iso(offset_ms: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp((T0 + offset_ms) / 1000, UTC).isoformat(timespec="milliseconds")


def evidence(text: str = "") -> ScenarioEvidence:
    """An orchestrator that spawns a brand sub-agent, with its trace."""
    tools = [
        ToolCallRecord(name=f"sessions_spawn{text}", agent=f"main{text}", run_id=f"r1{text}",
                       started_at=_iso(100), ended_at=_iso(160)),
        ToolCallRecord(name=f"write{text}", agent=f"brand{text}", run_id="r2",
                       started_at=_iso(400), ended_at=_iso(450),
                       args={"path": f"drafts/brand{text}.md", "content": f"# Draft{text}\n"}),
        ToolCallRecord(name=f"exec{text}", agent=f"brand{text}", run_id="r2",
                       started_at=_iso(500), ended_at=_iso(700), error=True,
                       args=f'{{"command":"npm run build{text} && cat ', args_cut=True,
                       args_bytes=70_000),
    ]  # fmt: skip
    spans = [
        SpanRecord(id="s1", name=f"openclaw.message{text}", type="general", start_ms=T0,
                   end_ms=T0 + 900),
        SpanRecord(id="s2", parent_id="s1", name=f"openclaw.run{text}", type="agent",
                   start_ms=T0 + 10, end_ms=T0 + 880),
        SpanRecord(id="s3", parent_id="s2", name=f"openclaw.model.call{text}", type="llm",
                   start_ms=T0 + 20, end_ms=T0 + 90, model=f"claude-sonnet{text}",
                   input_tokens=800, output_tokens=60, cost_usd=0.0033),
        SpanRecord(id="s4", parent_id="s2", name=f"openclaw.tool.execution{text}", type="tool",
                   start_ms=T0 + 100, end_ms=T0 + 160),
        SpanRecord(id="s5", parent_id="s4", name=f"openclaw.run{text}", type="agent",
                   start_ms=T0 + 300, end_ms=T0 + 720),
        SpanRecord(id="s6", parent_id="s5", name=f"openclaw.tool.execution{text}", type="tool",
                   start_ms=T0 + 500, end_ms=T0 + 700, error=f"exec denied{text}"),
    ]  # fmt: skip
    tokens = TokenTotals(input=2100, output=116, total=2216, cost_usd=0.0051, source="plugin")
    return ScenarioEvidence(tools=tools, delegations=[f"brand{text}"], tokens=tokens,
                            spans=spans, spans_omitted=3)  # fmt: skip


def rich_report(text: str = "") -> RunReport:
    contract = f"agents/orchestrator{text}/tests/scenarios.yaml"
    judge_usage = {"model": f"claude-judge{text}", "calls": 2, "input_tokens": 900,
                   "output_tokens": 120, "cost_usd": 0.0045}  # fmt: skip
    delegates = ScenarioResult(
        id=f"{contract}::delegates-review{text}",
        contract=contract,
        line=5,
        name=f"delegates-review{text}",
        scenario=f"delegates-review{text}",
        target=f"agents/orchestrator{text}",
        status=Status.FAIL,
        message=f"then[1] (artifact_matches_golden): ROUGE-L F1 0.410 < 0.7{text}",
        restates=CheckRef(phase="then", index=1),
        run_id=f"run-a{text}",
        gateway_run_id=f"gw-a{text}",
        duration_ms=2300,
        trace=TraceRef(
            backend=f"local{text}", id=f"trace-1{text}", url=f"javascript:alert(1)//{text}"
        ),
        tags=[f"smoke{text}", "nightly"],
        assertions=[
            assertion(
                "pass",
                f"tool 'sessions_spawn' was called{text}",
                type="tool_was_called",
                line=9,
                details=[f"detail line{text}"],
                value=f"value{text}",
            ),
            assertion(
                "fail",
                f"ROUGE-L F1 0.410 < 0.7 against 'golden/review.md'{text}",
                type="artifact_matches_golden",
                index=1,
                line=12,
                value=0.41,
                limit=0.7,
                details=[
                    f"--- golden/review.md{text}",
                    f"+++ brand/review.md{text}",
                    "@@ -1,2 +1,2 @@",
                    " # Review",
                    f"-On brand.{text}",
                    f"+Off brand.{text}",
                ],
            ),
            assertion(
                "pass",
                f"score 4 ≥ 3{text}",
                type="llm_judge",
                index=2,
                line=15,
                value=4,
                limit=3,
                usage=judge_usage,
                details=[
                    f"call 1: score 4: Clear and on brand.{text}",
                    f"call 2: score 5: Persuasive.{text}",
                    f"rubric: Score 1-5: is it on brand?{text}",
                ],
                attempts=PassRate(attempts=3, passes=2, pass_rate=0.667, ci_low=0.21, ci_high=0.94),
            ),
        ],
        flaky=True,
        attempts=AttemptStats(
            attempts=3,
            passes=2,
            pass_rate=0.667,
            ci_low=0.21,
            ci_high=0.94,
            duration_ms_median=2300,
            duration_ms_p90=2900,
            tokens_median=2216,
            tokens_p90=2500,
            runs=[
                AttemptRun(run_id="a1", status=Status.PASS, duration_ms=2100, tokens=2216),
                AttemptRun(
                    run_id="a2",
                    status=Status.FAIL,
                    duration_ms=2900,
                    tokens=2500,
                    message=f"attempt failed{text}",
                ),
                AttemptRun(run_id="a3", status=Status.PASS, duration_ms=2300, tokens=2100),
            ],
        ),
        evidence=evidence(text),
    )
    newsletter = f"skills/newsletter{text}/tests/scenarios.yaml"
    scenarios = [
        delegates,
        ScenarioResult(
            id=f"{newsletter}::writes-draft", contract=newsletter, line=7, name="writes-draft",
            scenario="writes-draft", target="skills/newsletter", status=Status.PASS, message="",
            run_id="run-b",
            duration_ms=1200, tags=["smoke"],
            assertions=[assertion("pass", "file present", type="file_present", phase="given")],
            evidence=ScenarioEvidence(
                tools=[ToolCallRecord(name="write", agent="main", started_at=_iso(0),
                                      ended_at=_iso(30))],
                tokens=TokenTotals(input=2500, output=340, total=2840, source="plugin")),
        ),
        ScenarioResult(
            id=f"{newsletter}::provider-down", contract=newsletter, line=40, name="provider-down",
            scenario="provider-down", target="skills/newsletter", status=Status.ERROR,
            # A gateway run id and a URL: code spans on GitHub, copied without hidden characters.
            message=f"invocation failed: HTTP 500 (gateway run 3f2a9c0b1d2e4f56, POST "
                    f"http://127.0.0.1:18789/hooks/agent){text}", run_id="run-c",
            duration_ms=10_400,
            tags=[f"resilience{text}"],
        ),
        ScenarioResult(
            id=f"{newsletter}::judged", contract=newsletter, line=50, name="judged",
            scenario="judged", target="skills/newsletter", status=Status.SKIP,
            message=f"judge not configured{text}", run_id=None, duration_ms=0,
        ),
        ScenarioResult(
            id=f"{newsletter}::verbose", contract=newsletter, line=60, name="verbose",
            scenario="verbose", target="skills/newsletter", status=Status.WARN,
            message=f"warned{text}",
            run_id="run-e", duration_ms=900, tags=["nightly"],
            # A trace without a link (the local backend): its id is shown as it is.
            trace=TraceRef(backend="local", id="bc51bde4d0a1f2e3c4b5a69788776655"),
        ),
    ]  # fmt: skip
    changes = [
        ScenarioChange(id=delegates.id, change="regressed", status=Status.FAIL,
                       baseline_status=Status.PASS,
                       details={"pass_rate": {"baseline": 1.0, "current": 0.667}, "p_value": 0.04,
                                f"note{text}": f"tokens up{text}"}),
        ScenarioChange(id=scenarios[1].id, change="fixed", status=Status.PASS,
                       baseline_status=Status.FAIL),
        ScenarioChange(id=scenarios[2].id, change="unchanged", status=Status.ERROR,
                       baseline_status=Status.ERROR),
    ]  # fmt: skip
    return RunReport(
        version="0.1.0",
        run_id=f"run-0001{text}",
        started_at="2026-11-22T03:00:00+00:00",
        duration_ms=14_800,
        totals=Totals.of(scenarios),
        scenarios=scenarios,
        source=RunSource(commit=f"abc1234{text}", branch=f"main{text}", pull_request=42,
                         event="schedule", ci="github", repository=f"acme/agents{text}",
                         job_url=f"javascript:window.__pwned=1//{text}",
                         gateway_url=f"http://127.0.0.1:18789/{text}", gateway_mode="bring_up"),
        shard=ShardInfo(index=1, total=2, fingerprint=f"fp{text}", selected=10),
        baseline=BaselineRef(source=f"dir:.clawspec-history{text}", branch="main",
                             commit="0ff1ce", created_at="2026-11-21T03:00:00+00:00"),
        comparison=Comparison(scenarios=changes, counts={"regressed": 1, "fixed": 1,
                                                         "unchanged": 1, "new": 2},
                              regressions=[f"total tokens 1 → 2 (+100%, tolerance 15%){text}"]),
        merged=MergeInfo(total=2, present=[1], missing=[2], unreported=5, fingerprint=f"fp{text}",
                         selected=10),
        trends=[ScenarioTrend(id=delegates.id, name=delegates.name,
                              runs=[f"11-19{text}", "11-20", "11-21"],
                              pass_rates=[1.0, 1.0, 0.667], tokens=[2100, 2200, 2216])],
    )  # fmt: skip

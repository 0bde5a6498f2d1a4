"""The comparison as a pure function over two built reports (tests/reports/factory.py)."""

from __future__ import annotations

import pytest

from clawspec.config.settings import RegressionSettings
from clawspec.errors import ExitCode
from clawspec.regression.attempts import pass_rate
from clawspec.regression.compare import compare
from clawspec.reports.model import (
    AttemptStats,
    Comparison,
    ScenarioEvidence,
    TokenTotals,
    ToolCallRecord,
)
from clawspec.reports.outcome import Policy, decide
from tests.reports.factory import report, scenario


def repeated(name: str, passes: int, attempts: int, min_pass_rate: float = 1.0, **kw):
    rate = passes / attempts
    status = "pass" if rate >= min_pass_rate else "fail"
    stats = AttemptStats(**pass_rate(passes, attempts).model_dump())
    return scenario(name, status, attempts=stats, flaky=0 < passes < attempts, **kw)


def evidence(*tools: str, tokens: int | None = None, cost: float | None = None, delegations=()):
    totals = TokenTotals(total=tokens, cost_usd=cost, source="plugin") if tokens else None
    return ScenarioEvidence(
        tools=[ToolCallRecord(name=t) for t in tools], delegations=list(delegations), tokens=totals
    )


def _changes(comparison: Comparison) -> dict[str, str]:
    return {c.id.split("::")[1]: c.change for c in comparison.scenarios}


def test_each_kind_of_change_is_named() -> None:
    baseline = report(
        scenario("breaks", "pass"),
        scenario("heals", "fail"),
        scenario("known-bad", "fail"),
        scenario("steady", "pass"),
        scenario("dropped", "pass"),
        scenario("paused", "pass"),
    )
    current = report(
        scenario("breaks", "fail"),
        scenario("heals", "pass"),
        scenario("known-bad", "error"),
        scenario("steady", "pass"),
        scenario("added", "pass"),
        scenario("paused", "skip"),
    )
    comparison = compare(current, baseline)
    assert _changes(comparison) == {
        "breaks": "regressed",
        "heals": "fixed",
        "known-bad": "still_failing",
        "steady": "unchanged",
        "added": "new",
        "paused": "not_compared",
        "dropped": "removed",
    }
    assert comparison.counts == {
        "regressed": 1,
        "fixed": 1,
        "still_failing": 1,
        "new": 1,
        "removed": 1,
        "flaky": 0,
        "unchanged": 1,
        "not_compared": 1,
    }
    assert comparison.regressions == ["skills/newsletter/tests/scenarios.yaml::breaks: pass → fail"]
    removed = comparison.scenarios[-1]
    assert (removed.status, removed.baseline_status) == (None, "pass")


def test_a_failure_where_the_baseline_errored_is_not_an_accepted_failure() -> None:
    """An error is no verdict: failing now where the baseline errored is not `still_failing`
    (known and let through) but not compared, and counted like a new failing scenario."""
    baseline = report(
        scenario("outage", "error"), scenario("known-bad", "fail"), scenario("both", "error")
    )
    current = report(
        scenario("outage", "fail"), scenario("known-bad", "error"), scenario("both", "error")
    )
    comparison = compare(current, baseline)
    assert _changes(comparison) == {
        "outage": "not_compared",
        "known-bad": "still_failing",
        "both": "still_failing",
    }
    outage = comparison.scenarios[0]
    assert outage.details == {
        "note": "errored in the baseline (never judged there): nothing to compare",
        "errored": "baseline",
        "unaccepted": "fails now and errored in the baseline",
    }
    assert comparison.regressions == [
        "skills/newsletter/tests/scenarios.yaml::outage: fails now and errored in the baseline: "
        "no accepted failure to compare with"
    ]
    judged = current.model_copy(update={"comparison": comparison})
    assert decide(judged, Policy("regression", None)).exit_code == ExitCode.FAILED


@pytest.mark.parametrize(
    ("before", "now", "change", "p_value"),
    [
        ((10, 10), (9, 10), "flaky", 0.5),
        ((10, 10), (3, 10), "regressed", 0.001548),
        ((10, 10), (6, 10), "regressed", 0.043344),
        ((10, 10), (7, 10), "flaky", 0.105263),
        ((3, 3), (0, 3), "regressed", 0.05),
        ((1, 1), (0, 3), "regressed", 0.25),  # not significant, but no attempt passes any more
        ((5, 10), (10, 10), "fixed", 1.0),
        ((0, 3), (0, 3), "still_failing", 1.0),
    ],
)
def test_pass_rate_drops_are_regressions_only_when_significant(
    before: tuple[int, int], now: tuple[int, int], change: str, p_value: float
) -> None:
    comparison = compare(report(repeated("s", *now)), report(repeated("s", *before)))
    (item,) = comparison.scenarios
    assert item.change == change
    assert item.details["p_value"] == pytest.approx(p_value, abs=1e-6)
    assert bool(comparison.regressions) == (change == "regressed")


def test_significance_level_is_configurable() -> None:
    baseline, current = report(repeated("s", 10, 10)), report(repeated("s", 7, 10))
    assert compare(current, baseline).scenarios[0].change == "flaky"  # p = 0.105 > 0.05
    loose = RegressionSettings(significance=0.2)
    assert compare(current, baseline, loose).scenarios[0].change == "regressed"
    assert compare(current, baseline, loose).regressions == [
        "skills/newsletter/tests/scenarios.yaml::s: pass rate 1.00 (10 attempts) → 0.70 "
        "(10 attempts), Fisher p = 0.1053"
    ]


def test_token_cost_and_duration_deltas_are_flagged_over_tolerance() -> None:
    baseline = report(
        scenario("chatty", "pass", evidence=evidence(tokens=1000, cost=0.01), duration_ms=4000),
        scenario("calm", "pass", evidence=evidence(tokens=1000, cost=0.01), duration_ms=4000),
    )
    current = report(
        scenario("chatty", "pass", evidence=evidence(tokens=1500, cost=0.011), duration_ms=7000),
        scenario("calm", "pass", evidence=evidence(tokens=1100, cost=0.0125), duration_ms=4500),
    )
    comparison = compare(current, baseline)
    chatty, calm = comparison.scenarios
    assert chatty.change == calm.change == "unchanged"
    assert chatty.details["tokens"] == {
        "baseline": 1000,
        "current": 1500,
        "delta": 500,
        "ratio": 0.5,
        "tolerance": 0.15,
        "over": True,
    }
    assert chatty.details["over_tolerance"] == ["tokens", "duration_ms"]
    assert calm.details["over_tolerance"] == ["cost_usd"]
    assert comparison.details["tokens"]["ratio"] == 0.3
    assert comparison.regressions == [
        "skills/newsletter/tests/scenarios.yaml::chatty: tokens 1,000 → 1,500 (+50%, "
        "tolerance 15%)",
        "skills/newsletter/tests/scenarios.yaml::chatty: duration 4,000 ms → 7,000 ms (+75%, "
        "tolerance 50%)",
        "skills/newsletter/tests/scenarios.yaml::calm: cost 0.0100 USD → 0.0125 USD (+25%, "
        "tolerance 20%)",
        "total tokens 2,000 → 2,600 (+30%, tolerance 15%)",
    ]


def test_small_duration_changes_are_timer_noise_not_regressions() -> None:
    comparison = compare(
        report(scenario("s", "pass", duration_ms=90)), report(scenario("s", "pass", duration_ms=30))
    )
    assert comparison.scenarios[0].details["duration_ms"]["over"] is False
    assert comparison.regressions == []


def test_a_total_of_many_fast_scenarios_needs_a_second_per_scenario() -> None:
    # 44 fast scenarios, each 40 ms slower on a busy machine: +1.8 s and +240% in total, noise.
    names = [f"s{i}" for i in range(44)]
    before = report(*(scenario(n, "pass", duration_ms=17) for n in names))
    slow = compare(report(*(scenario(n, "pass", duration_ms=57) for n in names)), before)
    assert slow.details["duration_ms"]["delta"] == 44 * 40
    assert slow.details["duration_ms"]["over"] is False and slow.regressions == []
    # A second more for each of them is a real change, in every scenario and in the total.
    slower = compare(report(*(scenario(n, "pass", duration_ms=1017) for n in names)), before)
    assert slower.details["duration_ms"]["over"] is True
    assert slower.regressions[-1].startswith("total duration 748 ms → 44,748 ms")


def test_behaviour_diff_names_a_tool_that_disappeared_from_a_passing_scenario() -> None:
    baseline = report(
        scenario("recall", "pass", evidence=evidence("memory_search", "read", "write", "read"))
    )
    current = report(
        scenario(
            "recall",
            "pass",
            evidence=evidence("write", "read", "web_fetch", delegations=["researcher"]),
        )
    )
    (item,) = compare(current, baseline).scenarios
    assert item.change == "unchanged"
    assert item.details["behaviour"] == {
        "tools_added": ["web_fetch"],
        "tools_removed": ["memory_search"],
        "tools_reordered": {"baseline": ["read", "write"], "current": ["write", "read"]},
        "tools_calls": {"read": [2, 1]},
        "delegations_added": ["researcher"],
    }


def test_skipped_scenarios_and_new_failures() -> None:
    comparison = compare(
        report(scenario("quiet", "skip"), scenario("fresh", "fail"), scenario("fresh-ok", "pass")),
        report(scenario("quiet", "pass")),
    )
    assert _changes(comparison) == {"quiet": "not_compared", "fresh": "new", "fresh-ok": "new"}
    assert comparison.scenarios[0].details == {"note": "skipped now: nothing to compare"}
    assert comparison.regressions == [
        "skills/newsletter/tests/scenarios.yaml::fresh: new scenario fails"
    ]


def test_a_failure_where_the_baseline_skipped_is_counted_like_a_new_one() -> None:
    """The baseline never checked it (a trace backend down, a spend limit): failing now is no
    failure anybody accepted, as for a new scenario; passing or skipping now counts nothing."""
    comparison = compare(
        report(
            scenario("was-skipped", "fail"),
            scenario("broke", "error"),
            scenario("fine", "pass"),
            scenario("still-off", "skip"),
        ),
        report(*(scenario(n, "skip") for n in ("was-skipped", "broke", "fine", "still-off"))),
    )
    assert set(_changes(comparison).values()) == {"not_compared"}
    contract = "skills/newsletter/tests/scenarios.yaml"
    assert comparison.regressions == [
        f"{contract}::was-skipped: fails now and was skipped in the baseline: no accepted "
        "failure to compare with",
        f"{contract}::broke: errors now and was skipped in the baseline: no accepted failure to "
        "compare with",
    ]
    # Every report lists what it counts: the headline's number and the items agree.
    from clawspec.reports.changes import change_sections

    current = report(scenario("was-skipped", "fail"), scenario("broke", "error"))
    judged = current.model_copy(update={"comparison": comparison})
    (section,) = [s for s in change_sections(judged) if s.key == "regressed"]
    assert [(i.label.split("::")[1], i.text) for i in section.items] == [
        ("was-skipped", "fails now and was skipped in the baseline"),
        ("broke", "errors now and was skipped in the baseline"),
    ]


@pytest.mark.parametrize(
    ("comparison", "statuses", "expected"),
    [
        (None, ["fail"], ExitCode.FAILED),  # no baseline: the normal policy
        (Comparison(baseline_missing="none stored"), ["fail"], ExitCode.FAILED),
        (Comparison(baseline_missing="none stored"), ["pass"], ExitCode.OK),
        (Comparison(), ["fail"], ExitCode.OK),  # a known failure only
        (Comparison(regressions=["x: pass → fail"]), ["pass", "fail"], ExitCode.FAILED),
    ],
)
def test_fail_on_regression_exit_policy(comparison, statuses, expected) -> None:
    run = report(*(scenario(f"s{i}", s) for i, s in enumerate(statuses)))
    run = run.model_copy(update={"comparison": comparison})
    assert decide(run, Policy("regression", None)).exit_code == expected


def test_tolerances_take_ratios_or_percentages_and_bad_values_name_their_source(
    tmp_path,
) -> None:
    from clawspec.config.loading import load_settings
    from clawspec.errors import ConfigError

    config = tmp_path / "clawspec.yaml"
    config.write_text("regression: {tokens: 15%, duration: 0.5, cost: null}\n", encoding="utf-8")
    settings = load_settings(config, {}).regression
    assert (settings.tokens, settings.duration, settings.cost) == (0.15, 0.5, None)
    config.write_text("regression: {tokens: lots%}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, {})
    assert str(caught.value) == (
        f"{config}:1:14: regression.tokens: expected a ratio (0.15) or a percentage (15%), "
        "found 'lots%'"
    )


def test_a_shard_is_compared_only_on_its_own_scenarios() -> None:
    from clawspec.regression.apply import with_regression
    from clawspec.reports.model import ShardInfo

    baseline = report(scenario("mine", "pass"), scenario("elsewhere", "pass"))
    shard = ShardInfo(index=1, total=2, fingerprint="f", selected=2)
    current = report(scenario("mine", "fail")).model_copy(update={"shard": shard})
    comparison = with_regression(current, RegressionSettings(), baseline=baseline).comparison
    assert comparison is not None
    assert [(c.id.split("::")[1], c.change) for c in comparison.scenarios] == [
        ("mine", "regressed")
    ]


def test_a_baseline_sharing_no_scenario_with_the_run_is_said(tmp_path) -> None:
    """The branch's latest saved run ran another suite: every scenario is new, and the note
    says why (a known failure fails the job again; it is not a regression of the agent)."""
    import io

    from clawspec.ci_context import CIContext
    from clawspec.config.settings import Settings
    from clawspec.regression.step import judge_against_history
    from clawspec.reports.json_report import render_json

    other = tmp_path / "other.json"
    other.write_text(render_json(report(scenario("elsewhere", "pass"))), encoding="utf-8")
    err = io.StringIO()
    judged = judge_against_history(
        report(scenario("here", "fail")), Settings(baseline=str(other)), CIContext(), err
    )
    assert judged.comparison is not None and judged.comparison.counts["new"] == 1
    assert "note: the baseline shares no scenario with this run" in err.getvalue()
    err = io.StringIO()
    judge_against_history(
        report(scenario("elsewhere", "fail")), Settings(baseline=str(other)), CIContext(), err
    )
    assert "shares no scenario" not in err.getvalue()

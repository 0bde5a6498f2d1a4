"""The variant gate: each variant against the reference, and what `fail_on: regression` makes
of it (a required variant's regression fails the job; the reference's own failures and an
advisory variant's regressions do not)."""

from __future__ import annotations

from typing import Any

from clawspec.config.settings import RegressionSettings, VariantSettings
from clawspec.errors import ExitCode
from clawspec.regression.apply import with_regression
from clawspec.regression.variants import with_variants
from clawspec.reports.model import AttemptStats, RunReport
from clawspec.reports.outcome import Policy, decide
from clawspec.reports.variants import gate_text, variant_table
from tests.reports.factory import report, scenario

VARIANTS = [
    VariantSettings(name="sonnet", model="anthropic/claude-sonnet-4-6"),
    VariantSettings(name="haiku", model="anthropic/claude-haiku-4-5"),
    VariantSettings(name="mini", model="openai/gpt-5-mini", required=False),
]


def run(statuses: dict[str, dict[str, str]], **kw: Any) -> RunReport:
    """statuses: scenario name -> {variant: status}."""
    results = [
        scenario(name, status, variant=variant, **kw)
        for name, by_variant in statuses.items()
        for variant, status in by_variant.items()
    ]
    return with_variants(report(*results), VARIANTS, "sonnet", RegressionSettings())


def gate(found: RunReport, variant: str) -> Any:
    return next(g for g in found.variant_comparisons if g.variant == variant)


def test_a_required_variant_that_regresses_fails_the_job_and_says_why() -> None:
    found = run(
        {
            "smoke": {"sonnet": "pass", "haiku": "pass", "mini": "pass"},
            "tools": {"sonnet": "pass", "haiku": "fail", "mini": "pass"},
        }
    )
    haiku = gate(found, "haiku")
    assert haiku.required and haiku.reference == "sonnet"
    smoke, tools = found.scenarios[0].id, found.scenarios[3].id
    assert [(c.id, c.variant, c.change) for c in haiku.scenarios] == [
        (smoke, "haiku", "unchanged"),
        (tools, "haiku", "regressed"),
    ]
    assert haiku.counts["regressed"] == 1
    assert haiku.regressions == [f"{tools} @ haiku: pass → fail (reference: sonnet)"]
    assert decide(found, Policy("regression", None)).exit_code == ExitCode.FAILED
    assert [v.name for v in found.variants] == ["sonnet", "haiku", "mini"]
    assert [v.reference for v in found.variants] == [True, False, False]


def test_what_the_reference_fails_too_does_not_fail_the_gate() -> None:
    found = run(
        {
            "smoke": {"sonnet": "pass", "haiku": "pass", "mini": "pass"},
            "broken": {"sonnet": "fail", "haiku": "fail", "mini": "error"},
        }
    )
    assert gate(found, "haiku").counts["still_failing"] == 1
    assert found.totals.failed == 2
    # The normal policy fails on them; the gate does not.
    assert decide(found, Policy("fail", None)).exit_code == ExitCode.FAILED
    assert decide(found, Policy("regression", None)).exit_code == ExitCode.OK


def test_a_failure_where_the_reference_errored_fails_the_gate() -> None:
    """The reference's gateway broke: its error is no verdict, so the candidate's failure is
    not one 'the reference fails too'; the gate says it was not compared, and fails."""
    found = run(
        {
            "smoke": {"sonnet": "pass", "haiku": "pass", "mini": "pass"},
            "tools": {"sonnet": "error", "haiku": "fail", "mini": "pass"},
        }
    )
    haiku = gate(found, "haiku")
    assert haiku.counts["not_compared"] == 1 and haiku.counts["still_failing"] == 0
    tools = found.scenarios[3].id
    assert haiku.regressions == [
        f"{tools} @ haiku: fails now and errored in the baseline: no accepted failure to compare "
        "with (reference: sonnet)"
    ]
    assert decide(found, Policy("regression", None)).exit_code == ExitCode.FAILED
    (column,) = [c for c in variant_table(found).columns if c.name == "haiku"]
    assert gate_text(column) == (
        "haiku against sonnet: 1 unchanged, 1 not compared (skipped on a side, or errored on "
        "the reference); fails the job under fail_on: regression"
    )


def test_an_advisory_variant_is_shown_and_never_fails_the_job() -> None:
    found = run(
        {
            "smoke": {"sonnet": "pass", "haiku": "pass", "mini": "pass"},
            "tools": {"sonnet": "pass", "haiku": "pass", "mini": "fail"},
        }
    )
    mini = gate(found, "mini")
    assert not mini.required and mini.counts["regressed"] == 1 and mini.regressions
    assert decide(found, Policy("regression", None)).exit_code == ExitCode.OK
    # Nor under the normal policy: its failures are not counted.
    assert decide(found, Policy("fail", None)).exit_code == ExitCode.OK
    table = variant_table(found)
    assert table is not None
    assert [c.role for c in table.columns] == ["reference", "required", "advisory"]
    assert [c.verdict if c else None for c in table.rows[1].cells] == ["pass", "pass", "fail"]
    assert table.rows[1].cells[2].change == "regressed"  # type: ignore[union-attr]


def test_repeats_are_judged_with_the_fisher_test() -> None:
    def stats(passes: int) -> AttemptStats:
        return AttemptStats(
            attempts=10, passes=passes, pass_rate=passes / 10, ci_low=0.0, ci_high=1.0
        )

    def one(haiku: int) -> RunReport:
        results = [
            scenario("tools", "pass", variant="sonnet", attempts=stats(10)),
            scenario(
                "tools", "fail" if haiku < 10 else "pass", variant="haiku", attempts=stats(haiku)
            ),
        ]
        return with_variants(report(*results), VARIANTS[:2], "sonnet", RegressionSettings())

    dropped = gate(one(4), "haiku")  # 10/10 -> 4/10: p ≈ 0.005
    assert dropped.scenarios[0].change == "regressed"
    assert dropped.scenarios[0].details["significant_drop"] is True
    assert "Fisher p" in dropped.regressions[0]
    slight = gate(one(9), "haiku")  # 10/10 -> 9/10: not significant
    assert slight.scenarios[0].change != "regressed" and not slight.regressions
    table = variant_table(one(4))
    assert table is not None and table.repeated
    assert [c.verdict for c in table.rows[0].cells] == ["10/10 pass", "4/10 fail"]  # type: ignore[union-attr]
    assert [c.pass_rate for c in table.columns] == [1.0, 0.4]


def test_token_and_duration_differences_never_fail_the_gate() -> None:
    fast = scenario("smoke", "pass", variant="sonnet", duration_ms=1000)
    slow = scenario("smoke", "pass", variant="haiku", duration_ms=60_000)
    found = with_variants(report(fast, slow), VARIANTS[:2], "sonnet", RegressionSettings())
    haiku = gate(found, "haiku")
    assert haiku.scenarios[0].details["duration_ms"]["delta"] == 59_000
    assert not haiku.regressions
    assert decide(found, Policy("regression", None)).exit_code == ExitCode.OK


def test_without_the_reference_there_is_no_gate_and_the_normal_policy_applies() -> None:
    results = [scenario("tools", "fail", variant="haiku")]
    found = with_variants(report(*results), VARIANTS, "sonnet", RegressionSettings())
    assert [v.name for v in found.variants] == ["haiku"] and not found.variant_comparisons
    assert decide(found, Policy("regression", None)).exit_code == ExitCode.FAILED


def test_a_baseline_regression_of_an_advisory_variant_is_not_a_reason_to_fail() -> None:
    before = run(
        {"tools": {"sonnet": "pass", "haiku": "pass", "mini": "pass"}},
    )
    now = run({"tools": {"sonnet": "pass", "haiku": "pass", "mini": "fail"}})
    compared = with_regression(now, RegressionSettings(), baseline=before)
    assert compared.comparison is not None
    mini = [c for c in compared.comparison.scenarios if c.variant == "mini"]
    assert mini[0].change == "regressed"  # shown
    assert compared.comparison.regressions == []  # not counted
    assert decide(compared, Policy("regression", None)).exit_code == ExitCode.OK
    # Listed with the others, marked: the headline counts none of it.
    from clawspec.reports.changes import change_sections

    (section,) = [s for s in change_sections(compared) if s.key == "regressed"]
    assert [item.text for item in section.items] == [
        "pass → fail (advisory variant mini: does not fail the job)"
    ]


def test_a_run_of_one_variant_leaves_the_baselines_other_variants_out() -> None:
    """`--variant haiku` in its own CI job: the baseline's sonnet and mini results ran in their
    jobs; they are not "removed" scenarios."""
    before = run({"tools": {"sonnet": "pass", "haiku": "pass", "mini": "pass"}})
    now = run({"tools": {"haiku": "fail"}})
    compared = with_regression(now, RegressionSettings(), baseline=before)
    assert compared.comparison is not None
    assert [(c.variant, c.change) for c in compared.comparison.scenarios] == [
        ("haiku", "regressed")
    ]
    assert compared.comparison.counts["removed"] == 0


def test_a_shard_compares_only_what_it_ran_on_both_sides() -> None:
    from clawspec.reports.model import ShardInfo

    results = [
        scenario("a", "pass", variant="sonnet"),
        scenario("a", "fail", variant="haiku"),
        scenario("b", "fail", variant="haiku"),  # its sonnet run is on another shard
    ]
    shard = ShardInfo(index=1, total=2, fingerprint="f", selected=6)
    part = report(*results).model_copy(update={"shard": shard})
    found = with_variants(part, VARIANTS[:2], "sonnet", RegressionSettings())
    haiku = gate(found, "haiku")
    assert [c.change for c in haiku.scenarios] == ["regressed"]


def test_what_is_let_through_says_why_for_the_policy_and_for_advisory_variants() -> None:
    found = run(
        {
            "smoke": {"sonnet": "pass", "haiku": "fail", "mini": "error"},
            "tools": {"sonnet": "pass", "haiku": "pass", "mini": "fail"},
        }
    )
    outcome = decide(found, Policy("error", None))
    assert outcome.exit_code == ExitCode.OK
    assert outcome.reasons == (
        "1 failed, let through (fail_on: error); "
        "1 failed and 1 errored, let through (advisory variants)",
    )
    only_advisory = run({"smoke": {"sonnet": "pass", "haiku": "pass", "mini": "error"}})
    assert decide(only_advisory, Policy("error", None)).reasons == (
        "1 errored, let through (advisory variants)",
    )

"""The outcome of a run: one pure function decides it, every output asks it.

The exit code, the check run's conclusion and the verdict every renderer heads its report with
(terminal, job summary, PR comment, check run, step outputs) come from `decide`, so no output
can call green a run the job fails (or the reverse): a merge with a missing shard fails the job
*and* the check run, and the summary says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from clawspec.config.values import parse_skip_budget
from clawspec.errors import ExitCode
from clawspec.reports.model import RunReport, ScenarioResult, Totals, advisory_variants
from clawspec.status import Status
from clawspec.text import pluralize

if TYPE_CHECKING:
    from collections.abc import Sequence

    from clawspec.config.settings import Settings

Conclusion = Literal["success", "failure", "neutral", "cancelled"]
FailOn = Literal["fail", "error", "never", "regression"]


@dataclass(frozen=True)
class Policy:
    """What decides a run's outcome besides its report: the exit policy's settings and what
    the process saw that the report does not hold."""

    fail_on: FailOn = "fail"
    max_skipped: str | None = None
    # The report joins other runs' reports (`clawspec merge`): a part that was interrupted
    # leaves the whole incomplete (a failure), while this process was not interrupted (130).
    merged: bool = False
    gateway_unreachable: bool = False  # no agent run could reach the gateway at all
    internal_error: bool = False  # a bug in ClawSpec cut the run short


@dataclass(frozen=True)
class RunOutcome:
    """The run's verdict: its exit code, the check run's conclusion, and why, one reason a
    line (empty for a plain pass)."""

    exit_code: ExitCode
    conclusion: Conclusion
    reasons: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """One word for the headline: passed, failed, interrupted, error."""
        return {
            ExitCode.OK: "passed",
            ExitCode.FAILED: "failed",
            ExitCode.INTERRUPTED: "interrupted",
        }.get(self.exit_code, "error")

    @property
    def headline(self) -> str:
        """e.g. 'failed: shard 2/3 missing: 15 of 44 scenarios have no result' or 'passed'."""
        return f"{self.verdict}: {'; '.join(self.reasons)}" if self.reasons else self.verdict


def decide(report: RunReport, policy: Policy) -> RunOutcome:
    """The outcome of `report` under `policy`: the one place the exit policy lives.

    In order of precedence: an internal error (70), an interruption of this process (130), an
    unreachable gateway (3), then a failure (1) for any of: a merged part interrupted or
    missing, a spend limit that stopped the run, skips beyond `max_skipped`, and what
    `fail_on` counts. `fail_on` relaxes only the last one, for report-only jobs: `error`
    ignores plain failures, `never` ignores both, `regression` counts only regressions against
    the baseline and, with variants, the required variants' regressions against the reference
    variant (the normal `fail` policy when there is neither to compare with). Advisory
    variants' results never count. A passing step whose run ran nothing, or let a failure
    through, is a `neutral` check run: a green check never hides a failure.
    """
    if policy.internal_error:
        return RunOutcome(
            ExitCode.INTERNAL,
            "failure",
            ("an internal error in ClawSpec cut the run short; the reports hold what finished",),
        )
    if report.interrupted and not policy.merged:
        return RunOutcome(
            ExitCode.INTERRUPTED, "cancelled", ("the run was interrupted: results are incomplete",)
        )
    if policy.gateway_unreachable:
        return RunOutcome(ExitCode.GATEWAY, "failure", ("the gateway could not be reached",))
    totals = report.totals
    advisory = advisory_variants(report)
    if advisory:
        totals = Totals.of(s for s in report.scenarios if s.variant not in advisory)
    reasons = _incomplete(report, policy) + _counted(report, totals, policy)
    if reasons:
        return RunOutcome(ExitCode.FAILED, "failure", tuple(reasons))
    let_through = _let_through(report.totals, totals, policy.fail_on)
    if report.totals.scenarios == 0:
        return RunOutcome(ExitCode.OK, "neutral", ("no scenario ran",))
    if report.totals.skipped == report.totals.scenarios:
        # Nothing was checked (a trace backend down for a suite of trace assertions): a green
        # check would claim what never happened; max_skipped decides whether it fails.
        skipped = pluralize(report.totals.skipped, "scenario")
        return RunOutcome(ExitCode.OK, "neutral", (f"all {skipped} skipped: nothing checked",))
    if let_through:
        return RunOutcome(ExitCode.OK, "neutral", (let_through,))
    return RunOutcome(ExitCode.OK, "success")


def policy_for(
    settings: Settings,
    *,
    merged: bool = False,
    gateway_unreachable: bool = False,
    internal_error: bool = False,
) -> Policy:
    """The policy of a run with these settings (`fail_on`, `max_skipped`)."""
    return Policy(
        fail_on=settings.fail_on,
        max_skipped=settings.max_skipped,
        merged=merged,
        gateway_unreachable=gateway_unreachable,
        internal_error=internal_error,
    )


def _incomplete(report: RunReport, policy: Policy) -> list[str]:
    """What makes the report only part of the run: never a pass, whatever `fail_on` says."""
    reasons: list[str] = []
    if policy.merged and report.interrupted:
        reasons.append("a merged part was interrupted: the merged report is incomplete")
    return reasons + partial(report)


def variants_missing_message(names: Sequence[str]) -> str:
    """What a merge without a required variant's results says (every output, and stderr)."""
    return (
        f"no report holds a result of the required variant(s) {', '.join(names)}: the merged "
        "report is incomplete"
    )


def partial(report: RunReport) -> list[str]:
    """Why a report that was not interrupted still holds only part of the run (a missing
    shard or variant, a spend limit that stopped it): never a pass, never a baseline."""
    reasons: list[str] = []
    if report.merged is not None and report.merged.missing:
        reasons.append(report.merged.missing_message())
    if report.variants_missing:
        reasons.append(variants_missing_message(report.variants_missing))
    budget = report.budget
    if budget is not None and budget.stopped is not None:
        reasons.append(f"stopped by the run budget ({budget.stopped}): a partly checked suite")
    return reasons


def _counted(report: RunReport, totals: Totals, policy: Policy) -> list[str]:
    """What the exit policy counts against the run: the skip budget (in every `fail_on`
    mode: it exists to stop silent outages), then what `fail_on` counts."""
    reasons: list[str] = []
    advisory = advisory_variants(report)
    counted = [s for s in report.scenarios if s.variant not in advisory]
    if over := skip_budget_exceeded(counted, policy.max_skipped):
        reasons.append(f"{over}, over max_skipped ({policy.max_skipped})")
    fail_on = policy.fail_on
    comparison = report.comparison
    found = comparison is not None and comparison.baseline_missing is None
    if fail_on == "regression" and not found and not report.variant_comparisons:
        fail_on = "fail"  # nothing to compare with: the normal policy
    if fail_on == "regression":
        regressions = regression_reasons(report)
        if regressions:
            reasons.append(f"{pluralize(len(regressions), 'regression')} (fail_on: regression)")
        return reasons
    failed = {"fail": totals.failed, "error": 0, "never": 0}[fail_on]
    errored = 0 if fail_on == "never" else totals.errored
    counts = [f"{n:,} {word}" for word, n in (("failed", failed), ("errored", errored)) if n]
    if counts:
        reasons.append(", ".join(counts))
    return reasons


def skip_budget_exceeded(scenarios: Sequence[ScenarioResult], max_skipped: str | None) -> str:
    """What is over the skip budget, said ("3 scenarios skipped"); empty when nothing is.

    A scenario counts when it was skipped, and also when it ran but one of its assertions was
    skipped (a trace backend or judge down while its file assertions passed): the budget
    exists to stop a silent outage from keeping CI green, and an outage rarely skips a whole
    scenario. A count, or a ratio of all scenarios."""
    if max_skipped is None or not scenarios:
        return ""
    whole = sum(1 for s in scenarios if s.status == Status.SKIP)
    partly = sum(
        1
        for s in scenarios
        if s.status != Status.SKIP and any(c.status == Status.SKIP for c in s.checks())
    )
    unchecked = whole + partly
    kind, limit = parse_skip_budget(max_skipped)
    if unchecked <= (limit if kind == "count" else limit * len(scenarios)):
        return ""
    said = [f"{pluralize(whole, 'scenario')} skipped"] if whole else []
    if partly:
        said.append(f"{pluralize(partly, 'scenario')} with skipped assertions")
    return " and ".join(said)


def regression_reasons(report: RunReport) -> list[str]:
    """What `fail_on: regression` fails on, one line each: regressions against the baseline
    (when one was found), then each required variant's against the reference variant."""
    comparison = report.comparison
    reasons = list(comparison.regressions) if comparison and not comparison.baseline_missing else []
    for gate in report.variant_comparisons:
        if gate.required:
            reasons += gate.regressions
    return reasons


def _let_through(everything: Totals, required: Totals, fail_on: str) -> str:
    """Failures let pass, said with why (empty when there are none): those of the required
    variants (or of a run without variants) by the policy, an advisory variant's as such."""
    said = []
    for why, failed, errored in (
        (f"fail_on: {fail_on}", required.failed, required.errored),
        (
            "advisory variants",
            everything.failed - required.failed,
            everything.errored - required.errored,
        ),
    ):
        shown = [f"{n:,} {word}" for word, n in (("failed", failed), ("errored", errored)) if n]
        if shown:
            said.append(f"{' and '.join(shown)}, let through ({why})")
    return "; ".join(said)

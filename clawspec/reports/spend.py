"""What a run spent, counted one way and said the same way by every output; a cost that is not
known is never $0.

One agent run's spend (`RunSpend`) is its agent's token usage and cost plus its LLM judge
calls: the judge is paid for by the run as much as the agent is. The run's budget counts every
attempt so (runner/budget.py), and its report carries the sum (`RunReport.budget`). A report
without one (written before budgets existed, or the variant columns' per-variant totals) gets
it summed here the same way, one run per scenario that reached the agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawspec.evidence.cost import UNKNOWN_MODEL
from clawspec.text import fmt_duration_ms, fmt_usd, pluralize, quote_list

if TYPE_CHECKING:  # the run's budget counts spend before the report model is needed
    from clawspec.reports.model import BudgetReport, RunReport, ScenarioResult


@dataclass(frozen=True)
class RunSpend:
    """What one finished agent run spent; `cost_usd` None when it cannot be known."""

    tokens: int
    cost_usd: float | None
    unpriced: tuple[str, ...] = ()  # models without a native cost or a model_pricing entry
    metered: bool = True  # some usage was recorded for it

    @classmethod
    def of(cls, result: ScenarioResult) -> RunSpend:
        """The run's usage and cost, with its judge calls."""
        totals = result.evidence.tokens if result.evidence is not None else None
        tokens = (totals.total or 0) if totals is not None else 0
        cost = totals.cost_usd if totals is not None else None
        unpriced = list(totals.unpriced) if totals is not None else []
        for assertion in result.checks():  # a conversation's turns judge too
            if not assertion.usage:
                continue
            usage = assertion.usage
            tokens += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            judged = usage.get("cost_usd")
            if isinstance(judged, int | float) and cost is not None:
                cost += judged
            elif not isinstance(judged, int | float):
                if not usage.get("unmetered_calls"):  # a price would not help unknown usage
                    unpriced.append(str(usage.get("model") or UNKNOWN_MODEL))
                cost = None
        return cls(tokens, cost, tuple(dict.fromkeys(unpriced)), totals is not None)


@dataclass(frozen=True)
class Spent:
    """What the finished runs spent so far."""

    runs: int = 0
    cost_usd: float = 0.0  # the runs whose cost is known
    unpriced_runs: int = 0
    unpriced_models: tuple[str, ...] = ()
    tokens: int = 0  # the runs whose usage was recorded
    unmetered_runs: int = 0

    def plus(self, run: RunSpend) -> Spent:
        return Spent(
            runs=self.runs + 1,
            cost_usd=self.cost_usd + (run.cost_usd or 0.0),
            unpriced_runs=self.unpriced_runs + (run.cost_usd is None),
            unpriced_models=tuple(dict.fromkeys([*self.unpriced_models, *run.unpriced])),
            tokens=self.tokens + run.tokens,
            unmetered_runs=self.unmetered_runs + (not run.metered),
        )

    def report_fields(self) -> dict[str, object]:
        """The spend part of a `BudgetReport` (the run's budget adds its limits to it)."""
        return {
            "runs": self.runs,
            "cost_usd": round(self.cost_usd, 9),
            "unpriced_runs": self.unpriced_runs,
            "unpriced_models": list(self.unpriced_models),
            "tokens": self.tokens,
            "unmetered_runs": self.unmetered_runs,
        }


def spend_of(report: RunReport) -> BudgetReport:
    """The report's spend: as the run counted it, else summed from its scenarios."""
    if report.budget is not None:
        return report.budget
    return summed(report.scenarios)


def summed(scenarios: Iterable[ScenarioResult]) -> BudgetReport:
    """Spend summed from results (a scenario that reached the agent is a run), counted as the
    run budget counts it: the agent's usage and cost with its judge calls."""
    from clawspec.reports.model import BudgetReport

    spent = Spent()
    for s in scenarios:
        if s.evidence is None and s.gateway_run_id is None:
            continue  # never reached the agent: nothing spent
        spent = spent.plus(RunSpend.of(s))
    return BudgetReport(planned=spent.runs, **spent.report_fields())


def usd(value: float) -> str:
    """'$5.00', '$5.03', '$0.0712': cents when they say it exactly, else every digit."""
    value = round(value, 9)  # sums of floats: 0.1 + 0.2 is 0.30000000000000004
    return f"${value:,.2f}" if round(value, 2) == value else fmt_usd(value)


def cost_text(spend: BudgetReport) -> str:
    """'$0.0712', 'at least $0.05 (2 runs unpriced)' or 'unknown (3 runs unpriced)'."""
    if not spend.unpriced_runs:
        return usd(spend.cost_usd)
    unpriced = f"{pluralize(spend.unpriced_runs, 'run')} unpriced"
    if spend.unpriced_runs >= spend.runs:
        return f"unknown ({unpriced})"
    return f"at least {usd(spend.cost_usd)} ({unpriced})"


def tokens_text(spend: BudgetReport) -> str:
    """'1,234 of 5,000 tokens', 'at least 1,234 tokens (2 runs without usage)' or 'unknown
    tokens (3 runs without usage)': a run whose usage was not recorded never counts as 0."""
    limit = f" of {spend.max_tokens:,}" if spend.max_tokens is not None else ""
    if not spend.unmetered_runs:
        return f"{spend.tokens:,}{limit} tokens"
    unmetered = f"{pluralize(spend.unmetered_runs, 'run')} without usage"
    if spend.unmetered_runs >= spend.runs and not spend.tokens:  # (a judge's usage counts)
        return f"unknown{limit} tokens ({unmetered})"
    return f"at least {spend.tokens:,}{limit} tokens ({unmetered})"


def unpriced_hint(spend: BudgetReport) -> str:
    """Which models to price, e.g. "add 'x/y' to model_pricing"; '' when none is named."""
    named = [m for m in spend.unpriced_models if m != "unknown model"]
    if not named:
        return ""
    return f"add {quote_list(named)} to model_pricing"


def worth_saying(spend: BudgetReport) -> bool:
    """A budget was set, or some run recorded usage: otherwise there is nothing to say (and
    no cost is claimed anywhere)."""
    return (
        spend.limited
        or spend.stopped is not None
        or spend.tokens > 0
        or (spend.runs > spend.unpriced_runs)
    )


def spend_line(spend: BudgetReport) -> str:
    """One line: 'Budget: cost $5.03 of $5.00, 1,234 tokens; 41 of 120 agent runs' (limits
    next to what was spent), or 'Spent: …' when no limit is set."""
    cost = cost_text(spend)
    if spend.max_cost_usd is not None:
        cost += f" of {usd(spend.max_cost_usd)}"
    parts = [f"cost {cost}", tokens_text(spend)]
    if spend.max_duration_s is not None:
        parts.append(
            f"{fmt_duration_ms(spend.duration_s * 1000)} of "
            f"{fmt_duration_ms(spend.max_duration_s * 1000)}"
        )
    runs = f"{spend.runs:,} of {pluralize(spend.planned, 'agent run')}"
    share = f" (this shard's share: 1/{spend.shard_share})" if spend.shard_share else ""
    head = "Budget" if spend.limited else "Spent"
    line = f"{head}{share}: {', '.join(parts)}; {runs}"
    hint = unpriced_hint(spend)
    return f"{line}; {hint}" if hint and not spend.stopped else line


def token_disagreements(scenarios: Iterable[ScenarioResult]) -> str | None:
    """One line when the plugin's events counted a run's tokens otherwise than OpenClaw's run
    record (the record's figures are the ones counted): the scenario and, for one, what
    differed. None when they agree everywhere."""
    found = [
        (s.identity.label, s.evidence.tokens.disagreement)
        for s in scenarios
        if s.evidence is not None
        and s.evidence.tokens is not None
        and s.evidence.tokens.disagreement
    ]
    if not found:
        return None
    if len(found) == 1:
        label, differ = found[0]
        return f"Tokens of '{label}' counted from the run record; {differ}"
    names = quote_list([label for label, _ in found])
    return (
        f"Tokens counted from the run record; the plugin's events count otherwise for "
        f"{pluralize(len(found), 'scenario')}: {names} (each scenario's tokens in the report)"
    )


def merged(shards: Sequence[tuple[str, RunReport]]) -> BudgetReport | None:
    """The spend of a run split in shards: what every shard spent, summed, against the whole
    budget (each shard kept its share of it); why each shard a limit stopped was stopped.
    `shards`: (label such as '2/4', report). None when no shard counted its spend."""
    from clawspec.reports.model import BudgetReport

    spends = [(label, r.budget) for label, r in shards if r.budget is not None]
    if not spends:
        return None
    first = spends[0][1]
    share = first.shard_share or 1

    def whole(limit: float | None) -> float | None:
        return None if limit is None else round(limit * share, 9)

    tokens = None if first.max_tokens is None else first.max_tokens * share
    stopped = [f"shard {label}: {b.stopped}" for label, b in spends if b.stopped]
    return BudgetReport(
        max_cost_usd=whole(first.max_cost_usd),
        max_tokens=tokens,
        max_duration_s=first.max_duration_s,
        planned=sum(b.planned for _, b in spends),
        runs=sum(b.runs for _, b in spends),
        cost_usd=round(sum(b.cost_usd for _, b in spends), 9),
        unpriced_runs=sum(b.unpriced_runs for _, b in spends),
        unpriced_models=list(dict.fromkeys(m for _, b in spends for m in b.unpriced_models)),
        tokens=sum(b.tokens for _, b in spends),
        unmetered_runs=sum(b.unmetered_runs for _, b in spends),
        duration_s=max(b.duration_s for _, b in spends),  # the shards ran side by side
        stopped="; ".join(stopped) or None,
    )

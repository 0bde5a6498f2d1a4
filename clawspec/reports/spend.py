"""What a run spent, said the same way by every output; a cost that is not known is never $0.

A run's report carries its spend (`RunReport.budget`, counted over every attempt while it ran).
A report without one (written before budgets existed) gets it summed from its scenarios'
evidence, one run per scenario.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from clawspec.reports.model import BudgetReport, RunReport, ScenarioResult
from clawspec.text import fmt_duration_ms, fmt_usd, pluralize, quote_list


def spend_of(report: RunReport) -> BudgetReport:
    """The report's spend: as the run counted it, else summed from its scenarios."""
    if report.budget is not None:
        return report.budget
    return summed(report.scenarios)


def summed(scenarios: Iterable[ScenarioResult]) -> BudgetReport:
    """Spend summed from results' evidence (a scenario that reached the gateway is a run)."""
    runs = unpriced = tokens = 0
    cost = 0.0
    models: list[str] = []
    for s in scenarios:
        if s.evidence is None and s.gateway_run_id is None:
            continue  # never reached the agent: nothing spent
        runs += 1
        totals = s.evidence.tokens if s.evidence is not None else None
        tokens += (totals.total or 0) if totals is not None else 0
        if totals is not None and totals.cost_usd is not None:
            cost += totals.cost_usd
        else:
            unpriced += 1
            models += totals.unpriced if totals is not None else []
    return BudgetReport(
        planned=runs,
        runs=runs,
        cost_usd=cost,
        unpriced_runs=unpriced,
        unpriced_models=list(dict.fromkeys(models)),
        tokens=tokens,
    )


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
    tokens = f"{spend.tokens:,}"
    if spend.max_tokens is not None:
        tokens += f" of {spend.max_tokens:,}"
    parts = [f"cost {cost}", f"{tokens} tokens"]
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


def merged(shards: Sequence[tuple[str, RunReport]]) -> BudgetReport | None:
    """The spend of a run split in shards: what every shard spent, summed, against the whole
    budget (each shard kept its share of it); why each shard a limit stopped was stopped.
    `shards`: (label such as '2/4', report). None when no shard counted its spend."""
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
        duration_s=max(b.duration_s for _, b in spends),  # the shards ran side by side
        stopped="; ".join(stopped) or None,
    )

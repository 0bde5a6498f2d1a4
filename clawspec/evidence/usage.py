"""A run's token usage and cost from OpenClaw's run record, and how it compares with what
ClawSpec's plugin counted.

OpenClaw writes one `model.completed` per run with the run's summed usage (every model call of
it) and native cost. Where the plugin's events count the same run too, the two must agree; when
they do not, the record decides and the difference is said, never resolved in silence. Used by
`token_budget` and the report's tokens (which the spend limits count), so both say the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawspec.evidence.cost import usage_cost
from clawspec.text import fmt_number, fmt_usd

if TYPE_CHECKING:
    from clawspec.config.settings import ModelPrice
    from clawspec.evidence.record import RunRecords

# Costs closer than this are the same cost summed in another order.
COST_TOLERANCE_USD = 1e-9


@dataclass(frozen=True)
class Counted:
    """Tokens (and cost when known) as one source counts them; None: that source has no figure."""

    input: int | None
    output: int | None
    total: int | None
    cost_usd: float | None = None


@dataclass(frozen=True)
class RecordUsage:
    """The scope's runs and their sub-agents' usage, summed from the record."""

    counted: Counted
    unpriced: tuple[str, ...]  # models without a native cost or a model_pricing entry
    runs: int


def record_usage(found: RunRecords, pricing: Mapping[str, ModelPrice]) -> RecordUsage | None:
    """The usage of every run in `found` (sub-agents, and the runs announcing their results,
    included), or None when any of them is not completely recorded or has no usage recorded:
    never a partial sum that reads as the whole.
    A run without a native cost is priced by its model (`model_pricing`)."""
    from clawspec.evidence.record import runs_of

    every = (*found.runs, *found.announced)  # a sub-agent's announcement is spent too
    if not found.runs or not all(run.settled for run in every):
        return None
    runs = list(runs_of(every))
    parts = [(run, run.usage) for run in runs if run.usage is not None]
    if len(parts) != len(runs):
        return None
    cost, unpriced = usage_cost(
        (
            (usage.cost, model_of(run.provider, run.model), usage.input, usage.output)
            for run, usage in parts
        ),
        pricing,
    )
    counted = Counted(
        input=sum(usage.input for _, usage in parts),
        output=sum(usage.output for _, usage in parts),
        total=sum(usage.total for _, usage in parts),
        cost_usd=cost,
    )
    return RecordUsage(counted, tuple(unpriced), len(runs))


def model_of(provider: str | None, model: str | None) -> str | None:
    """`provider/model` as the plugin names it, for `model_pricing`."""
    return "/".join(part for part in (provider, model) if part) or None


def disagreement(record: Counted, plugin: Counted) -> str | None:
    """What the plugin's events count otherwise than the record, e.g. "the plugin's events
    count input 2,400, total 2,446, cost $0.25 (the run record: input 2,500, total 2,546, cost
    $0.00)"; None when they agree on every figure both give."""
    theirs: list[str] = []
    ours: list[str] = []
    for name, mine, other in (
        ("input", record.input, plugin.input),
        ("output", record.output, plugin.output),
        ("total", record.total, plugin.total),
    ):
        if mine is not None and other is not None and mine != other:
            theirs.append(f"{name} {fmt_number(other)}")
            ours.append(f"{name} {fmt_number(mine)}")
    mine_cost, their_cost = record.cost_usd, plugin.cost_usd
    if (
        mine_cost is not None
        and their_cost is not None
        and abs(mine_cost - their_cost) > COST_TOLERANCE_USD
    ):
        theirs.append(f"cost {fmt_usd(their_cost)}")
        ours.append(f"cost {fmt_usd(mine_cost)}")
    if not theirs:
        return None
    return f"the plugin's events count {', '.join(theirs)} (the run record: {', '.join(ours)})"

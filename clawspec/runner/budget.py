"""Spend limits of a whole run: what its finished agent runs spent, and when to start no more.

Every finished attempt is counted from the evidence its result already holds: the report's
tokens and cost (the run record's where it was read, else the plugin's or the trace's; native
cost, else `model_pricing`; the judge's calls too), so the limits count what the report shows.
Once a limit is reached, or a run's cost cannot be known while a cost limit is set, `reason()`
says why and the runner starts no further agent run; runs in flight finish and are counted.
The deadline of `max_duration` is read from an injectable clock, so tests need no real waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawspec.evidence.cost import UNKNOWN_MODEL
from clawspec.reports.spend import RunSpend, Spent, usd
from clawspec.text import fmt_duration_ms, quote_list

if TYPE_CHECKING:
    from clawspec.ci_context import CIContext
    from clawspec.config.settings import BudgetSettings, Settings
    from clawspec.reports.model import BudgetReport, ScenarioResult


@dataclass(frozen=True)
class Limits:
    """The limits this process keeps: a shard's are the configured ones divided by the count."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_duration_s: float | None = None
    shard_share: int | None = None

    @classmethod
    def of(cls, budget: BudgetSettings, shards: int | None = None) -> Limits:
        share = shards if shards and shards > 1 else None
        part = share or 1
        cost, tokens, duration = budget.max_cost_usd, budget.max_tokens, budget.max_duration
        return cls(
            max_cost_usd=None if cost is None else cost / part,
            max_tokens=None if tokens is None else tokens // part,
            # Shards run side by side: each gets the whole time.
            max_duration_s=duration,
            shard_share=share if (cost, tokens) != (None, None) else None,
        )


def limits_for(settings: Settings, context: CIContext) -> Limits:
    """The spend limits this machine keeps: a shard keeps its share, so the shards together
    keep the whole."""
    shards = None
    if settings.shard and settings.budget.any:
        from clawspec.sharding.split import resolve_shard

        shard = resolve_shard(settings.shard, context)
        shards = shard.total if shard is not None else None
    return Limits.of(settings.budget, shards)


def spends(result: ScenarioResult, invoked: bool, unreachable: bool) -> bool:
    """The attempt ran an agent: invoked, the gateway reached, and it answered or left usage
    (a request refused before any run started costs nothing)."""
    return (
        invoked
        and not unreachable
        and (result.gateway_run_id is not None or result.evidence is not None)
    )


class Budget:
    """Counts a run's spend (thread-safe) and says when no further agent run may start."""

    def __init__(
        self, limits: Limits, planned: int = 0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits
        self.planned = planned
        self._clock = clock
        self._started = clock()
        self._ended: float | None = None
        self._spent = Spent()
        self._reason: str | None = None
        self._lock = threading.Lock()

    def start(self, planned: int) -> None:
        """The first agent run is about to start: the deadline counts from now."""
        with self._lock:
            self.planned = planned
            self._started = self._clock()

    def reason(self) -> str | None:
        """Why no further agent run may start (None: runs may go on). Looks at the clock."""
        with self._lock:
            deadline = self.limits.max_duration_s
            if self._reason is None and deadline is not None:
                elapsed = self._clock() - self._started
                if elapsed >= deadline:
                    self._reason = self._spent_message(f"{_time(elapsed)} of {_time(deadline)}")
            return self._reason

    def add(self, scenario_id: str, result: ScenarioResult) -> None:
        """Count a finished agent run (its attempt's result)."""
        run = RunSpend.of(result)
        with self._lock:
            self._spent = spent = self._spent.plus(run)
            self._ended = self._clock()
            if self._reason is not None:
                return
            limits = self.limits
            if limits.max_cost_usd is not None and run.cost_usd is None:
                self._reason = self._unknown_cost(scenario_id, run)
            elif limits.max_tokens is not None and not run.metered:
                self._reason = (
                    f"run budget cannot be kept: the tokens of '{scenario_id}' are unknown "
                    f"({_no_usage('budget')}); stopped after {self._spent.runs:,} of "
                    f"{self.planned:,} runs"
                )
            elif limits.max_cost_usd is not None and spent.cost_usd >= limits.max_cost_usd:
                used = f"{usd(spent.cost_usd)} of {usd(limits.max_cost_usd)}"
                self._reason = self._spent_message(used)
            elif limits.max_tokens is not None and spent.tokens >= limits.max_tokens:
                self._reason = self._spent_message(
                    f"{spent.tokens:,} of {limits.max_tokens:,} tokens"
                )

    def _spent_message(self, used: str) -> str:
        return f"run budget spent: {used} after {self._spent.runs:,} of {self.planned:,} runs"

    def _unknown_cost(self, scenario_id: str, run: RunSpend) -> str:
        named = [m for m in run.unpriced if m != UNKNOWN_MODEL]
        if named:
            models = quote_list(named)
            why = f"no native cost and no model_pricing for {models}; add it to model_pricing"
        elif run.metered:
            why = "its usage names no model; a cost budget needs native cost or a priced model"
        else:
            why = _no_usage("cost budget")
        return (
            f"run budget cannot be kept: the cost of '{scenario_id}' is unknown ({why}); "
            f"stopped after {self._spent.runs:,} of {self.planned:,} runs"
        )

    def report(self, held_back: int | None = None) -> BudgetReport:
        """The budget section of the run's report. `held_back`: the attempts that never
        started (None: not known). A limit reached only once every run had started stopped
        nothing: the report does not say it did, and the run is not failed for it (its spend
        line still shows the spend against the limit, an unknown cost as unknown)."""
        from clawspec.reports.model import BudgetReport

        with self._lock:
            spent, limits = self._spent, self.limits
            ended = self._ended if self._ended is not None else self._started
            return BudgetReport(
                max_cost_usd=limits.max_cost_usd,
                max_tokens=limits.max_tokens,
                max_duration_s=limits.max_duration_s,
                shard_share=limits.shard_share,
                planned=self.planned,
                **spent.report_fields(),
                duration_s=round(max(0.0, ended - self._started), 3),
                stopped=None if held_back == 0 else self._reason,
            )


def _no_usage(budget: str) -> str:
    """Why a run's spend is unknown, and what the `budget` needs to count it."""
    return (
        f"no token usage was recorded for it; a {budget} needs the gateway's run record "
        "(openclaw_state_dir), ClawSpec's plugin output (plugin_output; bring-up sets both) or "
        "a trace backend"
    )


def _time(seconds: float) -> str:
    return fmt_duration_ms(seconds * 1000)

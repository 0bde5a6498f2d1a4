"""`clawspec run --dry-run`: what the planned agent runs should spend, from the baseline's
medians, next to the budget (the budget alone when no baseline is configured or found)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.runner.budget import limits_for
from clawspec.runner.run import attempts_of
from clawspec.text import fmt_duration_ms, pluralize

if TYPE_CHECKING:
    from clawspec.ci_context import CIContext
    from clawspec.config.settings import Settings
    from clawspec.reports.model import RunReport
    from clawspec.runner.scenario import ScenarioPlan


def expected_spend_lines(
    plans: Sequence[ScenarioPlan], settings: Settings, environ: Mapping[str, str]
) -> list[str]:
    """The budget's line, and the expected spend when a baseline is configured."""
    from clawspec.ci_context import CIContext
    from clawspec.reports.spend import usd

    context = CIContext.from_environ(environ)
    lines = []
    limits = limits_for(settings, context)
    if (limits.max_cost_usd, limits.max_tokens, limits.max_duration_s) != (None, None, None):
        parts = []
        if limits.max_cost_usd is not None:
            parts.append(usd(limits.max_cost_usd))
        if limits.max_tokens is not None:
            parts.append(f"{limits.max_tokens:,} tokens")
        if limits.max_duration_s is not None:
            parts.append(fmt_duration_ms(limits.max_duration_s * 1000))
        share = f" (this shard's share: 1/{limits.shard_share})" if limits.shard_share else ""
        lines.append(f"budget{share}: {', '.join(parts)}")
        if limits.max_cost_usd is not None:
            lines += _unpriced_warnings(plans, settings)
    if settings.baseline:
        lines.append(_expected(plans, settings, context))
    return lines


def _unpriced_warnings(plans: Sequence[ScenarioPlan], settings: Settings) -> list[str]:
    """A cost limit stops the run at the first run whose cost is unknown: say so for each
    model the run would call that has no model_pricing entry (unless OpenClaw reports its
    cost, the first finished run of it stops everything)."""
    from clawspec.evidence.spans import price_key

    pricing = dict(settings.model_pricing)
    return [
        f"warning: no model_pricing for '{model}': unless OpenClaw reports its cost, the first "
        "finished run of it has an unknown cost and stops the run (a cost limit cannot be kept "
        "otherwise); add it to model_pricing"
        for model in models_called(plans, settings)
        if price_key(model, pricing) is None
    ]


def models_called(plans: Sequence[ScenarioPlan], settings: Settings) -> list[str]:
    """The models the planned runs would call, as far as ClawSpec can tell: the variants'
    `model` overrides, and with bring-up the agents' models in the gateway's config."""
    overrides: dict[str, str] = {}
    for plan in plans:
        if plan.variant is not None and plan.variant.model:
            overrides.setdefault(plan.variant.model, plan.variant.name)
    models = list(overrides)
    if settings.gateway.mode == "bring_up" and not settings.gateway.command:
        from clawspec.gateway.bringup import models_used
        from clawspec.gateway.managed import bring_up_options

        # Plans without a model override call their agent's own model.
        plain = [p for p in plans if p.variant is None or not p.variant.model]
        agents = sorted({p.agent_id(settings.default_agent_id) for p in plain})
        if agents:
            workspace = settings.workspace or Path.cwd()
            models += models_used(bring_up_options(settings, workspace, agents))
    return list(dict.fromkeys(models))


def _expected(plans: Sequence[ScenarioPlan], settings: Settings, context: CIContext) -> str:
    from clawspec.history.baseline import NoBaseline, find_baseline
    from clawspec.history.source import run_source

    found = find_baseline(settings.baseline, run_source(context, settings), settings, context)
    if isinstance(found, NoBaseline):
        return f"expected spend: unknown ({found.reason})"
    return expected_from(plans, found.report, settings.repeat)


def expected_from(plans: Sequence[ScenarioPlan], baseline: RunReport, repeat: int) -> str:
    """'expected spend (baseline medians): $1.20, 84,000 tokens for 40 agent runs; 3 scenarios
    not in the baseline' — unknown costs are said, never counted as $0."""
    from clawspec.regression.compare import metric
    from clawspec.reports.spend import usd

    by_key = {s.identity.key: s for s in baseline.scenarios}  # a variant's own runs
    cost, tokens, runs, unpriced, absent = 0.0, 0.0, 0, 0, 0
    for plan in plans:
        attempts = attempts_of(plan, repeat)
        runs += attempts
        earlier = by_key.get(plan.identity.key)
        if earlier is None or (earlier.evidence is None and earlier.gateway_run_id is None):
            absent += 1  # not in the baseline, or it never ran there
            continue
        tokens += (metric(earlier, "tokens") or 0) * attempts
        price = metric(earlier, "cost_usd")  # the attempts' median where it ran several
        if price is None:
            unpriced += 1
        else:
            cost += price * attempts
    text = f"{usd(cost)}" if not unpriced else f"at least {usd(cost)}"
    notes = []
    if unpriced:
        notes.append(f"{pluralize(unpriced, 'scenario')} of unknown cost")
    if absent:
        notes.append(f"{pluralize(absent, 'scenario')} with no run in the baseline")
    tail = f"; {', '.join(notes)}" if notes else ""
    return (
        f"expected spend (baseline medians): {text}, {int(tokens):,} tokens for "
        f"{pluralize(runs, 'agent run')}{tail}"
    )

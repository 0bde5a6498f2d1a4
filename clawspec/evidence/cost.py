"""What a run's model usage cost: each part's native cost, else its model's `model_pricing`.

A cost is known only when every part of the usage has one; otherwise it is None and the
models without a price are named (never a partial sum that would read as the whole).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from clawspec.evidence.spans import price_key

if TYPE_CHECKING:
    from clawspec.config.settings import ModelPrice
    from clawspec.gateway.plugin_records import PluginRecord

UNKNOWN_MODEL = "unknown model"

# (native cost, model, input tokens, output tokens)
UsagePart = tuple[float | None, str | None, int | None, int | None]


def usage_cost(
    parts: Iterable[UsagePart], pricing: Mapping[str, ModelPrice]
) -> tuple[float | None, list[str]]:
    """(cost, models without one) of usage parts; the cost is None when any part has neither
    a native cost nor a price."""
    total, unpriced = 0.0, []
    for native, model, inputs, outputs in parts:
        if native is not None:
            total += native
            continue
        if inputs == 0 and outputs == 0:
            continue  # no token used (a call refused before the model): nothing to price
        key = price_key(model, dict(pricing)) if model else None
        if key is None:
            unpriced.append(model or UNKNOWN_MODEL)
            continue
        price = pricing[key]
        total += (inputs or 0) * price.input_per_mtok / 1_000_000
        total += (outputs or 0) * price.output_per_mtok / 1_000_000
    if unpriced:
        return None, list(dict.fromkeys(unpriced))
    return round(total, 9), []


def plugin_cost(
    records: Iterable[PluginRecord],
    owns: Callable[[PluginRecord], bool],
    pricing: Mapping[str, ModelPrice],
) -> tuple[float | None, list[str]]:
    """The cost of a run's plugin records: OpenClaw's `model.usage` summaries carry its native
    cost (the calls only their tokens); without summaries, the calls priced by model."""
    owned = [r for r in records if owns(r)]
    priced = [r for r in owned if r.kind == "model_usage"] or [
        r for r in owned if r.kind == "model_call" and r.phase in ("completed", "error")
    ]
    return usage_cost(
        ((r.cost_usd, r.model, r.input_tokens, r.output_tokens) for r in priced), pricing
    )

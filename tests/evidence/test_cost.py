"""A run's cost from its usage parts: native costs, `model_pricing`, and never a partial sum."""

from __future__ import annotations

from clawspec.config.settings import ModelPrice
from clawspec.evidence.cost import usage_cost

PRICING = {"claude-sonnet": ModelPrice(input_per_mtok=3, output_per_mtok=15)}


def test_native_costs_and_priced_models_add_up() -> None:
    parts = [(0.01, "x/any", 10, 5), (None, "anthropic/claude-sonnet-4-6", 1_000_000, 0)]
    assert usage_cost(parts, PRICING) == (3.01, [])


def test_a_model_without_a_price_makes_the_cost_unknown_and_is_named() -> None:
    parts = [(None, "acme/mystery-7", 1000, 100), (0.5, "x", 1, 1)]
    assert usage_cost(parts, PRICING) == (None, ["acme/mystery-7"])


def test_a_part_that_used_no_token_needs_no_price() -> None:
    """A call refused before the model answered (a replay miss): 0 tokens cost nothing, and
    advising a price for its model would be wrong."""
    parts = [(None, "fake/fake-model", 0, 0), (0.02, "x", 10, 2)]
    assert usage_cost(parts, PRICING) == (0.02, [])

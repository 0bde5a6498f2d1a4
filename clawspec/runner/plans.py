"""What a run runs here: the selected scenarios as plans (each scenario once per variant),
then the selection's steps (`clawspec.selection`: what changed, this machine's shard)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from clawspec.errors import UsageError
from clawspec.selection.steps import Part, changed_plans, selected_variants, shard_plans

if TYPE_CHECKING:
    from clawspec.ci_context import CIContext
    from clawspec.contracts.loaded import Loaded
    from clawspec.runner.scenario import ScenarioPlan


def plan(
    loaded: Loaded,
    scenarios: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
) -> list[ScenarioPlan]:
    """Select the scenarios to run, in contract order; with variants, each scenario once per
    selected variant (scenario order, then variant order)."""
    from clawspec.runner.scenario import ScenarioPlan
    from clawspec.selection.filters import select_scenarios

    variants = selected_variants(loaded.settings)
    chosen = select_scenarios(loaded.contracts, scenarios, tags, exclude_tags)
    if not chosen:
        raise UsageError("no scenario matches the given --scenario/--tag/--exclude-tag filters")
    return [
        ScenarioPlan(contract, index, scenario, variant)
        for contract, index, scenario in chosen
        for variant in variants
    ]


def this_part(
    loaded: Loaded,
    context: CIContext,
    warn: Callable[[str], None],
    scenarios: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
) -> Part:
    """The filters (names, tags), then what changed since `changed_since`, then this machine's
    shard: what a run, or its dry run, runs here."""
    selection = plan(loaded, scenarios, tags, exclude_tags)
    selection, changed = changed_plans(selection, loaded.settings, loaded.workspace, context, warn)
    plans, shard = shard_plans(selection, loaded.settings, context, warn)
    return Part(plans, shard, changed)

"""The name and tag filters: which scenarios of the loaded contracts `--scenario`, `--tag`
and `--exclude-tag` select, before the variants, the changes and the shard narrow the run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clawspec.errors import UsageError
from clawspec.identity import ScenarioIdentity

if TYPE_CHECKING:
    from clawspec.contracts.loader import LoadedContract
    from clawspec.contracts.models import Scenario


def select_scenarios(
    contracts: Sequence[LoadedContract],
    names: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
) -> list[tuple[LoadedContract, int, Scenario]]:
    """Return (contract, index, scenario) in contract order after the name/tag filters.

    A name selects a scenario, every row of an outline (`drafts`) or one row (`drafts[easter]`,
    the row's identity name); a row's tags are its outline's and its own."""
    chosen = []
    wanted = set(names)
    known: set[str] = set()
    for loaded in contracts:
        for index, scenario in enumerate(loaded.contract.scenarios):
            row = loaded.example(index)
            example = row.id if row is not None else None
            full = ScenarioIdentity(loaded.identity_path, scenario.name, example).name
            if names:
                known.add(scenario.name)
                known.add(full)
                if scenario.name not in wanted and full not in wanted:
                    continue
            if tags and not set(tags) & set(scenario.tags):
                continue
            if set(exclude_tags) & set(scenario.tags):
                continue
            chosen.append((loaded, index, scenario))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--scenario: no scenario named {', '.join(map(repr, unknown))}")
    return chosen

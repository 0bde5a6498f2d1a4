"""The selection's steps after the name and tag filters: the variants each scenario runs on,
what changed since `changed_since`, and this machine's shard; and the `Part` they give.

Plans are the runner's type (`ScenarioPlan`); the runner builds them (`runner/plans.py`) and
hands them to these steps, so this package reads them but never imports the runner."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.ci_context import CIContext, as_context
from clawspec.errors import UsageError

if TYPE_CHECKING:
    from clawspec.config.settings import Settings, VariantSettings
    from clawspec.reports.model import RunReport, SelectionInfo, ShardInfo
    from clawspec.runner.scenario import ScenarioPlan


def selected_variants(settings: Settings) -> list[VariantSettings | None]:
    """The variants to run, in the config's order (`selected_variants` picks some); [None]
    without variants. An unknown name is a usage error listing the known ones."""
    if not settings.variants:
        if settings.selected_variants:
            raise UsageError(
                f"variant {settings.selected_variants[0]} (--variant, CLAWSPEC_VARIANTS): the "
                "configuration defines no variants (add a `variants:` list to clawspec.yaml)"
            )
        return [None]
    if not settings.selected_variants:
        return list(settings.variants)
    known = {variant.name: variant for variant in settings.variants}
    unknown = [name for name in settings.selected_variants if name not in known]
    if unknown:
        raise UsageError(
            f"variant {unknown[0]} (--variant, CLAWSPEC_VARIANTS): no such variant; the "
            f"configuration defines {', '.join(known)}"
        )
    wanted = set(settings.selected_variants)
    return [variant for variant in settings.variants if variant.name in wanted]


def changed_plans(
    plans: Sequence[ScenarioPlan],
    settings: Settings,
    workspace: Path,
    context: CIContext,
    warn: Callable[[str], None],
) -> tuple[list[ScenarioPlan], SelectionInfo | None]:
    """The plans a change since `changed_since` touches, and the report's `selection` block
    (None: every plan runs, `changed_since` unset or unresolved; a warning then says why)."""
    if not settings.changed_since:
        return list(plans), None
    from clawspec.selection.changed import select_changed

    chosen = select_changed(plans, settings, workspace, context)
    if chosen.warning:
        warn(chosen.warning)
    return chosen.plans, chosen.info


def shard_plans(
    plans: Sequence[ScenarioPlan],
    settings: Settings,
    context: CIContext | Mapping[str, str],
    warn: Callable[[str], None],
) -> tuple[list[ScenarioPlan], ShardInfo | None]:
    """This machine's part of the selection (`shard`), in contract order, and its report block.

    Contracts are all loaded and validated before this, so a broken contract fails every
    shard, not only the one that would have run it. `context`: the run's CI context (GitLab's
    node index and total for `auto`); the Python API may pass the raw environment.
    """
    if not settings.shard:
        return list(plans), None
    from clawspec.sharding.durations import durations_for
    from clawspec.sharding.split import resolve_shard, split_selection

    context = as_context(context)
    shard = resolve_shard(settings.shard, context)
    if shard is None:
        warn("--shard auto: CI_NODE_INDEX/CI_NODE_TOTAL are not set; running the whole selection")
        return list(plans), None
    durations = durations_for(settings, context, warn)
    part = split_selection([p.identity.key for p in plans], shard, durations)
    return [plans[i] for i in part.positions], part.info


@dataclass(frozen=True)
class Part:
    """What this machine runs: its plans, and the report blocks that say which part it is."""

    plans: list[ScenarioPlan]
    shard: ShardInfo | None = None
    selection: SelectionInfo | None = None

    def mark(self, report: RunReport) -> RunReport:
        """`report` saying which part of the suite it covers (its shard, what changed)."""
        update = {"shard": self.shard, "selection": self.selection}
        update = {key: value for key, value in update.items() if value is not None}
        return report.model_copy(update=update) if update else report

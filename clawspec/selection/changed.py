"""`--changed-since REF`: keep only the scenarios a change since REF touches.

Runs after the name and tag filters and before the shard split (a shard splits only what is
selected). The result is typed (`ChangeSelection`): the plans kept, and the report's
`selection` block that every output renders ("ran 12 of 140 scenarios: 128 unaffected by
changes since 1a2b3c4"). When REF cannot be resolved every scenario runs and `warning` says why
(clawspec/selection/since.py); `auto` outside a pull request runs everything without a word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.ci_context import CIContext
from clawspec.history.git import Git
from clawspec.selection.affected import Changes, affected, run_all_on
from clawspec.selection.since import Since, changed_files, resolve_since

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.reports.model import SelectionInfo
    from clawspec.runner.scenario import ScenarioPlan


@dataclass(frozen=True)
class ChangeSelection:
    """What `--changed-since` keeps: `plans` in contract order; `info` is None when every
    scenario runs because no commit could be resolved (`warning` then says why, if it is a
    problem)."""

    plans: list[ScenarioPlan]
    info: SelectionInfo | None = None
    warning: str | None = None


def select_changed(
    plans: Sequence[ScenarioPlan],
    settings: Settings,
    workspace: Path,
    context: CIContext,
) -> ChangeSelection:
    """Keep the plans a change since `settings.changed_since` touches (raise ChangeListError
    when git cannot list the changes of a resolved commit)."""
    ref = settings.changed_since
    if not ref:
        return ChangeSelection(list(plans))
    git = Git(workspace)
    since = resolve_since(ref, context, git)
    if not isinstance(since, Since):
        return ChangeSelection(list(plans), warning=since.reason if since.warning else None)
    changes = Changes.of(changed_files(since, git).paths)
    everything = run_all_on(changes, settings, workspace)
    kept = list(range(len(plans))) if everything else affected(plans, changes, settings, workspace)
    chosen = set(kept)
    from clawspec.reports.model import SelectionInfo

    info = SelectionInfo(
        changed_since=since.ref,
        commit=since.commit,
        changed_files=len(changes.files),
        selected=len(kept),
        total=len(plans),
        left_out=[plan.id for index, plan in enumerate(plans) if index not in chosen],
        run_all=everything,
    )
    return ChangeSelection([plans[i] for i in kept], info)

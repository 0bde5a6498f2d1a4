"""One rule for legacy ClawSpec agent ids, applied wherever an agent id appears.

Legacy ClawSpec named an agent after its folder path joined with '-' (`agents/marketing/brand` →
`agents-marketing-brand`), sometimes with a prefix of its own (`ceremonia-marketing-brand`,
`examples-ceremonia-brand`); OpenClaw names it by its folder name (`brand`). The rule: an id
becomes the name of the agent folder (one holding a `SOUL.md`, anywhere in the workspace) whose
path segments, joined with '-' or '/', end the id on a segment boundary; when several folders
do, the longest match wins; a tie between different names is kept and warned about. An id that
names no folder is kept; in legacy ClawSpec's path form (`agents-…`, or with '/') also with a
warning.

Places: an agent target (`agent_id` = its folder name), scenario `agent_id`,
`delegation_occurred.to_agent`, `decision_routed_to.expected_agent`, `delegation_path.expected`,
a handoff's `from`/`to` and a pipeline stage's `agent`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from clawspec.contracts.discovery import PRUNED_DIRS
from clawspec.inputs.source import Loc
from clawspec.migration.rewrite import Rewrite

# (assertion type, field) holding one agent id, or a list of them.
AGENT_FIELDS = {
    ("delegation_occurred", "to_agent"),
    ("decision_routed_to", "expected_agent"),
    ("delegation_path", "expected"),
}
_PATH_FORM = ("agents-", "agent-")


@dataclass
class AgentIds:
    """The workspace's agent folders, each as its path segments relative to the workspace."""

    folders: list[tuple[str, ...]] = field(default_factory=list)

    @classmethod
    def scan(cls, root: Path) -> AgentIds:
        """Every folder under `root` holding a SOUL.md (an OpenClaw agent)."""
        found: list[tuple[str, ...]] = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS and not d.startswith("."))
            if "SOUL.md" in files and Path(folder) != root:
                found.append(Path(folder).relative_to(root).parts)
        return cls(found)

    def _matches(self, legacy: str) -> list[tuple[str, ...]]:
        """The folders with the longest match for `legacy` (see `_score`)."""
        text = legacy.strip().strip("/")
        best, hits = 0, []
        for parts in self.folders:
            score = _score(text, parts)
            if score and score > best:
                best, hits = score, [parts]
            elif score and score == best:
                hits.append(parts)
        return hits

    def folder(self, legacy: str) -> str | None:
        """The workspace-relative folder of the agent legacy ClawSpec called `legacy`, if one
        matches."""
        hits = self._matches(legacy)
        return PurePosixPath(*hits[0]).as_posix() if len(hits) == 1 else None

    def map(self, legacy: str, loc: Loc, rewrite: Rewrite) -> str:
        """The current id of the agent legacy ClawSpec called `legacy` (see the module's rule)."""
        hits = self._matches(legacy)
        if hits and len({parts[-1] for parts in hits}) == 1:
            name, shown = hits[0][-1], PurePosixPath(*hits[0]).as_posix()
            if name != legacy:
                rewrite.change(loc, f"agent '{legacy}' → '{name}' (the folder name of {shown})")
            return name
        if len(hits) > 1:
            shown = ", ".join(PurePosixPath(*parts).as_posix() for parts in hits)
            rewrite.warn(loc, f"agent '{legacy}' matches several agent folders ({shown}): kept")
        elif legacy.strip().startswith(_PATH_FORM) or "/" in legacy:
            rewrite.warn(
                loc,
                f"agent '{legacy}' (legacy ClawSpec's path form) matches no agent folder (a "
                "SOUL.md) in the workspace: kept as written; OpenClaw names agents by their "
                "folder name",
            )
        return legacy

    def map_assertion(self, item: dict[str, Any], loc: Loc, rewrite: Rewrite) -> None:
        """Map the agent ids of one assertion in place."""
        for kind, name in AGENT_FIELDS:
            if item.get("type") != kind or name not in item:
                continue
            value = item[name]
            if isinstance(value, str):
                item[name] = self.map(value, (*loc, name), rewrite)
            elif isinstance(value, list):
                item[name] = [
                    self.map(v, (*loc, name, i), rewrite) if isinstance(v, str) else v
                    for i, v in enumerate(value)
                ]


def _score(legacy: str, parts: tuple[str, ...]) -> int:
    """The length of the longest run of trailing segments of `parts`, joined with '-' or '/',
    that ends `legacy` on a segment boundary (0: none)."""
    for count in range(len(parts), 0, -1):
        for joined in ("-".join(parts[-count:]), "/".join(parts[-count:])):
            if legacy == joined or legacy.endswith(("-" + joined, "/" + joined)):
                return len(joined)
    return 0

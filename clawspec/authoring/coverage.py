"""`clawspec coverage`: which skills and agents have contracts, and how well they are covered.

Each target (skill or agent of the workspace) is counted once, each contract file once (by its
resolved path) and each scenario once, under the one target its contract names: legacy ClawSpec's
ledger counted items twice. A contract whose target is not in the workspace is listed apart and
never raises the ratio. Stored history is read only when a baseline store is configured.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from clawspec.assertions import REGISTRY
from clawspec.assertions.registry import CATEGORIES
from clawspec.authoring.workspace import Target, Workspace
from clawspec.contracts.loader import LoadedContract
from clawspec.contracts.models import Contract

if TYPE_CHECKING:
    from clawspec.ci_context import CIContext

HISTORY_RUNS = 50  # newest stored runs read per branch


@dataclass
class TargetCoverage:
    """Coverage of one skill or agent."""

    target: Target
    contracts: list[str] = field(default_factory=list)
    scenarios: int = 0
    categories: set[str] = field(default_factory=set)
    has_negative: bool = False
    never_passed: bool | None = None  # None: no stored history to say

    @property
    def covered(self) -> bool:
        return self.scenarios > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target.key,
            "kind": self.target.kind,
            "name": self.target.name,
            "contracts": self.contracts,
            "scenarios": self.scenarios,
            "categories": [c for c in CATEGORIES if c in self.categories],
            "negative": self.has_negative,
            "never_passed": self.never_passed,
        }


@dataclass
class CoverageReport:
    """Every target's coverage, and the contracts that could not be placed."""

    targets: list[TargetCoverage]
    unknown: list[str] = field(default_factory=list)  # contracts naming no workspace target
    invalid: list[str] = field(default_factory=list)  # contracts that do not load
    history: str | None = None  # the store read, with how many runs ("dir:… (12 runs)")
    history_problem: str | None = None  # why a configured store was not read

    @property
    def ratio(self) -> float:
        # No targets cover nothing: 0, so that no minimum is met by an empty workspace.
        return sum(t.covered for t in self.targets) / len(self.targets) if self.targets else 0.0

    def count(self, attribute: str) -> int:
        return sum(bool(getattr(t, attribute)) for t in self.targets)

    def to_json(self) -> dict[str, Any]:
        return {
            "targets": [t.to_json() for t in self.targets],
            "totals": {
                "targets": len(self.targets),
                "covered": self.count("covered"),
                "with_negative": self.count("has_negative"),
                "never_passed": self.count("never_passed") if self.history else None,
                "scenarios": sum(t.scenarios for t in self.targets),
                "ratio": round(self.ratio, 4),
            },
            "unknown_target_contracts": self.unknown,
            "invalid_contracts": self.invalid,
            "history": self.history,
            "history_problem": self.history_problem,
        }


def normalise(path: str, root: Path) -> str:
    """`./skills/x/`, `/abs/ws/skills/x/SKILL.md` → `skills/x` (relative, no file name)."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute():
        try:
            pure = PurePosixPath(Path(pure).resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            return pure.as_posix()
    if pure.name in ("SKILL.md", "SOUL.md"):
        pure = pure.parent
    return PurePosixPath(*[p for p in pure.parts if p not in (".", "")]).as_posix()


class TargetIndex:
    """Finds the workspace target a contract (or a stored result) is about."""

    def __init__(self, workspace: Workspace) -> None:
        self.root = workspace.root
        self.by_key = {t.key: t for t in workspace.targets}
        self.agents = {t.name: t for t in workspace.agents}
        self.skills = {t.name: t for t in workspace.skills}
        self.skill_folders = {PurePosixPath(t.key).name: t for t in workspace.skills}

    def of_contract(self, contract: Contract) -> Target | None:
        target = contract.target
        if target.type == "agent" and target.agent_id in self.agents:
            return self.agents[target.agent_id]
        return self.of_path(target.path, target.type)

    def of_path(self, path: str, kind: str | None = None) -> Target | None:
        key = normalise(path, self.root)
        found = self.by_key.get(key)
        if found is not None and kind in (None, found.kind):
            return found
        # Contracts written for another layout (legacy ClawSpec: `agents/marketing/brand`) still
        # name their target by its last path segment.
        last = PurePosixPath(key).name
        if kind in (None, "agent") and last in self.agents:
            return self.agents[last]
        if kind in (None, "skill"):
            return self.skills.get(last) or self.skill_folders.get(last)
        return None


def measure(
    workspace: Workspace,
    contracts: Iterable[LoadedContract],
    invalid: Iterable[str] = (),
    history: tuple[str, Iterable[Any]] | None = None,
) -> CoverageReport:
    """Count contracts, scenarios, categories and negatives per target."""
    index = TargetIndex(workspace)
    rows = {t.key: TargetCoverage(t) for t in workspace.targets}
    report = CoverageReport(list(rows.values()), invalid=sorted(set(invalid)))
    seen: set[Path] = set()
    for loaded in contracts:
        if loaded.path.resolve() in seen:
            continue
        seen.add(loaded.path.resolve())
        target = index.of_contract(loaded.contract)
        if target is None:
            report.unknown.append(loaded.display)
            continue
        row = rows[target.key]
        row.contracts.append(loaded.display)
        for scenario in loaded.contract.scenarios:
            row.scenarios += 1
            types = [a.type for a in scenario.assertions()]
            row.categories |= {REGISTRY[t].category for t in types}
            row.has_negative |= "negative" in scenario.tags or any(
                REGISTRY[t].negative for t in types
            )
    if history is not None:
        label, reports = history
        passed: set[str] = set()
        runs = 0
        for run in reports:
            runs += 1
            for result in run.scenarios:
                target = index.of_path(result.target)
                if target is not None and str(result.status) == "pass":
                    passed.add(target.key)
        for row in rows.values():
            row.never_passed = row.target.key not in passed
        report.history = f"{label} ({runs} run{'s' if runs != 1 else ''})"
    return report


def parse_ratio(text: str) -> float:
    """`--min-coverage`: a ratio ('0.8') or a percentage ('80%')."""
    value = str(text).strip()
    try:
        ratio = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise ValueError(f"expected a ratio (0.8) or a percentage (80%), found '{text}'") from None
    if not 0 <= ratio <= 1:
        raise ValueError(f"a ratio must be between 0 and 1, found '{text}'")
    return ratio


def history_reports(settings: Any, context: CIContext, limit: int) -> Any:
    """(label, reports) from the configured baseline store, or None when none is configured.

    The store is `clawspec.history`'s; the newest `limit` runs per branch
    are read.
    """
    spec = getattr(settings, "baseline", None)
    if not spec:
        return None
    from clawspec.history.store import HistoryError, parse_report
    from clawspec.history.stores import open_store, source_kind

    if source_kind(spec) == "file":
        try:
            data = Path(spec).read_bytes()
        except OSError as exc:
            raise HistoryError(f"baseline report '{spec}': {exc.strerror}") from None
        return f"report {spec}", [parse_report(data, spec)]
    store = open_store(spec, settings, context)

    def reports() -> Iterable[Any]:
        for branch in store.branches():
            for run in store.runs(branch)[-limit:]:
                yield store.load(run)

    return store.label, reports()

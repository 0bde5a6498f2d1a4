"""One identity for a scenario run, carried as a typed value from the plan to every output.

Every output and feature that keys on a scenario (reports, baselines and comparison, trends,
shards and merge, durations, cassettes, selection) derives its key, name, anchor or
fingerprint from a `ScenarioIdentity`; nothing rebuilds an id from parts or parses one back
(a name may contain `::`, `[` or `@`).

- `contract`: the contract file relative to the workspace root, '/'-separated, so the same
  contract has the same identity whatever folder ClawSpec runs from (a contract outside the
  workspace keeps its absolute path).
- `scenario`: the name written in the contract; `example`: the row id of an outline's row.
- `name`: the identity name, `scenario` or `scenario[example]`: JUnit's name, the
  `--scenario` selector, the name shown everywhere.
- `id`: `<contract>::<name>`; a result is keyed by (`id`, `variant`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

# What results are keyed by: (scenario id, variant).
Key = tuple[str, str | None]


@dataclass(frozen=True, slots=True, order=True)
class ScenarioIdentity:
    contract: str
    scenario: str
    example: str | None = None
    variant: str | None = None

    @property
    def name(self) -> str:
        return self.scenario if self.example is None else f"{self.scenario}[{self.example}]"

    @property
    def id(self) -> str:
        return f"{self.contract}::{self.name}"

    @property
    def key(self) -> Key:
        """What results are keyed by: attempts of one key fold into one result."""
        return (self.id, self.variant)

    @property
    def label(self) -> str:
        """The id as shown where the variant matters: `<id> @ <variant>`."""
        return key_label(self.key)

    @property
    def name_label(self) -> str:
        """The identity name as shown where the variant matters: `<name> @ <variant>`."""
        return self.name if self.variant is None else f"{self.name} @ {self.variant}"

    def with_variant(self, variant: str | None) -> ScenarioIdentity:
        return replace(self, variant=variant)

    def report_fields(self) -> dict[str, str | None]:
        """The identity as the report's flat fields (`id`, `contract`, `name`, `scenario`,
        `example`, `variant`)."""
        return {
            "id": self.id,
            "contract": self.contract,
            "name": self.name,
            "scenario": self.scenario,
            "example": self.example,
            "variant": self.variant,
        }


def key_label(key: Key) -> str:
    """A (scenario id, variant) key as shown: the id, `<id> @ <variant>` with a variant (for
    what carries the key but not the whole identity: comparison entries, trends)."""
    scenario_id, variant = key
    return scenario_id if variant is None else f"{scenario_id} @ {variant}"


def real_path(path: Path) -> Path:
    """`path` with its links followed; as written (absolute) when they lead nowhere or in a
    circle (`a.yaml` linked to itself): reading it is then that file's load error."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # Python raises RuntimeError for a loop of links
        return path.absolute()


def contract_path(path: Path, workspace: Path) -> str:
    """`path` relative to the workspace root, '/'-separated; absolute when outside it."""
    full = real_path(path)
    try:
        return full.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return full.as_posix()

"""What one invocation loaded: its settings, its workspace and its validated contracts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.contracts.loader import LoadedContract


@dataclass(frozen=True)
class Loaded:
    """Settings and validated contracts of one invocation (`clawspec.api.load`)."""

    settings: Settings
    workspace: Path
    contracts: list[LoadedContract]

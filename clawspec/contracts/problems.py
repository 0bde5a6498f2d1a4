"""A contract's load error as a value: where it is, what it says, where it sorts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A load error: where it is (`file:line:column`), what it says, and where it sorts in the
    contract (a data-file row's error sorts at its outline). Kept apart so that the loader can
    name the outline between them, and sort without reading its own messages back."""

    where: str
    message: str
    order: tuple[int, int]

    @property
    def text(self) -> str:
        return f"{self.where}: {self.message}"

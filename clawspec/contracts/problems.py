"""A contract's load error as a value: where it is, what it says, where it sorts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Place(NamedTuple):
    """A place in a file as messages show it: `file:line:column`, or the file alone when no
    position can be given (a file that cannot be read)."""

    file: str  # as shown (relative to the current folder where it is inside it)
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based

    def __str__(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Problem:
    """A load error: where it is, what it says, and where it sorts in the contract (a data-file
    row's error sorts at its outline). Kept apart so that the loader can name the outline
    between them, sort, and let `lint` point at the place, without reading its own messages
    back."""

    where: Place
    message: str
    order: tuple[int, int]
    # Only the run's environment settles it (an unset `{{env.NAME}}`): `lint`, run where the
    # CI job's secrets are not, leaves it to `validate`.
    environment_only: bool = False

    @classmethod
    def at(
        cls, file: str, line: int, column: int, message: str, *, environment_only: bool = False
    ) -> Problem:
        """A problem in the contract itself, sorting where it is."""
        return cls(Place(file, line, column), message, (line, column), environment_only)

    @property
    def text(self) -> str:
        return f"{self.where}: {self.message}"

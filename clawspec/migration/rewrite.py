"""What migrating one document produced: the new data and located notes (docs/guide.md "Migrating
from legacy ClawSpec").

Every note carries the path of the item it is about in the *original* document (a tuple of keys
and indexes), so `run.py` can print it as `file:line:column` from the parsed source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clawspec.inputs.source import Loc


@dataclass(frozen=True)
class Note:
    """One message about the item at `loc` of the original document."""

    loc: Loc
    text: str


@dataclass
class Rewrite:
    """The result of migrating one document.

    - `changes`: what was rewritten (printed under the file);
    - `warnings`: what was dropped or needs a look, the file is still written;
    - `unsupported`: constructs with no equivalent: nothing is written unless dropping is allowed;
    - `manual`: what only the user can supply: nothing is written.
    """

    data: dict[str, Any]
    changes: list[Note] = field(default_factory=list)
    warnings: list[Note] = field(default_factory=list)
    unsupported: list[Note] = field(default_factory=list)
    manual: list[Note] = field(default_factory=list)

    def change(self, loc: Loc, text: str) -> None:
        self.changes.append(Note(loc, text))

    def warn(self, loc: Loc, text: str) -> None:
        self.warnings.append(Note(loc, text))

    def refuse(self, loc: Loc, text: str) -> None:
        self.unsupported.append(Note(loc, text))

    def needs(self, loc: Loc, text: str) -> None:
        self.manual.append(Note(loc, text))

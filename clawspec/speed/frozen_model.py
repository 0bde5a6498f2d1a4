"""The base of ClawSpec's frozen pydantic models (contracts, assertions, report results).

Pydantic gives every instance its own set of the field names it was given (~0.7 KB for a
handful of names). A 10,000-scenario run holds hundreds of thousands of instances whose sets
are the same few: a third of the memory of a result. Frozen models share one set per distinct
content instead (they never change theirs in place; a copy gets its own copy of it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        shared = _FIELDS_SETS.setdefault(frozenset(given), given)
        if shared is not given:
            object.__setattr__(self, "__pydantic_fields_set__", shared)

"""Numbers in contracts are never booleans.

pydantic's lax mode reads `true` as 1, and YAML reads `true`, `yes` and `on` as booleans, so
`max_repeats: yes` would quietly mean 1. The models of contracts and assertions refuse a boolean
where a field wants a number (`refuse_booleans_in`, a before-validator of their numeric
fields); a quoted number ("2") is still read as the number.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError


def refuse_booleans_in(*fields: str) -> Any:
    """A before-validator, for the model it is assigned in, refusing a boolean in `fields` (the
    numeric ones among them; the rest pass, so one list serves every model of a family)."""

    def check(cls: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
        return refuse_boolean_number(cls, info.field_name, value)

    return field_validator(*fields, mode="before", check_fields=False)(check)


def refuse_boolean_number(model: type[BaseModel], field: str | None, value: Any) -> Any:
    """`value`, unless it is a boolean given to a numeric field of `model`."""
    if isinstance(value, bool) and field in numeric_fields(model):
        raise PydanticCustomError(
            "number_not_boolean",
            "expected a number, not a boolean (YAML reads true/false, yes/no and on/off as "
            "booleans)",
        )
    return value


@functools.cache
def numeric_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of `model` typed int or float (optional or not), bool aside."""
    return frozenset(name for name, info in model.model_fields.items() if _numeric(info.annotation))


def _numeric(annotation: Any) -> bool:
    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_numeric(arg) for arg in typing.get_args(annotation))
    return False

"""The one registry of assertion types: the source of the type list, the models and the docs."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import Field

from clawspec.assertions.base import Assertion, Need, PathField

CATEGORIES = (
    "precondition",
    "artifact",
    "behavioral",
    "trace",
    "semantic",
    "reply",
    "run record",
)


@dataclass(frozen=True)
class AssertionSpec:
    """One assertion type: its model (which is also its evaluator) and its metadata."""

    type: str
    model: type[Assertion]
    category: str
    needs: frozenset[Need]
    example: str
    # passes on the absence of something (a tool not called): evidence that is incomplete must
    # never make it pass; coverage counts a target with one as tested for what must not happen
    negative: bool = False

    @property
    def summary(self) -> str:
        return inspect.cleandoc(self.model.__doc__ or "").splitlines()[0]

    @property
    def fields(self) -> list[str]:
        return [name for name in self.model.model_fields if name != "type"]

    @cached_property
    def path_fields(self) -> tuple[str, ...]:
        """Fields typed WorkspacePath, optional ones (`WorkspacePath | None`) included.

        Asked for every assertion of every contract loaded: worked out once per type."""
        return _path_fields(self.model)


REGISTRY: dict[str, AssertionSpec] = {}


def register(
    *,
    category: str,
    example: str,
    needs: Iterable[Need] = (),
    negative: bool = False,
) -> Callable[[type[Assertion]], type[Assertion]]:
    """Add an assertion class to the registry under the name in its `type` Literal."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}")

    def decorate(cls: type[Assertion]) -> type[Assertion]:
        (type_name,) = get_args(cls.model_fields["type"].annotation)
        if type_name in REGISTRY:
            raise ValueError(f"assertion type {type_name!r} registered twice")
        if cls.evaluate is Assertion.evaluate:
            raise TypeError(f"assertion type {type_name!r} has no evaluate()")
        REGISTRY[type_name] = AssertionSpec(
            type_name, cls, category, frozenset(needs), example.strip(), negative
        )
        return cls

    return decorate


def types_needing(need: Need) -> list[str]:
    """The assertion types that need `need` (e.g. the judge's: the HTML report shows their
    rubric and scores)."""
    return sorted(name for name, spec in REGISTRY.items() if need in spec.needs)


def assertion_union() -> Any:
    """Return the discriminated union of every registered assertion model."""
    models = tuple(spec.model for spec in REGISTRY.values())
    return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007


def _path_fields(model: type[Assertion]) -> tuple[str, ...]:
    return tuple(
        name
        for name, info in model.model_fields.items()
        if any(isinstance(m, PathField) for m in info.metadata) or _marks_path(info.annotation)
    )


def _marks_path(annotation: Any) -> bool:
    """True when `annotation` is, or unions with, an Annotated[..., PathField()]."""
    if get_origin(annotation) is Annotated:
        return any(isinstance(m, PathField) for m in get_args(annotation)[1:])
    return any(_marks_path(arg) for arg in get_args(annotation))


def field_type_name(annotation: Any) -> str:
    """Describe a field's type for docs and error messages ('list of strings', 'number')."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return field_type_name(get_args(annotation)[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(annotation))
    if origin in (Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return " or ".join(field_type_name(a) for a in args)
    if origin is list:
        return f"list of {field_type_name(get_args(annotation)[0])}s"
    if origin is dict:
        return "mapping"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))

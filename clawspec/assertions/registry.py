"""The one registry of assertion types: the source of the type list, the models and the docs.

A type's module is imported the first time the type is asked for (`REGISTRY[name]`), not
before: a suite uses a few of the types, and every command that loads contracts would
otherwise pay for building all of their models (tens of milliseconds of each start-up).
`DEFINED_IN` says where each type lives; the modules register themselves when imported, and
registering a type the table does not name in that module is an error (so is a table entry no
module registers: tests/assertions check both).
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticKnownError, core_schema

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


# Every type, in the order the reference and the editor schema list them, and the module of
# clawspec.assertions that defines it.
DEFINED_IN: dict[str, str] = {
    "artifact_exists": "artifact",
    "artifact_contains": "artifact",
    "artifact_absent_words": "artifact",
    "artifact_matches_golden": "artifact",
    "state_file": "artifact",
    "gateway_response": "behavioral",
    "log_entry": "behavioral",
    "decision_routed_to": "behavioral",
    "tool_was_called": "behavioral",
    "tool_not_called": "behavioral",
    "delegation_occurred": "behavioral",
    "tool_not_permitted": "behavioral",
    "token_budget": "behavioral",
    "file_present": "precondition",
    "file_absent": "precondition",
    "gateway_healthy": "precondition",
    "env_present": "precondition",
    "reply_contains": "reply",
    "reply_not_contains": "reply",
    "reply_matches": "reply",
    "llm_judge": "semantic",
    "agent_identity_consistent": "semantic",
    "llm_call_count": "trace",
    "tool_sequence": "trace",
    "model_used": "trace",
    "delegation_path": "trace",
    "per_span_budget": "trace",
    "trace_token_budget": "trace",
    "trace_duration": "trace",
    "trace_cost": "trace",
    "no_span_errors": "trace",
    "tool_not_invoked": "trace",
    "tool_called_with": "trajectory",
    "tool_call_count": "trajectory",
    "no_tool_loop": "trajectory",
    "message_sent": "trajectory",
    "message_not_sent": "trajectory",
    "run_completed": "trajectory",
}


class _Registry(Mapping[str, AssertionSpec]):
    """The types by name, in `DEFINED_IN`'s order; a type's module is imported on first use.
    Names and membership (`in`, iteration, `len`) import nothing."""

    def __init__(self) -> None:
        self._specs: dict[str, AssertionSpec] = {}
        self._lock = threading.Lock()  # registering, from whichever thread imports a module

    def __getitem__(self, name: str) -> AssertionSpec:
        spec = self._specs.get(name)
        if spec is None:
            importlib.import_module(f"clawspec.assertions.{DEFINED_IN[name]}")
            spec = self._specs[name]
        return spec

    def __iter__(self) -> Iterator[str]:
        return iter(DEFINED_IN)

    def __len__(self) -> int:
        return len(DEFINED_IN)

    def __contains__(self, name: object) -> bool:
        return name in DEFINED_IN

    def add(self, spec: AssertionSpec) -> None:
        module = spec.model.__module__.rpartition(".")[2]
        if DEFINED_IN.get(spec.type) != module:
            raise ValueError(
                f"assertion type {spec.type!r} (module {module}) is not in DEFINED_IN as such"
            )
        with self._lock:
            if spec.type in self._specs:
                raise ValueError(f"assertion type {spec.type!r} registered twice")
            self._specs[spec.type] = spec


REGISTRY = _Registry()


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
        if cls.evaluate is Assertion.evaluate:
            raise TypeError(f"assertion type {type_name!r} has no evaluate()")
        REGISTRY.add(
            AssertionSpec(type_name, cls, category, frozenset(needs), example.strip(), negative)
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


class ByType:
    """Marks a contract's assertion field: each item is validated by the model of its `type`
    (`Annotated[Assertion, ByType()]`), imported and built when a contract first uses it.

    Its errors are those of the discriminated union of every model (their types, messages and
    context; a field's location just lacks the tag the union puts after the index), so the
    loader's messages and their positions are the same; its JSON Schema is that union's."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(_by_type)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        from pydantic import TypeAdapter

        return handler(TypeAdapter(assertion_union()).core_schema)


_TAG = {"discriminator": "'type'"}


def _by_type(value: Any) -> Assertion:
    if isinstance(value, Assertion):
        return value
    if not isinstance(value, dict):
        raise PydanticKnownError("model_attributes_type")
    if "type" not in value:
        raise PydanticKnownError("union_tag_not_found", _TAG)
    tag = value["type"]
    if not isinstance(tag, str) or tag not in DEFINED_IN:
        expected = ", ".join(repr(name) for name in DEFINED_IN)
        raise PydanticKnownError(
            "union_tag_invalid", {**_TAG, "tag": str(tag), "expected_tags": expected}
        )
    return REGISTRY[tag].model.model_validate(value)


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

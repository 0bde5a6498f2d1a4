"""The assertion base model, and what evaluators receive and return (from `evidence.context`)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from clawspec.evidence.context import EvalContext, RunInfo, Verdict
from clawspec.inputs.numbers import refuse_booleans_in
from clawspec.inputs.paths import PathEscapeError
from clawspec.status import Status


class Need(Enum):
    """Evidence an assertion needs that a run prepares only when some assertion asks for it:
    the trace receiver starts only for a run with trace assertions, the HTML report shows the
    judge's rubric and scores only for judge assertions."""

    TRACE = "trace"
    JUDGE = "judge"


class PathField:
    """Marks a field as a contract path: resolved against the workspace, escape = load error."""


# A contract path: relative paths resolve against the workspace root.
WorkspacePath = Annotated[str, PathField()]


class Assertion(BaseModel):
    """Base of every assertion type; each subclass is the validation model of one type."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    # Groups of fields of which at least one (or exactly one) must be given, e.g. (("sections",
    # "fields"),). Checked by `_one_of`; errors point at the assertion's start.
    one_of: ClassVar[tuple[tuple[str, ...], ...]] = ()
    exactly_one_of: ClassVar[tuple[tuple[str, ...], ...]] = ()

    type: str

    # Every numeric field name of the assertion types (tests/test_registry.py checks the list
    # is whole): not "*", which would also wrap `type`, the union's discriminator.
    _no_boolean_number = refuse_booleans_in(
        "expected_status",
        "max",
        "max_cost_usd",
        "max_input_tokens",
        "max_ms",
        "max_output_tokens",
        "max_repeats",
        "max_tokens",
        "max_total_tokens",
        "max_usd",
        "min",
        "pass_threshold",
        "rouge_threshold",
        "timeout",
    )

    @model_validator(mode="after")
    def _one_of(self) -> Assertion:
        for group in self.one_of:
            if all(getattr(self, name) in (None, [], {}) for name in group):
                raise ValueError(f"one of {_names(group)} is required")
        for group in self.exactly_one_of:
            given = [name for name in group if getattr(self, name) is not None]
            if len(given) != 1:
                raise ValueError(f"exactly one of {_names(group)} is required")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        """Evaluate this assertion against the run's evidence (every registered type does:
        `registry.register` refuses a class that does not)."""
        raise NotImplementedError(type(self).__name__)


def _names(group: tuple[str, ...]) -> str:
    return ", ".join(f"'{name}'" for name in group)


__all__ = [
    "Assertion",
    "EvalContext",
    "Need",
    "PathEscapeError",
    "PathField",
    "RunInfo",
    "Status",
    "Verdict",
    "WorkspacePath",
]

"""The assertion types (the original 29, then the reply's and the run record's), one module
per category; all feed one REGISTRY."""

from clawspec.assertions import (  # noqa: F401
    artifact,
    behavioral,
    precondition,
    reply,
    semantic,
    trace,
    trajectory,
)
from clawspec.assertions.registry import REGISTRY, AssertionSpec, assertion_union

__all__ = ["REGISTRY", "AssertionSpec", "assertion_union"]

"""The 29 assertion types, one module per category; all feed one REGISTRY."""

from clawspec.assertions import artifact, behavioral, precondition, semantic, trace  # noqa: F401
from clawspec.assertions.registry import REGISTRY, AssertionSpec, assertion_union

__all__ = ["REGISTRY", "AssertionSpec", "assertion_union"]

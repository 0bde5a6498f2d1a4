"""The assertion types (the original 29, then the reply's and the run record's), one module
per category; all feed one REGISTRY, which imports a type's module when the type is first used
(registry.py)."""

from clawspec.assertions.registry import REGISTRY, AssertionSpec, ByType, assertion_union

__all__ = ["REGISTRY", "AssertionSpec", "ByType", "assertion_union"]

"""ClawSpec: scenario contracts for OpenClaw agents and skills."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "merge", "run", "validate"]

TYPE_CHECKING = False  # typing's flag without importing typing (`clawspec --version` is quick)
if TYPE_CHECKING:
    from typing import Any

    from clawspec.api import merge, run, validate

# `run`, `validate` and `merge` live in clawspec.api, which pulls in pydantic, the assertion
# registry and (for runs) requests: `clawspec --version` and `--help` must not pay for that, so
# the package resolves these names on first use (PEP 562) instead of importing the API here.
_LAZY = {"merge": "clawspec.api", "run": "clawspec.api", "validate": "clawspec.api"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'clawspec' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

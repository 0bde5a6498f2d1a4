"""The suite's scheduling lists (tests/conftest.py) name modules that exist: a renamed module
would silently lose its place in the order that keeps the parallel suite short."""

from __future__ import annotations

from pathlib import Path

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_the_schedule_names_exists() -> None:
    named = [
        *conftest.WAITING,
        *conftest.SHARED_GATEWAY_MODULES,
        *(f"tests/e2e/{name}" for name in conftest.LONGEST_E2E),
    ]
    missing = [module for module in named if not (ROOT / module).is_file()]
    assert missing == []
    assert not any(module.startswith("tests/e2e/") for module in conftest.WAITING)

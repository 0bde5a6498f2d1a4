"""ClawSpec: scenario contracts for OpenClaw agents and skills."""

from __future__ import annotations

__version__ = "0.1.0"

from clawspec.api import run, validate

__all__ = ["__version__", "run", "validate"]

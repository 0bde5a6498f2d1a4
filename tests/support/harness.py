"""Evaluate one assertion the way the runner does, without a gateway."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests
import yaml

from clawspec.assertions import REGISTRY
from clawspec.assertions.base import EvalContext, RunInfo, Verdict
from clawspec.config.settings import Settings
from clawspec.evidence.store import Evidence


def make_context(
    workspace: Path,
    settings: Settings | None = None,
    *,
    evidence: Evidence | None = None,
    run: RunInfo | None = None,
    poll_interval_s: float = 0.05,
) -> EvalContext:
    """A context like the runner builds for one scenario run."""
    return EvalContext(
        workspace=workspace,
        settings=settings or Settings(),
        run=run or RunInfo("test", "testrun0000000001", datetime.now(UTC)),
        evidence=evidence or Evidence(requests.Session()),
        poll_interval_s=poll_interval_s,
        stop=threading.Event(),
    )


def evaluate_one(assertion: str | dict[str, Any], ctx: EvalContext) -> Verdict:
    """Validate `assertion` (YAML text or a mapping) with its registry model and evaluate it."""
    data = yaml.safe_load(assertion) if isinstance(assertion, str) else assertion
    model = REGISTRY[data["type"]].model.model_validate(data)
    return model.evaluate(ctx)

"""The five verdicts, in a module of their own.

Reports and the terminal need the statuses without the assertion models: importing
`clawspec.assertions` builds every model, which `clawspec run` does while a large suite's files
are parsed in another process (contracts/parse_ahead.py), so not before.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """The five verdicts."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    WARN = "warn"
    ERROR = "error"


# What counts as passing an attempt, a comparison or a variant's cell: a warning is not a failure.
PASSING = (Status.PASS, Status.WARN)

"""The errors of reading OpenClaw's run record: each message says what to do."""

from __future__ import annotations

from clawspec.errors import ClawSpecError


class TrajectoryError(ClawSpecError):
    """The run record could not be read; the message says what to do."""


class StoreMissing(TrajectoryError):
    """No store where the state folder says it is."""


class StoreLocked(TrajectoryError):
    """The gateway held the store locked for longer than the reader waits."""


class StoreCorrupt(TrajectoryError):
    """The file is not a readable SQLite database, or not an OpenClaw agent store."""


class UnknownSchema(TrajectoryError):
    """An event of a trace schema or version this reader does not know."""

    def __init__(self, message: str, trace_schema: object, schema_version: object) -> None:
        super().__init__(message)
        self.trace_schema = trace_schema
        self.schema_version = schema_version


class BadEvent(TrajectoryError):
    """An event of a known version whose fields are not what that version writes."""


class RunNotFound(TrajectoryError):
    """The run (or session) is not in the store, or not yet."""


class RunNotRecorded(RunNotFound):
    """A wait for a run's record ended at its deadline without the whole record."""

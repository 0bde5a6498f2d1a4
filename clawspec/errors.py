"""Exit codes and the error tree: every expected failure carries its own exit code."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes (docs/reference.md, "Verdicts and exit codes")."""

    OK = 0  # no scenario failed or errored
    FAILED = 1  # a scenario failed/errored, or skips exceeded the skip budget
    USAGE = 2  # bad command line, contract or configuration: nothing ran
    GATEWAY = 3  # the gateway could not be brought up or reached at all
    INTERNAL = 70  # a bug in ClawSpec: the reports hold what finished; see the crash log
    INTERRUPTED = 130  # SIGINT/SIGTERM: reports were still written


class ClawSpecError(Exception):
    """An expected error: printed as one line (no traceback) and mapped to its exit code."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(ClawSpecError):
    """Bad command-line usage."""


class ConfigError(ClawSpecError):
    """Invalid configuration (file, environment or flags)."""


class ContractError(ClawSpecError):
    """One or more contracts failed to load; `messages` holds every problem found."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = messages


class GatewayError(ClawSpecError):
    """The gateway could not be brought up or reached at all."""

    exit_code = ExitCode.GATEWAY


class RunInterrupted(ClawSpecError):
    """A command's runs were interrupted (SIGINT/SIGTERM): what ran is in the reports."""

    exit_code = ExitCode.INTERRUPTED


class BringUpStopped(Exception):
    """An interrupt came while a gateway was being brought up: it was stopped, nothing ran."""

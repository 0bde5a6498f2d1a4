"""The `clawspec` command: parse, dispatch to the command (clawspec/commands/), map errors to
exit codes; no traceback for users."""

from __future__ import annotations

import os
import sys

from clawspec import __version__
from clawspec.errors import ClawSpecError, ContractError, ExitCode

TYPE_CHECKING = False  # typing's flag without importing typing (every start would pay for it)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

# Start-up cost is paid on every call (CI steps, hooks, editors): this module imports only what
# parsing needs, and `clawspec --version` not even that. Each command's handler imports its own
# modules (the API, pydantic, requests, SDKs) when it runs; tests/test_startup.py checks that
# `--version` and every `--help` stay light.
VERSION = f"clawspec {__version__}"


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from clawspec import commands

    parser = argparse.ArgumentParser(
        prog="clawspec",
        description="Run scenario contracts against OpenClaw agents and skills.",
    )
    parser.add_argument("--version", action="version", version=VERSION)
    parser.add_argument("--debug", action="store_true", help="log internals to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands.ALL:
        command.add_parser(subparsers)
    return parser


def __getattr__(name: str) -> Any:
    """`COMMANDS`, each command's handler by name, built on first use: importing every command
    module is a third of what `clawspec --version` would otherwise cost."""
    if name != "COMMANDS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _commands()


def _commands() -> dict[str, Callable[[argparse.Namespace], ExitCode]]:
    table = globals().get("COMMANDS")
    if table is None:
        from clawspec import commands

        table = {command.NAME: command.run for command in commands.ALL}
        globals()["COMMANDS"] = table  # one table: a test may replace a handler in it
    return table


def main(argv: Sequence[str] | None = None) -> int:
    command_line = ["clawspec", *(sys.argv[1:] if argv is None else argv)]
    try:
        return _main(argv, command_line)
    except KeyboardInterrupt:  # before the command's own handlers are in place
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug before or after the command: the same crash handling
        from clawspec import secrets

        with secrets.scope(os.environ):  # what is masked, also outside the command's scope
            return _internal_error(exc, command_line)


def _main(argv: Sequence[str] | None, command_line: list[str]) -> int:
    if command_line[1:] == ["--version"]:  # what argparse would print, without building it
        print(VERSION)
        return ExitCode.OK
    # Until a command puts its own handlers in place (after its imports), SIGTERM and SIGHUP
    # end it as Ctrl-C does: "interrupted", exit 130, never Python's bare 143 or 129.
    _interrupt_on(("SIGTERM", "SIGHUP"))
    # pydantic looks for plugins in every installed package's entry points the first time it
    # builds a model (tens of milliseconds on each call); ClawSpec uses none. A user who sets
    # the variable keeps their choice.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return ExitCode.USAGE
    import logging

    from clawspec import secrets
    from clawspec.contracts import parse_ahead

    # The secrets registry comes first: on GitHub every known credential is announced with
    # `::add-mask::` before any other line, and the debug log masks every record.
    # This process is ClawSpec's own: loading may fork a child that parses ahead.
    with secrets.scope(os.environ) as registry, parse_ahead.allowed_here():
        if os.environ.get("GITHUB_ACTIONS") == "true":
            from clawspec.reports.github.commands import add_mask_commands

            registry.announce(sys.stdout, add_mask_commands)
        handler = logging.StreamHandler()
        handler.setFormatter(secrets.masking_formatter("%(levelname)s %(name)s: %(message)s"))
        logging.basicConfig(
            level=logging.DEBUG if args.debug else logging.WARNING, handlers=[handler]
        )
        return _dispatch(args, command_line)


def _interrupt_on(names: Sequence[str]) -> None:
    import signal

    def interrupt(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    for name in names:
        if hasattr(signal, name):  # not on Windows
            signal.signal(getattr(signal, name), interrupt)


def _dispatch(args: argparse.Namespace, command_line: Sequence[str]) -> int:
    """Run the command; map errors to one masked line on stderr and an exit code."""
    import logging

    from clawspec.secrets import mask
    from clawspec.text import flat

    try:
        return int(_commands()[args.command](args))
    except ContractError as exc:
        from clawspec.reports.github.annotations import contract_errors_on_github

        # One line each: a file name or a key holding a line break must not start a line of
        # its own (`::error::` there is a command to GitHub's runner).
        messages = [flat(message) for message in exc.messages]
        for message in messages:
            print(mask(f"error: {message}"), file=sys.stderr)
        contract_errors_on_github(messages)
        print(f"{len(exc.messages)} problem(s) found; nothing was run", file=sys.stderr)
        return int(exc.exit_code)
    except ClawSpecError as exc:
        print(mask(f"error: {exc}"), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug: one line and a crash log with the traceback
        logging.getLogger("clawspec").debug("internal error", exc_info=True)
        return _internal_error(exc, command_line)


def _internal_error(error: Exception, command_line: Sequence[str]) -> int:
    from clawspec import crash

    return crash.handle(error, command_line, annotate=github_error)


def github_error(line: str) -> None:
    """On GitHub Actions, the line is an error annotation too: seen on the run's page."""
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from clawspec.reports.github.commands import format_command

        print(format_command("error", line, {"title": "ClawSpec internal error"}), flush=True)


def entry() -> NoReturn:
    """The `clawspec` command (console script, `python -m clawspec`): `main`, then a quick exit."""
    from clawspec import console
    from clawspec.speed.process_exit import leave

    console.prepare()
    leave(main())


if __name__ == "__main__":
    entry()

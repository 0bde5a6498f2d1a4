"""The `clawspec` command: parse, dispatch to the command (clawspec/commands/), map errors to
exit codes; no traceback for users."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from clawspec import __version__, commands
from clawspec.errors import ClawSpecError, ContractError, ExitCode
from clawspec.speed import pydantic_plugins

# Start-up cost is paid on every call (CI steps, hooks, editors): this module imports only what
# parsing needs. Each command's handler imports its own modules (the API, pydantic, requests,
# SDKs) when it runs; tests/test_startup.py checks that `--version` and every `--help` stay light.


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clawspec",
        description="Run scenario contracts against OpenClaw agents and skills.",
    )
    parser.add_argument("--version", action="version", version=f"clawspec {__version__}")
    parser.add_argument("--debug", action="store_true", help="log internals to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands.ALL:
        command.add_parser(subparsers)
    return parser


COMMANDS: dict[str, Callable[[argparse.Namespace], ExitCode]] = {
    command.NAME: command.run for command in commands.ALL
}


def main(argv: Sequence[str] | None = None) -> int:
    # pydantic looks for plugins in every installed package's entry points the first time it
    # builds a model (tens of milliseconds on each call); ClawSpec uses none. A user who sets
    # the variable keeps their choice. While they are off, pydantic need not even import the
    # entry-point machinery (see pydantic_plugins).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    pydantic_plugins.install()
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
        return _dispatch(args, ["clawspec", *(sys.argv[1:] if argv is None else argv)])


def _dispatch(args: argparse.Namespace, command_line: Sequence[str]) -> int:
    """Run the command; map errors to one masked line on stderr and an exit code."""
    import logging

    from clawspec.secrets import mask

    try:
        return int(COMMANDS[args.command](args))
    except ContractError as exc:
        for message in exc.messages:
            print(mask(f"error: {message}"), file=sys.stderr)
        print(f"{len(exc.messages)} problem(s) found; nothing was run", file=sys.stderr)
        return int(exc.exit_code)
    except ClawSpecError as exc:
        print(mask(f"error: {exc}"), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug: one line and a crash log with the traceback
        from clawspec import crash

        logging.getLogger("clawspec").debug("internal error", exc_info=True)
        return crash.handle(exc, command_line, annotate=_github_error)


def _github_error(line: str) -> None:
    """On GitHub Actions, the line is an error annotation too: seen on the run's page."""
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from clawspec.reports.github.commands import format_command

        print(format_command("error", line, {"title": "ClawSpec internal error"}), flush=True)


def entry() -> NoReturn:
    """The `clawspec` command (console script, `python -m clawspec`): `main`, then a quick exit."""
    from clawspec.speed.process_exit import leave

    leave(main())


if __name__ == "__main__":
    entry()

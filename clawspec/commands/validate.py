"""`clawspec validate`: load and validate contracts; run nothing."""

from __future__ import annotations

import argparse

from clawspec.commands.options import add_paths, given
from clawspec.errors import ExitCode

NAME = "validate"


def add_parser(commands: argparse._SubParsersAction) -> None:
    add_paths(commands.add_parser(NAME, help="load and validate contracts; run nothing"))


def run(args: argparse.Namespace) -> ExitCode:
    from clawspec.api import load

    loaded = load(
        args.paths, config=args.config, flags=given(args, ["workspace"]), on_warning=_warn
    )
    scenarios = sum(len(c.contract.scenarios) for c in loaded.contracts)
    # Every assertion written: `given`, each turn's `then`, the scenario's `then`.
    assertions = sum(len(s.assertions()) for c in loaded.contracts for s in c.contract.scenarios)
    print(
        f"{len(loaded.contracts)} contract(s), {scenarios} scenario(s), "
        f"{assertions} assertion(s): valid"
    )
    return ExitCode.OK


def _warn(message: str) -> None:
    """A warning line on stderr, masked (on GitHub Actions, one about files is an annotation
    on each: reports/github/annotations.py)."""
    import sys

    from clawspec.reports.github.annotations import warn_on_github
    from clawspec.secrets import mask

    if not warn_on_github(message):
        print(mask(f"warning: {message}"), file=sys.stderr)

"""`clawspec schema [contract|config|report]`: print a JSON Schema shipped in the package."""

from __future__ import annotations

import argparse
import sys

from clawspec.errors import ExitCode

NAME = "schema"
KINDS = ("contract", "config", "report")


def add_parser(commands: argparse._SubParsersAction) -> None:
    schema = commands.add_parser(
        NAME,
        help="print the JSON Schema of contracts or clawspec.yaml (for editors), or of the "
        "JSON report (for tools that read it)",
    )
    schema.add_argument("kind", nargs="?", default="contract", choices=KINDS)


def run(args: argparse.Namespace) -> ExitCode:
    if args.kind == "report":
        from clawspec.reports.json_report import schema_path

        path = schema_path()
    else:
        from clawspec.authoring.schema import schema_path as authoring_schema

        path = authoring_schema(args.kind)
    sys.stdout.write(path.read_text(encoding="utf-8"))
    return ExitCode.OK

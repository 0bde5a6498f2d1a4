"""`clawspec docs [TOPIC]`: print the documentation that ships in the package, a page or one
section of it.

The pages are the repository's `docs/*.md`, one source: `clawspec/docs` is a link to that
folder, and building the package copies the files in (pyproject.toml's package data), so a
`pip install` without the repository still has them.
"""

from __future__ import annotations

import argparse

from clawspec.errors import ExitCode

NAME = "docs"
# The page printed without a TOPIC, and the order a section's anchor is looked for in.
PAGES = ("guide", "reference", "ci", "gateway", "traces-and-judge", "internals")


def add_parser(commands: argparse._SubParsersAction) -> None:
    docs = commands.add_parser(
        NAME, help="print the documentation: the guide, another page, or one section"
    )
    docs.add_argument(
        "topic",
        nargs="?",
        metavar="TOPIC",
        help=f"a page ({', '.join(PAGES)}; default: guide), a section by its heading's anchor "
        "(scenario-outlines), or both (ci#check-run)",
    )
    docs.add_argument(
        "--list", action="store_true", help="list the pages and their sections' anchors"
    )


def run(args: argparse.Namespace) -> ExitCode:
    import sys

    from clawspec.authoring.docs import find_topic, list_topics

    text = list_topics() if args.list else find_topic(args.topic or PAGES[0], PAGES)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return ExitCode.OK

"""`python -m clawspec` runs the CLI."""

from clawspec.cli import entry

entry()

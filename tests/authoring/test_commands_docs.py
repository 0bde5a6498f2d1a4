"""Every authoring command and each of its flags is documented in the README."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from clawspec.cli import COMMANDS, build_parser

README = (Path(__file__).resolve().parents[2] / "docs" / "guide.md").read_text(encoding="utf-8")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_and_flags_are_in_the_readme(command: str) -> None:
    assert f"clawspec {command}" in README
    for action in _subparsers()[command]._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                assert f"`{flag}" in README, f"{command} {flag} is not documented"

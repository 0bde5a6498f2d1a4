"""What a workspace holds reaches the terminal as data: a SKILL.md `name` or `requires.env`
entry, or a skill's folder name, with escape sequences (clear screen, window title, bell), a
text-direction control and a line break, printed by `doctor`, `init --dry-run`, `coverage`
and `lint`: never raw, never a line of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec.cli import main

HOSTILE = "c\x1b]0;pwned\x07\u202e\nINJECTED: line \x1b[2J"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    for folder in ("plain", "odd\x1b]0;TITLE\x07"):
        skill = root / "skills" / folder
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {json.dumps(HOSTILE)}\ndescription: x\n"
            f"metadata: {{openclaw: {{requires: {{env: [{json.dumps('K' + HOSTILE)}]}}}}}}\n"
            "---\n# Skill\n",
            "utf-8",
        )
    (root / "clawspec.yaml").write_text("gateway_base_url: http://127.0.0.1:9\n", "utf-8")
    monkeypatch.chdir(root)
    for name in list(__import__("os").environ):
        if name.startswith("CLAWSPEC_"):
            monkeypatch.delenv(name)
    return root


@pytest.mark.parametrize(
    "command", [["doctor"], ["init", "--dry-run", "."], ["coverage", "."], ["lint"]]
)
def test_workspace_text_is_printed_as_data(
    workspace: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main(command)
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "\x1b" not in printed and "\x07" not in printed and "\u202e" not in printed, printed
    assert not [line for line in printed.splitlines() if line.startswith("INJECTED")], printed

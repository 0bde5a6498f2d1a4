"""A skill's `requires.env` that is not set: `init` and `doctor` say so (a warning), through the
real CLI, on a skill written as OpenClaw's bundled trello skill declares it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from clawspec.cli import main

# The front matter of OpenClaw's bundled skills/trello/SKILL.md (2026.9.6), as it is written.
TRELLO = """---
name: trello
description: "Manage Trello boards, lists, and cards via the Trello REST API."
metadata:
  {
    "openclaw":
      {
        "emoji": "📋",
        "requires": { "bins": ["curl", "jq"], "env": ["TRELLO_API_KEY", "TRELLO_TOKEN"] },
      },
  }
---
# Trello

curl "https://api.trello.com/1/members/me/boards?key=$TRELLO_API_KEY&token=$TRELLO_TOKEN"
"""
NOTE = (
    "skills/trello/SKILL.md: requires.env TRELLO_API_KEY, TRELLO_TOKEN not set here: OpenClaw "
    "hides the skill from the agent where they are unset (set them where the contracts run, or "
    "give them in openclaw.json's skills.entries.<skill>.env)"
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skills" / "trello").mkdir(parents=True)
    (tmp_path / "skills" / "trello" / "SKILL.md").write_text(TRELLO, "utf-8")
    for name in ("TRELLO_API_KEY", "TRELLO_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_notes_an_unset_requires_env_and_not_a_set_one(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["init", "--dry-run", "."]) == 0
    assert f"note: {NOTE}\n" in capsys.readouterr().out
    monkeypatch.setenv("TRELLO_API_KEY", "k")
    monkeypatch.setenv("TRELLO_TOKEN", "t")
    assert main(["init", "--dry-run", "."]) == 0
    assert "requires.env" not in capsys.readouterr().out


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_doctor_warns_of_an_unset_requires_env_without_failing_for_it(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("TRELLO_TOKEN", "t")  # one of the two set: only the other is named
    code = main(["doctor", "."])
    lines = capsys.readouterr().out.splitlines()
    assert code == 3  # the gateway's verdict (nothing answers), not the warning's
    assert (
        "  warning  skill trello (skills/trello/SKILL.md): requires.env TRELLO_API_KEY not set "
        "here: OpenClaw hides the skill from the agent where they are unset (set them where the "
        "contracts run, or give them in openclaw.json's skills.entries.<skill>.env)"
    ) in lines
    assert lines[-1] == "something is missing (above)"
    # Given by the workspace's openclaw.json: nothing to say.
    config = '{skills: {entries: {trello: {env: {TRELLO_API_KEY: "k"}}}}}'
    (root / "openclaw.json").write_text(config, "utf-8")
    main(["doctor", "."])
    assert "requires.env" not in capsys.readouterr().out

"""Workspace paths: the no-link shortcut gives exactly what resolving in full gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.inputs.paths import PathEscapeError, resolve_in_workspace

CASES = [
    "out/s1.md",  # exists
    "out/missing.md",  # missing file in an existing folder
    "nope/deeper/x.md",  # missing folders
    "out/s1.md/x",  # a file used as a folder
    "./out//s1.md",  # '.' and doubled separators
    "out/../out/s1.md",  # '..' that stays inside
    "alias/s1.md",  # a linked folder inside the workspace
    "alias.md",  # a linked file inside the workspace
    "out/loop",  # a link to itself
    "",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "real-ws"
    (root / "out").mkdir(parents=True)
    (root / "out" / "s1.md").write_text("x")
    (root / "alias").symlink_to(root / "out", target_is_directory=True)
    (root / "alias.md").symlink_to(root / "out" / "s1.md")
    (root / "out" / "loop").symlink_to(root / "out" / "loop")
    link = tmp_path / "ws-link"  # the workspace itself reached through a link
    link.symlink_to(root, target_is_directory=True)
    return link


@pytest.mark.parametrize("value", CASES)
def test_same_answer_as_resolving_in_full(workspace: Path, value: str) -> None:
    try:
        expected: Path | str = (workspace.resolve() / value).resolve()
    except RuntimeError as exc:  # a symlink loop
        expected = type(exc).__name__
    try:
        got: Path | str = resolve_in_workspace(value, workspace)
    except RuntimeError as exc:
        got = type(exc).__name__
    assert got == expected
    assert str(got) == str(expected)


def test_links_out_of_the_workspace_are_still_refused(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "secret").mkdir()
    (workspace / "out" / "leak").symlink_to(tmp_path / "secret", target_is_directory=True)
    with pytest.raises(PathEscapeError, match="resolves outside the workspace"):
        resolve_in_workspace("out/leak/key", workspace)
    assert resolve_in_workspace("out/s1.md", workspace) == workspace.resolve() / "out" / "s1.md"

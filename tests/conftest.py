"""Shared fixtures: a workspace folder with clawspec.yaml, a contract writer, a clean env."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No CLAWSPEC_*, CI, AWS or token variable of the developer's shell leaks into a test."""
    for name in list(os.environ):
        if name.startswith(
            ("CLAWSPEC_", "GITHUB_", "INPUT_", "OPENCLAW_", "GITLAB_", "CI_", "JENKINS_", "AWS_")
        ) or name in (
            "HOOKS_TOKEN",
            "ANTHROPIC_API_KEY",
            "CI",
            "GIT_COMMIT",
            "GIT_BRANCH",
            "GIT_URL",
            "BRANCH_NAME",
            "CHANGE_ID",
            "CHANGE_TARGET",
        ):
            monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace root with an empty clawspec.yaml; the test runs from inside it."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "clawspec.yaml").write_text("report_dir: reports\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def write_contract(workspace: Path) -> Callable[..., Path]:
    """Write a contract file (text as given) under the workspace and return its path."""

    def write(text: str, name: str = "case.clawspec.yaml") -> Path:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write

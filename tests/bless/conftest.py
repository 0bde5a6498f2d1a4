"""A hooks-API server on 127.0.0.1 and the environment pointing the CLI at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hooks_api import HooksServer, serving_cli

TOKEN = "hook-token-bless-7c1e"


@pytest.fixture
def server(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with serving_cli(TOKEN, workspace, monkeypatch) as running:
        yield running

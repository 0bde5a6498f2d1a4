"""A hooks-API server on 127.0.0.1 and the environment pointing the CLI at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-regress-4d2a"


@pytest.fixture
def server(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, workspace) as running:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", running.base_url)
        yield running

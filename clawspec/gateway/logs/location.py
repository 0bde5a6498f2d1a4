"""Which file is the log of a gateway ClawSpec did not start (`gateway_log_pattern` unset).

OpenClaw's default, checked against OpenClaw 2026.9.6 (`src/logging/log-file-path.ts`,
`src/infra/tmp-openclaw-dir.ts`, `@openclaw/fs-safe` `resolveSecureTempRoot`, docs/logging.md):

- name `openclaw-YYYY-MM-DD.log`, or `openclaw-<profile>-YYYY-MM-DD.log` for a gateway run with a
  profile (`openclaw --profile NAME`, root `--dev` = `dev`, or OPENCLAW_PROFILE; `default` is
  none), the profile escaped into `[a-z0-9-]` (`encodeLogProfileSegment`); the date is the gateway
  host's local date (the caller passes it in the gateway's zone);
- folder `/tmp/openclaw`, or `<os.tmpdir()>/openclaw-<uid>` when `/tmp/openclaw` is not a safe
  folder of the gateway's user.

Which folder OpenClaw chose depends on its process, so both are looked at and the existing file
wins (the newest if several); with none yet, the first candidate is returned so that a "not found"
message says where ClawSpec looked. A handful of `stat` calls, no folder listing: cheap enough for
every scenario start. `logging.file` in the user's openclaw.json overrides all of this; ClawSpec
does not read that file for a gateway it did not start, so such a setup sets `gateway_log_pattern`.

A dated log is chosen again for every line OpenClaw writes (`resolveActiveLogFileWithMode` in
2026.9.6's `dist/logger-*.mjs`): a run still going at midnight in the gateway's zone goes on in
the next day's file. `later_days` names the days whose files a run's lines may have moved to.
"""

from __future__ import annotations

import hashlib
import os
import string
import sys
import tempfile
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path

PREFERRED_DIR = Path("/tmp/openclaw")  # OpenClaw's DEFAULT_POSIX_TMP_ROOT
SYSTEM_TMP = Path("/tmp")  # Node's os.tmpdir() without TMPDIR/TMP/TEMP
_PLAIN = frozenset(string.ascii_lowercase + string.digits)
_MAX_SEGMENT = 220  # OpenClaw's MAX_LOG_PROFILE_SEGMENT_LENGTH
# Days after a run's start whose logs are looked at: OpenClaw deletes a log a day after its
# last write, and no run is judged that long after it started.
FOLLOW_DAYS = 2


def gateway_log_path(
    pattern: str | None,
    profile: str | None,
    today: str,
    workspace: Path,
    environ: Mapping[str, str],
) -> Path:
    """The active log: `pattern` as given (`{date}` / `{{today}}` = `today`), else the default."""
    if pattern is None:
        return default_log_path(today, profile or environ.get("OPENCLAW_PROFILE"), environ)
    path = Path(pattern.replace("{{today}}", today).replace("{date}", today))
    return path if path.is_absolute() else workspace / path


def later_days(first: date, today: date) -> list[str]:
    """The dates (YYYY-MM-DD) after `first` up to `today`, at most FOLLOW_DAYS of them: the
    days whose log a run that started on `first` may have gone on writing to."""
    days = min((today - first).days, FOLLOW_DAYS)
    return [(first + timedelta(days=n)).isoformat() for n in range(1, days + 1)]


def default_log_path(
    today: str,
    profile: str | None,
    environ: Mapping[str, str],
    *,
    preferred: Path | None = None,
    tmp_roots: Sequence[Path] | None = None,
    uid: int | None = None,
) -> Path:
    """The newest existing default log of `today`, else the first place OpenClaw would write it."""
    candidates = default_log_candidates(
        today, profile, environ, preferred=preferred, tmp_roots=tmp_roots, uid=uid
    )
    found: list[tuple[int, int, Path]] = []
    for index, path in enumerate(candidates):
        try:
            info = path.stat()
        except OSError:
            continue
        found.append((info.st_mtime_ns, -index, path))  # a tie goes to the earlier candidate
    return max(found)[2] if found else candidates[0]


def default_log_candidates(
    today: str,
    profile: str | None,
    environ: Mapping[str, str],
    *,
    preferred: Path | None = None,
    tmp_roots: Sequence[Path] | None = None,
    uid: int | None = None,
) -> list[Path]:
    """Where OpenClaw writes today's log, preferred folder first.

    `preferred` defaults to /tmp/openclaw; `tmp_roots` stands for Node's `os.tmpdir()` (default:
    TMPDIR/TMP/TEMP as far as ClawSpec's environment tells, and /tmp); `uid` to this process's.
    """
    segment = profile_segment(profile)
    name = f"openclaw-{segment}-{today}.log" if segment else f"openclaw-{today}.log"
    if uid is None and hasattr(os, "getuid"):
        uid = os.getuid()
    fallback = "openclaw" if uid is None else f"openclaw-{uid}"
    roots = _tmp_roots(environ) if tmp_roots is None else list(tmp_roots)
    folders = [root / fallback for root in roots]
    if sys.platform != "win32":  # OpenClaw: skipPreferredOnWindows
        folders.insert(0, PREFERRED_DIR if preferred is None else preferred)
    return [folder / name for folder in dict.fromkeys(folders)]


def profile_segment(profile: str | None) -> str | None:
    """The profile part of the log's name, as OpenClaw's `resolveLogProfileSegment` builds it."""
    name = (profile or "").strip()
    if not name or name.lower() == "default":
        return None
    encoded = "".join(_escape(char) for char in name)
    if len(encoded) <= _MAX_SEGMENT:
        return encoded
    return "-3" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()


def _escape(char: str) -> str:
    if char in _PLAIN:
        return char
    if char == "-":
        return "--"
    if char == "_":
        return "-0"
    if "A" <= char <= "Z":
        return "-1" + char.lower()
    return f"-2{ord(char):x}-"


def _tmp_roots(environ: Mapping[str, str]) -> list[Path]:
    """Node's `os.tmpdir()` (POSIX: TMPDIR, TMP, TEMP, else /tmp), then /tmp itself."""
    if sys.platform == "win32":
        return [Path(tempfile.gettempdir())]
    raw = environ.get("TMPDIR") or environ.get("TMP") or environ.get("TEMP") or "/tmp"
    raw = raw[:-1] if len(raw) > 1 and raw.endswith("/") else raw
    return list(dict.fromkeys([Path(raw), SYSTEM_TMP]))

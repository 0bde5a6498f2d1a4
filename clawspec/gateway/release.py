"""Which OpenClaw release a launcher runs, read from the package it belongs to.

A recording of the gateway's model calls is only as good as the OpenClaw that made them (its
prompts change between releases), and a crash log should say which one ran. Both read it here,
from the `package.json` of the openclaw package the launcher starts: no process is run, and
nothing is guessed (a launcher outside an openclaw package, such as a wrapper script or
`docker`, has no release that can be told).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NamedTuple


class Release(NamedTuple):
    version: str  # as its package.json says, e.g. 2026.9.6
    package: Path  # the openclaw package folder


def launcher_release(launcher: str) -> Release | None:
    """The release of the openclaw package `launcher` (a path, or a name on PATH) starts; None
    when it is not in one or its manifest cannot be read."""
    from clawspec.gateway.install import installed_runtime

    found = shutil.which(launcher) if "/" not in launcher else launcher
    if found is None:
        return None
    path = Path(found).resolve()
    starts = [path]
    # ClawSpec's own install (<folder>/bin/openclaw, a shell script): its entry file.
    runtime = installed_runtime(path.parent.parent, version=None)
    if runtime is not None:
        starts.insert(0, runtime.entry)
    for start in starts:
        for folder in start.parents:
            manifest = folder / "package.json"
            if manifest.is_file():
                release = _read(manifest)
                if release is not None:
                    return release
                break  # the nearest package is another one: the launcher is not openclaw's
    return None


def _read(manifest: Path) -> Release | None:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("name") != "openclaw":
        return None
    version = data.get("version")
    return Release(version, manifest.parent) if isinstance(version, str) and version else None

"""`clawspec cassettes check`: stale, unused, unreadable and missing cassettes, and their size.

- stale: a cassette folder whose contract or scenario no longer exists;
- unused: cassette files a replay run did not need (from its JSON report, `--report`);
- invalid: files that are not ClawSpec cassettes;
- missing: scenarios without a recording (a replay would make them `error`);
- recorded on another OpenClaw release than the one a bring-up here would run (its prompts
  change between releases, so a replay is likely to miss).
Stale, unused and invalid make the exit code 1; missing and other-release ones are listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from clawspec.errors import UsageError
from clawspec.traffic.cassette import is_attempt_folder, load_dir


@dataclass(frozen=True)
class Folder:
    path: Path
    files: int
    size: int


@dataclass
class CheckResult:
    root: Path
    folders: list[Folder] = field(default_factory=list)
    stale: list[Folder] = field(default_factory=list)
    unused: list[Path] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # The release a bring-up here runs, and the folders recorded on others (with theirs).
    openclaw_version: str | None = None
    other_release: list[tuple[Folder, list[str]]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.stale or self.unused or self.invalid)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.folders)


def scan(root: Path) -> list[Folder]:
    """Every folder under `root` that holds cassette files (`*.json`)."""
    folders = []
    if not root.is_dir():
        return folders
    for folder in sorted({p.parent for p in root.rglob("*.json")}):
        files = list(folder.glob("*.json"))
        folders.append(Folder(folder, len(files), sum(p.stat().st_size for p in files)))
    return folders


def check(
    root: Path,
    expected: dict[Path, str],
    report: Path | None = None,
    workspace: Path | None = None,
    openclaw_version: str | None = None,
) -> CheckResult:
    """Compare the cassettes under `root` with the scenarios that exist (`expected`: folder ->
    scenario id), with the OpenClaw release a replay here runs on (`openclaw_version`; None:
    not known, not compared) and, given a replay report, with what that replay used."""
    result = CheckResult(root, scan(root), openclaw_version=openclaw_version)
    known = {folder.resolve() for folder in expected}
    for folder in result.folders:
        stale = _owner(folder.path).resolve() not in known
        if stale:
            result.stale.append(folder)
        loaded = load_dir(folder.path)
        result.invalid += [f"{_rel(p.path, root)}: {p.message}" for p in loaded.problems]
        # Cassettes of format 1, or recorded against a target gateway, name no release.
        recorded_on = {v for f in loaded.files if (v := f.cassette.openclaw_version)}
        if openclaw_version is not None and not stale and recorded_on - {openclaw_version}:
            result.other_release.append((folder, sorted(recorded_on)))
    present = {_owner(folder.path).resolve() for folder in result.folders}
    result.missing = sorted(
        scenario for folder, scenario in expected.items() if folder.resolve() not in present
    )
    if report is not None:
        result.unused = _unused(report, workspace or Path.cwd())
    return result


def _owner(folder: Path) -> Path:
    """The scenario folder a cassette folder records: a repeated scenario's attempts record
    into `attempt-<n>/` under it."""
    return folder.parent if is_attempt_folder(folder) else folder


def _unused(report: Path, workspace: Path) -> list[Path]:
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--report: cannot read the JSON report {report}: {exc}") from None
    unused: list[Path] = []
    for scenario in data.get("scenarios") or []:
        traffic = scenario.get("model_traffic") or {}
        if traffic.get("mode") != "replay" or scenario.get("status") == "skip":
            continue
        folder = Path(traffic["cassette"])
        folder = folder if folder.is_absolute() else workspace / folder
        used = set(traffic.get("used") or [])
        for item in load_dir(folder).files:
            if item.cassette.index not in used:
                unused.append(item.path)
        owner = _owner(folder)
        if owner == folder:  # a replay without repeats reads no attempt's own recording
            for attempt in sorted(owner.glob("attempt-*")):
                if is_attempt_folder(attempt):
                    unused += [item.path for item in load_dir(attempt).files]
        else:  # a repeated replay reads the attempts' recordings, never the scenario's own
            # (the report holds what the last attempt used: the others' folders are not judged)
            unused += [item.path for item in load_dir(owner).files]
    return unused


def render(result: CheckResult) -> list[str]:
    """The command's output lines."""
    files = sum(f.files for f in result.folders)
    lines = [
        f"cassettes in {result.root}: {files} file(s) in {len(result.folders)} scenario "
        f"folder(s), {_size(result.size)}"
    ]
    for folder in result.stale:
        lines.append(
            f"stale: {_rel(folder.path, result.root)} ({folder.files} file(s), "
            f"{_size(folder.size)}): no such contract or scenario any more"
        )
    lines += [
        f"unused: {_rel(path, result.root)}: the replay did not need it" for path in result.unused
    ]
    lines += [f"invalid: {line}" for line in result.invalid]
    lines += [
        f"missing: {scenario}: no recording (replay would be an error)"
        for scenario in result.missing
    ]
    lines += [
        f"other release: {_rel(folder.path, result.root)}: recorded on OpenClaw "
        f"{', '.join(versions)}, a bring-up here runs {result.openclaw_version}: a replay may "
        "miss; record it again"
        for folder, versions in result.other_release
    ]
    for folder in sorted(result.folders, key=lambda f: f.size, reverse=True)[:5]:
        lines.append(f"size: {_size(folder.size):>9}  {_rel(folder.path, result.root)}")
    problems = len(result.stale) + len(result.unused) + len(result.invalid)
    lines.append("ok" if result.ok else f"{problems} problem(s) found")
    return lines


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"

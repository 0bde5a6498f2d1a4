"""`clawspec cassettes check`: stale, unused, unreadable and missing cassettes, and their size.

- stale: a cassette folder no replay reads: its contract, scenario or variant no longer exists
  (with variants configured, a scenario's own recording made without them too);
- unused: cassette files a replay run did not need (from its JSON report, `--report`);
- invalid: files that are not ClawSpec cassettes;
- missing: scenario runs without a recording (each scenario once per configured variant; a
  replay would make them `error`);
- recorded on another OpenClaw release than the one a bring-up here would run for that run
  (its prompts change between releases, so a replay is likely to miss).
Stale, unused and invalid make the exit code 1; missing and other-release ones are listed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawspec.errors import UsageError
from clawspec.traffic.cassette import load_dir
from clawspec.traffic.folders import is_attempt_folder


@dataclass(frozen=True)
class Folder:
    path: Path
    files: int
    size: int


@dataclass(frozen=True)
class Expected:
    """A run a replay here makes (a scenario, or one of its variants): its label (`<id>`, or
    `<id> @ <variant>`) and the OpenClaw release its gateway runs (None: not told, not compared)."""

    label: str
    openclaw_version: str | None = None
    variant: str | None = None


@dataclass
class CheckResult:
    root: Path
    folders: list[Folder] = field(default_factory=list)
    stale: list[tuple[Folder, str]] = field(default_factory=list)  # each with why
    unused: list[Path] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # Folders recorded on other releases than the one a bring-up here runs for them: each with
    # the releases it names and that one.
    other_release: list[tuple[Folder, list[str], str]] = field(default_factory=list)

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
    expected: dict[Path, Expected],
    report: Path | None = None,
    workspace: Path | None = None,
    within: Sequence[Path] | None = None,
    left_out: set[Path] | None = None,
) -> CheckResult:
    """Compare the cassettes under `root` with the runs a replay here makes (`expected`: the
    folder each reads -> the run, with the OpenClaw release it runs on) and, given a replay
    report, with what that replay used. `within`: the folders under `root` of the contracts
    checked (None: all); a recording outside them belongs to contracts not loaded, and is
    never called stale. `left_out`: the folders of runs not checked (variants not selected):
    their recordings are not judged either."""
    scanned = scan(root)
    if within is not None:
        inside = [folder.resolve() for folder in within]
        scanned = [
            f for f in scanned if any(f.path.resolve().is_relative_to(top) for top in inside)
        ]
    if left_out:
        skipped = {folder.resolve() for folder in left_out}
        scanned = [f for f in scanned if _owner(f.path).resolve() not in skipped]
    result = CheckResult(root, scanned)
    known = {folder.resolve(): run for folder, run in expected.items()}
    # Scenario folders whose runs read their variants' sub-folders instead.
    varied = {folder.parent for folder, run in known.items() if run.variant is not None}
    for folder in result.folders:
        owner = _owner(folder.path).resolve()
        run = known.get(owner)
        if run is None:
            result.stale.append((folder, _why_stale(owner in varied)))
        loaded = load_dir(folder.path)
        result.invalid += [f"{_rel(p.path, root)}: {p.message}" for p in loaded.problems]
        # Cassettes of format 1, or recorded against a target gateway, name no release.
        recorded_on = {v for f in loaded.files if (v := f.cassette.openclaw_version)}
        release = run.openclaw_version if run is not None else None
        if release is not None and recorded_on - {release}:
            result.other_release.append((folder, sorted(recorded_on), release))
    present = {_owner(folder.path).resolve() for folder in result.folders}
    result.missing = sorted(
        run.label for folder, run in expected.items() if folder.resolve() not in present
    )
    if report is not None:
        result.unused = _unused(report, workspace or Path.cwd())
    return result


def _why_stale(varied: bool) -> str:
    if varied:
        return (
            "recorded without variants, and with variants a replay reads each variant's "
            "sub-folder; delete it"
        )
    return "no such contract, scenario or variant any more"


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
        if traffic.get("unmatched"):  # stopped at a miss: what came after it was never asked
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
    for folder, why in result.stale:
        lines.append(
            f"stale: {_rel(folder.path, result.root)} ({folder.files} file(s), "
            f"{_size(folder.size)}): {why}"
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
        f"{', '.join(versions)}, a bring-up here runs {release}: a replay may miss; record it "
        "again"
        for folder, versions, release in result.other_release
    ]
    for folder in sorted(result.folders, key=lambda f: f.size, reverse=True)[:5]:
        lines.append(f"size: {_size(folder.size):>9}  {_rel(folder.path, result.root)}")
    problems = len(result.stale) + len(result.unused) + len(result.invalid)
    verdict = "ok" if result.ok else f"{problems} problem(s) found"
    if result.missing:  # listed, not counted: recording them is the next step, not a fault
        verdict += f"; {len(result.missing)} scenario(s) without a recording"
    lines.append(verdict)
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

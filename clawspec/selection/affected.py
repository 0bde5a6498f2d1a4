"""Which scenarios a set of changed files touches.

A scenario depends on:
- its contract file;
- its outline's examples data file (`examples: {file: ...}`, beside the contract);
- every file under its target's folder (`target.path`: the SKILL.md, the agent's files);
- every file its assertions name: each field the assertion registry marks as a workspace path
  (golden files, word lists, SOUL.md, the state and routing files a contract pre-places). A
  path with a `{{template}}` in it stands for every file its literal parts match
  (`memory/{{today}}.md` → `memory/*.md`); one that starts with a template (`{{gateway_log}}`)
  names no file of the checkout and is left out;
- its cassette folder (hermetic runs: `cassette_dir/<contract>/<scenario>/`).
A change to a file `changed.run_all_on` matches (globs relative to the workspace; by default
every `clawspec.yaml` and the scripted model provider's `provider-scripts.json`) or to the
OpenClaw config ClawSpec brings up (`gateway.config`) touches every scenario.

Paths are compared as absolute, '/'-separated strings under the resolved workspace root; the
changed files' folders are put in a set, so the work is linear in scenarios plus changed files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from clawspec.contracts.discovery import pattern_regex
from clawspec.contracts.models import ExamplesFile

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.runner.scenario import ScenarioPlan

_TEMPLATE = re.compile(r"\{\{[^}]*\}\}")


@dataclass(frozen=True)
class Dependencies:
    """What one scenario depends on: files, folders (anything under them) and globs."""

    files: frozenset[str]
    folders: frozenset[str]
    patterns: tuple[re.Pattern[str], ...] = ()


@dataclass(frozen=True)
class Changes:
    """The changed files, ready to be looked up: the files, every folder above them."""

    files: frozenset[str]
    folders: frozenset[str]

    @classmethod
    def of(cls, paths: Iterable[str]) -> Changes:
        files = frozenset(paths)
        folders = {str(parent) for path in files for parent in PurePosixPath(path).parents}
        return cls(files, frozenset(folders))

    def touch(self, needs: Dependencies) -> bool:
        if not needs.files.isdisjoint(self.files):
            return True
        if not needs.folders.isdisjoint(self.folders) or not needs.folders.isdisjoint(self.files):
            return True
        return any(p.match(path) for p in needs.patterns for path in self.files)


def dependencies(
    plan: ScenarioPlan,
    settings: Settings,
    workspace: Path,
    contracts: dict[int, tuple[str, str]] | None = None,
) -> Dependencies:
    """The files, folders and globs `plan`'s scenario depends on (module docstring).

    `contracts` keeps each contract's path and target folder for its other scenarios."""
    from clawspec.assertions import REGISTRY
    from clawspec.traffic.cassette import cassette_root, identity_dir

    root = _resolved(workspace)
    key = id(plan.contract)
    known = contracts.get(key) if contracts is not None else None
    if known is None:
        target = _under(root, plan.contract.contract.target.path)
        known = (plan.contract.path.resolve().as_posix(), target)
        if contracts is not None:
            contracts[key] = known
    files = {known[0]}
    folders = {known[1]}
    patterns: list[re.Pattern[str]] = []
    data_file = _examples_file(plan, root)
    if data_file is not None:
        files.add(data_file)
    for assertion in plan.scenario.assertions():
        for name in REGISTRY[assertion.type].path_fields:
            value = getattr(assertion, name, None)
            if not isinstance(value, str) or not value:
                continue
            if "{{" in value:
                pattern = _template_pattern(root, value)
                patterns += [pattern] if pattern is not None else []
            else:
                files.add(_under(root, value))
    # The scenario's cassette folder (the runner's `scenario_folder`, from its identity).
    folders.add(os.path.normpath(identity_dir(cassette_root(settings, root), plan.identity)))
    return Dependencies(frozenset(files), frozenset(folders), tuple(patterns))


def _examples_file(plan: ScenarioPlan, root: Path) -> str | None:
    """The data file of the outline `plan` is a row of (None: not a data-file row)."""
    examples = plan.scenario.examples  # an outline as written (a loader that keeps it)
    if isinstance(examples, ExamplesFile):
        return os.path.normpath(plan.contract.path.resolve().parent / examples.file)
    # A row read from a data file says where: "<file relative to the workspace>:<line>".
    row = getattr(plan, "example", None)
    where = getattr(row, "source", None)
    if not isinstance(where, str):
        return None
    file, _, line = where.rpartition(":")
    return _under(root, file) if file and line.isdigit() else None


def _under(root: Path, value: str) -> str:
    """`value` against the resolved workspace root (an absolute path is kept), normalised
    without resolving links: git names a file by its path in the checkout, not its target."""
    return os.path.normpath(os.path.join(root, os.path.expanduser(value)))


@lru_cache(maxsize=8)
def _resolved(workspace: Path) -> Path:
    return workspace.resolve()


def _template_pattern(root: Path, value: str) -> re.Pattern[str] | None:
    """A glob for a templated path: each `{{...}}` stands for any text within one folder."""
    if value.lstrip().startswith("{{"):
        return None
    glob = _TEMPLATE.sub("*", value)
    if not Path(glob).is_absolute():
        glob = f"{root.as_posix()}/{glob.removeprefix('./')}"
    return pattern_regex(glob)


def run_all_on(changes: Changes, settings: Settings, workspace: Path) -> list[str]:
    """The changed files that touch every scenario (`changed.run_all_on`, the OpenClaw
    config), as paths relative to the workspace, sorted."""
    root = _resolved(workspace)
    always = {_under(root, settings.gateway.config)} if settings.gateway.config else set()
    regexes = [pattern_regex(p.removeprefix("./")) for p in settings.changed.run_all_on]
    found = []
    for path in changes.files:
        relative = _relative(root, path)
        if path in always or any(r.match(relative) for r in regexes):
            found.append(relative)
    return sorted(found)


def _relative(root: Path, path: str) -> str:
    prefix = root.as_posix().rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def affected(
    plans: Sequence[ScenarioPlan], changes: Changes, settings: Settings, workspace: Path
) -> list[int]:
    """The positions of the plans a change touches, in order."""
    contracts: dict[int, tuple[str, str]] = {}
    return [
        index
        for index, plan in enumerate(plans)
        if changes.touch(dependencies(plan, settings, workspace, contracts))
    ]

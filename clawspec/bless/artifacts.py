"""`artifact_exists` and `artifact_contains` items: the files the agent wrote that are there
after every run, and the headings and keys of every version of each."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clawspec.bless.observed import MAX_FILES, contract_path, written_paths
from clawspec.bless.proposal import (
    MASKED,
    TEMPLATED,
    VARIABLE,
    VOLATILE,
    Item,
    Proposal,
    apart,
    ordered,
    place,
    unstatable,
    with_variables,
)
from clawspec.inputs.paths import escapes_workspace
from clawspec.reports.model import AttemptEvidence, FileSeen
from clawspec.secrets import MASK


def files(
    proposal: Proposal, evidence: Sequence[AttemptEvidence], variables: Sequence[dict[str, str]]
) -> None:
    k = len(evidence)
    per_run: list[dict[str, FileSeen]] = []
    missing: list[list[str]] = []  # per run: paths its writing calls named that are not there
    raw: dict[str, str] = {}  # a path as written -> as the agent named it (a problem kept)
    for e, names in zip(evidence, variables, strict=True):
        per_run.append({with_variables(f.path, names): f for f in e.files})
        roots = [names["workspace"]] if names.get("workspace") else []
        folder = Path(names["workspace"]) if names.get("workspace") else None
        named = [contract_path(p, roots) for p in written_paths(e.tools, folder)]
        # At the files' bound, a missing one may only have been left out of the report.
        found = {f.path for f in e.files}
        gone = [] if len(e.files) >= MAX_FILES else [p for p in named if p not in found]
        missing.append([with_variables(p, names) for p in gone])
        for path in [f.path for f in e.files] + gone:
            general = with_variables(path, names)
            if general not in raw or MASK in path or "{{" in path:
                raw[general] = path
    for path in ordered([*(list(seen) for seen in per_run), *missing]):
        held = sum(1 for seen in per_run if path in seen)
        gone = sum(1 for paths in missing if path in paths)
        exists = Item(f"artifact_exists:{path}", {"type": "artifact_exists", "path": path}, "")
        if unstatable(proposal, exists, raw[path], f"the path {MASKED}"):
            continue
        if gone:
            # Only what exists after every run may be proposed: a file written and deleted,
            # or named by a write or an edit that failed, is not there to check.
            extra = (
                f"written in {held + gone}, not there after {gone} of them (deleted, or the "
                "write or edit failed)"
            )
            place(proposal, exists, held, k, extra)
            continue
        why = _unwritable_path(path)
        if why:
            proposal.left_out.append(Item(exists.key, exists.mapping, why))
            continue
        place(proposal, exists, held, k, "")
        if held == k:
            _contents(proposal, path, [seen[path] for seen in per_run], variables)


def _unwritable_path(path: str) -> str:
    """Why an artifact assertion cannot name `path` as it was seen, else ""."""
    if VOLATILE.search(VARIABLE.sub("", path)):
        return "the path holds a date or id no template variable gives: not proposed"
    # An artifact assertion names a file in the workspace: a climbing path does not validate,
    # and one outside it (absolute, or the home folder's) is another machine's file.
    if escapes_workspace(path) or path.startswith(("/", "~")):
        return "the path is outside the workspace: an artifact assertion names a file in it"
    return ""


def _contents(
    proposal: Proposal,
    path: str,
    versions: Sequence[FileSeen],
    variables: Sequence[dict[str, str]],
) -> None:
    """`artifact_contains` for the headings and keys present in every version of the file;
    those in only some are listed apart with their count."""
    k = len(versions)
    contains: dict[str, Any] = {"type": "artifact_contains", "path": path}
    for kind in ("sections", "fields"):
        lists = [getattr(v, kind) for v in versions]
        if any(found is None for found in lists):
            continue
        what = "a heading" if kind == "sections" else "a field"
        masked = sorted({s for found in lists for s in found or [] if MASK in s})
        templated = sorted({s for found in lists for s in found or [] if "{{" in s})
        general = [
            [
                with_variables(s, variables[i])
                for s in (found or [])
                if MASK not in s and "{{" not in s
            ]
            for i, found in enumerate(lists)
        ]
        names = ordered(general)
        volatile = [s for s in names if VOLATILE.search(VARIABLE.sub("", s))]
        for names_left, why in (
            (masked, MASKED),
            (templated, TEMPLATED),
            (volatile, "holds a date or id no template variable gives: not proposed"),
        ):
            if names_left:
                proposal.left_out.append(
                    Item(
                        f"artifact_contains:{path}:{kind}",
                        {"type": "artifact_contains", "path": path, kind: names_left},
                        f"{what} {why}",
                    )
                )
        common = []
        for name in names:
            if name in volatile:
                continue
            held = sum(1 for found in general if name in found)
            if held == k:
                common.append(name)
                continue
            item = Item(
                f"artifact_contains:{path}:{kind}:{name}",
                {"type": "artifact_contains", "path": path, kind: [name]},
                f"held in {held} of {k} runs",
            )
            where = f"{'headings' if kind == 'sections' else 'fields'} of '{path}'"
            apart(proposal, proposal.unstable, item, f"{where} held in only some runs")
        if common:
            contains[kind] = common
    if len(contains) > 2:
        proposal.items.append(
            Item(
                f"artifact_contains:{path}",
                contains,
                f"held in {k} of {k} runs; the sections/fields present in every version",
            )
        )

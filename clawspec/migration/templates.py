"""Legacy ClawSpec template variables → the current ones (docs/guide.md "Template variables").

Legacy ClawSpec knew `{{today}}`, `{{now}}`, `{{repo_root}}`, `{{qa_inbox}}`, `{{run_id}}`,
`{{run_started_at}}`, and in handoff files `{{handoff.from}}`, `{{handoff.to}}` and
`{{callee_run_id}}`:

- `{{now}}` (the run's start, ISO-8601) → `{{run_started_at}}`;
- `{{repo_root}}/` at the start of a path → removed (paths are workspace-relative); any other
  `{{repo_root}}` → `{{workspace}}` (legacy ClawSpec's repository root is the OpenClaw workspace);
- `{{callee_run_id}}` → `{{run_id}}` (a run's scope includes the sub-agents it spawns);
- `{{qa_inbox}}` (legacy ClawSpec's built-in address, not configurable) → `{{env.QA_INBOX}}`, with
a warning:
  the variable must be set where the contract runs (or the address written in);
- any other variable has no equivalent: refused with its position (also with
  `--drop-unsupported`: it cannot be cut out of its string).
"""

from __future__ import annotations

import re
from typing import Any

from clawspec.assertions import REGISTRY
from clawspec.contracts.templates import KNOWN
from clawspec.inputs.source import Loc
from clawspec.migration.rewrite import Rewrite

_VARIABLE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")
_REPO_ROOT_PATH = re.compile(r"^\{\{\s*repo_root\s*\}\}/+")
QA_INBOX = "QA_INBOX"
# Legacy path fields outside assertions: handoff artifacts and pipeline stages.
PATH_KEYS = frozenset(
    {name for spec in REGISTRY.values() for name in spec.path_fields} | {"path_pattern", "produces"}
)
RENAMED = {
    "now": "{{run_started_at}}",
    "repo_root": "{{workspace}}",
    "callee_run_id": "{{run_id}}",
    "qa_inbox": f"{{{{env.{QA_INBOX}}}}}",
}
WHY = {
    "now": "the scenario's start instant, as legacy ClawSpec's `now` was",
    "repo_root": "legacy ClawSpec's repository root is the workspace",
    "callee_run_id": "a run's scope includes the sub-agents it spawns",
    "qa_inbox": "legacy ClawSpec's built-in QA inbox address",
}


def translate_templates(data: Any, rewrite: Rewrite, loc: Loc = ()) -> Any:
    """Return `data` with every legacy variable replaced; notes go to `rewrite`."""
    counts: dict[str, int] = {}
    result = _walk(data, loc, rewrite, counts)
    for name, count in counts.items():
        times = f" ({count} times)" if count > 1 else ""
        if name == "repo_root/":
            rewrite.change(
                loc,
                f"'{{{{repo_root}}}}/' removed from the start of paths{times}: "
                "relative paths resolve against the workspace",
            )
        else:
            rewrite.change(loc, f"'{{{{{name}}}}}' → '{RENAMED[name]}'{times}: {WHY[name]}")
    return result


def _walk(data: Any, loc: Loc, rewrite: Rewrite, counts: dict[str, int]) -> Any:
    if isinstance(data, str):
        return _string(data, loc, rewrite, counts) if "{{" in data else data
    if isinstance(data, list):
        return [_walk(item, (*loc, i), rewrite, counts) for i, item in enumerate(data)]
    if isinstance(data, dict):
        return {key: _walk(item, (*loc, key), rewrite, counts) for key, item in data.items()}
    return data


def _string(text: str, loc: Loc, rewrite: Rewrite, counts: dict[str, int]) -> str:
    if loc and loc[-1] in PATH_KEYS and _REPO_ROOT_PATH.match(text):
        text = _REPO_ROOT_PATH.sub("", text, count=1)
        counts["repo_root/"] = counts.get("repo_root/", 0) + 1

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in KNOWN or name.startswith("env."):
            return match.group(0)
        if name in RENAMED:
            counts[name] = counts.get(name, 0) + 1
            if name == "qa_inbox":
                rewrite.warn(
                    loc,
                    f"'{{{{qa_inbox}}}}' (legacy ClawSpec's built-in QA inbox address) is now "
                    f"'{RENAMED[name]}': set {QA_INBOX} where the contract runs, or write the "
                    "address here",
                )
            return RENAMED[name]
        known = ", ".join(f"{{{{{k}}}}}" for k in (*KNOWN, "env.NAME"))
        rewrite.needs(  # a variable cannot be dropped from its string: the user decides
            loc, f"template variable '{{{{{name}}}}}' has no equivalent (known: {known})"
        )
        return match.group(0)

    return _VARIABLE.sub(substitute, text)

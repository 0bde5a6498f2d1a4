"""The digest of a scenario's definition: which reports `clawspec bless` may read for it.

Taken over what makes the agent do what it does (the contract's `target` and `defaults`, and
the scenario as written without its `then` items, a conversation's turns without theirs, and an
outline's data file), as canonical JSON: editing another scenario, a comment or the file's
layout, or adding the assertions bless proposed, keeps a report usable; changing the message,
the parameters, the turns, the target or the rows does not.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any


def scenario_digest(data: Any, written_index: int, folder: Path | None = None) -> str | None:
    """sha256 (hex) of scenario `written_index` of a contract's raw mapping; None when the
    mapping is not a contract's.

    `folder` is the contract's folder: an outline whose rows are read from a data file
    (`examples: {file: …}`, relative to it) has the file's bytes in its digest, so that a
    report of other rows is of another version. A scenario without a data file has the same
    digest as before data files counted (the key is only there when there is a file)."""
    if not isinstance(data, dict):
        return None
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not 0 <= written_index < len(scenarios):
        return None
    scenario = _without_then(scenarios[written_index])
    if isinstance(scenario, dict) and isinstance(scenario.get("turns"), list):
        scenario = {**scenario, "turns": [_without_then(turn) for turn in scenario["turns"]]}
    defined: dict[str, Any] = {
        "target": data.get("target"),
        "defaults": data.get("defaults"),
        "scenario": scenario,
    }
    named = data_file(scenario)
    if named is not None and folder is not None:
        defined["examples_file"] = _file_digest(folder / named)
    text = json.dumps(
        defined, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()


def data_file(scenario: Any) -> str | None:
    """The data file an outline's rows are read from (`examples: {file: PATH}`), if any."""
    examples = scenario.get("examples") if isinstance(scenario, dict) else None
    if isinstance(examples, dict) and isinstance(examples.get("file"), str):
        return str(examples["file"])
    return None


def _file_digest(path: Path) -> str | None:
    """sha256 of the file's bytes (None when it cannot be read: the loader said why)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _bytes_digest(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _bytes_digest(path: str, mtime_ns: int, size: int) -> str | None:
    # Keyed by the file's time and size: an outline's every row and attempt reads it once.
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _without_then(item: Any) -> Any:
    return {k: v for k, v in item.items() if k != "then"} if isinstance(item, dict) else item

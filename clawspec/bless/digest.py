"""The digest of a scenario's definition: which reports `clawspec bless` may read for it.

Taken over what makes the agent do what it does (the contract's `target` and `defaults`, and
the scenario as written without its `then` items, a conversation's turns without theirs), as
canonical JSON: editing another scenario, a comment or the file's layout, or adding the
assertions bless proposed, keeps a report usable; changing the message, the parameters, the
turns or the target does not.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def scenario_digest(data: Any, written_index: int) -> str | None:
    """sha256 (hex) of scenario `written_index` of a contract's raw mapping; None when the
    mapping is not a contract's."""
    if not isinstance(data, dict):
        return None
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not 0 <= written_index < len(scenarios):
        return None
    scenario = _without_then(scenarios[written_index])
    if isinstance(scenario, dict) and isinstance(scenario.get("turns"), list):
        scenario = {**scenario, "turns": [_without_then(turn) for turn in scenario["turns"]]}
    defined = {"target": data.get("target"), "defaults": data.get("defaults"), "scenario": scenario}
    text = json.dumps(
        defined, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _without_then(item: Any) -> Any:
    return {k: v for k, v in item.items() if k != "then"} if isinstance(item, dict) else item

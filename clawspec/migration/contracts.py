"""Rewrite ClawSpec 0.1 files to the current contract format (README "Migrating from 0.1").

Pure functions over parsed YAML data: each returns the new data and the list of changes, or
raises `NoEquivalentError` naming every construct that has no equivalent (unless the caller
allows dropping them, in which case the drop is itself listed as a change).

- scenario contracts: they load as they are; what changes is made explicit (log assertions
  without `log_path` read `{{gateway_log}}` scoped to `{{run_id}}`), 0.1's `steps`/`assertions`
  spelling becomes `when`/`then`, and a `regression:` block has no per-scenario equivalent;
- `handoff:` files become a contract on the caller with one scenario checking the delegation,
  the callee's artifacts and its prohibited tools;
- `pipeline:` files become a contract on the pipeline's skill with one end-to-end scenario.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from clawspec.assertions import REGISTRY

LOG_TYPES = ("tool_was_called", "tool_not_called", "delegation_occurred", "tool_not_permitted")
GATEWAY_LOG = "{{gateway_log}}"
RUN_ID = "{{run_id}}"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


class NoEquivalentError(ValueError):
    """Constructs of the file that the current format cannot express."""

    def __init__(self, constructs: list[str]) -> None:
        super().__init__("; ".join(constructs))
        self.constructs = constructs


@dataclass
class Rewrite:
    """The result of migrating one document."""

    data: dict[str, Any]
    changes: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


def _explicit_log(item: dict[str, Any], where: str, rewrite: Rewrite) -> None:
    """0.1's log assertions without `log_path` errored; ours read the active gateway log."""
    kind = item.get("type")
    if kind not in LOG_TYPES:
        return
    if "log_path" not in item:
        item["log_path"] = GATEWAY_LOG
        rewrite.changes.append(f'{where} ({kind}): added log_path: "{GATEWAY_LOG}"')
    run_id = item.get("run_id")
    if run_id is None or (isinstance(run_id, str) and "callee_run_id" in run_id):
        item["run_id"] = RUN_ID
        why = "the run's scope includes the sub-agents it spawns" if run_id else "this run"
        rewrite.changes.append(f'{where} ({kind}): run_id: "{RUN_ID}" ({why})')


# 0.1 drift limit → (baseline metric, how the limit combines, current assertion and field).
DRIFTS = {
    "max_token_drift": ("total_tokens", "ratio", "token_budget", "max_total_tokens"),
    "max_duration_drift": ("duration_ms", "ratio", "trace_duration", "max_ms"),
    "max_cost_drift": ("cost_usd", "ratio", "trace_cost", "max_usd"),
    "max_step_drift": ("llm_call_count", "plus", "llm_call_count", "max"),
}


def regression_limits(block: Any, baseline: Any) -> list[dict[str, Any]] | None:
    """A 0.1 `regression:` block as absolute limits: the baseline statistic (`compare`, p50 by
    default) times the drift ratio (plus the step drift). None without the baseline."""
    if not isinstance(block, dict) or not isinstance(baseline, dict):
        return None
    metrics = baseline.get("metrics") or {}
    stat = str(block.get("compare") or "p50")
    limits: list[dict[str, Any]] = []
    for key, (metric, how, kind, field_name) in DRIFTS.items():
        drift = block.get(key)
        value = (metrics.get(metric) or {}).get(stat)
        if drift is None or value is None:
            continue
        limit = value + drift if how == "plus" else value * drift
        limit = round(limit, 6) if metric == "cost_usd" else int(-(-limit // 1))
        limits.append({"type": kind, field_name: limit})
    return limits or None


def _scenario(
    scenario: dict[str, Any], index: int, rewrite: Rewrite, baselines: dict[str, Any]
) -> None:
    name = scenario.get("name", f"scenarios[{index}]")
    where = f"scenario '{name}'"
    if "assertions" in scenario and "then" not in scenario:
        scenario["then"] = scenario.pop("assertions")
        rewrite.changes.append(f"{where}: 'assertions' is now 'then'")
    steps = scenario.get("steps")
    if steps is not None and "when" not in scenario:
        step = steps[0] if isinstance(steps, list) and len(steps) == 1 else None
        if isinstance(step, dict) and isinstance(step.get("skill"), str):
            when: dict[str, Any] = {"invoke": f"/{step['skill'].lstrip('/')}"}
            if isinstance(step.get("input"), dict) and step["input"]:
                when["params"] = step["input"]
            scenario["when"] = when
            del scenario["steps"]
            rewrite.changes.append(f"{where}: 'steps' (one skill step) is now 'when.invoke'")
        else:
            rewrite.unsupported.append(
                f"{where}: 'steps' with several steps (run one invocation per scenario)"
            )
    if "regression" in scenario:
        block = scenario.pop("regression")
        limits = regression_limits(block, baselines.get(str(name)))
        if limits is None:
            rewrite.unsupported.append(
                f"{where}: 'regression' (drift limits relative to 0.1's baselines.yaml) needs "
                "that scenario's baseline to become absolute limits; none was found"
            )
        else:
            scenario.setdefault("then", []).extend(limits)
            shown = ", ".join(f"{item['type']}" for item in limits)
            rewrite.changes.append(
                f"{where}: 'regression' → absolute limits from its 0.1 baseline ({shown})"
            )
    for phase in ("given", "then"):
        items = scenario.get(phase)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                _explicit_log(item, f"{where}, {phase}[{i}]", rewrite)


def _agent_target(target: dict[str, Any], rewrite: Rewrite) -> None:
    """0.1 put an agent's id, made from its path, in `trigger` (`examples-ceremonia-brand`, or
    from the absolute path); the agent runs by `agent_id`, its folder name (without one the
    scenarios would run on `default_agent_id`)."""
    folder = str(target.get("path", "")).rstrip("/").split("/")[-1]
    trigger = target.get("trigger")
    if isinstance(trigger, str) and not trigger.startswith("/"):
        del target["trigger"]
        rewrite.changes.append(f"target: removed trigger '{trigger}' (0.1's agent id from a path)")
    if "agent_id" not in target and folder:
        target["agent_id"] = folder
        rewrite.changes.append(f"target: agent_id '{folder}' (the agent's folder name)")


def migrate_contract(data: dict[str, Any], baselines: dict[str, Any] | None = None) -> Rewrite:
    """A 0.1 scenario contract: same format, with the differences made explicit. `baselines`
    is 0.1's `baselines.yaml` `baselines` mapping (scenario name → metrics), if found."""
    rewrite = Rewrite(copy.deepcopy(data))
    target = rewrite.data.get("target")
    if isinstance(target, dict) and target.get("type") == "agent":
        _agent_target(target, rewrite)
    scenarios = rewrite.data.get("scenarios")
    for index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
        if isinstance(scenario, dict):
            _scenario(scenario, index, rewrite, baselines or {})
    return rewrite


def agent_id(legacy: str, agent_folders: dict[str, str]) -> str:
    """0.1 named agents by their path joined with '-' (`agents-marketing-brand`); OpenClaw's id
    is the folder name. `agent_folders` maps dash-joined paths to folder names."""
    return agent_folders.get(legacy, legacy)


def _substitute(data: Any, values: dict[str, str]) -> Any:
    if isinstance(data, str):
        for name, value in values.items():
            data = re.sub(r"\{\{\s*" + re.escape(name) + r"\s*\}\}", value, data)
        return data
    if isinstance(data, list):
        return [_substitute(item, values) for item in data]
    if isinstance(data, dict):
        return {key: _substitute(item, values) for key, item in data.items()}
    return data


def _assertions(items: Any, where: str, rewrite: Rewrite) -> list[dict[str, Any]]:
    out = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict) or item.get("type") not in REGISTRY:
            kind = item.get("type") if isinstance(item, dict) else item
            rewrite.unsupported.append(f"{where}[{i}]: '{kind}' is not an assertion type")
            continue
        copied = dict(item)
        if copied["type"] == "delegation_occurred" and "from_agent" in copied:
            copied.pop("from_agent")
            rewrite.changes.append(
                f"{where}[{i}] (delegation_occurred): dropped from_agent (the invoked agent's run "
                "and its sub-agents are the scope)"
            )
        _explicit_log(copied, f"{where}[{i}]", rewrite)
        out.append(copied)
    return out


def migrate_handoff(
    data: dict[str, Any], invoke: str | None, target: dict[str, Any] | None, agents: dict[str, str]
) -> Rewrite:
    """A 0.1 handoff file → a contract invoking the caller and checking the handoff."""
    handoff = data.get("handoff") or {}
    caller = agent_id(str(handoff.get("from", "")), agents)
    callee = agent_id(str(handoff.get("to", "")), agents)
    rewrite = Rewrite({})
    if not invoke:
        rewrite.unsupported.append(
            "handoff: no invocation (0.1 checked handoffs inside a pipeline run); the skill "
            "folder has no contract or SKILL.md to take a trigger from: pass --invoke TEXT"
        )
    values = {"handoff.from": caller, "handoff.to": callee}
    data = _substitute(data, values)
    then: list[dict[str, Any]] = [{"type": "delegation_occurred", "to_agent": callee}]
    _explicit_log(then[0], "delegation", Rewrite({}))
    produces = (data.get("callee_produces") or {}).get("required_artifacts") or []
    for artifact in produces:
        path = artifact.get("path_pattern") if isinstance(artifact, dict) else None
        if not path:
            continue
        then.append({"type": "artifact_exists", "path": path})
        if artifact.get("required_sections"):
            then.append(
                {
                    "type": "artifact_contains",
                    "path": path,
                    "sections": artifact["required_sections"],
                }
            )
    for action in (data.get("callee_produces") or {}).get("prohibited_actions") or []:
        if isinstance(action, dict) and action.get("tool"):
            then.append({"type": "tool_not_called", "tool": action["tool"]})
            _explicit_log(then[-1], "prohibited action", Rewrite({}))
    checks = data.get("assertions") or {}
    for phase in ("pre_delegation", "post_delegation"):
        for item in _assertions(checks.get(phase), f"assertions.{phase}", rewrite):
            if item not in then:
                then.append(item)
    context = (data.get("caller_provides") or {}).get("required_context") or []
    names = [str(c.get("name")) for c in context if isinstance(c, dict) and c.get("name")]
    description = f"Handoff from '{caller}' to '{callee}' via {handoff.get('mechanism', '?')}."
    if names:
        description += f" The caller provides: {', '.join(names)}."
    rewrite.data = {
        "version": "1.0",
        "target": target or {"type": "agent", "path": f"agents/{caller}", "agent_id": caller},
        "scenarios": [
            {
                "name": f"handoff-{caller}-to-{callee}",
                "description": description,
                "tags": ["handoff"],
                "when": {"invoke": invoke or ""},
                "then": then,
            }
        ],
    }
    rewrite.changes.append(
        f"handoff '{caller}' → '{callee}': now one scenario with {len(then)} assertion(s)"
    )
    return rewrite


def seconds(text: Any) -> float | None:
    """'30m' → 1800.0; '90' or '90s' → 90.0; None when not a duration."""
    match = _DURATION.match(str(text))
    if not match:
        return None
    scale = {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    return float(match.group(1)) * scale


def migrate_pipeline(data: dict[str, Any], agents: dict[str, str]) -> Rewrite:
    """A 0.1 pipeline file → a contract on its skill with one end-to-end scenario."""
    pipeline = data.get("pipeline") or {}
    rewrite = Rewrite({})
    skill_path = str(pipeline.get("skill_path") or "")
    trigger = pipeline.get("trigger")
    if not skill_path or not trigger:
        rewrite.unsupported.append("pipeline: needs 'skill_path' and 'trigger' to invoke")
    then: list[dict[str, Any]] = []
    for stage in data.get("stages") or []:
        if not isinstance(stage, dict):
            continue
        if stage.get("agent"):
            then.append(
                {"type": "delegation_occurred", "to_agent": agent_id(str(stage["agent"]), agents)}
            )
            _explicit_log(then[-1], "stage", Rewrite({}))
        if stage.get("produces"):
            then.append({"type": "artifact_exists", "path": stage["produces"]})
    final = data.get("final_assertions") or {}
    for group in ("deterministic", "semantic"):
        for item in _assertions(final.get(group), f"final_assertions.{group}", rewrite):
            if item not in then:  # a stage's `produces` already checks that artifact
                then.append(item)
    for i, check in enumerate(data.get("pipeline_health") or []):
        what = check.get("check") if isinstance(check, dict) else check
        rewrite.unsupported.append(
            f"pipeline_health[{i}]: expression '{what}' has no equivalent (write it as "
            "assertions, e.g. one artifact_exists per stage)"
        )
    contract: dict[str, Any] = {
        "version": "1.0",
        "target": {"type": "skill", "path": skill_path, "trigger": trigger},
    }
    timeout = seconds(pipeline.get("estimated_duration"))
    if timeout:
        contract["defaults"] = {"timeout": int(timeout) if timeout.is_integer() else timeout}
        rewrite.changes.append(f"estimated_duration '{pipeline['estimated_duration']}' → timeout")
    name = str(pipeline.get("name") or "pipeline")
    contract["scenarios"] = [
        {
            "name": f"{name}-end-to-end",
            "tags": ["pipeline"],
            "when": {"invoke": str(trigger or "")},
            "then": then,
        }
    ]
    rewrite.data = contract
    stages = len(data.get("stages") or [])
    rewrite.changes.append(f"pipeline '{name}': {stages} stage(s) → {len(then)} assertion(s)")
    return rewrite

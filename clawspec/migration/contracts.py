"""Rewrite legacy ClawSpec documents to the current contract format (docs/guide.md "Migrating
from legacy ClawSpec").

Pure functions over parsed YAML data: each returns a `Rewrite` (the new data, and located
notes: changes, warnings, constructs with no equivalent, what the user must supply).

- scenario contracts (found by shape: `scenarios` of `when`/`then` or legacy ClawSpec's
  `steps`/`assertions`/`regression`, with or without `version` and `target`): what differs is
  rewritten or made explicit (log assertions without `log_path` read `{{gateway_log}}` scoped to
  `{{run_id}}`), template variables are translated (`templates.py`), agent ids follow one rule
  (`agents.py`) and a `regression:` block becomes absolute limits (`regression.py`);
- `handoff:` files become a contract on the caller with one scenario checking the delegation,
  the callee's artifacts and its prohibited tools;
- `pipeline:` files become a contract on the pipeline's skill with one end-to-end scenario.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clawspec.assertions import REGISTRY
from clawspec.inputs.source import Loc
from clawspec.migration.agents import AgentIds
from clawspec.migration.regression import migrate_regression
from clawspec.migration.rewrite import Rewrite
from clawspec.migration.templates import translate_templates

LOG_TYPES = ("tool_was_called", "tool_not_called", "delegation_occurred", "tool_not_permitted")
GATEWAY_LOG = "{{gateway_log}}"
RUN_ID = "{{run_id}}"
ORDER = ("version", "target", "defaults", "scenarios")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


def _explicit_log(item: dict[str, Any], loc: Loc, where: str, rewrite: Rewrite | None) -> None:
    """Legacy ClawSpec's log assertions without `log_path` errored; ours read the active gateway
    log."""
    kind = item.get("type")
    if kind not in LOG_TYPES:
        return
    if "log_path" not in item:
        item["log_path"] = GATEWAY_LOG
        if rewrite:
            rewrite.change(loc, f'{where} ({kind}): added log_path: "{GATEWAY_LOG}"')
    if item.get("run_id") is None:
        item["run_id"] = RUN_ID
        if rewrite:
            rewrite.change(loc, f'{where} ({kind}): run_id: "{RUN_ID}" (this run)')


def _scenario(
    scenario: dict[str, Any],
    index: int,
    rewrite: Rewrite,
    baselines: dict[str, Any],
    agents: AgentIds,
) -> str | None:
    """Rewrite one scenario in place; return the skill of its one legacy step, if any."""
    name = scenario.get("name", f"scenarios[{index}]")
    where, loc = f"scenario '{name}'", ("scenarios", index)
    source = {"given": "given", "then": "then"}
    if "assertions" in scenario and "then" not in scenario:
        scenario["then"] = scenario.pop("assertions")
        source["then"] = "assertions"
        rewrite.change((*loc, "assertions"), f"{where}: 'assertions' is now 'then'")
    skill = None
    steps = scenario.get("steps")
    if steps is not None and "when" not in scenario:
        step = steps[0] if isinstance(steps, list) and len(steps) == 1 else None
        if isinstance(step, dict) and isinstance(step.get("skill"), str):
            skill = step["skill"].strip().lstrip("/")
            when: dict[str, Any] = {"invoke": f"/{skill}"}
            if isinstance(step.get("input"), dict) and step["input"]:
                when["params"] = step["input"]
            scenario["when"] = when
            del scenario["steps"]
            rewrite.change(
                (*loc, "steps"), f"{where}: 'steps' (one skill step) is now 'when.invoke'"
            )
        else:
            rewrite.refuse(
                (*loc, "steps"),
                f"{where}: 'steps' other than one `skill:` step (run one invocation per scenario)",
            )
    if "regression" in scenario:
        block = scenario.pop("regression")
        limits = migrate_regression(
            block, baselines.get(str(name)), (*loc, "regression"), where, rewrite
        )
        scenario.setdefault("then", []).extend(limits)
    if isinstance(scenario.get("agent_id"), str):
        scenario["agent_id"] = agents.map(scenario["agent_id"], (*loc, "agent_id"), rewrite)
    for phase in ("given", "then"):
        items = scenario.get(phase)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                item_loc = (*loc, source[phase], i)
                _explicit_log(item, item_loc, f"{where}, {phase}[{i}]", rewrite)
                agents.map_assertion(item, item_loc, rewrite)
    keys = ("name", "description", "tags", "given", "when", "then")
    ordered = {k: scenario[k] for k in keys if k in scenario}
    ordered.update({k: v for k, v in scenario.items() if k not in ordered})
    scenario.clear()
    scenario.update(ordered)
    return skill


def _agent_target(target: dict[str, Any], rewrite: Rewrite) -> None:
    """Legacy ClawSpec put an agent's id, made from its path, in `trigger`
    (`examples-ceremonia-brand`, or from the absolute path); the agent runs by `agent_id`, its
    folder name (the one rule of `agents.py`; without it the scenarios would run on
    `default_agent_id`)."""
    folder = str(target.get("path", "")).rstrip("/").split("/")[-1]
    trigger = target.get("trigger")
    if isinstance(trigger, str) and not trigger.startswith("/"):
        del target["trigger"]
        rewrite.change(
            ("target", "trigger"),
            f"target: removed trigger '{trigger}' (legacy ClawSpec's agent id)",
        )
    if "agent_id" not in target and folder:
        target["agent_id"] = folder
        rewrite.change(("target",), f"target: agent_id '{folder}' (the agent's folder name)")


def migrate_contract(
    data: dict[str, Any],
    baselines: dict[str, Any] | None = None,
    agents: AgentIds | None = None,
    found_target: tuple[dict[str, Any], str] | None = None,
) -> Rewrite:
    """A legacy scenario contract. `baselines` is legacy ClawSpec's `baselines.yaml` `baselines`
    mapping (scenario name → metrics); `found_target` the target the file's folder implies, and
    why."""
    agents = agents or AgentIds()
    rewrite = Rewrite({})
    data = translate_templates(copy.deepcopy(data), rewrite)
    if "version" not in data:
        data["version"] = "1.0"
        rewrite.change((), "added version: \"1.0\" (a legacy file without 'version')")
    skills = set()
    scenarios = data.get("scenarios")
    for index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
        if isinstance(scenario, dict):
            skills.add(_scenario(scenario, index, rewrite, baselines or {}, agents))
    if "target" not in data:
        _add_target(data, skills, found_target, rewrite)
    target = data.get("target")
    if isinstance(target, dict) and isinstance(target.get("agent_id"), str):
        target["agent_id"] = agents.map(target["agent_id"], ("target", "agent_id"), rewrite)
    if isinstance(target, dict) and target.get("type") == "agent":
        _agent_target(target, rewrite)
    rewrite.data = {k: data[k] for k in ORDER if k in data}
    rewrite.data.update({k: v for k, v in data.items() if k not in rewrite.data})
    return rewrite


def _add_target(
    data: dict[str, Any],
    skills: set[str | None],
    found: tuple[dict[str, Any], str] | None,
    rewrite: Rewrite,
) -> None:
    (skill,) = skills if len(skills) == 1 else (None,)
    if found is None and skill:
        found = (
            {"type": "skill", "path": f"skills/{skill}", "trigger": f"/{skill}"},
            f"every scenario's step runs skill '{skill}'",
        )
    if found is None:
        rewrite.needs(
            (),
            "no 'target', and none follows from the file's folder (skills/<name>/tests/, an "
            "agent's tests/) or its steps: add `target: {type: skill|agent, path: …, trigger: …}`",
        )
        return
    data["target"] = found[0]
    rewrite.change((), f"added target {found[0]['type']} '{found[0]['path']}' ({found[1]})")


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


def _assertions(items: Any, loc: Loc, rewrite: Rewrite, agents: AgentIds) -> list[dict[str, Any]]:
    out = []
    where = ".".join(map(str, loc))
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict) or item.get("type") not in REGISTRY:
            kind = item.get("type") if isinstance(item, dict) else item
            rewrite.refuse((*loc, i), f"{where}[{i}]: '{kind}' is not an assertion type")
            continue
        copied = dict(item)
        if copied["type"] == "delegation_occurred" and "from_agent" in copied:
            copied.pop("from_agent")
            rewrite.change(
                (*loc, i, "from_agent"),
                f"{where}[{i}] (delegation_occurred): dropped from_agent (the invoked agent's "
                "run and its sub-agents are the scope)",
            )
        _explicit_log(copied, (*loc, i), f"{where}[{i}]", rewrite)
        agents.map_assertion(copied, (*loc, i), rewrite)
        out.append(copied)
    return out


def migrate_handoff(
    data: dict[str, Any], invoke: str | None, target: dict[str, Any] | None, agents: AgentIds
) -> Rewrite:
    """A legacy handoff file → a contract invoking the caller and checking the handoff."""
    rewrite = Rewrite({})
    handoff = data.get("handoff") or {}
    legacy_from, legacy_to = str(handoff.get("from", "")), str(handoff.get("to", ""))
    caller = agents.map(legacy_from, ("handoff", "from"), rewrite)
    callee = agents.map(legacy_to, ("handoff", "to"), rewrite)
    if not invoke:
        rewrite.needs(
            ("handoff",),
            "handoff: no invocation (legacy ClawSpec checked handoffs inside a pipeline run); no "
            "skill folder above this file has a contract or SKILL.md to take a trigger from: "
            "pass --invoke TEXT",
        )
    if target is None:
        folder = agents.folder(legacy_from)
        if folder is None:
            rewrite.needs(
                ("handoff", "from"),
                f"handoff.from '{legacy_from}': no skill folder holds this file and no agent "
                "folder (a SOUL.md) matches the id, so the target is unknown: move the file "
                "under the calling skill's tests/ folder or create the agent folder",
            )
        target = {"type": "agent", "path": folder or "", "agent_id": caller}
    data = _substitute(data, {"handoff.from": caller, "handoff.to": callee})
    data = translate_templates(data, rewrite)
    then: list[dict[str, Any]] = [{"type": "delegation_occurred", "to_agent": callee}]
    _explicit_log(then[0], ("handoff", "to"), "delegation", None)
    produces = (data.get("callee_produces") or {}).get("required_artifacts") or []
    for artifact in produces:
        path = artifact.get("path_pattern") if isinstance(artifact, dict) else None
        if not path:
            continue
        then.append({"type": "artifact_exists", "path": path})
        if artifact.get("required_sections"):
            sections = artifact["required_sections"]
            then.append({"type": "artifact_contains", "path": path, "sections": sections})
    for action in (data.get("callee_produces") or {}).get("prohibited_actions") or []:
        if isinstance(action, dict) and action.get("tool"):
            then.append({"type": "tool_not_called", "tool": action["tool"]})
            _explicit_log(then[-1], ("callee_produces",), "prohibited action", None)
    checks = data.get("assertions") or {}
    for phase in ("pre_delegation", "post_delegation"):
        for item in _assertions(checks.get(phase), ("assertions", phase), rewrite, agents):
            if item not in then:
                then.append(item)
    context = (data.get("caller_provides") or {}).get("required_context") or []
    names = [str(c.get("name")) for c in context if isinstance(c, dict) and c.get("name")]
    description = f"Handoff from '{caller}' to '{callee}' via {handoff.get('mechanism', '?')}."
    if names:
        description += f" The caller provides: {', '.join(names)}."
    rewrite.data = {
        "version": "1.0",
        "target": target,
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
    rewrite.change(
        ("handoff",),
        f"handoff '{caller}' → '{callee}': now one scenario with {len(then)} assertion(s)",
    )
    return rewrite


def seconds(text: Any) -> float | None:
    """'30m' → 1800.0; '90' or '90s' → 90.0; None when not a duration."""
    match = _DURATION.match(str(text))
    if not match:
        return None
    scale = {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    return float(match.group(1)) * scale


# Legacy ClawSpec's one documented health expression: every stage that `produces` an artifact
# produced it.
# Its equivalent is the `artifact_exists` each such stage already becomes.
_ALL_PRODUCED = re.compile(
    r"^\s*count\(\s*produced_artifacts\s*\)\s*==\s*count\(\s*stages_with_produces\s*\)\s*$"
)


@dataclass(frozen=True)
class HandoffFile:
    """A stage's `handoff_contract` as found beside the pipeline: its legacy data, or why not."""

    shown: str  # the path as the user wrote or as found
    data: dict[str, Any] | None = None
    why_not: str = ""


HandoffResolver = Callable[[str], HandoffFile]


def migrate_pipeline(
    data: dict[str, Any], agents: AgentIds, handoffs: HandoffResolver | None = None
) -> Rewrite:
    """A legacy pipeline file → a contract on its skill with one end-to-end scenario. A stage's
    `handoff_contract` (a legacy handoff file, checked inside the pipeline run) adds that
    handoff's checks to the scenario; `handoffs` finds the file."""
    rewrite = Rewrite({})
    data = translate_templates(data, rewrite)
    pipeline = data.get("pipeline") or {}
    skill_path = str(pipeline.get("skill_path") or "")
    trigger = pipeline.get("trigger")
    if not skill_path or not trigger:
        rewrite.needs(("pipeline",), "pipeline: needs 'skill_path' and 'trigger' to invoke")
    then: list[dict[str, Any]] = []
    producing = 0
    for i, stage in enumerate(data.get("stages") or []):
        if not isinstance(stage, dict):
            continue
        if stage.get("agent"):
            agent = agents.map(str(stage["agent"]), ("stages", i, "agent"), rewrite)
            then.append({"type": "delegation_occurred", "to_agent": agent})
            _explicit_log(then[-1], ("stages", i), "stage", None)
        if stage.get("produces"):
            then.append({"type": "artifact_exists", "path": stage["produces"]})
            producing += 1
        if stage.get("handoff_contract"):
            _stage_handoff(stage, i, then, handoffs, agents, rewrite)
    final = data.get("final_assertions") or {}
    for group in ("deterministic", "semantic"):
        for item in _assertions(final.get(group), ("final_assertions", group), rewrite, agents):
            if item not in then:  # a stage's `produces` already checks that artifact
                then.append(item)
    for i, check in enumerate(data.get("pipeline_health") or []):
        what = check.get("check") if isinstance(check, dict) else check
        if isinstance(what, str) and _ALL_PRODUCED.match(what):
            rewrite.change(
                ("pipeline_health", i),
                f"pipeline_health[{i}]: '{what.strip()}' is the artifact_exists of each of the "
                f"{producing} stage(s) with 'produces' (already in the scenario)",
            )
            continue
        rewrite.refuse(
            ("pipeline_health", i),
            f"pipeline_health[{i}]: expression '{what}' has no equivalent (write it as "
            "assertions, e.g. one artifact_exists per stage)",
        )
    contract: dict[str, Any] = {
        "version": "1.0",
        "target": {"type": "skill", "path": skill_path, "trigger": trigger},
    }
    timeout = seconds(pipeline.get("estimated_duration"))
    if timeout:
        contract["defaults"] = {"timeout": int(timeout) if timeout.is_integer() else timeout}
        rewrite.change(
            ("pipeline", "estimated_duration"),
            f"estimated_duration '{pipeline['estimated_duration']}' → timeout",
        )
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
    rewrite.change(
        ("pipeline",), f"pipeline '{name}': {stages} stage(s) → {len(then)} assertion(s)"
    )
    return rewrite


def _stage_handoff(
    stage: dict[str, Any],
    index: int,
    then: list[dict[str, Any]],
    handoffs: HandoffResolver | None,
    agents: AgentIds,
    rewrite: Rewrite,
) -> None:
    """Add the checks of a stage's legacy handoff file to the pipeline scenario, or say why not."""
    loc = ("stages", index, "handoff_contract")
    name = stage.get("name", f"stages[{index}]")
    reference = str(stage["handoff_contract"])
    found = handoffs(reference) if handoffs else HandoffFile(reference, why_not="not looked up")
    if found.data is None:
        rewrite.warn(
            loc,
            f"stage '{name}': handoff_contract '{reference}' not migrated: {found.why_not}",
        )
        return
    own = migrate_handoff(copy.deepcopy(found.data), "-", {"type": "skill"}, agents)
    problems = [n.text for n in own.unsupported + own.manual]
    if problems:
        rewrite.warn(
            loc,
            f"stage '{name}': handoff_contract '{found.shown}' not migrated: {problems[0]} "
            "(migrate that file on its own)",
        )
        return
    added = [item for item in own.data["scenarios"][0]["then"] if item not in then]
    then.extend(added)
    rewrite.change(
        loc,
        f"stage '{name}': handoff_contract '{found.shown}' → its {len(added)} check(s) added to "
        "this scenario (legacy ClawSpec checked the handoff inside the pipeline run)",
    )

"""`clawspec run --dry-run`: load, render and print the plan; invoke nothing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from clawspec.contracts import templates
from clawspec.gateway.timezone import gateway_timezone
from clawspec.runner.run import attempts_of
from clawspec.runner.scenario import (
    RunEnv,
    ScenarioPlan,
    invoke_request,
    new_run_id,
    template_values,
)
from clawspec.text import one_line

if TYPE_CHECKING:
    from clawspec.assertions.base import Assertion
    from clawspec.config.settings import Settings
    from clawspec.contracts.loaded import Loaded


def print_plan(loaded: Loaded, plans: list[ScenarioPlan]) -> None:
    """Print every selected scenario as it would run, templates rendered."""
    settings = loaded.settings
    env = RunEnv(
        settings,
        loaded.workspace,
        client=None,
        http=None,  # type: ignore[arg-type]
        environ=dict(os.environ),
        tz=gateway_timezone(settings),
    )
    bring_up = settings.gateway.mode == "bring_up"
    if bring_up:
        # Bring-up starts its gateway on a free port (unless gateway.port fixes one) with a
        # log in its private state folder: neither is known before the run.
        port = settings.gateway.port
        where = f"127.0.0.1:{port}" if port else "a free 127.0.0.1 port"
        gateway = f"brought up for the run on {where}, its log in its private state folder"
        env.gateway_log = Path("<the brought-up gateway's log>")
    else:
        gateway = f"{settings.gateway_base_url} (target)"
    print(f"plan: {len(plans)} scenario(s); gateway {gateway}; workspace {loaded.workspace}")
    for line in variant_lines(settings, plans):
        print(line)
    for plan in plans:
        run_id = new_run_id()
        values = template_values(plan, env, run_id, datetime.now(env.tz))
        contract = plan.contract.contract
        agent = plan.agent_id(settings.default_agent_id)
        timeout = plan.scenario.timeout or contract.defaults.timeout
        attempts = attempts_of(plan, settings.repeat)
        repeat = f", {attempts} attempts (a fresh run id each)" if attempts > 1 else ""
        print(
            f"\n{plan.identity.label}  (line {plan.contract.scenario_line(plan.index)}, "
            f"agent '{agent}', timeout {timeout:g} s, run id {run_id}{repeat})"
        )
        for phase in ("given", "then"):
            if phase == "then" and plan.scenario.turns is None:
                request = invoke_request(plan, env, values, None)
                print(f"  when  {request.trigger_mode}: {one_line(request.message, 200)}")
            elif phase == "then":
                _print_turns(plan, values, env)
            for index, assertion in enumerate(getattr(plan.scenario, phase)):
                print(f"  {phase}[{index}] {assertion.type}: {_rendered(assertion, values, env)}")


def _print_turns(plan: ScenarioPlan, values: dict[str, str], env: RunEnv) -> None:
    """A conversation's turns as they would be sent (chat endpoint, one session)."""
    for number, turn in enumerate(plan.scenario.turns or (), start=1):
        try:
            say = templates.render(turn.say, values, env.environ)
        except templates.TemplateError as exc:
            say = f"(cannot render: {exc})"
        print(f"  turn {number}  chat: {one_line(say, 200)}")
        for index, assertion in enumerate(turn.then):
            shown = _rendered(assertion, values, env)
            print(f"    then[{index}] {assertion.type}: {shown}")


def _rendered(assertion: Assertion, values: dict[str, str], env: RunEnv) -> str:
    """The assertion's given fields as the run would use them (what a run would say if a
    rendered value breaks a rule)."""
    try:
        rendered = templates.render_model(assertion, values, env.environ)
    except ValidationError as exc:
        return f"after rendering templates: {one_line(str(exc), 200)}"
    given = rendered.model_dump(exclude_unset=True)
    parts = [f"{key}={value!r}" for key, value in given.items() if key != "type"]
    return one_line(", ".join(parts), 200) or "(no fields)"


def variant_lines(settings: Settings, plans: Sequence[ScenarioPlan]) -> list[str]:
    """One line per selected variant: its model (else the agent's own), its agent, and which
    variant is the reference the others are compared with."""
    selected = list(dict.fromkeys(p.variant.name for p in plans if p.variant is not None))
    if not selected:
        return []
    reference = settings.reference_variant
    lines = []
    for variant in settings.variants:
        if variant.name not in selected:
            continue
        role = "reference" if reference is not None and variant.name == reference.name else ""
        if not variant.required:
            role = "advisory" if not role else f"{role}, advisory"
        parts = [f"model {variant.model}" if variant.model else "the agent's own model"]
        if variant.thinking:
            parts.append(f"thinking {variant.thinking}")
        if variant.agent_id:
            parts.append(f"agent '{variant.agent_id}'")
        if variant.openclaw_version:
            parts.append(f"OpenClaw {variant.openclaw_version}")
        if variant.gateway_base_url:
            parts.append(f"gateway {variant.gateway_base_url}")
        label = f"{variant.name} ({role})" if role else variant.name
        lines.append(f"variant {label}: {', '.join(parts)}")
    if reference is not None and reference.name not in selected:
        lines.append(
            f"note: the reference variant {reference.name} is not selected: nothing is compared"
        )
    return lines

"""`clawspec run --dry-run`: load, render and print the plan; invoke nothing."""

from __future__ import annotations

import os
from datetime import datetime
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
    print(
        f"plan: {len(plans)} scenario(s); gateway {settings.gateway_base_url} "
        f"({settings.gateway.mode}); workspace {loaded.workspace}"
    )
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
            if phase == "then":
                request = invoke_request(plan, env, values, None)
                print(f"  when  {request.trigger_mode}: {one_line(request.message, 200)}")
            for index, assertion in enumerate(getattr(plan.scenario, phase)):
                print(f"  {phase}[{index}] {assertion.type}: {_rendered(assertion, values, env)}")


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

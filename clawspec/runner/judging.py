"""Judging one assertion of a scenario run, and what a run's judging shares: the message a
run sends, where the log stood when it started, the evidence kept for the report. One module
below both a scenario (`runner.scenario`) and a conversation's turns (`runner.conversation`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from clawspec.assertions.base import EvalContext, RunInfo, Verdict
from clawspec.contracts import templates
from clawspec.evidence.store import Evidence
from clawspec.inputs.paths import ContractPathError
from clawspec.text import one_line

if TYPE_CHECKING:
    import requests

    from clawspec.evidence.store import RunBackend
    from clawspec.reports.model import AssertionResult, ScenarioEvidence
    from clawspec.runner.scenario import RunEnv, ScenarioPlan

log = logging.getLogger("clawspec.runner")


def hook_message(invoke: str, params: Mapping[str, Any]) -> str:
    """The hook `message`: the rendered invoke, plus a `Parameters: {json}` line."""
    if not params:
        return invoke
    compact = json.dumps(params, separators=(",", ":"), ensure_ascii=False, default=str)
    return f"{invoke}\n\nParameters: {compact}"


def evaluate_assertion(
    plan: ScenarioPlan,
    phase: str,
    index: int,
    ctx: EvalContext,
    values: Mapping[str, str],
    env: RunEnv,
    turn: int | None = None,
) -> AssertionResult:
    """Render and evaluate one assertion (`turn`: of that turn's `then`); any exception becomes
    `error` for it alone (a bug: its traceback goes to the crash log, which the verdict
    names)."""
    from clawspec.reports.model import AssertionResult

    holder = plan.scenario if turn is None else (plan.scenario.turns or [])[turn]
    written = getattr(holder, phase)[index]
    type_name = written.type
    try:
        verdict = templates.render_model(written, values, env.environ).evaluate(ctx)
    except (ContractPathError, templates.TemplateError) as exc:
        verdict = Verdict.errored(str(exc))
    except ValidationError as exc:
        verdict = Verdict.errored(f"after rendering templates: {one_line(str(exc), 200)}")
    except Exception as exc:  # an evaluator bug must not discard the other assertions
        log.debug("assertion %s[%d] of %s raised", phase, index, plan.id, exc_info=True)
        where = f"turn {turn + 1}, " if turn is not None else ""
        verdict = Verdict.errored(
            bug_message(exc, f"{where}{phase}[{index}] ({type_name})", plan, env)
        )
    return AssertionResult(
        phase=phase,  # type: ignore[arg-type]
        index=index,
        turn=turn,
        type=type_name,
        line=plan.contract.assertion_line(plan.index, phase, index, turn),
        status=verdict.status,
        message=one_line(verdict.message, 500),
        value=jsonable(verdict.value),
        limit=jsonable(verdict.limit),
        details=[one_line(line, 300) for line in verdict.details[:50]],
        usage=verdict.usage,
    )


def bug_message(exc: Exception, where: str, plan: ScenarioPlan, env: RunEnv) -> str:
    """The verdict of an assertion that raised: the error, and the crash log that holds its
    traceback (the error is ClawSpec's, not the agent's: the user can report it)."""
    text = f"{type(exc).__name__}: {one_line(str(exc), 200)}"
    crash_log = env.bugs.add(f"{where} of {plan.identity.label}", exc) if env.bugs else None
    if crash_log is None:
        return text
    return (
        f"{text} (an internal error in ClawSpec; crash log: {crash_log}, please attach it to "
        "a bug report)"
    )


def report_evidence(
    evidence: Evidence, run: RunInfo, env: RunEnv, scenario_id: str
) -> ScenarioEvidence | None:
    """What the run did, for the reports; a problem here must never cost the verdicts."""
    from clawspec.reports.evidence import scenario_evidence

    try:
        return scenario_evidence(
            evidence, run, env.halt, env.settings.model_pricing, settings=env.settings
        )
    except Exception:
        log.debug("evidence of %s not collected", scenario_id, exc_info=True)
        return None


def evidence_from_now(
    http: requests.Session,
    log_path: Path | None,
    plugin: Path | None,
    trace_backend: RunBackend | None,
    later_logs: Callable[[], list[Path]] | None = None,
) -> Evidence:
    """The evidence of a run starting now: the gateway log and the plugin's output from where
    they end at this moment (the inode tells whether the log was rotated during the run);
    `later_logs`: the log's files of the days after (a dated log moves on at midnight)."""
    log_size, log_inode = log_stat(log_path)
    return Evidence(
        http,
        log_path,
        log_size,
        plugin,
        log_stat(plugin)[0],
        log_inode=log_inode,
        trace_backend=trace_backend,
        later_logs=later_logs,
    )


def log_stat(path: Path | None) -> tuple[int, int | None]:
    """(size, inode) of a log at the run's start: where its lines begin, and its identity."""
    try:
        info = path.stat() if path else None
    except OSError:
        info = None
    return (info.st_size, info.st_ino) if info else (0, None)


def jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)

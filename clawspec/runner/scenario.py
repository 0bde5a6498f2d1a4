"""One scenario: render → given → invoke → then, each assertion isolated."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.bless.digest import scenario_digest
from clawspec.config.settings import Settings, VariantSettings
from clawspec.contracts import templates
from clawspec.contracts.loader import LoadedContract
from clawspec.contracts.models import Scenario
from clawspec.contracts.outlines import ExampleRow
from clawspec.crash import Noted
from clawspec.evidence.store import Evidence, RunBackend
from clawspec.gateway.client import GatewayClient, InvocationError, InvokeRequest, RefusalCheck
from clawspec.identity import ScenarioIdentity
from clawspec.runner.halt import Halt
from clawspec.runner.judging import (
    evaluate_assertion,
    evidence_from_now,
    hook_message,
    report_evidence,
)
from clawspec.runner.outages import Outages, keys_of
from clawspec.runner.traffic import (
    model_traffic,
    replay_missed,
    traffic_problem,
    traffic_result,
)
from clawspec.text import one_line

if TYPE_CHECKING:
    import requests

    from clawspec.reports.model import (
        AssertionResult,
        AttemptEvidence,
        ScenarioEvidence,
        ScenarioResult,
        TraceRef,
        TurnResult,
    )
    from clawspec.runner.conversation import Conversation
    from clawspec.traffic.session import ScenarioTraffic, TrafficSession

log = logging.getLogger("clawspec.runner")


@dataclass(frozen=True)
class ScenarioPlan:
    """A selected scenario and where it came from: entry `index` of the contract's scenarios
    (an outline's row is an entry of its own, with its `example`), and the `variant` it runs on
    (None without variants)."""

    contract: LoadedContract
    index: int
    scenario: Scenario
    variant: VariantSettings | None = None

    @property
    def example(self) -> ExampleRow | None:
        return self.contract.example(self.index)

    @property
    def identity(self) -> ScenarioIdentity:
        row = self.example
        example = row.id if row is not None else None
        variant = self.variant.name if self.variant is not None else None
        return ScenarioIdentity(self.contract.identity_path, self.scenario.name, example, variant)

    @property
    def id(self) -> str:
        return self.identity.id

    def agent_id(self, default: str) -> str:
        """The agent that runs it: the variant's (a variant's agent is what it compares), else
        the scenario's, else the target's, else `default`."""
        if self.variant is not None and self.variant.agent_id:
            return self.variant.agent_id
        return self.scenario.agent_id or self.contract.contract.target.agent_id or default


@dataclass
class RunEnv:
    """What every scenario of a run shares."""

    settings: Settings
    workspace: Path
    client: GatewayClient
    http: requests.Session
    environ: Mapping[str, str]
    tz: tzinfo
    # The first interrupt (`stop`) only keeps new scenarios from starting: the running ones
    # finish and are judged whole. `halt` is set when they are abandoned (a second signal, the
    # grace period's end): then what a scenario waits for or reads (log lines, traces, the
    # judge) stops at once.
    stop: threading.Event = field(default_factory=threading.Event)
    halt: Halt = field(default_factory=Halt)
    # Where an assertion's internal bug is recorded (its crash log); None: only logged.
    bugs: Noted | None = None
    gateway_log: Path | None = None  # fixed in bring-up mode; else from gateway_log_pattern
    # The trace backend, set up once per run when a scenario needs traces (None: each
    # scenario's evidence makes one from the settings when first asked).
    trace_backend: RunBackend | None = None
    # The model traffic proxy of a hermetic run (model_traffic record/replay), else None.
    traffic: TrafficSession | None = None
    # The OpenClaw release of this environment's gateway when known (RunGateway), which its
    # recordings store and a replay miss compares with theirs.
    openclaw_version: str | None = None
    # The environment of each variant that runs on a gateway of its own (its settings, client
    # and log), by variant name; the other plans run on this one (runner/gateways.py).
    by_variant: dict[str, RunEnv] = field(default_factory=dict)
    # Where the gateway's log is kept after the run (named in messages: the live one goes).
    kept_log: Path | None = None
    # A brought-up gateway: how it ended, once its process has ("exited with code 1", "was
    # killed by signal 9"), else None. A request it cannot answer then says why.
    gateway_ended: Callable[[], str | None] | None = None
    # Providers found unreachable: one object for the whole run, the variants' envs included.
    outages: Outages = field(default_factory=Outages)
    # Which attempt of a repeated scenario runs in this environment (0-based): in record mode
    # each attempt keeps a recording of its own, replayed by the same attempt.
    attempt: int = 0
    # Told of a conversation's state as it starts (the runner's, per conversation): what an
    # interrupt that abandons it reports of the turns that finished.
    on_started: Callable[[StartedScenario], None] | None = None

    def for_plan(self, plan: ScenarioPlan) -> RunEnv:
        """The environment `plan` runs in: its variant's gateway, else this one."""
        if plan.variant is None:
            return self
        return self.by_variant.get(plan.variant.name, self)

    def plugin_output_path(self) -> Path | None:
        raw = self.settings.plugin_output
        if not raw:
            return None
        path = Path(raw)
        return path if path.is_absolute() else self.workspace / path

    def later_logs(self, first: date, start: Path | None) -> Callable[[], list[Path]] | None:
        """The active log's files of the days after `first` (whose file is `start`) that exist
        now, oldest first: a run going on past midnight in the gateway's zone writes to the next
        day's file (OpenClaw's dated log). None: the log is one file whatever the day
        (bring-up's). Asked at every poll of the log: on the run's own day, nothing is looked at."""
        if self.gateway_log is not None:
            return None
        from clawspec.gateway.logs.location import later_days

        def files() -> list[Path]:
            found: list[Path] = []
            for day in later_days(first, datetime.now(self.tz).date()):
                path = self.log_path_for(day)
                if path is not None and path != start and path not in found and path.is_file():
                    found.append(path)
            return found

        return files

    def log_path_for(self, today: str) -> Path | None:
        if self.gateway_log is not None:
            return self.gateway_log
        from clawspec.gateway.logs.location import gateway_log_path

        settings = self.settings
        return gateway_log_path(
            settings.gateway_log_pattern,
            settings.gateway_profile,
            today,
            self.workspace,
            self.environ,
        )


@dataclass(frozen=True)
class ScenarioOutcome:
    result: ScenarioResult
    invoked: bool  # an invocation was attempted
    unreachable: bool  # ... and the gateway could not be reached at all
    # A repeated scenario's attempt: its own evidence, kept per attempt in the report (bless).
    observed: AttemptEvidence | None = None
    # An interrupt kept part of it from running (a conversation's later turns): the run is
    # then incomplete, although the scenario finished.
    interrupted: bool = False


def new_run_id() -> str:
    """A ClawSpec run id: short enough to read, unique enough to correlate."""
    return uuid.uuid4().hex[:16]


def template_values(plan: ScenarioPlan, env: RunEnv, run_id: str, started: datetime) -> dict:
    # The gateway names its log by the real date; {{today}} may be fixed (config `today`) so that
    # a recorded model answer that wrote `{{today}}.md` still matches in replay.
    log_path = env.log_path_for(started.date().isoformat())
    return {
        "today": env.settings.today or started.date().isoformat(),
        "run_id": run_id,
        "run_started_at": started.isoformat(timespec="microseconds"),
        "scenario": plan.identity.name,  # a row's `name[row id]`: rows do not collide
        "target": plan.contract.contract.target.path,
        "workspace": str(env.workspace),
        "gateway_log": str(log_path) if log_path else "",
    }


def invoke_request(
    plan: ScenarioPlan, env: RunEnv, values: Mapping[str, str], session_key: str | None
) -> InvokeRequest:
    """Everything a gateway client needs to start this scenario's run."""
    contract, scenario = plan.contract.contract, plan.scenario
    when = templates.render_model(scenario.when, values, env.environ)
    invoke, params = when.invoke, dict(when.params)
    if contract.defaults.test_mode:
        params.setdefault("test_mode", True)  # travels in the Parameters line
    variant = plan.variant
    return InvokeRequest(
        message=hook_message(invoke, params),
        name=scenario.name,
        agent_id=plan.agent_id(env.settings.default_agent_id),
        session_key=session_key,
        timeout_s=scenario.timeout or contract.defaults.timeout,
        invoke=invoke,
        params=params,
        trigger=contract.target.trigger,
        target_type=contract.target.type,
        target_path=contract.target.path,
        trigger_mode=contract.target.trigger_mode or env.settings.trigger_mode,
        model=variant.model if variant is not None else None,
        thinking=variant.thinking if variant is not None else None,
    )


@dataclass
class StartedScenario:
    """A scenario whose agent run has answered (or that never got to run): its checks are next.

    The runner's run lanes (runner/lanes.py) start scenarios on one set of threads and check
    them on another; this is what travels between the two.
    """

    plan: ScenarioPlan
    env: RunEnv
    ctx: EvalContext
    values: dict[str, Any]
    run_id: str
    started_clock: float
    results: list[AssertionResult]
    message: str = ""
    restates: AssertionResult | None = None  # the failed check `message` was made from
    invoked: bool = False  # an invocation was attempted
    unreachable: bool = False
    skipped: bool = False  # not started: its model provider was found unreachable
    traffic: ScenarioTraffic | None = None
    # Open while the checks run: model calls made then still count for this scenario.
    scope: ExitStack = field(default_factory=ExitStack)
    conversation: Conversation | None = None  # a scenario with `turns`: what they left


def start_scenario(plan: ScenarioPlan, env: RunEnv) -> StartedScenario:
    """Render, check the `given` preconditions and invoke the agent; return once it answered."""
    started_clock = time.monotonic()
    run_id = new_run_id()
    started = datetime.now(env.tz)
    values = template_values(plan, env, run_id, started)
    log_path = env.log_path_for(started.date().isoformat())
    plugin = env.plugin_output_path()
    evidence = evidence_from_now(
        env.http, log_path, plugin, env.trace_backend, env.later_logs(started.date(), log_path)
    )
    run = RunInfo(plan.scenario.name, run_id, started, session_key=f"hook:clawspec:{run_id}")
    ctx = EvalContext(
        env.workspace,
        env.settings,
        run,
        evidence,
        poll_interval_s=plan.contract.contract.defaults.poll_interval,
        # Its own: set when the run halts, or at a replay miss in any of its runs.
        stop=env.halt.scenario_stop(),
        timeout_s=plan.scenario.timeout or plan.contract.contract.defaults.timeout,
        started_clock=started_clock,
    )
    state = StartedScenario(plan, env, ctx, values, run_id, started_clock, [])
    if env.on_started is not None:
        env.on_started(state)
    for index in range(len(plan.scenario.given)):
        result = evaluate_assertion(plan, "given", index, ctx, values, env)
        state.results.append(result)
        if result.status in (Status.FAIL, Status.ERROR):
            state.message = f"precondition given[{index}] ({result.type}) failed: {result.message}"
            state.restates = result
            return state
    if plan.scenario.turns is not None:
        return _start_conversation(state)
    request = invoke_request(plan, env, values, run.session_key)
    down = env.outages.reason(
        env.settings.gateway_base_url, keys_of(request.model, request.agent_id)
    )
    if down is not None:
        state.message, state.skipped = down, True
        return state
    state.invoked = True
    request = replace(request, refused_for_good=_refusal_watch(ctx))
    with ExitStack() as scope:
        state.traffic = scope.enter_context(
            model_traffic(plan, env, request.message, request.timeout_s, ctx.stop)
        )
        try:
            outcome = env.client.invoke(request)
        except InvocationError as exc:
            state.unreachable = exc.unreachable
            ctx.run = _with(run, gateway_run_id=exc.gateway_run_id)
            ended = env.gateway_ended() if exc.unreachable and env.gateway_ended else None
            if ended:  # not "unreachable": ClawSpec started it, and knows it is gone
                where = f"; its log: {env.kept_log}" if env.kept_log else ""
                cause = f" (the gateway ClawSpec started {ended} during the run{where})"
            else:
                cause = _failure_cause(exc, ctx, request, env, plan.id)
            state.message = f"invocation failed: {exc}{cause}"
        else:
            ctx.run = _with(
                run,
                gateway_run_id=outcome.gateway_run_id,
                session_key=outcome.session_key,
                completed_at=datetime.now(env.tz),
            )
        state.scope = scope.pop_all()  # closed by check_scenario, on whichever thread
    return state


def _start_conversation(state: StartedScenario) -> StartedScenario:
    """Hold the conversation: every turn is sent and judged before the scenario is checked."""
    from clawspec.runner.conversation import run_turns

    plan, env = state.plan, state.env
    variant = plan.variant
    model = variant.model if variant is not None else None
    down = env.outages.reason(
        env.settings.gateway_base_url, keys_of(model, plan.agent_id(env.settings.default_agent_id))
    )
    if down is not None:
        state.message, state.skipped = down, True
        return state
    run_turns(state)
    return state


def _refusal_watch(ctx: EvalContext) -> RefusalCheck | None:
    """What the client asks before retrying a 502: whether this run's log lines show the
    refusal final (a local model provider that failed its preflight), so the scenario errors
    at the first answer instead of retrying until its timeout. None without a gateway log."""
    evidence, run = ctx.evidence, ctx.run
    log_path = evidence.gateway_log
    if log_path is None:
        return None
    offset, inode, stop = evidence.log_offset, evidence.log_inode, ctx.stop
    run_id, session_key, started_at = run.run_id, run.session_key, run.started_at.timestamp()

    def refused(gateway_run_ids: Sequence[str], wait_s: float) -> bool:
        # The log readers are imported when a 502 is retried, not before the run's first hook
        # request: a run that never sees one does not wait for them.
        from clawspec.gateway.run_failure import RefusalWatch

        watch = RefusalWatch(
            log_path, offset, run_id, session_key, started_at=started_at, inode=inode, stop=stop
        )
        return watch(gateway_run_ids, wait_s)

    return refused


def _failure_cause(
    exc: InvocationError, ctx: EvalContext, request: InvokeRequest, env: RunEnv, scenario_id: str
) -> str:
    """The gateway's own cause of a failed invocation, read from its log lines of this run only,
    and the likely fix (gateway/run_failure.py); "" when neither is known.

    OpenClaw never puts the cause in the hook answer. The log is read when the run ended with a
    status other than ok, or when no answer came although the request outlived OpenClaw's
    admission timeout (the run was started: the log tells how far it got). A problem here must
    never hide the failure itself.

    A model provider the run could not reach is recorded in `env.outages`: the runs not yet
    started on it are skipped.
    """
    from clawspec.gateway.bringup import gateway_config
    from clawspec.gateway.run_failure import (
        ADMISSION_TIMEOUT_S,
        LOG_WAIT_S,
        explain,
        read_run_failure,
        unreachable_provider,
    )

    evidence, run = ctx.evidence, ctx.run
    unfinished = exc.timed_out and (exc.waited_s or 0.0) >= ADMISSION_TIMEOUT_S
    # A run refused before it started (502): OpenClaw's model policy may have rejected a model
    # override, or its preflight of a local provider (a loopback baseUrl) found nothing
    # answering, which only its log says.
    refused = exc.http_status == 502 and exc.gateway_run_id
    failure = None
    try:
        if evidence.gateway_log is not None and (exc.completion_status or unfinished or refused):
            failure = read_run_failure(
                evidence.gateway_log,
                evidence.log_offset,
                run_ids=(run.run_id, run.gateway_run_id),
                session_keys=(run.session_key,),
                agent_id=request.agent_id,
                started_at=run.started_at.timestamp(),
                inode=evidence.log_inode,
                unfinished=unfinished,
                later=evidence.logs_after_start,
                # The completion line is written as the answer is sent; a busy gateway may
                # flush it late: a tenth of the scenario's timeout, at least LOG_WAIT_S.
                # A refused run wrote its line before the answer: no need to wait long.
                wait_s=LOG_WAIT_S if refused else max(LOG_WAIT_S, ctx.timeout_s / 10),
                stop=ctx.stop,
            )
        down = unreachable_provider(failure, gateway_config(evidence.gateway_log))
        if down is not None:
            env.outages.record(
                env.settings.gateway_base_url,
                [*keys_of(request.model, request.agent_id), f"provider:{down.provider}"],
                down.skip_reason(scenario_id),
            )
        return explain(
            message=str(exc),
            http_status=exc.http_status,
            timed_out=exc.timed_out,
            failure=failure,
            agent_id=request.agent_id,
            unreachable=down,
            log=env.kept_log or evidence.gateway_log,
        )
    except Exception:
        log.debug("no cause read for the failed run %s", run.run_id, exc_info=True)
        return ""


def _digest(plan: ScenarioPlan) -> str | None:
    """The digest of the scenario as written (bless refuses a report of another version); an
    outline's data file, beside the contract, counts."""
    contract = plan.contract
    return scenario_digest(
        contract.doc.data, contract.written_index(plan.index), contract.path.parent
    )


def check_scenario(state: StartedScenario) -> ScenarioOutcome:
    """Check the `then` assertions of a started scenario and build its result."""
    plan, env, ctx = state.plan, state.env, state.ctx
    scenario, results, message = plan.scenario, state.results, state.message
    restates = state.restates
    talk = state.conversation
    # A conversation whose turn got no reply, that an interrupt stopped or stop_on_failure
    # ended, ends there: its `then` is left out, as never-run items are.
    partial = False
    if talk is not None:
        from clawspec.runner.conversation import cut_short

        partial = cut_short(talk)
    with state.scope:
        if state.invoked and not message and not partial:
            for index in range(len(scenario.then)):
                if replay_missed(state.traffic):
                    break  # the scenario is an error naming the miss: judge no further
                result = evaluate_assertion(plan, "then", index, ctx, state.values, env)
                if replay_missed(state.traffic):
                    break  # its waits were cut short by the miss: what it found says nothing
                results.append(result)

    # Imported after the agent run, not with this module (see runner/run.py).
    from clawspec.reports.model import CheckRef, ScenarioResult, scenario_status

    turn_statuses = [turn.status for turn in talk.turns] if talk is not None else []
    left_out = ""  # the turns stop_on_failure left out: said, the status stays the verdicts'
    if talk is not None and not message:
        from clawspec.runner.conversation import conversation_verdict

        message = conversation_verdict(talk)
        left_out = "" if message or not talk.stopped else talk.ended
    if state.skipped:
        status = Status.SKIP
    else:
        statuses = [r.status for r in results] + turn_statuses
        status = Status.ERROR if message else scenario_status(statuses)
    message = message or left_out
    replay_miss = traffic_problem(state.traffic)
    if replay_miss:
        # The recording no longer fits the scenario: its verdicts say nothing.
        status, message, restates = Status.ERROR, replay_miss, None
    if not message and status != Status.PASS:
        checks = [r for r in results if r.phase == "given"]
        checks += [a for turn in talk.turns for a in turn.assertions] if talk is not None else []
        checks += [r for r in results if r.phase == "then"]
        restates = next(r for r in checks if r.status == status)
        turn = f"turn {restates.turn + 1}, " if restates.turn is not None else ""
        message = f"{turn}{restates.phase}[{restates.index}] ({restates.type}): {restates.message}"
    run = ctx.run
    duration_ms = int((time.monotonic() - state.started_clock) * 1000)
    if status in (Status.FAIL, Status.ERROR) and state.invoked and not state.unreachable:
        _look_up_trace(ctx, plan.id)  # where a reader needs the trace most
    result = ScenarioResult(
        **plan.identity.report_fields(),
        line=plan.contract.scenario_line(plan.index),
        contract_digest=_digest(plan),
        example_source=plan.example.source if plan.example else None,
        target=plan.contract.contract.target.path,
        status=status,
        message=one_line(message, 500),
        restates=(
            CheckRef(phase=restates.phase, index=restates.index, turn=restates.turn)
            if restates
            else None
        ),
        run_id=state.run_id,
        gateway_run_id=run.gateway_run_id,
        duration_ms=duration_ms,
        trace=trace_ref(ctx.evidence),
        assertions=results,
        tags=list(scenario.tags),
        evidence=_evidence_for_report(state) if state.invoked else None,
        model_traffic=traffic_result(state.traffic, env),
        turns=_turns_for_report(talk, env, plan.id) if talk is not None else no_turns(scenario),
    )
    observed = None
    if state.invoked and (plan.scenario.repeat or env.settings.repeat) > 1:
        observed = _observed(result, state)
    interrupted = talk is not None and talk.interrupted
    return ScenarioOutcome(result, state.invoked, state.unreachable, observed, interrupted)


def no_turns(scenario: Scenario) -> list[TurnResult] | None:
    """The report's `turns` of a scenario that sent none: [] for a conversation (its `given`
    failed, it was skipped or never ran), None for a one-message scenario."""
    return [] if scenario.turns is not None else None


def abandoned_run(state: StartedScenario, why: str) -> ScenarioResult:
    """The result of a one-message scenario abandoned while its agent ran (`why`): its run
    id, how long it had run and its `given` verdicts, as a finished one reports them (the
    JUnit time, the gateway log's run id); its `then` is not judged; its status is `error`."""
    from clawspec.reports.model import ScenarioResult

    return ScenarioResult(
        **_abandoned_fields(state), message=one_line(why, 500), turns=no_turns(state.plan.scenario)
    )


def _abandoned_fields(state: StartedScenario) -> dict[str, Any]:
    """What an abandoned scenario's result says of it, whatever its kind: who it is, its run
    id, its time so far and its `given` verdicts; status `error`."""
    plan = state.plan
    return {
        **plan.identity.report_fields(),
        "line": plan.contract.scenario_line(plan.index),
        "contract_digest": _digest(plan),
        "example_source": plan.example.source if plan.example else None,
        "target": plan.contract.contract.target.path,
        "status": Status.ERROR,
        "run_id": state.run_id,
        "duration_ms": int((time.monotonic() - state.started_clock) * 1000),
        "assertions": [r for r in list(state.results) if r.phase == "given"],
        "tags": list(plan.scenario.tags),
    }


def abandoned_conversation(state: StartedScenario, why: str | None = None) -> ScenarioResult:
    """The result of a conversation abandoned while it ran (an interrupt past the grace
    period; `why`: another cause, e.g. an internal error), built from another thread while its
    lane may still be in it: the turns that finished with their verdicts, replies and tokens,
    its run id and duration, its `given` verdicts, and a message naming the turn abandoned and
    the turns not sent. Its `then` is not judged; its status is `error`."""
    from clawspec.reports.model import ScenarioResult
    from clawspec.runner.conversation import so_far

    plan, env, ctx = state.plan, state.env, state.ctx
    scenario = plan.scenario
    talk = state.conversation
    assert talk is not None
    finished, message = so_far(talk, len(scenario.turns or ()))
    run = replace(
        ctx.run,
        chat_run_ids=tuple(finished.chat_run_ids),
        transcript=tuple(finished.exchanges),
        gateway_run_id=finished.chat_run_ids[-1] if finished.chat_run_ids else None,
        whole_conversation=True,
    )
    return ScenarioResult(
        **_abandoned_fields(state),
        message=one_line(why or message, 500),
        gateway_run_id=run.gateway_run_id,
        evidence=_conversation_evidence(ctx.evidence, run, env, plan.id, finished),
        turns=_turns_for_report(finished, env, plan.id),
    )


def _conversation_evidence(
    evidence: Evidence, run: RunInfo, env: RunEnv, scenario_id: str, talk: Conversation
) -> ScenarioEvidence | None:
    """What a conversation's runs did, for the report; its tokens as its chat responses gave
    them when nothing else counted them."""
    found = report_evidence(evidence, run, env, scenario_id)
    if found is not None and found.tokens is not None:
        return found
    from clawspec.reports.model import ScenarioEvidence
    from clawspec.runner.conversation import chat_tokens

    tokens = chat_tokens(talk)
    if tokens is None:
        return found
    return (found or ScenarioEvidence()).model_copy(update={"tokens": tokens})


def _observed(result: ScenarioResult, state: StartedScenario) -> AttemptEvidence | None:
    """A repeated attempt's own evidence; a problem here must never cost the verdicts."""
    from clawspec.bless.observed import attempt_evidence

    try:
        return attempt_evidence(result, state.ctx, state.values)
    except Exception:
        log.debug("evidence of attempt %d not kept", state.env.attempt + 1, exc_info=True)
        return None


def _evidence_for_report(state: StartedScenario) -> ScenarioEvidence | None:
    """What the run did, for the report; a conversation's tokens as its chat responses gave
    them when nothing else counted them."""
    ctx = state.ctx
    talk = state.conversation
    if talk is None:
        return report_evidence(ctx.evidence, ctx.run, state.env, state.plan.id)
    return _conversation_evidence(ctx.evidence, ctx.run, state.env, state.plan.id, talk)


def _turns_for_report(talk: Conversation, env: RunEnv, scenario_id: str) -> list[TurnResult]:
    from clawspec.runner.conversation import turns_with_evidence

    return turns_with_evidence(talk, env, scenario_id)


def _look_up_trace(ctx: EvalContext, scenario_id: str) -> None:
    """The trace of a scenario that did not pass, for its report, when no assertion fetched it:
    a short lookup (`report_trace`) that never costs the verdicts."""
    from clawspec.evidence.trace import report_trace

    try:
        report_trace(ctx)
    except Exception:
        log.debug("no trace looked up for the report of %s", scenario_id, exc_info=True)


def _with(run: RunInfo, **changes: Any) -> RunInfo:
    return replace(run, **changes)


def trace_ref(evidence: Evidence) -> TraceRef | None:
    """The trace fetched for this run (by an assertion, or for the report), if any."""
    trace = evidence.built_trace()
    if trace is None or not hasattr(trace, "spans"):
        return None
    from clawspec.reports.model import TraceRef

    return TraceRef(backend=trace.backend, id=trace.id, url=trace.url)

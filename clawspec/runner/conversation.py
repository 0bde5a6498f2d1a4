"""A conversation: its turns sent in order through the chat endpoint, in one OpenClaw session.

OpenClaw's hooks never continue a conversation (each hook request runs in a fresh isolated
session), so each turn is a `POST /v1/chat/completions` with the session key of this scenario
run. A turn's evidence is the run its request started (the chat response's id) and the
sub-agents it spawned: the log and the plugin's records from the turn's start, scoped to that
run, its record, and the reply the response carries. Its `then` is judged on that alone, before
the next turn starts (a turn that failed may stop the conversation). The scenario's `then` is
judged later, on the whole conversation, by `check_scenario`.
"""

from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.contracts import templates
from clawspec.contracts.models import Turn
from clawspec.evidence.context import Exchange
from clawspec.evidence.record import RunRecords
from clawspec.runner.judging import (
    evaluate_assertion,
    evidence_from_now,
    hook_message,
    report_evidence,
)
from clawspec.runner.traffic import model_traffic, replay_missed
from clawspec.text import one_line

if TYPE_CHECKING:
    from clawspec.gateway.chat import ChatReply
    from clawspec.reports.model import (
        AssertionResult,
        ScenarioEvidence,
        TokenTotals,
        TurnResult,
    )
    from clawspec.runner.scenario import RunEnv, StartedScenario

log = logging.getLogger("clawspec.runner")

# What the namespace of ClawSpec's sessions is called; OpenClaw reserves `subagent:`, `cron:`
# and `acp:`, and with several agents configured it asks for the `agent:<id>:` form.
SESSION_NAMESPACE = "clawspec"


def session_key(agent_id: str, run_id: str) -> str:
    """The OpenClaw session a conversation runs in: one per scenario run."""
    return f"agent:{agent_id}:{SESSION_NAMESPACE}:{run_id}"


@dataclass
class Conversation:
    """What the turns of one scenario run leave behind for its checks and its report."""

    agent_id: str
    session_key: str
    turns: list[TurnResult] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    chat_run_ids: list[str] = field(default_factory=list)
    # Each answered turn's evidence, by turn index: what the report shows of it is collected
    # when the scenario is checked, off the lane that sends the next turn.
    contexts: dict[int, EvalContext] = field(default_factory=dict)
    # Why the conversation ended before its last turn ("" when every turn ran).
    ended: str = ""
    interrupted: bool = False  # an interrupt kept the later turns from starting
    # A turn that replied and failed, with stop_on_failure, left the later turns out.
    stopped: bool = False


def run_turns(state: StartedScenario) -> None:
    """Send each turn and judge it; record the conversation on `state`."""
    plan, env, ctx = state.plan, state.env, state.ctx
    scenario = plan.scenario
    contract = plan.contract.contract
    agent = plan.agent_id(env.settings.default_agent_id)
    talk = Conversation(agent, session_key(agent, state.run_id))
    state.conversation = talk
    ctx.run = replace(ctx.run, session_key=talk.session_key, agent_id=agent)
    stop_on_failure = (
        scenario.stop_on_failure
        if scenario.stop_on_failure is not None
        else contract.defaults.stop_on_failure
    )
    state.invoked = True
    turns = scenario.turns or []
    with ExitStack() as scope:
        # Hermetic runs: every turn's model calls are this scenario's; each later turn's
        # requests carry the first turn's message in their history.
        first = _message(state, turns[0])
        timeout_s = plan.scenario.timeout or contract.defaults.timeout
        if first is not None:
            state.traffic = scope.enter_context(
                model_traffic(plan, env, first, timeout_s, state.ctx.stop)
            )
        total = len(turns)
        for index, turn in enumerate(turns):
            if env.stop.is_set():  # after the first interrupt no new turn starts
                talk.interrupted = True  # first: `so_far` may read it from another thread
                talk.ended = f"interrupted: {_later_turns(index, total, 'not sent')}"
                break
            if replay_missed(state.traffic):  # the scenario is an error naming the miss
                talk.ended = f"{_later_turns(index, total, 'not sent')} after a replay miss"
                break
            result = _run_turn(state, talk, index, turn)
            if result is None:  # abandoned while it ran: it has no verdict
                talk.interrupted = True
                talk.ended = abandoned_message(index, total)
                break
            talk.turns.append(result)
            if not result.answered:
                talk.ended = f"turn {index + 1}: {result.message}"
                break
            failed = result.status in (Status.FAIL, Status.ERROR)
            if failed and stop_on_failure and index + 1 < total:
                talk.ended = (
                    f"{_later_turns(index + 1, total, 'left out')}: turn {index + 1} failed "
                    "and stop_on_failure is set"
                )
                talk.stopped = True
                break
        state.scope = scope.pop_all()  # closed by check_scenario, once the checks ran
    # The scenario's `then` sees every turn's runs and what was said.
    ctx.run = replace(
        ctx.run,
        chat_run_ids=tuple(talk.chat_run_ids),
        transcript=tuple(talk.exchanges),
        gateway_run_id=talk.chat_run_ids[-1] if talk.chat_run_ids else None,
        completed_at=datetime.now(env.tz),
        whole_conversation=True,
    )


def _later_turns(first: int, total: int, what: str) -> str:
    """The turns from index `first` on, counted from 1: "turns 2 to 3 of 3 were <what>"."""
    if first + 1 < total:
        return f"turns {first + 1} to {total} of {total} were {what}"
    return f"turn {first + 1} of {total} was {what}"


def abandoned_message(running: int, total: int) -> str:
    """The message of a conversation abandoned while its turn of index `running` ran."""
    message = f"interrupted: turn {running + 1} of {total} abandoned while running"
    if running + 2 < total:
        return f"{message}, turns {running + 2} to {total} not sent"
    if running + 2 == total:
        return f"{message}, turn {total} not sent"
    return message


def _render(state: StartedScenario, turn: Turn) -> tuple[str, str] | str:
    """(the rendered `say`, the message the turn sends: `say` and its parameters), or why it
    cannot be sent."""
    try:
        rendered = templates.render_model(turn, state.values, state.env.environ)
    except templates.TemplateError as exc:
        return f"cannot render the turn: {exc}"
    except ValidationError as exc:  # e.g. a `{{env.NAME}}` holding bytes that are not UTF-8
        problem = exc.errors(include_url=False, include_input=False)[0]
        field_name = ".".join(str(part) for part in problem["loc"]) or "the turn"
        return f"cannot render the turn: '{field_name}' after rendering templates: {problem['msg']}"
    if not rendered.say.strip():
        return "'say' rendered blank"
    params: dict[str, Any] = dict(rendered.params)
    if state.plan.contract.contract.defaults.test_mode:
        params.setdefault("test_mode", True)
    return rendered.say, hook_message(rendered.say, params)


def _message(state: StartedScenario, turn: Turn) -> str | None:
    rendered = _render(state, turn)
    return rendered[1] if isinstance(rendered, tuple) else None


def _run_turn(
    state: StartedScenario, talk: Conversation, index: int, turn: Turn
) -> TurnResult | None:
    """The turn sent and judged; None when it was abandoned (an interrupt) before its reply."""
    from clawspec.gateway.chat import ChatError, ChatRequest, send
    from clawspec.reports.model import TurnResult

    plan, env = state.plan, state.env
    contract = plan.contract.contract
    started_clock = time.monotonic()
    started = datetime.now(env.tz)
    timeout_s = turn.timeout or plan.scenario.timeout or contract.defaults.timeout
    line = plan.contract.turn_line(plan.index, index)
    rendered = _render(state, turn)
    if isinstance(rendered, str):
        return _turn_error(index, line, turn.say, rendered, started_clock)
    say, message = rendered
    ctx = _turn_context(state, talk, started, timeout_s)
    variant = plan.variant
    request = ChatRequest(
        base_url=env.settings.gateway_base_url,
        token=_gateway_token(env),
        agent_id=talk.agent_id,
        session_key=talk.session_key,
        message=message,
        timeout_s=timeout_s,
        model=variant.model if variant is not None else None,
    )
    reply: ChatReply | None = None
    try:
        reply = send(env.http, request, stop=env.halt)
    except ChatError as exc:
        if exc.kind == "interrupted":
            return None
        error = str(exc)
    else:
        error = ""
    if reply is None:
        talk.exchanges.append(Exchange(index, say, None))
        return _turn_error(index, line, say, f"no reply: {error}", started_clock)
    talk.chat_run_ids.append(reply.run_id)
    exchange = Exchange(index, say, reply.content, _usage(reply.usage))
    talk.exchanges.append(exchange)
    ctx.run = replace(
        ctx.run,
        gateway_run_id=reply.run_id,
        chat_run_ids=(reply.run_id,),
        transcript=(exchange,),
        completed_at=datetime.now(env.tz),
    )
    _wait_for_subagents(ctx, talk)
    talk.contexts[index] = ctx
    results = [_judge(state, ctx, index, a_index) for a_index in range(len(turn.then))]
    from clawspec.reports.model import scenario_status

    # A turn without checks of its own passed when it got its reply.
    status = scenario_status(r.status for r in results) if results else Status.PASS
    failed = (
        next((r for r in results if r.status == status), None) if status != Status.PASS else None
    )
    message_text = (
        f"then[{failed.index}] ({failed.type}): {failed.message}" if failed is not None else ""
    )
    return TurnResult(
        index=index,
        line=line,
        say=say,
        reply=reply.content,
        status=status,
        message=one_line(message_text, 500),
        duration_ms=int((time.monotonic() - started_clock) * 1000),
        tokens=_total_tokens(reply.usage),
        gateway_run_id=reply.run_id,
        assertions=results,
    )


def _turn_context(
    state: StartedScenario, talk: Conversation, started: datetime, timeout_s: float
) -> EvalContext:
    """A turn's evidence: the log and the plugin's records from the turn's start on, scoped
    to the run the turn's request started and its sub-agents."""
    env, scenario_ctx = state.env, state.ctx
    base = scenario_ctx.evidence
    evidence = evidence_from_now(
        env.http, base.gateway_log, base.plugin_output, env.trace_backend, base.later_logs
    )
    # Scoped by the chat run's id alone (set once it answers), not by the session: the log's
    # lines of the session's other runs (the turn before, whose last lines may be written
    # late; the run OpenClaw starts to announce a sub-agent's result) are not this turn's.
    run = RunInfo(
        scenario_ctx.run.scenario,
        state.run_id,
        started,
        agent_id=talk.agent_id,
        chat_session_key=talk.session_key,
        transcript=(),
    )
    return replace(
        scenario_ctx,
        run=run,
        evidence=evidence,
        timeout_s=timeout_s,
        started_clock=time.monotonic(),
    )


def _wait_for_subagents(ctx: EvalContext, talk: Conversation) -> None:
    """The next turn starts only once the sub-agents this turn's run spawned have ended, and
    the run OpenClaw then starts in the session to announce their result: read the run's
    record (waiting for it to settle) when ClawSpec knows where it is. The record stays in
    the turn's evidence for its assertions."""
    if not ctx.settings.openclaw_state_dir:
        return
    from clawspec.evidence.record import run_records

    try:
        records = run_records(ctx)
        if isinstance(records, RunRecords) and any(run.children for run in records.runs):
            _wait_for_announcement(ctx, talk, records)
    except Exception:
        log.debug("the record of %s was not read", ctx.run.gateway_run_id, exc_info=True)


# How long a turn whose sub-agents ended waits for OpenClaw's run announcing their result.
ANNOUNCE_WAIT_S = 10.0


def _wait_for_announcement(ctx: EvalContext, talk: Conversation, records: RunRecords) -> None:
    from clawspec.gateway.trajectory.reader import TrajectoryReader

    ours = {run.run_id for run in records.runs}
    deadline = ctx.clock() + min(ANNOUNCE_WAIT_S, ctx.evidence_wait_s())
    with TrajectoryReader(Path(str(ctx.settings.openclaw_state_dir))) as reader:
        store = reader.store(talk.agent_id)
        while ctx.clock() < deadline:
            runs = store.session_runs(talk.session_key)
            ids = [run.run_id for run in runs]
            later = (
                [run for run in runs[max(ids.index(i) for i in ours) + 1 :]]
                if ours <= set(ids)
                else []
            )
            if later and all(run.complete for run in later):
                return
            if ctx.stop.wait(ctx.poll_interval_s):
                return


def _judge(state: StartedScenario, ctx: EvalContext, turn: int, index: int) -> AssertionResult:
    return evaluate_assertion(state.plan, "then", index, ctx, state.values, state.env, turn=turn)


def _turn_error(index: int, line: int, say: str, message: str, started_clock: float) -> TurnResult:
    from clawspec.reports.model import TurnResult

    return TurnResult(
        index=index,
        line=line,
        say=say,
        reply=None,
        status=Status.ERROR,
        message=one_line(message, 500),
        duration_ms=int((time.monotonic() - started_clock) * 1000),
    )


def _usage(usage: dict[str, Any] | None) -> tuple[int, int, int] | None:
    """(input, output, total) tokens of a chat response's OpenAI-style `usage`, when whole."""
    if not usage:
        return None
    given = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in given):
        return None
    total = usage.get("total_tokens")
    prompt, completion = int(given[0] or 0), int(given[1] or 0)
    return prompt, completion, total if isinstance(total, int) else prompt + completion


def chat_tokens(talk: Conversation) -> TokenTotals | None:
    """The conversation's tokens as its chat responses counted them, when every answered turn
    gave its usage: what the report shows when neither the run record nor the plugin's events
    count them (your gateway without `openclaw_state_dir` or ClawSpec's plugin)."""
    from clawspec.reports.model import TokenTotals

    counted = [e.usage for e in talk.exchanges if e.reply is not None or e.usage is not None]
    if not counted or any(u is None for u in counted):
        return None
    whole = [u for u in counted if u is not None]
    return TokenTotals(
        input=sum(u[0] for u in whole),
        output=sum(u[1] for u in whole),
        total=sum(u[2] for u in whole),
        source="chat responses",
    )


def _total_tokens(usage: dict[str, Any] | None) -> int | None:
    if not usage:
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    return sum(p for p in parts if isinstance(p, int)) if any(parts) else None


def _gateway_token(env: RunEnv) -> str:
    token = env.settings.gateway_auth_token
    return token.get_secret_value() if token is not None else ""


def turns_with_evidence(talk: Conversation, env: RunEnv, scenario_id: str) -> list[TurnResult]:
    """The conversation's turns for the report, each with what its run did (its tools, their
    arguments, delegations, tokens)."""
    return [
        _with_evidence(turn, report_evidence(ctx.evidence, ctx.run, env, scenario_id))
        if (ctx := talk.contexts.get(turn.index)) is not None
        else turn
        for turn in talk.turns
    ]


def _with_evidence(turn: TurnResult, evidence: ScenarioEvidence | None) -> TurnResult:
    """The turn with its evidence; its tokens the evidence's when counted there (the chat
    answer's usage is its own run's alone, without its sub-agents): one figure per turn."""
    counted = evidence.tokens.total if evidence is not None and evidence.tokens else None
    tokens = counted if counted is not None else turn.tokens
    return turn.model_copy(update={"evidence": evidence, "tokens": tokens})


def conversation_verdict(talk: Conversation) -> str:
    """The scenario's own error message from its conversation ("" when it has none): a turn
    without a reply, or an interrupt before the last turn, makes the scenario `error` (its
    `then` is not judged on part of the conversation); failed checks speak for themselves."""
    for turn in talk.turns:
        if not turn.answered:
            return f"turn {turn.index + 1}: {turn.message}"
    return talk.ended if talk.interrupted else ""


def cut_short(talk: Conversation) -> bool:
    """Whether turns were left out (no reply, an interrupt, stop_on_failure): the scenario's
    `then` is then not judged on part of the conversation."""
    return talk.interrupted or talk.stopped or not all(turn.answered for turn in talk.turns)


def so_far(talk: Conversation, total: int) -> tuple[Conversation, str]:
    """What a conversation abandoned while it ran (an interrupt past the grace period) leaves
    for its report, read from another thread while its lane may still be in it: its finished
    turns, their exchanges and evidence, and the scenario's message saying which turn was
    abandoned and which were not sent."""
    turns = list(talk.turns)  # a turn is appended once it is judged: these are finished
    done = {turn.index for turn in turns}
    finished = Conversation(
        talk.agent_id,
        talk.session_key,
        turns=turns,
        exchanges=[e for e in list(talk.exchanges) if e.turn in done],
        chat_run_ids=[t.gateway_run_id for t in turns if t.gateway_run_id],
        contexts={i: c for i, c in list(talk.contexts.items()) if i in done},
    )
    if talk.ended:  # every turn that was to run has run: abandoned in its checks
        message = talk.ended if talk.interrupted else ""
    elif len(turns) < total:
        message = abandoned_message(len(turns), total)
    else:
        message = ""
    return finished, message or "interrupted: abandoned while running"

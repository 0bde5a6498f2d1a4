"""Why a hook run failed or ran out of time, told from the gateway's own log lines of that run.

OpenClaw's hook answer carries only `completion.status` (ok / error / skipped), never the cause;
the cause is in its log (checked against OpenClaw 2026.9.6):

- `gateway/hooks` "hook agent run completed runId=<hook run id> status=error summary=<cause>",
  with the object {runId, agentId, logicalSessionKey, sessionId, model, summary}: written when
  a hook run ends, at warn level when it failed (so also without debug logging);
- `model_fallback_decision` objects (warn): the failed model's provider, model and `reason`
  (`auth`, `model_not_found`, ...);
- the run's steps (debug): `embedded run start`, `[trace:embedded-run] prep stages: ...
  totalMs=` (warn when slow), `embedded run prompt start`, `embedded run timeout: ... timeoutMs=`.

`read_run_failure` scopes the log to the scenario's run like the log assertions do (`LogIndex`
with ClawSpec's run id, the gateway's run id and the session key ClawSpec sent) and reads those
facts (`logs.facts.outcome_of`) from that run's lines only. `explain` turns them, and an HTTP
refusal, into one short line: the gateway's cause and the likely fix.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from clawspec.gateway.logs.facts import (
    HookDispatch,
    HookOutcome,
    ModelFailure,
    ModelRetry,
    RunStep,
    outcome_of,
)
from clawspec.gateway.logs.index import LogIndex
from clawspec.text import one_line

log = logging.getLogger("clawspec.gateway")

CAUSE_CHARS = 200
# OpenClaw answers 503 when a hook run has not started 15 s after the request
# (HOOK_AGENT_START_ADMISSION_TIMEOUT_MS): a request that waited longer was admitted.
ADMISSION_TIMEOUT_S = 15.0
# OpenClaw warns about a run's preparation from 10 s on (EMBEDDED_RUN_STAGE_WARN_TOTAL_MS).
SLOW_PREP_S = 10.0
# The hook's completion line is written as the answer is sent; give the log a moment (the
# runner waits a tenth of the scenario's timeout when that is longer).
LOG_WAIT_S = 2.0
POLL_S = 0.2

_ISOLATED_KEY = re.compile(r"^agent:([^:]+):cron:[^:]+:run:")
_PROVIDER_IN_TEXT = re.compile(
    r'provider "([\w.-]+)"|configured for ([\w.-]+)\.|^⚠️ ([\w.-]+)/|Unknown model: ([\w.-]+)/'
)
_UNKNOWN_MODEL = re.compile(r"Unknown model: (\S+?)\.?(?:\s|$)")
_TIMED_OUT = "Request timed out before a response was generated"


@dataclass(frozen=True)
class RunTiming:
    """How far the gateway got with a run, from its log (times as logged)."""

    queued: datetime | None = None  # its isolated session was queued
    started: datetime | None = None  # `embedded run start`: preparation began
    prep_ms: int | None = None  # startup + prep stage totals, once the prep stages are logged
    prompted: datetime | None = None  # `embedded run prompt start`: the model was asked
    timeout_ms: int | None = None  # the run hit its own timeout of this many ms
    done_ms: int | None = None


@dataclass
class RunFailure:
    """What the gateway's log says about one failed or unfinished run."""

    cause: str | None = None  # the gateway's own words (hook summary, else the model's error)
    status: str | None = None  # the hook completion's status, when the run ended
    agent_id: str | None = None
    provider: str | None = None
    model: str | None = None
    reason: str | None = None  # the failed model call's reason (auth, model_not_found, ...)
    timing: RunTiming | None = None
    errors: list[str] = field(default_factory=list)  # `embedded_run_agent_end` errors
    retry: ModelRetry | None = None  # the last retry of a failing model call, if any


def read_run_failure(
    path: Path,
    offset: int,
    *,
    run_ids: Iterable[str | None],
    session_keys: Iterable[str | None],
    agent_id: str | None = None,
    started_at: float | None = None,
    inode: int | None = None,
    unfinished: bool = False,
    wait_s: float = LOG_WAIT_S,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    later: Callable[[], Sequence[Path]] | None = None,
) -> RunFailure | None:
    """Read why the run named by `run_ids` / `session_keys` failed, from its lines only
    (`later`: the files the log went on in, as for `LogIndex.build`).

    Waits up to `wait_s` for the hook's completion line. `unfinished`: the gateway never
    answered and had admitted the run (the request outlived OpenClaw's admission timeout);
    such a run has no line naming ClawSpec's ids yet, so it is found by elimination
    (`_unfinished_steps`). None: the log is missing or says nothing about the run.
    """
    run_ids, session_keys = tuple(r for r in run_ids if r), tuple(k for k in session_keys if k)
    stop = stop or threading.Event()
    deadline = clock() + wait_s
    while True:
        index = LogIndex.build(
            path,
            offset,
            run_ids=run_ids,
            session_keys=session_keys,
            started_at=started_at,
            inode=inode,
            later=later,
        )
        if not index.exists:
            return None
        outcome, lines = _scoped_outcome(index, run_ids, session_keys)
        if outcome is not None or unfinished or clock() >= deadline or stop.is_set():
            break
        stop.wait(POLL_S)
    if outcome is not None:
        sessions = index.session_ids | ({outcome.session_id} - {None})
        failure = _failure(outcome, lines, sessions, index.run_ids, index.errors)
        failure.retry = _last_retry(lines, index.trace_ids)
        return failure
    if unfinished and agent_id:
        steps, trace = _unfinished_steps(index.segments, agent_id)
        if steps:
            retries = [(t, f) for t, f in _facts(index.segments) if isinstance(f, ModelRetry)]
            retry = _last_retry(retries, {trace} - {None})
            return RunFailure(agent_id=agent_id, timing=_timing(steps), retry=retry)
    return None


def _last_retry(facts: Iterable[tuple[str | None, object]], traces: set[str]) -> ModelRetry | None:
    """The last model-call retry logged in one of the run's traces (a retry line names nothing
    else)."""
    retries = [f for t, f in facts if isinstance(f, ModelRetry) and t in traces]
    return retries[-1] if retries else None


def _facts(segments: list[tuple[Path, int]]) -> Iterator[tuple[str | None, object]]:
    for raw in _slice(segments):
        line = outcome_of(raw)
        for fact in line.facts:
            yield line.trace_id, fact


def _scoped_outcome(
    index: LogIndex, run_ids: tuple[str, ...], keys: tuple[str, ...]
) -> tuple[HookOutcome | None, list[tuple[str | None, object]]]:
    """The run's completion line (if written) and the outcome facts of its scoped lines."""
    facts: list[tuple[str | None, object]] = []
    outcome = None
    for _, text in index.lines():
        line = outcome_of(text.encode("utf-8"))
        for fact in line.facts:
            facts.append((line.trace_id, fact))
            if isinstance(fact, HookOutcome) and (
                fact.run_id in run_ids or fact.logical_key in keys
            ):
                outcome = fact
    return outcome, facts


def _failure(
    outcome: HookOutcome,
    facts: list[tuple[str | None, object]],
    sessions: set[str],
    runs: set[str],
    errors: list[str],
) -> RunFailure:
    models = [
        f
        for _, f in facts
        if isinstance(f, ModelFailure) and (f.session_id in sessions or f.run_id in runs)
    ]
    steps = [f for _, f in facts if isinstance(f, RunStep) and f.session_id in sessions]
    model = models[-1] if models else None
    cause = outcome.summary or (model.detail if model else None) or (errors[-1] if errors else None)
    return RunFailure(
        cause=cause,
        status=outcome.status,
        agent_id=outcome.agent_id,
        provider=model.provider if model else None,
        model=(model.model if model else None) or outcome.model,
        reason=model.reason if model else None,
        timing=_timing(steps) if steps else None,
        errors=list(errors),
    )


def _unfinished_steps(
    segments: list[tuple[Path, int]], agent_id: str
) -> tuple[list[RunStep], str | None]:
    """The steps of the scenario's run while the gateway has not ended it, found by elimination.

    Until a hook run ends no line names the hook run id or the session key ClawSpec sent (the
    completion line is the first). The candidates are the hook runs (their trace has a
    `lane=hook-dispatch` line) of the scenario's agent whose isolated session
    (`agent:<id>:cron:<job>:run:<session>`) was queued in the scenario's slice of the log and
    has no completion line there. The scenario's run is among them (it was admitted), so a
    single candidate is it; with several in flight none is attributed. Returns its steps and
    the trace its session was queued in.
    """
    hook_traces: set[str] = set()
    queued: dict[str, tuple[str | None, RunStep]] = {}
    steps: dict[str, list[RunStep]] = {}
    ended: set[str] = set()
    for raw in _slice(segments):
        line = outcome_of(raw)
        for fact in line.facts:
            if isinstance(fact, HookDispatch) and line.trace_id:
                hook_traces.add(line.trace_id)
            elif isinstance(fact, HookOutcome) and fact.session_id:
                ended.add(fact.session_id)
            elif isinstance(fact, RunStep):
                steps.setdefault(fact.session_id, []).append(fact)
                match = _ISOLATED_KEY.match(fact.key or "") if fact.kind == "queued" else None
                if match and match.group(1) == agent_id:
                    queued.setdefault(fact.session_id, (line.trace_id, fact))
    candidates = [
        session
        for session, (trace, _) in queued.items()
        if session not in ended and trace in hook_traces
    ]
    if len(candidates) != 1:
        return [], None
    return steps[candidates[0]], queued[candidates[0]][0]


def _slice(segments: list[tuple[Path, int]]) -> Iterator[bytes]:
    for path, start in segments:
        try:
            with path.open("rb") as handle:
                handle.seek(start)
                yield from handle
        except OSError:
            continue


def _timing(steps: list[RunStep]) -> RunTiming:
    first: dict[str, RunStep] = {}
    prep_ms = 0
    for step in steps:
        first.setdefault(step.kind, step)
        if step.kind in ("startup", "prep") and step.ms is not None:
            prep_ms += step.ms
    if "prep" not in first:
        prep_ms = 0  # the startup stages alone: the run is still being prepared
    timeout, done = first.get("timeout"), first.get("done")
    return RunTiming(
        queued=_at(first.get("queued")),
        started=_at(first.get("start")),
        prep_ms=prep_ms or None,
        prompted=_at(first.get("prompt")),
        timeout_ms=timeout.ms if timeout else None,
        done_ms=done.ms if done else None,
    )


def _at(step: RunStep | None) -> datetime | None:
    if step is None or not step.time:
        return None
    try:
        moment = datetime.fromisoformat(step.time)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# -- the message ---------------------------------------------------------------------------


def explain(
    *,
    message: str,
    http_status: int | None,
    timed_out: bool,
    failure: RunFailure | None,
    agent_id: str,
    now: datetime | None = None,
    unreachable: Unreachable | None = None,
    log: Path | None = None,
) -> str:
    """What to add to the invocation error `message`: the cause and the likely fix, one line.

    Returns "" when there is nothing to add. The cause is the gateway's own text, cut to
    CAUSE_CHARS (left out when `message` already has it). `unreachable`: the provider the run
    could not reach (`unreachable_provider`), told with the gateway's `log`.
    """
    failure = failure or RunFailure()
    agent = failure.agent_id or agent_id
    parts: list[str] = []
    cause = one_line(failure.cause, CAUSE_CHARS) if failure.cause else ""
    if cause and cause not in message and unreachable is None:  # else the fix says it
        parts.append(f": {cause}")
    slow = False
    if failure.timing is not None and (timed_out or _ran_out(failure)):
        told, slow = _told(failure.timing, now or datetime.now(UTC))
        if told:
            parts.append(f" (gateway log: {told})")
    hint = (
        unreachable.fix(log)
        if unreachable is not None
        else _hint(message, http_status, timed_out, failure, agent, slow)
    )
    if hint:
        parts.append(f" — fix: {hint}")
    return "".join(parts)


def _hint(
    message: str,
    http_status: int | None,
    timed_out: bool,
    failure: RunFailure,
    agent: str,
    slow: bool,
) -> str:
    text = failure.cause or ""
    if http_status == 503 and "admission timeout" in message:
        return (
            "the gateway was too busy to start the run within its 15 s admission timeout, "
            "retried while `timeout` allowed: lower `concurrency`, or raise `timeout`"
        )
    if _policy_refused(text):
        return (
            "add the variant's model to the gateway's agents.defaults.modelPolicy.allow (or the "
            "agent's own), or remove or empty that list to allow any model"
        )
    if http_status == 502 and "before entering the agent runner" in message:
        return "the gateway was not ready for runs yet: wait for its /readyz, or raise `timeout`"
    if http_status == 409 and "hook configuration changed" in message:
        return (
            "the gateway reloaded its hooks configuration during the request: "
            "do not change its config while a suite runs"
        )
    if http_status == 409:
        return (
            "another run changed this run's session while it started: "
            "do not send one session key from concurrent runs"
        )
    if http_status == 401:
        return (
            "set CLAWSPEC_HOOKS_TOKEN (for a variant with its own gateway: the variable its "
            "hooks_token_env names) to the gateway's hooks.token"
        )
    if http_status == 400 and "unknown agentId" in message:
        return f"add agent '{agent}' to the gateway's agents, or set the scenario's `agent_id`"
    provider = failure.provider or _provider_in(text)
    if failure.reason == "auth" or _no_key(text) or _key_refused(text):
        return _auth_hint(text, agent, provider)
    if failure.reason == "model_not_found" or text.startswith("Unknown model:"):
        unknown = _UNKNOWN_MODEL.match(text)
        model = unknown.group(1) if unknown else _model_name(failure)
        named = f"'{model}'" if model else "its model"
        return (
            f"configure a model provider and its API key for agent '{agent}': no configured "
            f"provider offers {named} (`openclaw models list`)"
        )
    retry = failure.retry
    if retry is not None and (timed_out or _ran_out(failure)):
        return (
            f"the model provider kept failing ({retry.model}: {retry.reason}; OpenClaw was at "
            f"retry {retry.attempt}/{retry.limit}): fix the provider, a longer `timeout` ends "
            "in the same error"
        )
    if _ran_out(failure):
        fix = "raise the scenario's `timeout` (ClawSpec sends it as the run's timeoutSeconds)"
        return fix + (
            ", or lower `concurrency`: the gateway is slow to prepare runs" if slow else ""
        )
    if timed_out:
        if slow:
            return (
                "the gateway is slow to prepare runs (a busy machine): "
                "raise `timeout`, or lower `concurrency`"
            )
        return "raise the scenario's `timeout`"
    return ""


def _ran_out(failure: RunFailure) -> bool:
    """The gateway ended the run at the run's own timeout."""
    timing = failure.timing
    return _TIMED_OUT in (failure.cause or "") or bool(timing and timing.timeout_ms)


def _key_refused(text: str) -> bool:
    lowered = text.lower()
    return "authentication failed" in lowered or "after a provider auth/billing failure" in lowered


def _no_key(text: str) -> bool:
    lowered = text.lower()
    return "no api key found" in lowered or "no route-compatible authentication" in lowered


def _auth_hint(text: str, agent: str, provider: str | None) -> str:
    name = f"'{provider}'" if provider else "its provider"
    if _no_key(text) or not text:
        command = (
            f": `openclaw models auth paste-api-key --provider {provider} --agent {agent}`"
            if provider
            else ""
        )
        return (
            f"configure a model provider and its API key for agent '{agent}' "
            f"(provider {name} has none{command})"
        )
    return (
        f"provider {name} refused the API key of agent '{agent}': check the key "
        "(OpenClaw pauses a refused key for about a minute)"
    )


def _model_name(failure: RunFailure) -> str | None:
    if failure.provider and failure.model:
        return f"{failure.provider}/{failure.model}"
    return failure.model


def _provider_in(text: str) -> str | None:
    match = _PROVIDER_IN_TEXT.search(text)
    return next((g for g in match.groups() if g), None) if match else None


def _told(timing: RunTiming, now: datetime) -> tuple[str, bool]:
    """(what the log says about how far the run got, whether preparing it was slow)."""
    waited = _seconds(timing.queued, timing.started)
    prep = timing.prep_ms / 1000 if timing.prep_ms else _seconds(timing.started, timing.prompted)
    queued_note = f"waited {waited:.1f} s to start, " if waited and waited >= 1 else ""
    slow_start = (waited or 0) >= SLOW_PREP_S
    if prep is not None:
        if timing.timeout_ms:
            ran = f"then the model ran into the run's {timing.timeout_ms / 1000:g} s timeout"
        elif timing.done_ms is not None:
            ran = f"the run took {timing.done_ms / 1000:.1f} s"
        elif timing.prompted is not None:
            ran = f"the model had been running for {_seconds(timing.prompted, now):.1f} s"
        else:
            ran = "the model was not asked yet"
        told = f"{queued_note}prepared for {prep:.1f} s, {ran}"
        return told, prep >= SLOW_PREP_S or slow_start
    if timing.started is not None:
        preparing = _seconds(timing.started, now) or 0.0
        told = f"{queued_note}still preparing the run after {preparing:.1f} s"
        return told, preparing >= SLOW_PREP_S or slow_start
    if timing.queued is not None:
        waiting = _seconds(timing.queued, now) or 0.0
        return f"queued {waiting:.1f} s before, not started", waiting >= SLOW_PREP_S
    return "", False


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


# OpenClaw's words for a model call that never reached its provider (formatTransportErrorCopy,
# 2026.9.6): the network, DNS or the endpoint, not the model or its key.
_UNREACHABLE = re.compile(
    r"LLM request failed: (DNS lookup for the provider endpoint failed|connection refused by "
    r"the provider endpoint|the provider endpoint is unreachable from this host|network "
    r"connection error)"
)
_PREFLIGHT = re.compile(
    r"uses ([\w.-]+)/\S+ but the local provider preflight failed at (\S+?)\.?\s.*?"
    r"Last error: ([^\n]*)"
)
# Where OpenClaw sends each built-in provider's requests when the config sets no baseUrl.
DEFAULT_HOSTS = {
    "openai": "api.openai.com",
    "anthropic": "api.anthropic.com",
    "google": "generativelanguage.googleapis.com",
    "openrouter": "openrouter.ai",
    "xai": "api.x.ai",
    "mistral": "api.mistral.ai",
    "groq": "api.groq.com",
    "deepseek": "api.deepseek.com",
    "together": "api.together.xyz",
    "cerebras": "api.cerebras.ai",
    "fireworks": "api.fireworks.ai",
    "moonshot": "api.moonshot.ai",
}


@dataclass(frozen=True)
class Unreachable:
    """A model provider a run could not reach, after OpenClaw's own retries."""

    provider: str
    host: str | None  # None: neither the config nor ClawSpec knows where it sends requests
    cause: str  # OpenClaw's words, e.g. "DNS lookup for the provider endpoint failed"
    retries: ModelRetry | None  # OpenClaw's last retry of the call, when it logged one

    def fix(self, log: Path | None) -> str:
        """What the failed scenario's message adds: where, why, how often, what to do (short:
        the whole message is cut at 500 characters, and the log's path must survive)."""
        where = f" at {self.host}" if self.host else ""
        tried = (
            f"; OpenClaw retried it {self.retries.attempt}/{self.retries.limit} times"
            if self.retries
            else ""
        )
        evidence = f"; log: {log}" if log else ""
        return (
            f"model provider '{self.provider}' unreachable{where} ({self.cause}{tried}"
            f"{evidence}): check network, proxy, DNS and its baseUrl; its other runs are skipped"
        )

    def skip_reason(self, scenario_id: str) -> str:
        where = f" at {self.host}" if self.host else ""
        return (
            f"not run: model provider '{self.provider}' unreachable{where} in {scenario_id} "
            f"({self.cause}); see that scenario's error"
        )


def unreachable_provider(
    failure: RunFailure | None, config: dict[str, object] | None
) -> Unreachable | None:
    """The provider `failure` could not reach, when the run failed for that reason; its host
    from the gateway's `config` (`models.providers.<id>.baseUrl`), else OpenClaw's default."""
    if failure is None:
        return None
    texts = [failure.cause or "", *failure.errors]
    # A local provider (a loopback baseUrl) named by a model override is checked by OpenClaw
    # before the run, which it then skips: no retries, the URL in its words.
    preflight = next((m for m in map(_PREFLIGHT.search, texts) if m), None)
    if preflight is not None:
        provider, url, last = preflight.groups()
        from urllib.parse import urlsplit

        # "fetch failed | connect ECONNREFUSED 127.0.0.1:9 | ECONNREFUSED": the last part says it.
        cause = f"local provider preflight failed: {last.split(' | ')[-1].strip()}"
        return Unreachable(provider, urlsplit(url).netloc or url, cause, None)
    match = next((m for m in map(_UNREACHABLE.search, texts) if m), None)
    if match is None:
        return None
    model = failure.retry.model if failure.retry else _model_name(failure)
    provider = failure.provider or (model.split("/", 1)[0] if model and "/" in model else None)
    if provider is None:
        return None
    return Unreachable(provider, _host(config, provider), match.group(1), failure.retry)


def refused_for_good(failure: RunFailure | None) -> bool:
    """The gateway skipped the run for a reason a retry meets again: a local model provider
    failed OpenClaw's preflight, or the model policy refused the run's model override. OpenClaw
    answers those runs with the same 502 as a run it could not start because it was not ready
    yet, which is worth retrying."""
    if failure is None:
        return False
    return any(
        _PREFLIGHT.search(text) or _policy_refused(text)
        for text in (failure.cause or "", *failure.errors)
    )


def _policy_refused(text: str) -> bool:
    """OpenClaw's reason for refusing a model override (checked on 2026.9.6): "automation model
    override 'fake/fake-model-b' rejected by agents.defaults.modelPolicy.allow: …"."""
    return "modelPolicy.allow" in text and "override" in text


@dataclass(frozen=True)
class RefusalWatch:
    """The hooks client's question before retrying a 502 (`client.RefusalCheck`), answered from
    one scenario's lines of the gateway log: those from `offset` on naming ClawSpec's run id,
    its session key or a refused attempt's gateway run id."""

    path: Path
    offset: int
    run_id: str
    session_key: str | None
    started_at: float | None = None
    inode: int | None = None
    stop: threading.Event | None = None

    def __call__(self, gateway_run_ids: Sequence[str], wait_s: float) -> bool:
        try:
            failure = read_run_failure(
                self.path,
                self.offset,
                run_ids=(self.run_id, *gateway_run_ids),
                session_keys=(self.session_key,),
                started_at=self.started_at,
                inode=self.inode,
                wait_s=wait_s,
                stop=self.stop,
            )
        except Exception:  # a log that cannot be read only means: retry as without it
            log.debug("no refusal read for the run %s", self.run_id, exc_info=True)
            return False
        return refused_for_good(failure)


def _host(config: dict[str, object] | None, provider: str) -> str | None:
    models = config.get("models") if isinstance(config, dict) else None
    providers = models.get("providers") if isinstance(models, dict) else None
    entry = providers.get(provider) if isinstance(providers, dict) else None
    base = entry.get("baseUrl") if isinstance(entry, dict) else None
    if isinstance(base, str) and base:
        from urllib.parse import urlsplit

        return urlsplit(base).netloc or base
    return DEFAULT_HOSTS.get(provider)

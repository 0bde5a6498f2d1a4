"""Run the plan: scenarios on worker threads, results in contract order."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Protocol

from clawspec import __version__
from clawspec.crash import CRASH_LOG_NAME, Faults
from clawspec.net import watch
from clawspec.reports.kept import FinishedRun, KeptResults, Ran
from clawspec.runner.budget import Budget, Limits, spends
from clawspec.runner.lanes import RunLanes
from clawspec.runner.scenario import (
    RunEnv,
    ScenarioOutcome,
    ScenarioPlan,
    StartedScenario,
    abandoned_conversation,
    abandoned_run,
    check_scenario,
    new_run_id,
    no_turns,
    start_scenario,
)
from clawspec.runner.work import ScenarioWork
from clawspec.status import Status

if TYPE_CHECKING:
    from clawspec.reports.model import RunReport, ScenarioResult

# The report models are imported where results are built, not with this module: `clawspec run`
# sends its first hook requests first, and the import happens while the agents run.

log = logging.getLogger("clawspec.runner")

# After an interrupt, running scenarios get this long to finish before they are abandoned.
INTERRUPT_GRACE_S = 10.0


class RunListener(Protocol):
    """Receives live progress (the terminal reporter is one)."""

    def on_run_start(self, total: int) -> None: ...

    def on_scenario_done(self, result: ScenarioResult) -> None: ...

    def on_warning(self, message: str) -> None: ...


class GuardedListener:
    """A listener whose first exception is recorded as a fault of the run (which then stops
    starting scenarios); after it, the listener is not called again: the run's results still
    reach the reports."""

    def __init__(self, listener: RunListener, faults: Faults) -> None:
        self._listener = listener
        self._faults = faults
        self._broken = False

    def _call(self, method: str, *args: object) -> None:
        if self._broken:
            return
        try:
            getattr(self._listener, method)(*args)
        except Exception as exc:
            self._broken = True
            self._faults.add(f"{type(self._listener).__name__}.{method}", exc)

    def on_run_start(self, total: int) -> None:
        self._call("on_run_start", total)

    def on_scenario_done(self, result: ScenarioResult) -> None:
        self._call("on_scenario_done", result)

    def on_warning(self, message: str) -> None:
        self._call("on_warning", message)


@dataclass(frozen=True)
class RunOutcome:
    run: FinishedRun  # `run.report()` builds the report (after the contracts are let go)
    gateway_unreachable: bool  # scenarios were invoked and none could reach the gateway


def attempts_of(plan: ScenarioPlan, repeat: int) -> int:
    """How often a scenario runs: its own `repeat:`, else the run's (config / --repeat)."""
    return plan.scenario.repeat or repeat


def execute(
    plans: Sequence[ScenarioPlan],
    env: RunEnv,
    listener: RunListener,
    concurrency: int,
    abandon: threading.Event | None = None,
    faults: Faults | None = None,
    budget: Budget | None = None,
) -> RunOutcome:
    """Run every plan; on `env.stop` start no more, give running ones a grace period in which
    they run and are judged as usual; past it (or on `abandon`) set `env.halt` and report them
    as interrupted.

    A bug in a lane thread or in the reporting of a result is recorded in `faults` (the
    caller raises it once the reports are written); it stops the run like an interrupt, but
    what did not finish is reported as stopped by an internal error.

    A repeated scenario (`repeat`) is queued as several attempts, folded into one result, in
    contract order, once all have finished. Runs of one scenario (its attempts and variants)
    never overlap: they share the workspace (`ScenarioWork`).

    `budget` counts what every finished attempt spent; once it says a limit is reached no
    further attempt starts (those in flight finish and are counted) and the ones left are
    skipped with its reason.
    """
    planned = sum(attempts_of(plan, env.settings.repeat) for plan in plans)
    faults = Faults() if faults is None else faults
    return _execute(
        plans, env, listener, concurrency, abandon, faults, _started_budget(budget, planned)
    )


def _execute(
    plans: Sequence[ScenarioPlan],
    env: RunEnv,
    listener: RunListener,
    concurrency: int,
    abandon: threading.Event | None,
    faults: Faults,
    budget: Budget,
) -> RunOutcome:
    started_at = datetime.now(UTC)
    clock = time.monotonic()
    abandon = abandon or threading.Event()
    counts = [attempts_of(plan, env.settings.repeat) for plan in plans]
    outcomes: list[list[ScenarioOutcome | Ran | None]] = [[None] * n for n in counts]
    work = ScenarioWork(
        [(index, attempt) for index, count in enumerate(counts) for attempt in range(count)],
        key=lambda item: plans[item[0]].id,  # a scenario's attempts and variants never overlap
    )
    done = threading.Condition()
    # The attempts running, and each conversation's state as it stands (None for the others,
    # and before it starts): an abandoned conversation reports its finished turns.
    running: dict[tuple[int, int], StartedScenario | None] = {}
    finished: list[int] = []  # plans whose attempts all ended: reported by this thread

    def next_item(waiting: Callable[[], None]) -> tuple[int, int] | None:
        # Interrupted or broken: what has not started is reported as not run; a spend limit
        # reached: the rest are skipped with its reason.
        item = work.take(
            lambda: env.stop.is_set() or faults.stopped.is_set() or budget.reason() is not None,
            waiting,
        )
        if item is None:
            return None
        with done:
            running[item] = None
        return item

    def check(item: tuple[int, int], started: StartedScenario) -> None:
        outcome = check_scenario(started)
        with done:
            if item in running:  # not when reported abandoned meanwhile: counted then
                _counted(outcome, budget, plans[item[0]])
            outcomes[item[0]][item[1]] = outcome
            running.pop(item, None)
            if all(outcomes[item[0]]):
                finished.append(item[0])
            done.notify_all()
        work.done(item)  # once counted: the next attempt sees the spend

    def thread_ended() -> None:
        with done:
            done.notify_all()  # the last one out wakes the reporting loop at once

    def start(item: tuple[int, int]) -> StartedScenario:
        return start_scenario(plans[item[0]], _attempt_env(plans[item[0]], env, item, running))

    def failed(error: BaseException, item: tuple[int, int] | None) -> None:
        held = f", running {plans[item[0]].id}" if item is not None else ""
        faults.add(f"the thread {threading.current_thread().name}{held}", error)

    lanes = RunLanes(
        concurrency, next_item, start, check, thread_ended, failed, when_sent=watch.when_sent
    )
    threads = lanes.threads(sum(counts))
    for thread in threads:
        thread.start()

    # A reported result is kept compact (memory at 10,000 scenarios); its outcomes
    # keep only what the end of the run asks of them.
    kept = KeptResults(len(plans))

    def report(index: int) -> None:
        with faults.guard("reporting a finished scenario"):
            result = _result(plans[index], outcomes[index], env, running)
            listener.on_scenario_done(result)
            kept.keep(index, result)
            outcomes[index] = [
                Ran(o.invoked, o.unreachable, o.interrupted) for o in outcomes[index] if o
            ]

    _report_until_done(
        threads,
        done,
        finished,
        report,
        _Either(env.stop, faults.stopped),  # a fault stops the run like an interrupt
        abandon,
        env.halt,
        partial(_prepare, faults),
    )
    return _finish(
        plans, env, outcomes, running, kept, done, faults, budget, listener, started_at, clock
    )


def _finish(
    plans: Sequence[ScenarioPlan],
    env: RunEnv,
    outcomes: list[list[ScenarioOutcome | Ran | None]],
    running: dict[tuple[int, int], StartedScenario | None],
    kept: KeptResults,
    done: threading.Condition,
    faults: Faults,
    budget: Budget,
    listener: RunListener,
    started_at: datetime,
    clock: float,
) -> RunOutcome:
    """The run once its reporting loop ended: the results of what did not finish (abandoned,
    never started, a repeated scenario's attempts a spend limit held back), each reported to
    `listener` as a finished one is, and the run's record."""
    broken = bool(faults)  # a bug, not the user, stopped the run: say so, not "interrupted"
    with done:
        unreported = [i for i in range(len(plans)) if i not in kept]
        # A signal makes the run incomplete only when it cut something short: an attempt
        # abandoned or never started, a conversation's turns not sent. One that came once
        # every attempt had started, and each finished, leaves a complete run: its verdict
        # is its results', not an interruption's.
        # Scenarios that never started were held back by a spend limit, when one was reached
        # (a signal after it stops nothing more); those abandoned in flight were cut short.
        abandoned = any(
            (index, attempt) in running
            for index in unreported
            for attempt in range(len(outcomes[index]))
        )
        cut = (
            abandoned
            or (bool(unreported) and budget.reason() is None)
            or any(o.interrupted for attempt_outcomes in outcomes for o in attempt_outcomes if o)
        )
        interrupted = env.stop.is_set() and cut
        # Attempts that never started: only these a spend limit can have stopped.
        held_back = sum(
            1
            for index in unreported
            for attempt, outcome in enumerate(outcomes[index])
            if outcome is None and (index, attempt) not in running
        )
        for index in unreported:
            result = _result(
                plans[index],
                outcomes[index],
                env,
                running,
                index,
                broken,
                # Not interrupted: a spend limit, once reached, stopped what never started.
                None if interrupted else budget,
                budget,
            )
            kept.keep(index, result)
            # Every selected scenario gets its progress line, also one that never (fully)
            # ran: the count reaches the total, and a repeated scenario a spend limit cut
            # shows the attempts that did run. (Under the lock: only lanes past the grace
            # period, whose results no longer count, wait for it.)
            with faults.guard("reporting a scenario that did not finish"):
                listener.on_scenario_done(result)
    invoked = [o for attempt_outcomes in outcomes for o in attempt_outcomes if o and o.invoked]
    unreachable = bool(invoked) and all(o.unreachable for o in invoked)
    run = FinishedRun(
        version=__version__,
        run_id=new_run_id(),
        started_at=started_at.isoformat(timespec="milliseconds"),
        duration_ms=int((time.monotonic() - clock) * 1000),
        interrupted=interrupted,
        results=kept,
        budget=budget.report(held_back=held_back),
    )
    return RunOutcome(run, unreachable)


def _attempt_env(
    plan: ScenarioPlan,
    env: RunEnv,
    item: tuple[int, int],
    running: dict[tuple[int, int], StartedScenario | None],
) -> RunEnv:
    """Where an attempt runs: its plan's gateway, its attempt number; its state is kept in
    `running` as it starts (an interrupt reports what an abandoned one had done)."""
    planned = env.for_plan(plan)
    return replace(planned, on_started=partial(running.__setitem__, item), attempt=item[1])


def _started_budget(budget: Budget | None, planned: int) -> Budget:
    """The run's budget, its clock started (no limits: it still counts what was spent)."""
    budget = budget or Budget(Limits())
    budget.start(planned)
    return budget


def _counted(outcome: ScenarioOutcome, budget: Budget, plan: ScenarioPlan) -> ScenarioOutcome:
    """Count a finished attempt's spend, when it ran an agent."""
    if spends(outcome.result, outcome.invoked, outcome.unreachable):
        budget.add(plan.id, outcome.result)
    return outcome


def _report_until_done(
    threads: Sequence[threading.Thread],
    done: threading.Condition,
    finished: list[int],
    report: Callable[[int], None],
    stop: _Either,
    abandon: threading.Event,
    halt: threading.Event,
    when_idle: Callable[[], None] | None = None,
) -> None:
    """Report scenarios as they finish until the workers end, or, after an interrupt, until
    the grace period ends or the user abandons them: then `halt` is set, so that what they
    still wait for or read stops.

    Progress is printed from this thread, so a worker goes straight from one scenario to the
    next instead of queueing for the terminal. `when_idle` runs once, the first time nothing
    finished for 0.1 s after a first scenario did: the agents are running and its work (getting
    the reports ready) holds no lane up, neither before the first hook request nor between runs.
    """
    grace_deadline: float | None = None
    reported = False
    while True:
        idle = False
        with done:
            if not finished and any(t.is_alive() for t in threads):
                idle = not done.wait(0.1)
            # Looked at before the batch is taken: a worker adds its scenario to `finished`
            # before it ends, so once every thread has ended, the batch holds all that is left.
            # (Looked at after, a scenario finished in between would never be reported.)
            ended = not any(t.is_alive() for t in threads)
            batch, finished[:] = list(finished), []
        for index in batch:
            report(index)
        if ended:
            return
        reported = reported or bool(batch)
        if idle and reported and when_idle is not None:
            when_idle()
            when_idle = None
        if stop.is_set():
            grace_deadline = grace_deadline or time.monotonic() + INTERRUPT_GRACE_S
            if abandon.is_set() or time.monotonic() >= grace_deadline:
                halt.set()
                return


def _prepare(faults: Faults) -> None:
    from clawspec.runner.finish import prepare

    with faults.guard("preparing the reports"):
        prepare()


class _Either:
    """Set when either event is (an interrupt, or a fault of the run)."""

    def __init__(self, *events: threading.Event) -> None:
        self._events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self._events)


def _result(
    plan: ScenarioPlan,
    attempt_outcomes: Sequence[ScenarioOutcome | Ran | None],
    env: RunEnv,
    running: dict[tuple[int, int], StartedScenario | None],
    index: int | None = None,
    broken: bool = False,
    budget: Budget | None = None,
    counted: Budget | None = None,
) -> ScenarioResult:
    """One scenario's result: its only attempt, or all its attempts folded together (those
    never started: skipped for the `budget`'s reason when a spend limit stopped the run).

    A conversation abandoned while it ran (its state in `running`) keeps what it finished;
    what its finished turns spent is added to `counted`."""
    spent = budget.reason() if budget is not None and not broken else None
    results = []
    for attempt, outcome in enumerate(attempt_outcomes):
        if isinstance(outcome, ScenarioOutcome):
            results.append(outcome.result)
            continue
        started = index is not None and (index, attempt) in running
        state = running.get((index, attempt)) if started and index is not None else None
        if state is not None and state.conversation is None:
            result = _abandoned_run(plan, state, broken)
        elif state is not None:
            result = _abandoned(plan, state, broken)
            if counted is not None:
                # Counted here, not by its lane should it still finish (its check asks).
                running.pop((index, attempt), None)
                if spends(result, state.invoked, state.unreachable):
                    counted.add(plan.id, result)
        else:
            result = _not_completed(plan, started=started, broken=broken, spent=spent)
        results.append(result)
    if len(results) == 1:
        return results[0]
    from clawspec.regression.attempts import combine_attempts

    minimum = plan.scenario.min_pass_rate
    observed = [o.observed if isinstance(o, ScenarioOutcome) else None for o in attempt_outcomes]
    return combine_attempts(
        results, env.settings.min_pass_rate if minimum is None else minimum, observed
    )


def unrun_report(
    plans: Sequence[ScenarioPlan], message: str, status: Status = Status.ERROR
) -> RunReport:
    """A report in which no scenario could run (e.g. the gateway never came up)."""
    from clawspec.reports.model import RunReport, Totals

    results = [_unrun(plan, status, message) for plan in plans]
    return RunReport(
        version=__version__,
        run_id=new_run_id(),
        started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        duration_ms=0,
        totals=Totals.of(results),
        scenarios=results,
    )


def _abandoned(plan: ScenarioPlan, state: StartedScenario, broken: bool) -> ScenarioResult:
    """A conversation that never finished: its turns so far, for an interrupt or (`broken`)
    an internal error. A problem in reading them must not cost the reports: then it is
    reported as any abandoned scenario is."""
    try:
        return abandoned_conversation(state, _unfinished(broken) if broken else None)
    except Exception:
        log.debug("the turns of the abandoned %s were not kept", plan.id, exc_info=True)
        return _not_completed(plan, started=True, broken=broken)


def _abandoned_run(plan: ScenarioPlan, state: StartedScenario, broken: bool) -> ScenarioResult:
    """A one-message scenario whose agent was still running: its run id and time so far."""
    try:
        return abandoned_run(state, _unfinished(broken))
    except Exception:  # what it had done is a nicety: the reports must not be lost for it
        log.debug("the run of the abandoned %s was not kept", plan.id, exc_info=True)
        return _not_completed(plan, started=True, broken=broken)


# Why a scenario stopped by an internal error did not finish, or did not run.
_BUG = f"an internal error in ClawSpec stopped the run (see {CRASH_LOG_NAME})"


def _unfinished(broken: bool) -> str:
    """Why a started scenario did not finish: an internal error (`broken`), else an interrupt."""
    return f"not finished: {_BUG}" if broken else "interrupted: abandoned while running"


def _not_completed(
    plan: ScenarioPlan, started: bool, broken: bool = False, spent: str | None = None
) -> ScenarioResult:
    """A scenario that never finished because the run was interrupted, or stopped at an
    internal error (`broken`), or never started because a spend limit was reached (`spent`,
    the budget's reason)."""
    if spent is not None and not started:
        return _unrun(plan, Status.SKIP, f"not run: {spent}")
    if started:
        return _unrun(plan, Status.ERROR, _unfinished(broken))
    why = _BUG if broken else "the run was interrupted"
    return _unrun(plan, Status.SKIP, f"not run: {why}")


def _unrun(plan: ScenarioPlan, status: Status, message: str) -> ScenarioResult:
    from clawspec.reports.model import ScenarioResult

    return ScenarioResult(
        **plan.identity.report_fields(),
        line=plan.contract.scenario_line(plan.index),
        example_source=plan.example.source if plan.example else None,
        target=plan.contract.contract.target.path,
        status=status,
        message=message,
        run_id=None,
        duration_ms=0,
        tags=list(plan.scenario.tags),
        turns=no_turns(plan.scenario),
    )

"""Following sub-agents, and waiting: `TrajectoryReader` reads a run from the stores of one
gateway's state folder and follows its sub-agents into their own agents' stores; `wait_for`
reads until the run is completely recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from clawspec.gateway.trajectory.errors import RunNotFound, RunNotRecorded, StoreMissing
from clawspec.gateway.trajectory.store import TrajectoryStore
from clawspec.gateway.trajectory.values import SubagentRef, Trajectory

MAX_FOLLOW_DEPTH = 8  # sub-agents of sub-agents…: a guard against a cycle in the records


@dataclass
class TrajectoryReader:
    """The stores of one gateway's state folder: reads a run and follows its sub-agents into
    their own agents' stores."""

    state_dir: Path
    options: dict[str, Any] = field(default_factory=dict)  # TrajectoryStore's settings
    _stores: dict[str, TrajectoryStore] = field(default_factory=dict, init=False, repr=False)

    def store(self, agent: str) -> TrajectoryStore:
        """`agent`'s store (one per agent, kept open between lookups)."""
        if agent not in self._stores:
            self._stores[agent] = TrajectoryStore.of(self.state_dir, agent, **self.options)
        return self._stores[agent]

    def close(self) -> None:
        for store in self._stores.values():
            store.close()

    def __enter__(self) -> TrajectoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat_run(self, agent: str, run_id: str, session_key: str | None = None) -> Trajectory:
        """A chat run (`run_id`: the response's id), its sub-agents followed."""
        return self.follow(self.store(agent).run(run_id, session_key=session_key))

    def hook_run(self, agent: str, session_key: str) -> Trajectory:
        """The run a hook request started, its sub-agents followed."""
        return self.follow(self.store(agent).hook_run(session_key))

    def conversation(self, agent: str, session_key: str) -> list[Trajectory]:
        """The runs of a conversation's session in order, each with its sub-agents."""
        return [self.follow(run) for run in self.store(agent).session_runs(session_key)]

    def follow(self, run: Trajectory, depth: int = 0) -> Trajectory:
        """`run` with the runs its `sessions_spawn` calls started (a child not recorded yet,
        or not completely, is pending: read again later)."""
        refs = [c.spawned for c in run.calls if c.spawned is not None]
        if not refs or depth >= MAX_FOLLOW_DEPTH:
            return run
        children: list[Trajectory] = []
        pending: list[SubagentRef] = []
        for ref in refs:
            try:
                store = self.store(ref.agent)
                if ref.run_id:
                    child = store.run(ref.run_id, session_key=ref.session_key)
                else:
                    child = store.hook_run(ref.session_key)
            except (RunNotFound, StoreMissing):
                pending.append(ref)
                continue
            if child.has_ended:
                children.append(self.follow(child, depth + 1))
            else:
                pending.append(ref)
        return replace(run, children=tuple(children), pending_children=tuple(pending))


def wait_for(
    read: Callable[[], Trajectory],
    *,
    timeout_s: float,
    poll_s: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    until: Literal["complete", "settled"] = "settled",
) -> Trajectory:
    """Read until the run is completely recorded (with its sub-agents: `settled`), or until
    `timeout_s` has passed on `clock`; then RunNotRecorded says what was still missing.

    OpenClaw writes a run's events as it goes and a spawned sub-agent starts late, so the
    record may trail the hook's answer; the scenario's timeout bounds the wait."""
    deadline = clock() + timeout_s
    last: Trajectory | None = None
    missing = ""
    while True:
        try:
            last = read()
            done = last.settled if until == "settled" else last.has_ended
            if done:
                return last
            missing = (
                "the run has not ended"
                if not last.has_ended
                else f"{len(last.pending_children)} sub-agent run(s) have not ended"
            )
        except (
            RunNotFound,
            StoreMissing,
        ) as exc:  # a fresh gateway makes its store at its first run
            missing = str(exc)
        if clock() >= deadline:
            raise RunNotRecorded(
                f"the run's record was not complete after {round(timeout_s, 1):g} s: {missing}"
            )
        sleep(poll_s)

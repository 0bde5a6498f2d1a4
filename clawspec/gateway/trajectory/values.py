"""What is read of OpenClaw's run record: a run (`Trajectory`), its tool calls, the messages
it sent, its usage, and what OpenClaw did not record as it was sent (`ArgsCut`, `TextCut`).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

JsonValue = Any  # a value decoded from JSON: None, bool, int, float, str, list, dict


@dataclass(frozen=True)
class Usage:
    """A run's summed usage, as `model.completed` records it. `cost` is None when not recorded."""

    input: int
    output: int
    cache_read: int
    cache_write: int
    total: int
    cost: float | None


@dataclass(frozen=True)
class SubagentRef:
    """A sub-agent a `sessions_spawn` call started: its agent, session key and run id."""

    agent: str
    session_key: str
    run_id: str | None


@dataclass(frozen=True)
class ArgsCut:
    """A part of a call's arguments OpenClaw did not record as the model sent it: it bounds and
    redacts what it writes (see `args_cuts`). `path` is where in the arguments (keys and list
    indexes; () the arguments as a whole), `reason` OpenClaw's own word for it
    (`trajectory-field-size-limit`, …, or `redacted`), `detail` what that means, in words."""

    path: tuple[str | int, ...]
    reason: str
    detail: str

    @property
    def where(self) -> str:
        """The path as a message names it: `content`, `options.tags[64]`, `arguments`."""
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
        return text or "arguments"


@dataclass(frozen=True)
class TextCut:
    """A text OpenClaw recorded only as its marker, not as the text (over its limit of 32,768
    characters for one field, or redacted): `reason` is OpenClaw's own word for it, `detail`
    what is known of the text, in words ("40,004 characters, over its trajectory limit of
    32,768")."""

    reason: str
    detail: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a run, Tool Search's wrappers taken out.

    `args` is what the model sent; `args_known` is False when it cannot be told: a
    `tool_search_code` call with no inner call recorded (its code made the calls), or an event cut
    for its size (`note` says which). `cuts`: the parts of `args` OpenClaw itself cut or redacted
    before writing them (its markers stay in `args` at those places; the rest is as sent): an
    argument comparison that touches one cannot be decided. `name_known` is False for a call
    OpenClaw recorded without even its name (an event over its size limit, cut whole): its tool
    could be any. `refused`: the gateway answered without running the tool (not a call, for
    counting). `through`: the wrapper the call was made through, if any.
    """

    tool_call_id: str
    name: str
    args: JsonValue
    args_known: bool
    success: bool | None  # None: no result recorded
    refused: bool
    result_text: str | None
    through: str | None = None
    spawned: SubagentRef | None = None
    note: str | None = None
    cuts: tuple[ArgsCut, ...] = ()
    name_known: bool = True


@dataclass(frozen=True)
class SentMessage:
    """A message the agent sent through a messaging tool (`messagingToolSentTargets`; a text
    OpenClaw kept only as its marker, with no target of its own, is one with no target).
    `text_cut`: OpenClaw kept no text of it (`text` is None), only its marker."""

    tool: str | None
    provider: str | None
    to: str | None
    text: str | None
    text_cut: TextCut | None = None


@dataclass(frozen=True)
class Trajectory:
    """One run as OpenClaw recorded it."""

    store: Path
    agent: str
    run_id: str
    session_id: str
    session_key: str | None
    provider: str | None
    model: str | None
    prompt: str | None  # None: not recorded, or kept only as a marker (`prompt_cut`)
    # The last of assistant_texts; None: the run wrote no final text, or OpenClaw kept only its
    # marker (`reply_cut` then says so: its text is not known).
    reply: str | None
    assistant_texts: tuple[str | None, ...]  # None: a text OpenClaw kept only as its marker
    usage: Usage | None
    stop_reason: str | None
    final_status: str | None  # trace.artifacts' finalStatus ("success", …)
    timed_out: bool
    aborted: bool
    tool_calls: tuple[ToolCall, ...]
    sent_texts: tuple[str, ...]  # the texts recorded (those kept only as a marker are in `sent`)
    sent: tuple[SentMessage, ...]
    complete: bool  # session.ended recorded and every event read: nothing more to read
    children: tuple[Trajectory, ...] = ()  # sub-agent runs, followed into their own stores
    pending_children: tuple[SubagentRef, ...] = ()  # spawned, not (completely) recorded yet
    cut: tuple[str, ...] = ()  # notes on what the read bounds left out
    # More events than the read's bound (MAX_RUN_EVENTS): the calls are those of the first
    # events only; the run's final events (reply, usage, stop reason, messages, end) are read
    # past the bound all the same.
    capped: bool = False
    ended: bool | None = None  # session.ended recorded (None: as `complete`)
    reply_cut: TextCut | None = None  # OpenClaw kept only its marker of the reply
    prompt_cut: TextCut | None = None  # OpenClaw kept only its marker of the prompt

    @property
    def has_ended(self) -> bool:
        """session.ended is recorded: OpenClaw writes nothing more for this run (its record may
        still be `capped`)."""
        return self.complete if self.ended is None else self.ended

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The calls that ran (refused ones are not calls)."""
        return tuple(c for c in self.tool_calls if not c.refused)

    def with_refusals(self, refused: Container[tuple[str, str]]) -> Trajectory:
        """This run and its sub-agents with the calls ClawSpec's plugin saw refused marked so
        (keys (run id, tool call id), as `clawspec.gateway.refusals` gives them): the record
        itself tells only the gateway's "not found" answer from a call that ran."""
        calls = tuple(
            replace(call, refused=True) if (self.run_id, call.tool_call_id) in refused else call
            for call in self.tool_calls
        )
        children = tuple(child.with_refusals(refused) for child in self.children)
        return replace(self, tool_calls=calls, children=children)

    @property
    def settled(self) -> bool:
        """This run and every sub-agent it spawned have ended: nothing more will be recorded
        (a `capped` record is read as far as its bound, and no wait makes it longer)."""
        return (
            self.has_ended
            and not self.pending_children
            and all(child.settled for child in self.children)
        )

"""What held in every good run: the `then` items `clawspec bless` proposes.

The input is one `Observed` per attempt (its status, duration and `AttemptEvidence`); the output
is a `Proposal` per scope (the scenario's `then`, each turn's), each item a mapping of an
assertion that exists, with its real fields, and a comment naming its evidence. Candidates that
held in only some good runs are kept apart (`unstable`) with their count, those that held in
every run but cannot be stated (`left_out`) or came past a limit (`over_limit`) with the reason:
never proposed, always said.

Values are compared after they are generalised: a template variable's value becomes the
variable (`{{today}}`, `{{run_id}}`, a row's `{{vars.X}}`), and what is left of a volatile
pattern (a date, a time, a long id) becomes `{matches: …}` where a pattern is allowed (tool
arguments) and drops the candidate where only a literal is (paths, headings, reply text): a
literal that merely happened to agree in K runs would flake on the next.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from clawspec.bless.arguments import arguments
from clawspec.bless.artifacts import files
from clawspec.bless.proposal import (
    MASKED,
    MAX_REPLY_SENTENCES,
    Item,
    Observed,
    Proposal,
    Settings,
    ordered,
    place,
    span,
    unstatable,
    variables_of,
)
from clawspec.bless.replies import replies
from clawspec.reports.model import AttemptEvidence

__all__ = ["MAX_REPLY_SENTENCES", "Item", "Observed", "Proposal", "Settings", "propose"]


def propose(runs: Sequence[Observed], settings: Settings) -> list[Proposal]:
    """Proposals for the scenario's `then` and, for a conversation, each turn's (good runs
    only; the caller makes sure there are at least two)."""
    good = [r for r in runs if r.good]
    evidence = [r.evidence for r in good if r.evidence is not None]
    variables = [variables_of(r, settings) for r in good]
    turned = [e.turns for e in evidence]
    if all(t is not None for t in turned) and turned:
        count = min(len(t or []) for t in turned)
        proposals: list[Proposal] = []
        for index in range(count):
            scoped = [(t or [])[index] for t in turned]
            proposal = Proposal(f"turn {index + 1}", index)
            _behaviour(proposal, scoped, variables)
            proposals.append(proposal)
        whole = Proposal("then", None)
        _whole(whole, good, evidence, settings)
        return [*proposals, whole]
    whole = Proposal("then", None)
    _behaviour(whole, evidence, variables)
    _whole(whole, good, evidence, settings)
    return [whole]


# -- scopes ---------------------------------------------------------------------------------


def _behaviour(
    proposal: Proposal, evidence: Sequence[AttemptEvidence], variables: Sequence[dict[str, str]]
) -> None:
    """Tools, their arguments, delegations, files and reply sentences of one scope."""
    k = len(evidence)
    known = all(e.tools_known for e in evidence)
    tools = [[t.name for t in e.tools] for e in evidence] if known else []
    for name in ordered(tools):
        held = sum(1 for names in tools if name in names)
        item = Item(f"tool_was_called:{name}", {"type": "tool_was_called", "tool": name}, "")
        if unstatable(proposal, item, name, f"the tool's name {MASKED}"):
            continue
        place(proposal, item, held, k, _calls_comment(name, tools) if held == k else "")
        if held == k:
            arguments(proposal, name, evidence, variables)
    delegated = [e.delegations for e in evidence]
    for agent in ordered(delegated):
        held = sum(1 for d in delegated if agent in d)
        item = Item(
            f"delegation_occurred:{agent}", {"type": "delegation_occurred", "to_agent": agent}, ""
        )
        if unstatable(proposal, item, agent, f"the agent's id {MASKED}"):
            continue
        place(proposal, item, held, k, "")
    files(proposal, evidence, variables)
    replies(proposal, evidence, variables)


def _whole(
    proposal: Proposal,
    good: Sequence[Observed],
    evidence: Sequence[AttemptEvidence],
    settings: Settings,
) -> None:
    """What only the whole run can say: completion, the tools allowed, tokens, duration."""
    k = len(evidence)
    completed = [e.completed for e in evidence]
    if all(c is not None for c in completed):
        held = sum(1 for c in completed if c)
        place(proposal, Item("run_completed", {"type": "run_completed"}, ""), held, k, "")
    tools = sorted({t.name for e in evidence for t in _all_tools(e)})
    # Only when every run told its tool calls: an unknown list is not an empty one.
    if all(e.tools_known for e in evidence):
        allowed = Item(
            "tool_not_permitted",
            {"type": "tool_not_permitted", "allowed_tools": tools},
            f"allowed_tools is the union of the tools seen in {k} runs: any other fails",
        )
        # Without the masked name the list would forbid a tool the agent calls.
        if not unstatable(proposal, allowed, " ".join(tools), f"a tool's name {MASKED}"):
            proposal.items.append(allowed)
    tokens = [e.tokens for e in evidence]
    if tokens and all(t is not None for t in tokens):
        counts = [t for t in tokens if t is not None]
        limit = math.ceil(max(counts) * (1 + settings.tolerance))
        proposal.items.append(
            Item(
                "token_budget",
                {"type": "token_budget", "max_total_tokens": limit},
                f"held in {k} of {k} runs; tokens {span(counts)}; limit = highest x "
                f"{1 + settings.tolerance:g}",
            )
        )
    if settings.trace_backend:
        durations = [r.duration_ms for r in good]
        limit_ms = math.ceil(max(durations) * (1 + settings.tolerance))
        proposal.items.append(
            Item(
                "trace_duration",
                {"type": "trace_duration", "max_ms": limit_ms},
                f"held in {k} of {k} runs; runs took {span(durations)} ms (wall clock, an "
                "upper bound of the trace's)",
            )
        )


def _all_tools(evidence: AttemptEvidence) -> Iterable[Any]:
    yield from evidence.tools
    for turn in evidence.turns or ():
        yield from turn.tools


def _calls_comment(name: str, tools: Sequence[Sequence[str]]) -> str:
    counts = [names.count(name) for names in tools]
    low, high = min(counts), max(counts)
    return (
        f"called {low} time{'s' if low != 1 else ''}"
        if low == high
        else f"called {low}\u2013{high} times"
    )

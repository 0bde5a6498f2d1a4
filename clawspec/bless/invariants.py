"""What held in every good run: the `then` items `clawspec bless` proposes.

The input is one `Observed` per attempt (its status, duration and `AttemptEvidence`); the output
is a `Proposal` per scope (the scenario's `then`, each turn's), each item a mapping of an
assertion that exists, with its real fields, and a comment naming its evidence. Candidates that
held in only some good runs are kept apart (`unstable`), never proposed.

Values are compared after they are generalised: a template variable's value becomes the
variable (`{{today}}`, `{{run_id}}`, a row's `{{vars.X}}`), and what is left of a volatile
pattern (a date, a time, a long id) becomes `{matches: …}` where a pattern is allowed (tool
arguments) and drops the candidate where only a literal is (paths, headings, reply text): a
literal that merely happened to agree in K runs would flake on the next.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawspec.reports.model import AttemptEvidence, FileSeen
from clawspec.secrets import MASK
from clawspec.status import Status
from clawspec.traffic.volatile import CLOCK_TEXT, DEFAULT_VOLATILE_PATTERNS

GOOD = (Status.PASS, Status.WARN)
MAX_REPLY_SENTENCES = 5
MAX_VALUE_CHARS = 200  # an argument value longer than this is not proposed (a file's content)
MIN_SENTENCE_CHARS = 8
# What counts as volatile in a value: the clock's formats and the default id patterns (not the
# machine-specific ones, which never reach an argument).
_VOLATILE = re.compile("|".join(f"(?:{p})" for p in (*CLOCK_TEXT, *DEFAULT_VOLATILE_PATTERNS[:2])))
_GENERIC = {  # what a volatile part is replaced by in a `matches` pattern
    "date": r"\d{4}-\d{2}-\d{2}",
}
_VARIABLE = re.compile(r"\{\{[^{}]+\}\}")


@dataclass(frozen=True)
class Observed:
    """One attempt as bless sees it."""

    label: str  # "attempt 3 of report.json"
    status: Status
    duration_ms: int
    evidence: AttemptEvidence | None
    row_vars: Mapping[str, str] = field(default_factory=dict)  # vars.X of an outline's row

    @property
    def good(self) -> bool:
        return self.status in GOOD and self.evidence is not None


@dataclass(frozen=True)
class Item:
    """One proposed (or unstable) `then` item."""

    key: str  # what makes two items the same candidate ("tool_was_called:write")
    mapping: dict[str, Any]
    comment: str


@dataclass
class Proposal:
    """What held in every good run of one scope, and what held in only some."""

    scope: str  # "then", or "turn 2"
    turn: int | None
    items: list[Item] = field(default_factory=list)
    unstable: list[Item] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    tolerance: float = 0.5
    trace_backend: bool = False


def propose(runs: Sequence[Observed], settings: Settings) -> list[Proposal]:
    """Proposals for the scenario's `then` and, for a conversation, each turn's (good runs
    only; the caller makes sure there are at least two)."""
    good = [r for r in runs if r.good]
    evidence = [r.evidence for r in good if r.evidence is not None]
    variables = [_variables(r) for r in good]
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
    for name in _ordered(tools):
        held = sum(1 for names in tools if name in names)
        item = Item(f"tool_was_called:{name}", {"type": "tool_was_called", "tool": name}, "")
        _sort(proposal, item, held, k, _calls_comment(name, tools) if held == k else "")
        if held == k:
            _arguments(proposal, name, evidence, variables)
    delegated = [e.delegations for e in evidence]
    for agent in _ordered(delegated):
        held = sum(1 for d in delegated if agent in d)
        item = Item(
            f"delegation_occurred:{agent}", {"type": "delegation_occurred", "to_agent": agent}, ""
        )
        _sort(proposal, item, held, k, "")
    _files(proposal, evidence, variables)
    _replies(proposal, evidence, variables)


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
        _sort(proposal, Item("run_completed", {"type": "run_completed"}, ""), held, k, "")
    tools = sorted({t.name for e in evidence for t in _all_tools(e)})
    # Only when every run told its tool calls: an unknown list is not an empty one.
    if all(e.tools_known for e in evidence):
        proposal.items.append(
            Item(
                "tool_not_permitted",
                {"type": "tool_not_permitted", "allowed_tools": tools},
                f"allowed_tools is the union of the tools seen in {k} runs: any other fails",
            )
        )
    tokens = [e.tokens for e in evidence]
    if tokens and all(t is not None for t in tokens):
        counts = [t for t in tokens if t is not None]
        limit = math.ceil(max(counts) * (1 + settings.tolerance))
        proposal.items.append(
            Item(
                "token_budget",
                {"type": "token_budget", "max_total_tokens": limit},
                f"held in {k} of {k} runs; tokens {_span(counts)}; limit = highest x "
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
                f"held in {k} of {k} runs; runs took {_span(durations)} ms (wall clock, an "
                "upper bound of the trace's)",
            )
        )


def _all_tools(evidence: AttemptEvidence) -> Iterable[Any]:
    yield from evidence.tools
    for turn in evidence.turns or ():
        yield from turn.tools


def _sort(proposal: Proposal, item: Item, held: int, k: int, extra: str) -> None:
    comment = f"held in {held} of {k} runs" + (f"; {extra}" if extra else "")
    placed = Item(item.key, item.mapping, comment)
    (proposal.items if held == k else proposal.unstable).append(placed)


def _calls_comment(name: str, tools: Sequence[Sequence[str]]) -> str:
    counts = [names.count(name) for names in tools]
    low, high = min(counts), max(counts)
    return (
        f"called {low} time{'s' if low != 1 else ''}"
        if low == high
        else f"called {low}\u2013{high} times"
    )


# -- arguments ------------------------------------------------------------------------------


def _arguments(
    proposal: Proposal,
    name: str,
    evidence: Sequence[AttemptEvidence],
    variables: Sequence[dict[str, str]],
) -> None:
    """`tool_called_with` for the argument keys whose (generalised) values never varied: in
    every run, some call of the tool had that key with that value."""
    per_run: list[dict[str, set[str]]] = []
    for e, names in zip(evidence, variables, strict=True):
        seen: dict[str, set[str]] = {}
        for tool in e.tools:
            if tool.name != name or not isinstance(tool.args, dict) or tool.args_cut:
                continue
            for key, value in tool.args.items():
                general = _general_value(value, names)
                if general is not None:
                    seen.setdefault(key, set()).add(json.dumps(general, sort_keys=True))
        per_run.append(seen)
    if not per_run or any(not seen for seen in per_run):
        return  # the arguments are not known in every run
    k = len(per_run)
    args: dict[str, Any] = {}
    for key in dict.fromkeys(key for seen in per_run for key in seen):
        common = set.intersection(*(seen.get(key, set()) for seen in per_run))
        if common:
            args[key] = json.loads(sorted(common)[0])
        else:
            held = sum(1 for seen in per_run if key in seen)
            proposal.unstable.append(
                Item(
                    f"tool_called_with:{name}:{key}",
                    {"type": "tool_called_with", "tool": name, "args": {key: "…"}},
                    f"argument '{key}' varied between runs (present in {held} of {k})",
                )
            )
    if args:
        proposal.items.append(
            Item(
                f"tool_called_with:{name}",
                {"type": "tool_called_with", "tool": name, "args": args},
                f"held in {k} of {k} runs; the argument values that never varied",
            )
        )


def _general_value(value: Any, variables: Mapping[str, str]) -> Any:
    """A value as a contract should state it; None when it cannot be stated (too long)."""
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS or MASK in value:
            return None  # too long to state, or a secret the report masked
        text = _with_variables(value, variables)
        if not _VOLATILE.search(_VARIABLE.sub("", text)):
            return text
        return {"matches": _pattern(text)}
    if isinstance(value, dict):
        parts = {k: _general_value(v, variables) for k, v in value.items()}
        return None if any(v is None for v in parts.values()) else parts
    if isinstance(value, list):
        items = [_general_value(v, variables) for v in value]
        if any(v is None or (isinstance(v, dict) and "matches" in v) for v in items):
            return None  # a list is compared as a whole: no patterns inside it
        return items
    if len(json.dumps(value, default=str)) > MAX_VALUE_CHARS:
        return None
    return value


def _pattern(text: str) -> str:
    """An anchored regular expression for `text` with its volatile parts (and any variable
    left in it) matched by their kind, the rest literal."""
    parts: list[str] = []
    position = 0
    for found in re.finditer(f"{_VARIABLE.pattern}|{_VOLATILE.pattern}", text):
        parts.append(_escape(text[position : found.start()]))
        parts.append(_generic(found.group(0)))
        position = found.end()
    parts.append(_escape(text[position:]))
    return "^" + "".join(parts) + "$"


_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def _escape(text: str) -> str:
    """`text` as a regular expression that matches it literally, escaping only what is special
    (re.escape also escapes spaces and `#`: correct, but hard to read in a contract)."""
    return _SPECIAL.sub(r"\\\1", text).replace("\n", "\\n").replace("\t", "\\t")


def _generic(volatile: str) -> str:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", volatile):
        return _GENERIC["date"]
    if re.fullmatch(r"[0-9a-fA-F-]+", volatile):
        return f"[0-9a-fA-F-]{{{len(volatile)}}}"
    return ".+?"


def _with_variables(text: str, variables: Mapping[str, str]) -> str:
    """`text` with the run's variables' values written as the variables (longest first); a
    row's value (`vars.X`) only when it is the whole text: a short row value inside other
    text is more likely a coincidence than the variable."""
    for name, value in variables.items():
        if name.startswith("vars.") and text == value:
            return "{{" + name + "}}"
    volatile = [(n, v) for n, v in variables.items() if not n.startswith("vars.")]
    for name, value in sorted(volatile, key=lambda kv: -len(kv[1])):
        if len(value) >= 4 and value in text:
            text = text.replace(value, "{{" + name + "}}")
    return text


def _variables(run: Observed) -> dict[str, str]:
    found = dict(run.evidence.variables) if run.evidence is not None else {}
    found.update({f"vars.{k}": v for k, v in run.row_vars.items() if isinstance(v, str)})
    return found


# -- files ----------------------------------------------------------------------------------


def _files(
    proposal: Proposal, evidence: Sequence[AttemptEvidence], variables: Sequence[dict[str, str]]
) -> None:
    k = len(evidence)
    per_run: list[dict[str, FileSeen]] = []
    for e, names in zip(evidence, variables, strict=True):
        per_run.append({_with_variables(f.path, names): f for f in e.files})
    for path in _ordered([list(files) for files in per_run]):
        held = sum(1 for files in per_run if path in files)
        literal = not _VOLATILE.search(_VARIABLE.sub("", path))
        if not literal:
            proposal.unstable.append(
                Item(
                    f"artifact_exists:{path}",
                    {"type": "artifact_exists", "path": path},
                    "the path holds a date or id no template variable gives: not proposed",
                )
            )
            continue
        _sort(
            proposal,
            Item(f"artifact_exists:{path}", {"type": "artifact_exists", "path": path}, ""),
            held,
            k,
            "",
        )
        if held != k:
            continue
        versions = [files[path] for files in per_run]
        contains: dict[str, Any] = {"type": "artifact_contains", "path": path}
        for kind in ("sections", "fields"):
            lists = [getattr(v, kind) for v in versions]
            if any(found is None for found in lists):
                continue
            names = [variables[i] for i in range(k)]
            general = [
                [_with_variables(s, names[i]) for s in (found or [])]
                for i, found in enumerate(lists)
            ]
            common = [
                s
                for s in dict.fromkeys(general[0])
                if all(s in other for other in general[1:])
                and not _VOLATILE.search(_VARIABLE.sub("", s))
            ]
            if common:
                contains[kind] = common
        if len(contains) > 2:
            proposal.items.append(
                Item(
                    f"artifact_contains:{path}",
                    contains,
                    f"held in {k} of {k} runs; the sections/fields present in every version",
                )
            )


# -- the reply ------------------------------------------------------------------------------


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences(reply: str, variables: Mapping[str, str]) -> list[str]:
    found = []
    for part in _SENTENCE_END.split(reply):
        text = " ".join(part.split())
        text = _with_variables(text, variables)
        stated = not _VOLATILE.search(_VARIABLE.sub("", text)) and MASK not in text
        if len(text) >= MIN_SENTENCE_CHARS and stated:
            found.append(text)
    return found


def _replies(
    proposal: Proposal, evidence: Sequence[AttemptEvidence], variables: Sequence[dict[str, str]]
) -> None:
    replies = [e.reply for e in evidence]
    if any(r is None for r in replies):
        return
    k = len(replies)
    per_run = [
        {s.casefold(): s for s in _sentences(r or "", names)}
        for r, names in zip(replies, variables, strict=True)
    ]
    proposed = 0
    partial = 0
    for folded in dict.fromkeys(key for sentences in per_run for key in sentences):
        held = sum(1 for sentences in per_run if folded in sentences)
        text = next(sentences[folded] for sentences in per_run if folded in sentences)
        item = Item(f"reply_contains:{folded}", {"type": "reply_contains", "text": text}, "")
        if held == k and proposed < MAX_REPLY_SENTENCES:
            proposed += 1
            _sort(proposal, item, held, k, "a sentence of every reply")
        elif held < k and held > 1 and partial < MAX_REPLY_SENTENCES:
            partial += 1
            _sort(proposal, item, held, k, "")


# -- helpers --------------------------------------------------------------------------------


def _ordered(lists: Sequence[Sequence[str]]) -> list[str]:
    """Every value of the lists once, in the order of first appearance."""
    return list(dict.fromkeys(v for values in lists for v in values))


def _span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}\u2013{high:,}"

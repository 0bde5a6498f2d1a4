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

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawspec.bless.observed import MAX_FILES, contract_path, written_paths
from clawspec.gateway.trajectory import cut_detail
from clawspec.inputs.paths import escapes_workspace
from clawspec.reports.model import AttemptEvidence, FileSeen
from clawspec.secrets import MASK
from clawspec.status import Status
from clawspec.traffic.volatile import CLOCK_TEXT, DEFAULT_VOLATILE_PATTERNS

GOOD = (Status.PASS, Status.WARN)
MAX_REPLY_SENTENCES = 5
MAX_CALLS_WITH = 5  # `tool_called_with` items per tool (one per call made in every run)
MAX_LISTED = 10  # candidates of one kind listed apart (held in some runs, over a limit)
MAX_VALUE_CHARS = 200  # an argument value longer than this is not proposed (a file's content)
MIN_SENTENCE_CHARS = 8
# Dates and stamps in the other formats an agent writes (the clock's own formats above them
# win where both match: a full ISO date is never cut to its year-month).
_YEAR = r"(?:19|20)\d{2}"
_MM = r"(?:0[1-9]|1[0-2])"
_DD = r"(?:0[1-9]|[12]\d|3[01])"
_DATES: tuple[str, ...] = (
    # compact: 20261126, 20261126T101500Z, report-20261126.md
    rf"(?<!\d){_YEAR}{_MM}{_DD}(?:T\d{{4,6}}Z?)?(?!\d)",
    # with slashes or dots: 26/11/2026, 11/26/2026, 2026/11/26, 26.11.2026
    r"(?<![\d/.])\d{1,2}[/.]\d{1,2}[/.]\d{4}(?![\d/])",
    rf"(?<![\d/]){_YEAR}/\d{{1,2}}/\d{{1,2}}(?![\d/])",
    # an ISO week: 2026-W48, 2026W48, 2026-W48-4
    rf"(?<!\d){_YEAR}-?W\d{{2}}(?:-?[1-7])?(?![\d])",
    # a year-month: 2026-11, archive/2026-11/
    rf"(?<!\d){_YEAR}-{_MM}(?![\d])",
    # a week number: "Week 48"
    r"\b[Ww]eek \d{1,2}\b",
    # a weekday on its own: "Saved on Thursday."
    r"\b(?i:mon|tues|wednes|thurs|fri|satur|sun)day\b",
    # Unix time in seconds or milliseconds (2017-09 .. 2033-05)
    r"(?<![\d.])1[5-9]\d{8}(?:\d{3})?(?![\d.])",
    # a short hex id (a git commit, a content hash): 7+ hex digits with a digit and a letter
    r"(?<![0-9A-Za-z])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}(?![0-9A-Za-z])",
)
# What counts as volatile in a value: the clock's formats, the default id patterns (not the
# machine-specific ones, which never reach an argument) and the dates above.
_VOLATILE = re.compile(
    "|".join(f"(?:{p})" for p in (*CLOCK_TEXT, *DEFAULT_VOLATILE_PATTERNS[:2], *_DATES))
)
_GENERIC = {  # what a volatile part is replaced by in a `matches` pattern
    "date": r"\d{4}-\d{2}-\d{2}",
}
_VARIABLE = re.compile(r"\{\{[^{}]+\}\}")
# Why a value is not proposed (the candidate is listed as left out with it).
MASKED = f"holds the mask {MASK} (a secret the report hid): not proposed"
TEMPLATED = "holds template syntax ({{...}}) the agent wrote: not proposed"


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
    """What held in every good run of one scope, what held in only some, and what held but
    cannot be stated (a secret's mask, a date no variable gives, template syntax)."""

    scope: str  # "then", or "turn 2"
    turn: int | None
    items: list[Item] = field(default_factory=list)
    unstable: list[Item] = field(default_factory=list)
    left_out: list[Item] = field(default_factory=list)
    over_limit: list[Item] = field(default_factory=list)  # held in every run, past a limit
    # Candidates listed apart, by what they are; those past MAX_LISTED are only counted (a
    # chatty reply must not list hundreds of sentences), and the output says how many.
    listed: dict[str, int] = field(default_factory=dict)
    unlisted: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    tolerance: float = 0.5
    trace_backend: bool = False
    # The workspace root bless runs in: `{{workspace}}`'s value for attempts whose report did
    # not keep it (reports written before it was kept).
    workspace: str | None = None


def propose(runs: Sequence[Observed], settings: Settings) -> list[Proposal]:
    """Proposals for the scenario's `then` and, for a conversation, each turn's (good runs
    only; the caller makes sure there are at least two)."""
    good = [r for r in runs if r.good]
    evidence = [r.evidence for r in good if r.evidence is not None]
    variables = [_variables(r, settings) for r in good]
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
        if _unstatable(proposal, item, name, f"the tool's name {MASKED}"):
            continue
        _sort(proposal, item, held, k, _calls_comment(name, tools) if held == k else "")
        if held == k:
            _arguments(proposal, name, evidence, variables)
    delegated = [e.delegations for e in evidence]
    for agent in _ordered(delegated):
        held = sum(1 for d in delegated if agent in d)
        item = Item(
            f"delegation_occurred:{agent}", {"type": "delegation_occurred", "to_agent": agent}, ""
        )
        if _unstatable(proposal, item, agent, f"the agent's id {MASKED}"):
            continue
        _sort(proposal, item, held, k, "")
    _files(proposal, evidence, variables)
    _replies(proposal, evidence, variables)


def _unstatable(proposal: Proposal, item: Item, value: str, masked: str) -> bool:
    """True (and the item listed as left out) when `value` cannot be written as a literal: it
    holds the mask of a secret, or template syntax the contract would read as a variable."""
    if MASK in value:
        proposal.left_out.append(Item(item.key, item.mapping, masked))
        return True
    if "{{" in value:
        proposal.left_out.append(Item(item.key, item.mapping, f"it {TEMPLATED}"))
        return True
    return False


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
        allowed = Item(
            "tool_not_permitted",
            {"type": "tool_not_permitted", "allowed_tools": tools},
            f"allowed_tools is the union of the tools seen in {k} runs: any other fails",
        )
        # Without the masked name the list would forbid a tool the agent calls.
        if not _unstatable(proposal, allowed, " ".join(tools), f"a tool's name {MASKED}"):
            proposal.items.append(allowed)
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


@dataclass(frozen=True)
class _Left:
    """A value that cannot be stated, and why (empty: not worth naming, e.g. too long)."""

    reason: str = ""


def _arguments(
    proposal: Proposal,
    name: str,
    evidence: Sequence[AttemptEvidence],
    variables: Sequence[dict[str, str]],
) -> None:
    """`tool_called_with` for each call of the tool made in every run: the argument values of
    that one call that never varied. `tool_called_with` passes when ONE call has all its `args`,
    so values of different calls are never put together (that call never happened). Each call
    of the first run is matched, in every other run, with the call sharing most of what is left
    of its (generalised) values; what all of them share is one item."""
    per_run: list[list[dict[str, str]]] = []  # per run, per call: key -> its value as JSON
    left: dict[str, str] = {}  # key -> why its value was not stated
    for e, names in zip(evidence, variables, strict=True):
        calls: list[dict[str, str]] = []
        for tool in e.tools:
            if tool.name != name or not isinstance(tool.args, dict) or tool.args_cut:
                continue
            seen: dict[str, str] = {}
            for key, value in tool.args.items():
                general = (
                    _Left(f"its name {MASKED}")
                    if MASK in key or "{{" in key
                    else _general_value(value, names)
                )
                if isinstance(general, _Left):
                    if general.reason:
                        left.setdefault(key, general.reason)
                    continue
                seen[key] = json.dumps(general, sort_keys=True)
            calls.append(seen)
        per_run.append(calls)
    k = len(per_run)
    for key, reason in left.items():
        proposal.left_out.append(
            Item(
                f"tool_called_with:{name}:{key}",
                {"type": "tool_called_with", "tool": name, "args": {key: "…"}},
                f"argument '{key}' {reason}",
            )
        )
    if not per_run or any(not any(calls) for calls in per_run):
        return  # the arguments are not known in every run
    held: list[dict[str, str]] = []
    for anchor in per_run[0]:
        shared = dict(anchor)
        for calls in per_run[1:]:
            best = max(calls, key=lambda c: sum(1 for kv in shared.items() if kv in c.items()))
            shared = {key: v for key, v in shared.items() if best.get(key) == v}
        if shared and shared not in held:
            held.append(shared)
    # A call whose values are all among another's adds nothing: that one passes wherever it does.
    kept = [a for a in held if not any(a.items() < b.items() for b in held)]
    stated = {key for args in kept for key in args}
    for key in dict.fromkeys(key for calls in per_run for c in calls for key in c):
        if key not in stated and key not in left:
            present = sum(1 for calls in per_run if any(key in c for c in calls))
            proposal.unstable.append(
                Item(
                    f"tool_called_with:{name}:{key}",
                    {"type": "tool_called_with", "tool": name, "args": {key: "…"}},
                    f"argument '{key}' varied between runs (present in {present} of {k})",
                )
            )
    for number, args in enumerate(kept):
        item = Item(
            f"tool_called_with:{name}" + (f"#{number + 1}" if number else ""),
            {"type": "tool_called_with", "tool": name, "args": _loaded(args)},
            f"held in {k} of {k} runs; the values of one call that never varied",
        )
        if number < MAX_CALLS_WITH:
            proposal.items.append(item)
        else:
            _over_limit(proposal, item, f"at most {MAX_CALLS_WITH} calls of a tool are proposed")


def _loaded(args: Mapping[str, str]) -> dict[str, Any]:
    return {key: json.loads(value) for key, value in args.items()}


def _general_value(value: Any, variables: Mapping[str, str]) -> Any:
    """A value as a contract should state it; `_Left` when it cannot be stated (too long, a
    secret's mask, a number that is a date or a timestamp)."""
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS:
            return _Left()  # too long to state: a file's content
        if MASK in value:
            return _Left(MASKED)  # a secret the report masked
        if "{{" in value:
            # The agent's own `{{…}}`: the contract would read it as a template variable.
            # A pattern states it with its braces escaped (no `{{` left for the template).
            return {"matches": _raw_pattern(value, variables)}
        text = _with_variables(value, variables)
        if not _VOLATILE.search(_VARIABLE.sub("", text)):
            return text
        return {"matches": _pattern(text)}
    if isinstance(value, dict):
        parts = {k: _general_value(v, variables) for k, v in value.items()}
        for part in parts.values():
            if isinstance(part, _Left):
                return part
        if any(MASK in str(k) or "{{" in str(k) for k in parts):
            return _Left(MASKED if any(MASK in str(k) for k in parts) else TEMPLATED)
        return parts
    if isinstance(value, list):
        items = [_general_value(v, variables) for v in value]
        for item in items:
            if isinstance(item, _Left):
                return item
        if any(isinstance(v, dict) and "matches" in v for v in items):
            return _Left()  # a list is compared as a whole: no patterns inside it
        return items
    if len(json.dumps(value, default=str)) > MAX_VALUE_CHARS:
        return _Left()
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and _VOLATILE.fullmatch(str(value)):
        return _Left("is a number that looks like a date or a timestamp: not proposed")
    return value


def _pattern(text: str) -> str:
    """An anchored regular expression for `text` with its volatile parts (and any variable
    left in it) matched by their kind, the rest literal."""
    parts: list[str] = []
    position = 0
    for found in re.finditer(f"{_VARIABLE.pattern}|{_VOLATILE.pattern}", text):
        parts.append(_escape(text[position : found.start()]))
        parts.append(".+?" if _VARIABLE.fullmatch(found.group(0)) else _generic(found.group(0)))
        position = found.end()
    parts.append(_escape(text[position:]))
    return "^" + "".join(parts) + "$"


def _raw_pattern(text: str, variables: Mapping[str, str]) -> str:
    """`_pattern` of a value as the agent wrote it (its own `{{…}}` literal, braces escaped):
    the run's variables' values and volatile parts matched by their kind."""
    values = sorted(
        (v for n, v in variables.items() if not n.startswith("vars.") and len(v) >= 4),
        key=len,
        reverse=True,
    )
    finder = re.compile("|".join([*(re.escape(v) for v in values), _VOLATILE.pattern]))
    parts: list[str] = []
    position = 0
    for found in finder.finditer(text):
        if found.end() == found.start():
            continue
        parts.append(_escape(text[position : found.start()]))
        parts.append(".+?" if found.group(0) in values else _generic(found.group(0)))
        position = found.end()
    parts.append(_escape(text[position:]))
    return "^" + "".join(parts) + "$"


_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def _escape(text: str) -> str:
    """`text` as a regular expression that matches it literally, escaping only what is special
    (re.escape also escapes spaces and `#`: correct, but hard to read in a contract)."""
    return _SPECIAL.sub(r"\\\1", text).replace("\n", "\\n").replace("\t", "\\t")


_RUN = re.compile(r"\d+|[A-Za-z]+|.", re.DOTALL)


def _generic(volatile: str) -> str:
    """The pattern that replaces one volatile part: its digits matched as digits and its
    words (weekdays, months, zones) as words, its separators literal."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", volatile):
        return _GENERIC["date"]
    if re.fullmatch(r"[0-9a-fA-F-]+", volatile) and re.search(r"[a-fA-F]", volatile):
        return f"[0-9a-fA-F-]{{{len(volatile)}}}"  # a hex id, a UUID
    # ISO stamps are zero-padded: their widths are exact; elsewhere a day or an hour may
    # have one digit or two ("9:05", "1/5/2026").
    padded = re.match(r"\d{4}-?[\dW]", volatile) is not None
    parts: list[str] = []
    for run in _RUN.findall(volatile):
        if run.isdigit():
            width = len(run)
            parts.append(r"\d{1,2}" if width <= 2 and not padded else rf"\d{{{width}}}")
        elif run.isalpha() and len(run) > 1:
            parts.append("[A-Za-z]+")
        else:
            parts.append(_escape(run))
    return "".join(parts)


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


def _variables(run: Observed, settings: Settings | None = None) -> dict[str, str]:
    found = dict(run.evidence.variables) if run.evidence is not None else {}
    if settings is not None and settings.workspace and "workspace" not in found:
        found["workspace"] = settings.workspace
    found.update({f"vars.{k}": v for k, v in run.row_vars.items() if isinstance(v, str)})
    return found


# -- files ----------------------------------------------------------------------------------


def _files(
    proposal: Proposal, evidence: Sequence[AttemptEvidence], variables: Sequence[dict[str, str]]
) -> None:
    k = len(evidence)
    per_run: list[dict[str, FileSeen]] = []
    missing: list[list[str]] = []  # per run: paths its writing calls named that are not there
    raw: dict[str, str] = {}  # a path as written -> as the agent named it (a problem kept)
    for e, names in zip(evidence, variables, strict=True):
        files = {_with_variables(f.path, names): f for f in e.files}
        per_run.append(files)
        roots = [names["workspace"]] if names.get("workspace") else []
        named = [contract_path(p, roots) for p in written_paths(e.tools)]
        # At the files' bound, a missing one may only have been left out of the report.
        found = {f.path for f in e.files}
        gone = [] if len(e.files) >= MAX_FILES else [p for p in named if p not in found]
        missing.append([_with_variables(p, names) for p in gone])
        for path in [f.path for f in e.files] + gone:
            general = _with_variables(path, names)
            if general not in raw or MASK in path or "{{" in path:
                raw[general] = path
    for path in _ordered([*(list(files) for files in per_run), *missing]):
        held = sum(1 for files in per_run if path in files)
        gone = sum(1 for paths in missing if path in paths)
        exists = Item(f"artifact_exists:{path}", {"type": "artifact_exists", "path": path}, "")
        if _unstatable(proposal, exists, raw[path], f"the path {MASKED}"):
            continue
        if gone:
            # Only what exists after every run may be proposed: a file written and deleted,
            # or named by a write or an edit that failed, is not there to check.
            extra = (
                f"written in {held + gone}, not there after {gone} of them (deleted, or the "
                "write or edit failed)"
            )
            _sort(proposal, exists, held, k, extra)
            continue
        why = _unwritable_path(path)
        if why:
            proposal.left_out.append(Item(exists.key, exists.mapping, why))
            continue
        _sort(proposal, exists, held, k, "")
        if held == k:
            _contents(proposal, path, [files[path] for files in per_run], variables)


def _unwritable_path(path: str) -> str:
    """Why an artifact assertion cannot name `path` as it was seen, else ""."""
    if _VOLATILE.search(_VARIABLE.sub("", path)):
        return "the path holds a date or id no template variable gives: not proposed"
    # An artifact assertion names a file in the workspace: a climbing path does not validate,
    # and one outside it (absolute, or the home folder's) is another machine's file.
    if escapes_workspace(path) or path.startswith(("/", "~")):
        return "the path is outside the workspace: an artifact assertion names a file in it"
    return ""


def _contents(
    proposal: Proposal,
    path: str,
    versions: Sequence[FileSeen],
    variables: Sequence[dict[str, str]],
) -> None:
    """`artifact_contains` for the headings and keys present in every version of the file;
    those in only some are listed apart with their count."""
    k = len(versions)
    contains: dict[str, Any] = {"type": "artifact_contains", "path": path}
    for kind in ("sections", "fields"):
        lists = [getattr(v, kind) for v in versions]
        if any(found is None for found in lists):
            continue
        what = "a heading" if kind == "sections" else "a field"
        masked = sorted({s for found in lists for s in found or [] if MASK in s})
        templated = sorted({s for found in lists for s in found or [] if "{{" in s})
        general = [
            [
                _with_variables(s, variables[i])
                for s in (found or [])
                if MASK not in s and "{{" not in s
            ]
            for i, found in enumerate(lists)
        ]
        names = _ordered(general)
        volatile = [s for s in names if _VOLATILE.search(_VARIABLE.sub("", s))]
        for names_left, why in (
            (masked, MASKED),
            (templated, TEMPLATED),
            (volatile, "holds a date or id no template variable gives: not proposed"),
        ):
            if names_left:
                proposal.left_out.append(
                    Item(
                        f"artifact_contains:{path}:{kind}",
                        {"type": "artifact_contains", "path": path, kind: names_left},
                        f"{what} {why}",
                    )
                )
        common = []
        for name in names:
            if name in volatile:
                continue
            held = sum(1 for found in general if name in found)
            if held == k:
                common.append(name)
                continue
            item = Item(
                f"artifact_contains:{path}:{kind}:{name}",
                {"type": "artifact_contains", "path": path, kind: [name]},
                f"held in {held} of {k} runs",
            )
            where = f"{'headings' if kind == 'sections' else 'fields'} of '{path}'"
            _apart(proposal, proposal.unstable, item, f"{where} held in only some runs")
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


def _sentences(reply: str, variables: Mapping[str, str]) -> list[tuple[str, str]]:
    """The reply's sentences (whitespace-normalised, the variables' values as the variables),
    each with why it cannot be proposed ("" when it can); one shorter than MIN_SENTENCE_CHARS
    is no candidate at all."""
    found = []
    for part in _SENTENCE_END.split(reply):
        text = " ".join(part.split())
        if len(text) < MIN_SENTENCE_CHARS:
            continue
        if MASK in text:
            found.append((text, MASKED))
            continue
        # OpenClaw's record holds its placeholder (or redaction) instead of what the agent
        # said, e.g. "[Malformed diagnostic JSON redacted]" for a reply holding `{`: the next
        # run's reply would not hold it, or would only by the same accident.
        redacted = cut_detail(text)
        if redacted is not None:
            found.append((text, f"is not what the agent said: OpenClaw recorded it {redacted}"))
            continue
        if "{{" in text:
            found.append((text, TEMPLATED))
            continue
        text = _with_variables(text, variables)
        volatile = _VOLATILE.search(_VARIABLE.sub("", text))
        found.append((text, "holds a date or id no template variable gives" if volatile else ""))
    return found


def _replies(
    proposal: Proposal, evidence: Sequence[AttemptEvidence], variables: Sequence[dict[str, str]]
) -> None:
    """`reply_contains` for the first MAX_REPLY_SENTENCES sentences of every reply; every other
    sentence is listed apart (held in only some runs, over the limit, or not statable)."""
    replies = [e.reply for e in evidence]
    if any(r is None for r in replies):
        return
    k = len(replies)
    per_run = [
        {text.casefold(): (text, why) for text, why in _sentences(r or "", names)}
        for r, names in zip(replies, variables, strict=True)
    ]
    proposed = 0
    for folded in dict.fromkeys(key for sentences in per_run for key in sentences):
        held = sum(1 for sentences in per_run if folded in sentences)
        text, why = next(sentences[folded] for sentences in per_run if folded in sentences)
        key, mapping = f"reply_contains:{folded}", {"type": "reply_contains", "text": text}
        if why:
            comment = f"held in {held} of {k} runs; the sentence {why}"
            what = "reply sentences that cannot be written as seen"
            _apart(proposal, proposal.left_out, Item(key, mapping, comment), what)
        elif held < k:
            comment = f"held in {held} of {k} runs"
            what = "reply sentences held in only some runs"
            _apart(proposal, proposal.unstable, Item(key, mapping, comment), what)
        elif proposed < MAX_REPLY_SENTENCES:
            proposed += 1
            _sort(proposal, Item(key, mapping, ""), held, k, "a sentence of every reply")
        else:
            comment = f"held in {k} of {k} runs; a sentence of every reply"
            limit = f"at most {MAX_REPLY_SENTENCES} sentences of the reply are proposed"
            _over_limit(proposal, Item(key, mapping, comment), limit)


# -- helpers --------------------------------------------------------------------------------


def _apart(proposal: Proposal, where: list[Item], item: Item, what: str) -> None:
    """List `item` apart (in `where`) unless MAX_LISTED of `what` are listed already: then it
    is counted, and the output says how many were not listed."""
    if proposal.listed.get(what, 0) < MAX_LISTED:
        proposal.listed[what] = proposal.listed.get(what, 0) + 1
        where.append(item)
    else:
        proposal.unlisted[what] = proposal.unlisted.get(what, 0) + 1


def _over_limit(proposal: Proposal, item: Item, limit: str) -> None:
    """`item` held in every run but a limit on what is proposed left it out."""
    placed = Item(item.key, item.mapping, f"{item.comment}; not proposed: {limit}")
    _apart(proposal, proposal.over_limit, placed, f"{item.mapping['type']} items over the limit")


def _ordered(lists: Sequence[Sequence[str]]) -> list[str]:
    """Every value of the lists once, in the order of first appearance."""
    return list(dict.fromkeys(v for values in lists for v in values))


def _span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}\u2013{high:,}"

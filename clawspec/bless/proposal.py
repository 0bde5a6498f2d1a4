"""What bless's proposals are made of: the attempts it reads (`Observed`), the items and the
`Proposal` of one scope, and what every kind of candidate shares: the values of the run's
variables written as the variables, what counts as volatile (a date, a time, a long id), and
where an item goes (proposed, held in only some runs, left out, over a limit) with its count."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawspec.reports.model import AttemptEvidence
from clawspec.secrets import MASK
from clawspec.status import Status
from clawspec.traffic.volatile import CLOCK_TEXT, DEFAULT_VOLATILE_PATTERNS, MONTH

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
    # compact: 20261126, 20261126T101500Z, report-20261126.md, run-20261126-091500.md
    rf"(?<!\d){_YEAR}{_MM}{_DD}(?:[T_-]\d{{4,6}}Z?)?(?!\d)",
    # spelled out, day first: "29 November 2026", "1st of Dec. 2026"; a month and a year
    rf"(?<!\d)\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{MONTH}\.?,? {_YEAR}(?!\d)",
    rf"\b{MONTH}\.?,? {_YEAR}(?!\d)",
    # a time (or a short date) written with dashes, as in a file name: run-…_09-15-00.md
    r"(?<![\d-])\d{2}-\d{2}-\d{2}(?![\d-])",
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
    r"(?<![\d.])1[5-9]\d{8}(?:\d{3})?(?!\d|\.\d)",  # (a file's extension may follow)
    # a short hex id (a git commit, a content hash): 7+ hex digits with a digit and a letter
    r"(?<![0-9A-Za-z])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}(?![0-9A-Za-z])",
)
# What counts as volatile in a value: the clock's formats, the default id patterns (not the
# machine-specific ones, which never reach an argument) and the dates above.
VOLATILE = re.compile(
    "|".join(f"(?:{p})" for p in (*CLOCK_TEXT, *DEFAULT_VOLATILE_PATTERNS[:2], *_DATES))
)
VARIABLE = re.compile(r"\{\{[^{}]+\}\}")
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


def unstatable(proposal: Proposal, item: Item, value: str, masked: str) -> bool:
    """True (and the item listed as left out) when `value` cannot be written as a literal: it
    holds the mask of a secret, or template syntax the contract would read as a variable."""
    if MASK in value:
        proposal.left_out.append(Item(item.key, item.mapping, masked))
        return True
    if "{{" in value:
        proposal.left_out.append(Item(item.key, item.mapping, f"it {TEMPLATED}"))
        return True
    return False


def place(proposal: Proposal, item: Item, held: int, k: int, extra: str) -> None:
    comment = f"held in {held} of {k} runs" + (f"; {extra}" if extra else "")
    placed = Item(item.key, item.mapping, comment)
    (proposal.items if held == k else proposal.unstable).append(placed)


def with_variables(text: str, variables: Mapping[str, str]) -> str:
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


def variables_of(run: Observed, settings: Settings | None = None) -> dict[str, str]:
    found = dict(run.evidence.variables) if run.evidence is not None else {}
    if settings is not None and settings.workspace and "workspace" not in found:
        found["workspace"] = settings.workspace
    found.update({f"vars.{k}": v for k, v in run.row_vars.items() if isinstance(v, str)})
    return found


def apart(proposal: Proposal, where: list[Item], item: Item, what: str) -> None:
    """List `item` apart (in `where`) unless MAX_LISTED of `what` are listed already: then it
    is counted, and the output says how many were not listed."""
    if proposal.listed.get(what, 0) < MAX_LISTED:
        proposal.listed[what] = proposal.listed.get(what, 0) + 1
        where.append(item)
    else:
        proposal.unlisted[what] = proposal.unlisted.get(what, 0) + 1


def over_limit(proposal: Proposal, item: Item, limit: str) -> None:
    """`item` held in every run but a limit on what is proposed left it out."""
    placed = Item(item.key, item.mapping, f"{item.comment}; not proposed: {limit}")
    apart(proposal, proposal.over_limit, placed, f"{item.mapping['type']} items over the limit")


def ordered(lists: Sequence[Sequence[str]]) -> list[str]:
    """Every value of the lists once, in the order of first appearance."""
    return list(dict.fromkeys(v for values in lists for v in values))


def span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}\u2013{high:,}"

"""`tool_called_with` items: the argument values of one call made in every run, generalised
(a variable's value as the variable, a volatile part as a `{matches: …}` pattern)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clawspec.bless.proposal import (
    MASKED,
    MAX_CALLS_WITH,
    MAX_VALUE_CHARS,
    TEMPLATED,
    VARIABLE,
    VOLATILE,
    Item,
    Proposal,
    over_limit,
    with_variables,
)
from clawspec.reports.model import AttemptEvidence
from clawspec.secrets import MASK


@dataclass(frozen=True)
class _Left:
    """A value that cannot be stated, and why (empty: not worth naming, e.g. too long)."""

    reason: str = ""


def arguments(
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
            over_limit(proposal, item, f"at most {MAX_CALLS_WITH} calls of a tool are proposed")


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
        text = with_variables(value, variables)
        if not VOLATILE.search(VARIABLE.sub("", text)):
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
    if number and VOLATILE.fullmatch(str(value)):
        return _Left("is a number that looks like a date or a timestamp: not proposed")
    return value


def _pattern(text: str) -> str:
    """An anchored regular expression for `text` with its volatile parts (and any variable
    left in it) matched by their kind, the rest literal."""
    parts: list[str] = []
    position = 0
    for found in re.finditer(f"{VARIABLE.pattern}|{VOLATILE.pattern}", text):
        parts.append(_escape(text[position : found.start()]))
        parts.append(".+?" if VARIABLE.fullmatch(found.group(0)) else _generic(found.group(0)))
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
    finder = re.compile("|".join([*(re.escape(v) for v in values), VOLATILE.pattern]))
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


_DATE = r"\d{4}-\d{2}-\d{2}"  # what a volatile date is replaced by in a `matches` pattern
_RUN = re.compile(r"\d+|[A-Za-z]+|.", re.DOTALL)


def _generic(volatile: str) -> str:
    """The pattern that replaces one volatile part: its digits matched as digits and its
    words (weekdays, months, zones) as words, its separators literal."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", volatile):
        return _DATE
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

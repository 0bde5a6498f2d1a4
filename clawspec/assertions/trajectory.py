"""Run-record assertions: what the agent did, judged on OpenClaw's own record of its runs.

The record (`clawspec.evidence.record`: the agent's trajectory store) holds each call's tool
and arguments, the messages sent through messaging tools and how each run ended. The scope is
the assertion's: a plain scenario's run or a turn's run, every turn's runs for a conversation's
`then`, each with the sub-agents it spawned. A record that cannot be read makes every type here
`error` with the reason, never a pass or a skip.

Refusals are decided as for the log (`clawspec.gateway.refusals`): a call the gateway answered
without running the tool is not a call. A failed call whose refusal cannot be told yet (the
plugin's records of its run were late) makes a verdict it could change `error`.

Tool Search's wrappers are already unwrapped by the reader; a code-mode call whose inner calls
are not recorded (`args_known` False) leaves its tool calls unknown: a verdict they could change
is `error` saying so, never a pass. So do a call OpenClaw recorded without its tool's name (an
event over its size limit) and a run with more events than ClawSpec reads (its later calls).

OpenClaw cuts and redacts what it records of a call's arguments (`ToolCall.cuts`: a string over
32,768 characters, a value 6 levels deep, the 65th key or item, secrets): the rest is compared
as sent, and a comparison that touches a cut part is not decided — `tool_called_with` is then
`error` naming the part, unless another call matches whole. `no_tool_loop` never counts calls
as the same through a cut part (a marker is not the value); when calls that could be the same
would make a loop longer than `max_repeats`, it is `error` saying so. `tool_call_count` counts
calls, whatever their arguments.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from clawspec.assertions.base import Assertion, EvalContext, Verdict
from clawspec.assertions.documents import same_value
from clawspec.assertions.patterns import check_pattern, search_all
from clawspec.assertions.registry import register
from clawspec.status import Status
from clawspec.text import clean, one_line, pluralize, quote_list, valid_unicode

# The record's reader is needed only to evaluate: `clawspec validate` builds these models without
# importing it (tests/test_startup.py).
if TYPE_CHECKING:
    from clawspec.gateway.trajectory import SentMessage, ToolCall, Trajectory

CODE_MODE = "tool_search_code"
PATTERN_KEY = "matches"
SHOWN_CHARS = 160  # of a value, in a verdict's message
MAX_DIFFS = 6  # differing keys named in one message


def _plain(text: str, limit: int = 80) -> str:
    """A recorded name (a key, a stop reason) as a message shows it, unquoted."""
    return one_line(clean(valid_unicode(text)), limit)


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A value as a message quotes it: JSON on one line, masked, without control characters,
    lone surrogates replaced, cut to `limit`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    quoted = json.dumps(text, ensure_ascii=False) if isinstance(value, str) else text
    return one_line(clean(valid_unicode(quoted)), limit)


# --- the scope ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    """A run of the scope and what a message names it by."""

    label: str
    run: Trajectory


@dataclass(frozen=True)
class _Scope:
    """The scope's runs (refusals applied) and the failed calls whose refusal is not known."""

    runs: tuple[Trajectory, ...]
    labels: tuple[str, ...]  # one per top-level run: "run <id>", "turn 2"
    undecided: frozenset[tuple[str, str]]
    waited_s: float

    def each(self) -> Iterator[_Run]:
        """Every run, each sub-agent's run on its own after its parent's."""

        def walk(run: Trajectory, label: str) -> Iterator[_Run]:
            yield _Run(label, run)
            for child in run.children:
                yield from walk(child, f"sub-agent '{child.agent}' run {child.run_id}")

        for run, label in zip(self.runs, self.labels, strict=True):
            yield from walk(run, label)

    def calls(self) -> Iterator[tuple[_Run, ToolCall]]:
        """Every executed call of every run, in order."""
        for run in self.each():
            for call in run.run.calls:
                yield run, call

    def refused(self) -> list[tuple[_Run, ToolCall]]:
        return [(run, call) for run in self.each() for call in run.run.tool_calls if call.refused]

    def without_undecided(self) -> _Scope:
        """The scope with every undecided call taken as refused."""
        runs = tuple(run.with_refusals(self.undecided) for run in self.runs)
        return replace(self, runs=runs, undecided=frozenset())

    @property
    def subject(self) -> str:
        """What a message calls the whole scope."""
        if len(self.labels) == 1:
            return self.labels[0]
        return f"the {len(self.labels)} turns"


def _scope(ctx: EvalContext) -> _Scope | Verdict:
    from clawspec.evidence.record import executed, run_records

    found = run_records(ctx)
    if isinstance(found, Verdict):
        return found
    done = executed(ctx, found)
    if ctx.run.transcript is not None:
        labels = tuple(f"turn {entry.turn + 1}" for entry in ctx.run.transcript)
        if len(labels) != len(done.runs):  # a turn without a run id: name the runs instead
            labels = tuple(f"run {run.run_id}" for run in done.runs)
    else:
        labels = tuple(f"run {run.run_id}" for run in done.runs)
    return _Scope(done.runs, labels, done.undecided, done.waited_s)


def _judged(ctx: EvalContext, judge: Callable[[_Scope], Verdict]) -> Verdict:
    """`judge` on the scope; when failed calls whose refusal is not known yet could change the
    verdict, `error` saying which and why."""
    scope = _scope(ctx)
    if isinstance(scope, Verdict):
        return scope
    verdict = judge(scope)
    if not scope.undecided or verdict.status is Status.ERROR:
        return verdict
    other = judge(scope.without_undecided())
    if other.status is verdict.status:
        return verdict
    names = quote_list(
        sorted(
            {
                c.name
                for r in scope.each()
                for c in r.run.tool_calls
                if _key(r, c) in scope.undecided
            }
        )
    )
    return Verdict.errored(
        f"{verdict.message}, but {pluralize(len(scope.undecided), 'failed call')} of {names} may "
        f"have been refused by the gateway (not calls): ClawSpec's plugin records of "
        f"{'that run' if len({k[0] for k in scope.undecided}) == 1 else 'those runs'} were not "
        f"complete after waiting {scope.waited_s:.1f} s (raise the scenario's `timeout` if the "
        "gateway is slow)"
    )


def _key(run: _Run, call: ToolCall) -> tuple[str, str]:
    return run.run.run_id, call.tool_call_id


def _code_mode(call: ToolCall) -> bool:
    """A Tool Search code-mode call whose inner calls are not recorded: its tools are unknown."""
    return call.name == CODE_MODE and not call.args_known


def _hidden(scope: _Scope, tool: str, *, code_mode: bool = True) -> list[str]:
    """Why calls of `tool` could be missing from the scope's calls (each reason a clause):
    code-mode calls (unless `code_mode` is False), calls recorded without their tool's name,
    runs read only in part."""
    reasons = []
    code = sum(1 for _, call in scope.calls() if _code_mode(call))
    if code and code_mode and tool != CODE_MODE:
        reasons.append(
            f"{pluralize(code, 'Tool Search code-mode call')} ({CODE_MODE}) made calls the "
            f"record does not hold one by one: they could be calls of '{tool}'"
        )
    nameless = sum(1 for _, call in scope.calls() if not call.name_known)
    if nameless:
        reasons.append(
            f"OpenClaw recorded {pluralize(nameless, 'call')} without the tool's name (the "
            f"event was over its size limit): {'it' if nameless == 1 else 'they'} could be "
            f"'{tool}'"
        )
    capped = [run for run in scope.each() if run.run.capped]
    if capped:
        reasons.append(_capped(capped))
    return reasons


def _capped(runs: list[_Run]) -> str:
    notes = "; ".join(dict.fromkeys(n for r in runs for n in r.run.cut if n.startswith("more")))
    return (
        f"the record of {quote_list([r.label for r in runs])} has more events than ClawSpec "
        f"reads ({notes}): the calls after those were not read"
    )


def _where(run: _Run, call: ToolCall) -> str:
    index = next(i for i, c in enumerate(run.run.calls, 1) if c is call)
    return f"tool call {index} of {run.label}"  # of every call of the run, whatever the tool


def _times(count: int) -> str:
    """'called once', 'called 3 times': how often the tool of the message was called."""
    return "called once" if count == 1 else f"called {count:,} times"


def _called(scope: _Scope) -> str:
    """The tools the scope called, with their counts, for a message."""
    counts: dict[str, int] = {}
    for _, call in scope.calls():
        counts[call.name] = counts.get(call.name, 0) + 1
    if not counts:
        return "no tools called"
    items = [f"'{name}' ({count})" for name, count in counts.items()]
    more = f" … and {len(items) - 5} more" if len(items) > 5 else ""
    return "tools called: " + ", ".join(items[:5]) + more


def _refused_clause(scope: _Scope, tool: str) -> str:
    attempts = [call for _, call in scope.refused() if call.name == tool]
    if not attempts:
        return ""
    answer = attempts[0].result_text
    said = f': "{one_line(answer, 160)}"' if answer else ""
    return f"; '{tool}' was attempted {pluralize(len(attempts), 'time')} but refused{said}"


# --- matching arguments -------------------------------------------------------------------------


def is_pattern(value: Any) -> bool:
    """`{matches: <regex>}`: a value matched by a regular expression, not a literal mapping."""
    return isinstance(value, dict) and set(value) == {PATTERN_KEY}


def check_args(args: Any, where: str = "args") -> None:
    """Raise ValueError where `args` holds a pattern that is not a regular expression or a
    mapping that mixes `matches` with other keys."""
    if isinstance(args, dict):
        if PATTERN_KEY in args and len(args) > 1:
            raise ValueError(
                f"'{where}' mixes '{PATTERN_KEY}' with other keys: a pattern is written "
                f"{{{PATTERN_KEY}: <regex>}} alone"
            )
        if is_pattern(args):
            pattern = args[PATTERN_KEY]
            if not isinstance(pattern, str) or not pattern:
                raise ValueError(f"'{where}.{PATTERN_KEY}' must be a non-empty string")
            if "{{" not in pattern:  # a template is checked once rendered
                check_pattern(pattern, f"{where}.{PATTERN_KEY}")
            return
        for key, value in args.items():
            check_args(value, f"{where}.{key}")
    elif isinstance(args, list):
        for index, value in enumerate(args):
            check_args(value, f"{where}[{index}]")


@dataclass
class _Matcher:
    """Compares expected arguments with a call's. Pattern searches are asked for in a first
    pass (`collect`) and decided together in one bounded child (`decide`)."""

    exact: bool
    ignore: frozenset[str]
    results: dict[tuple[str, str], bool] | None = None
    wanted: list[tuple[str, str]] | None = None

    open_parts: list[str] = field(default_factory=list)

    def compare(self, actual: Any, expected: dict[str, Any]) -> tuple[list[str], list[str]]:
        """(each way `actual` does not match `expected`, each part of `actual` that OpenClaw
        cut or redacted where the comparison needed it: not decided either way)."""
        self.open_parts = []
        if _cut(actual) is not None:
            self._open("", actual)
            return [], self.open_parts
        problems = self.differences(actual, expected)
        return problems, self.open_parts

    def _open(self, name: str, value: Any, detail: str | None = None) -> None:
        from clawspec.evidence.record import cut_detail

        said = detail or cut_detail(value) or "cut"
        what = f"the argument '{_plain(name)}'" if name else "the arguments"
        self.open_parts.append(f"{what} {said}")

    def differences(self, actual: Any, expected: dict[str, Any], prefix: str = "") -> list[str]:
        """Each way `actual` does not match `expected`: "key: expected X, found Y" (a part
        OpenClaw cut is added to `open_parts` instead)."""
        from clawspec.evidence.record import TRUNCATED_KEY, container_cut, credential_key

        if not isinstance(actual, dict):
            return [f"{_plain(prefix[:-1]) or 'args'}: expected a mapping, found {shown(actual)}"]
        keys_cut = container_cut(actual)
        problems: list[str] = []
        for key, want in expected.items():
            name = f"{prefix}{key}"
            if key not in actual:
                if keys_cut:
                    self._open(prefix[:-1], None, keys_cut)
                elif credential_key(key):
                    self._open(name, None, "left out (it leaves credential-like keys out)")
                else:
                    problems.append(f"{_plain(name)}: missing (expected {self._wanted(want)})")
                continue
            problems.extend(self._value(actual[key], want, name))
        if self.exact:
            if keys_cut:
                self._open(prefix[:-1], None, keys_cut)  # keys past those could be unexpected
            for key in actual:
                name = f"{prefix}{key}"
                if keys_cut and key == TRUNCATED_KEY:
                    continue
                if key not in expected and name not in self.ignore:
                    problems.append(f"{_plain(name)}: not expected (found {shown(actual[key])})")
        return problems

    def _value(self, got: Any, want: Any, name: str) -> list[str]:
        from clawspec.evidence.record import ARRAY_SIZE_LIMIT, container_cut

        if _cut(got) is not None:
            self._open(name, got)
            return []
        items_cut = container_cut(got) if isinstance(got, list) else None
        if isinstance(want, list) and items_cut is not None:
            marked = _cut(got[-1]) == ARRAY_SIZE_LIMIT
            known = got[:-1] if marked else got
            sent = got[-1].get("originalLength") if marked else None
            if type(sent) is int and sent != len(want):
                return [f"{_plain(name)}: expected {len(want)} items, found {sent}"]
            if len(want) < len(known):
                return [f"{_plain(name)}: expected {len(want)} items, found {len(known)} or more"]
            inner = [
                p
                for i, (g, w) in enumerate(zip(known, want, strict=False))
                for p in self._value(g, w, f"{name}[{i}]")
            ]
            if not inner:
                self._open(name, None, items_cut)
            return inner
        if is_pattern(want) and not isinstance(got, str) and _holds_cut(got):
            self._open(name, got, "with parts OpenClaw cut or redacted")
            return []
        if is_pattern(want):
            pattern = want[PATTERN_KEY]
            text = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)
            if self._search(pattern, text):
                return []
            return [f"{_plain(name)}: expected a match of '{pattern}', found {shown(got)}"]
        if isinstance(want, dict) and isinstance(got, dict):
            return self.differences(got, want, f"{name}.")
        if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
            inner = [
                p
                for i, (g, w) in enumerate(zip(got, want, strict=True))
                for p in self._value(g, w, f"{name}[{i}]")
            ]
            return inner
        if isinstance(want, dict | list) or not same_value(got, want):
            return [f"{_plain(name)}: expected {self._wanted(want)}, found {shown(got)}"]
        return []

    def _wanted(self, want: Any) -> str:
        if is_pattern(want):
            return f"a match of '{want[PATTERN_KEY]}'"
        return shown(want)

    def _search(self, pattern: str, text: str) -> bool:
        if self.results is None:  # the first pass: ask, answer "matches" for now
            if self.wanted is None:
                self.wanted = []
            self.wanted.append((pattern, text))
            return True
        return self.results[(pattern, text)]

    def decide(self) -> str | None:
        """Run the searches asked for; a message when they could not be decided."""
        pairs = list(dict.fromkeys(self.wanted or []))
        self.results = {}
        if not pairs:
            return None
        found = _search_all(pairs, "the calls' arguments")
        if isinstance(found, str):
            return found
        self.results = dict(zip(pairs, found, strict=True))
        return None


def _cut(value: Any) -> str | None:
    """OpenClaw's reason when `value` is a marker of its own or text it redacted, else None."""
    from clawspec.evidence.record import REDACTED, bound_marker, cut_detail

    reason = bound_marker(value)
    if reason is not None:
        return reason
    return REDACTED if isinstance(value, str) and cut_detail(value) is not None else None


def _holds_cut(value: Any) -> bool:
    """Whether a cut part is anywhere in `value`."""
    from clawspec.evidence.record import args_cuts

    return bool(args_cuts(value))


def _search_all(pairs: list[tuple[str, str]], subject: str) -> list[bool] | str:
    """Whether `re.search` finds each (pattern, text), one bounded search of all."""
    found = search_all(pairs, subject)
    return found if isinstance(found, str) else [match is not None for match in found]


# --- the types ----------------------------------------------------------------------------------


@register(
    category="run record",
    example='tool: write\nargs:\n  path: notes.md\n  content: {matches: "^# Notes"}',
)
class ToolCalledWith(Assertion):
    """A tool was called with the expected arguments (OpenClaw's run record)."""

    type: Literal["tool_called_with"]
    tool: str = Field(min_length=1, description="Tool name (exact, case-sensitive).")
    args: dict[str, Any] = Field(
        description="Expected arguments: literal values, or {matches: <regex>} (re.search on a "
        "string, on the JSON text of any other value); nested mappings match as a subset."
    )
    match: Literal["partial", "exact"] = Field(
        "partial",
        description="partial: the call may have more arguments; exact: no other keys, nested "
        "mappings included (but those in `ignore`).",
    )
    ignore: list[str] | None = Field(
        None,
        description="With match: exact, argument keys left out of the comparison (dotted for "
        "nested keys: options.verbose).",
    )

    @field_validator("args")
    @classmethod
    def _patterns_compile(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_args(value)
        return value

    @model_validator(mode="after")
    def _ignore_with_exact(self) -> ToolCalledWith:
        if self.ignore is not None:
            if self.match != "exact":
                raise ValueError("'ignore' applies only with match: exact")
            both = [key for key in self.ignore if key in self.args]
            if both:
                raise ValueError(f"{quote_list(both)} in both 'args' and 'ignore'")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        return _judged(ctx, self._judge)

    def _judge(self, scope: _Scope) -> Verdict:
        calls = [(run, call) for run, call in scope.calls() if call.name == self.tool]
        known = [(run, call) for run, call in calls if call.args_known]
        matcher = _Matcher(self.match == "exact", frozenset(self.ignore or ()))
        for _, call in known:  # the first pass asks for the pattern searches
            matcher.compare(call.args, self.args)
        problem = matcher.decide()
        if problem is not None:
            return Verdict.errored(problem)
        compared = [(run, call, *matcher.compare(call.args, self.args)) for run, call in known]
        for run, call, problems, open_parts in compared:
            if not problems and not open_parts:
                return Verdict.passed(
                    f"'{self.tool}' called with the expected arguments ({_where(run, call)}): "
                    f"{shown(call.args)}"
                )
        diffs = [(run, call, problems) for run, call, problems, _ in compared]
        undecided = [(run, call, parts) for run, call, problems, parts in compared if not problems]
        unknown = [call for _, call in calls if not call.args_known]
        code = [call for _, call in scope.calls() if _code_mode(call)]
        why = self._unknown(unknown, code, scope)
        if undecided:
            run, call, parts = undecided[0]
            others = (
                f" (and {pluralize(len(undecided) - 1, 'other call')} alike)"
                if len(undecided) > 1
                else ""
            )
            return Verdict.errored(
                f"'{self.tool}' may have been called with the expected arguments, but in "
                f"{_where(run, call)}{others} OpenClaw recorded {_diffs(parts)}: "
                f"{'it' if len(parts) == 1 else 'they'} cannot be compared"
            )
        if not calls:
            text = (
                f"'{self.tool}' not called in {scope.subject}{_refused_clause(scope, self.tool)}; "
                f"{_called(scope)}"
            )
            return Verdict.errored(f"{text}, {why}") if why else Verdict.failed(text)
        run, call, problems = min(diffs, key=lambda d: len(d[2])) if diffs else (None, None, [])
        text = f"no call of '{self.tool}' with the expected arguments in {scope.subject}"
        if run is not None and call is not None:
            text += (
                f" ({_times(len(calls))}); the closest, {_where(run, call)}, "
                f"differs in {_diffs(problems)}"
            )
        if why:
            return Verdict.errored(f"{text}, {why}")
        return Verdict.failed(text)

    def _unknown(self, unknown: list[ToolCall], code: list[ToolCall], scope: _Scope) -> str:
        """Why calls whose arguments (or tool) are not recorded leave the verdict open, else
        ""."""
        parts = []
        if unknown:
            notes = quote_list(list(dict.fromkeys(c.note or "not recorded" for c in unknown)))
            parts.append(
                f"{pluralize(len(unknown), 'call')} of '{self.tool}' whose arguments the "
                f"record does not hold ({notes}) could match"
            )
        if code:
            parts.append(
                f"{pluralize(len(code), 'Tool Search code-mode call')} ({CODE_MODE}) made calls "
                "the record does not hold one by one: they could include it"
            )
        parts.extend(_hidden(scope, self.tool, code_mode=False))
        return "but " + " and ".join(parts) if parts else ""


def _diffs(problems: list[str]) -> str:
    text = "; ".join(problems[:MAX_DIFFS])
    more = len(problems) - MAX_DIFFS
    return text + (f"; and {more} more" if more > 0 else "")


@register(
    category="run record",
    example="tool: web_search\nmin: 1\nmax: 3",
)
class ToolCallCount(Assertion):
    """A tool was called (executed, refusals not counted) between min and max times."""

    one_of = (("min", "max"),)
    type: Literal["tool_call_count"]
    tool: str = Field(min_length=1, description="Tool name (exact, case-sensitive).")
    min: int | None = Field(None, ge=0, description="Fewest calls allowed.")
    max: int | None = Field(None, ge=0, description="Most calls allowed.")

    @model_validator(mode="after")
    def _min_not_over_max(self) -> ToolCallCount:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"'min' ({self.min}) is greater than 'max' ({self.max})")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        return _judged(ctx, self._judge)

    def _bounds(self) -> str:
        if self.min is not None and self.max is not None:
            return f"{self.min} to {self.max}" if self.min != self.max else f"exactly {self.min}"
        return f"at least {self.min}" if self.min is not None else f"at most {self.max}"

    def _judge(self, scope: _Scope) -> Verdict:
        count = sum(1 for _, call in scope.calls() if call.name == self.tool)
        hidden = _hidden(scope, self.tool)
        limit = {"min": self.min, "max": self.max}
        text = (
            f"'{self.tool}' called {pluralize(count, 'time')} in {scope.subject}, expected "
            f"{self._bounds()}{_refused_clause(scope, self.tool)}"
        )
        if self.max is not None and count > self.max:
            return Verdict.failed(text, count, limit)  # unknown calls only add to it
        low = self.min is not None and count < self.min
        if hidden and (low or self.max is not None):
            return Verdict.errored(f"{text}, but " + " and ".join(hidden))
        if low:
            return Verdict.failed(f"{text}; {_called(scope)}", count, limit)
        return Verdict.passed(text, count, limit)


@register(
    category="run record",
    example="max_repeats: 2",
)
class NoToolLoop(Assertion):
    """No run called the same tool with the same arguments more than max_repeats times in a row."""

    type: Literal["no_tool_loop"]
    max_repeats: int = Field(
        3, ge=1, description="Most identical calls in a row allowed (each run on its own)."
    )

    def evaluate(self, ctx: EvalContext) -> Verdict:
        return _judged(ctx, self._judge)

    def _judge(self, scope: _Scope) -> Verdict:
        longest: tuple[int, _Run | None, ToolCall | None, int] = (0, None, None, 0)
        doubts: list[str] = []
        for run in scope.each():
            calls = run.run.calls
            streak = 0
            for index, call in enumerate(calls):
                same = index > 0 and _same_call(calls[index - 1], call)
                streak = streak + 1 if same else 1
                if streak > longest[0]:
                    longest = (streak, run, call, index + 1 - streak + 1)
            doubts.extend(self._doubts(run))
        streak, where, call, first = longest
        if where is not None and call is not None and streak > self.max_repeats:
            return Verdict.failed(
                f"{where.label} called '{call.name}' with the same arguments "
                f"{pluralize(streak, 'time')} in a row (calls {first} to {first + streak - 1}), "
                f"more than max_repeats {self.max_repeats}: {shown(call.args)}",
                streak,
                self.max_repeats,
            )
        runs = sum(1 for _ in scope.each())
        seen = (
            f"longest: '{call.name}' {pluralize(streak, 'time')} in {where.label}"
            if where is not None and call is not None
            else "no tool calls"
        )
        text = (
            f"no run repeated a call more than {self.max_repeats} times in a row "
            f"({pluralize(runs, 'run')}; {seen})"
        )
        if doubts:
            more = f"; and {len(doubts) - 3} more" if len(doubts) > 3 else ""
            return Verdict.errored(f"{text}, but {'; '.join(doubts[:3])}{more}")
        return Verdict.passed(text, streak, self.max_repeats)

    def _doubts(self, run: _Run) -> list[str]:
        """Why calls of `run` the record does not hold whole could make a loop longer than
        max_repeats: a code-mode call hides any calls; calls that could be one call repeated
        (arguments not read, or cut by OpenClaw, or a call without its tool's name) in a row
        longer than max_repeats; calls past the bound on the events read."""
        calls = run.run.calls
        doubts = []
        if any(_code_mode(call) for call in calls):
            doubts.append(
                f"in {run.label} a Tool Search code-mode call's calls, which the record does "
                "not hold one by one, could repeat"
            )
        start, last = 0, None  # the window of calls that could be one call repeated
        for index, call in enumerate((*calls, None)):
            if call is not None and (last is None or _maybe_same(last, call)):
                last = call if call.name_known or last is None else last
                continue
            window = calls[start:index]
            if len(window) > self.max_repeats and not all(
                _same_call(a, b) for a, b in itertools.pairwise(window)
            ):
                doubts.append(
                    f"in {run.label} calls {start + 1} to {index} could be one call repeated "
                    f"{len(window)} times: {_why_unsure(window)}"
                )
            start, last = index, call
        if run.run.capped:
            doubts.append(_capped([run]) + ": they could repeat")
        return doubts


def _same_call(a: ToolCall, b: ToolCall) -> bool:
    return (
        a.name == b.name
        and a.name_known
        and a.args_known
        and b.args_known
        and not a.cuts
        and not b.cuts
        and same_value(a.args, b.args)
    )


def _maybe_same(a: ToolCall, b: ToolCall) -> bool:
    """Whether `a` and `b` could be the same call, as far as the record tells."""
    if not a.name_known or not b.name_known:
        return True
    if a.name != b.name:
        return False
    if not a.args_known or not b.args_known:
        return True
    return _maybe_equal(a.args, b.args)


def _maybe_equal(x: Any, y: Any) -> bool:
    """Whether values OpenClaw recorded could have been equal when sent: its markers stand for
    any value but one whose size they name otherwise."""
    from clawspec.evidence.record import ARRAY_SIZE_LIMIT, TRUNCATED_KEY

    cx, cy = _cut(x), _cut(y)
    if cx is not None or cy is not None:
        if cx == cy and isinstance(x, dict) and isinstance(y, dict):
            sizes = [
                (x.get(k), y.get(k))
                for k in ("originalChars", "originalLength", "originalKeys", "bytes")
            ]
            if any(type(a) is int and type(b) is int and a != b for a, b in sizes):
                return False  # OpenClaw says they were of different sizes
        return True
    if isinstance(x, dict) and isinstance(y, dict):
        cut_x, cut_y = TRUNCATED_KEY in x, TRUNCATED_KEY in y
        if cut_x and cut_y and not _maybe_equal(x[TRUNCATED_KEY], y[TRUNCATED_KEY]):
            return False
        keys_x, keys_y = set(x) - {TRUNCATED_KEY}, set(y) - {TRUNCATED_KEY}
        if not cut_x and not cut_y and keys_x != keys_y:
            return False
        return all(_maybe_equal(x[k], y[k]) for k in keys_x & keys_y)
    if isinstance(x, list) and isinstance(y, list):
        cut_x = bool(x) and _cut(x[-1]) == ARRAY_SIZE_LIMIT
        cut_y = bool(y) and _cut(y[-1]) == ARRAY_SIZE_LIMIT
        if cut_x or cut_y:
            if cut_x and cut_y and not _maybe_equal(x[-1], y[-1]):
                return False
            known_x, known_y = x[:-1] if cut_x else x, y[:-1] if cut_y else y
            return all(_maybe_equal(a, b) for a, b in zip(known_x, known_y, strict=False))
        return len(x) == len(y) and all(_maybe_equal(a, b) for a, b in zip(x, y, strict=True))
    return bool(same_value(x, y))


def _why_unsure(window: tuple[ToolCall, ...]) -> str:
    """What keeps calls that could be one call repeated from being told apart."""
    for call in window:
        if not call.name_known:
            return f"OpenClaw recorded one without the tool's name ({call.note})"
    for call in window:
        if not call.args_known:
            return (
                "the record does not hold the arguments of some (arguments too large to read: "
                f"{call.note or 'not recorded'})"
            )
    cut = next(cut for call in window for cut in call.cuts)
    return (
        f"OpenClaw recorded their '{window[0].name}' argument '{cut.where}' {cut.detail}: "
        "whether they were the same cannot be told"
    )


# --- messages sent ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Seen:
    """The messages a scope's runs sent, the runs whose record does not tell, and the matches."""

    scope: _Scope
    sent: list[tuple[_Run, SentMessage]]
    unknown: list[str]
    found: list[tuple[_Run, SentMessage]]


class _MessageFields(Assertion):
    """The fields `message_sent` and `message_not_sent` share."""

    to: str | None = Field(
        None, min_length=1, description="Target the message went to (exact, as recorded)."
    )
    text: str | None = Field(
        None,
        min_length=1,
        description="Text the message contains (whitespace collapsed, case-folded).",
    )
    pattern: str | None = Field(
        None, min_length=1, description="Python regular expression searched for in the message."
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None and "{{" not in value:
            check_pattern(value)
        return value

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("'text' must not be blank")
        return value

    @model_validator(mode="after")
    def _text_or_pattern(self) -> _MessageFields:
        if self.text is not None and self.pattern is not None:
            raise ValueError("give either 'text' or 'pattern', not both")
        return self

    def _wanted(self) -> str:
        parts = ["a message"]
        if self.to is not None:
            parts.append(f"to '{self.to}'")
        if self.text is not None:
            parts.append(f"containing '{self.text}'")
        if self.pattern is not None:
            parts.append(f"matching '{self.pattern}'")
        return " ".join(parts)

    def _look(self, ctx: EvalContext) -> _Seen | Verdict:
        """What the scope's runs sent and which of it matches, or why it cannot be told."""
        scope = _scope(ctx)
        if isinstance(scope, Verdict):
            return scope
        sent, unknown = self._messages(scope)
        found = self._matching(sent)
        if isinstance(found, str):
            return Verdict.errored(found)
        return _Seen(scope, sent, unknown, found)

    def _messages(self, scope: _Scope) -> tuple[list[tuple[_Run, SentMessage]], list[str]]:
        """The messages the scope's runs sent, and the runs whose record does not tell."""
        from clawspec.evidence.record import SentMessage

        sent: list[tuple[_Run, SentMessage]] = []
        unknown: list[str] = []
        for run in scope.each():
            record = run.run
            if record.final_status is None or any("trace.artifacts" in n for n in record.cut):
                unknown.append(run.label)  # no readable trace.artifacts: nothing is known
                continue
            sent.extend((run, message) for message in record.sent)
            targeted = {m.text for m in record.sent if m.text is not None}
            for text in record.sent_texts:  # a text recorded without its target
                if text not in targeted:
                    sent.append((run, SentMessage(None, None, None, text)))
        return sent, unknown

    def _matching(
        self, sent: list[tuple[_Run, SentMessage]]
    ) -> list[tuple[_Run, SentMessage]] | str:
        """The messages that match, or why it could not be decided (a message whose text
        OpenClaw kept only as its marker might hold what is asked for)."""
        found = [(r, m) for r, m in sent if self.to is None or m.to == self.to]
        # A message whose target is not known either might be the one asked for.
        cut = [
            (r, m)
            for r, m in sent
            if m.text_cut is not None and (self.to is None or m.to in (self.to, None))
        ]
        if self.text is not None:
            want = " ".join(self.text.split()).casefold()
            found = [
                (r, m)
                for r, m in found
                if m.text is not None and want in " ".join(m.text.split()).casefold()
            ]
        if self.pattern is not None:
            texts = [(r, m) for r, m in found if m.text is not None]
            results = (
                _search_all([(self.pattern, m.text or "") for _, m in texts], "the messages sent")
                if texts
                else []
            )
            if isinstance(results, str):
                return results
            found = [pair for pair, hit in zip(texts, results, strict=True) if hit]
        if not found and cut and (self.text is not None or self.pattern is not None):
            run, message = cut[0]
            assert message.text_cut is not None
            return (
                f"{self._wanted()}: cannot be told, OpenClaw kept no text of a message "
                f"{run.label} sent ({message.text_cut.detail})"
            )
        return found


def _message(run: _Run, message: SentMessage) -> str:
    to = f" to '{one_line(clean(valid_unicode(message.to)), 80)}'" if message.to else ""
    via = f" via {message.tool}" if message.tool else ""
    text = shown(message.text) if message.text is not None else "(no text recorded)"
    return f"{run.label}{via}{to}: {text}"


def _sent_list(sent: list[tuple[_Run, SentMessage]]) -> str:
    if not sent:
        return "no message sent"
    items = [_message(r, m) for r, m in sent[:3]]
    more = f"; and {len(sent) - 3} more" if len(sent) > 3 else ""
    return f"{pluralize(len(sent), 'message')} sent: " + "; ".join(items) + more


@register(
    category="run record",
    example='to: "telegram:123456789"\ntext: "ready for pickup"',
)
class MessageSent(_MessageFields):
    """The agent sent a message through a messaging tool (to a target, with a text)."""

    type: Literal["message_sent"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        seen = self._look(ctx)
        if isinstance(seen, Verdict):
            return seen
        if seen.found:
            return Verdict.passed(f"{self._wanted()} was sent: {_message(*seen.found[0])}")
        text = f"{self._wanted()} was not sent in {seen.scope.subject} ({_sent_list(seen.sent)})"
        if seen.unknown:
            return Verdict.errored(f"{text}, but {_no_artifacts(seen.unknown)}")
        return Verdict.failed(text)


@register(
    category="run record",
    example='to: "telegram:123456789"',
    negative=True,
)
class MessageNotSent(_MessageFields):
    """The agent sent no message (or none to a target, with a text) through a messaging tool."""

    type: Literal["message_not_sent"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        seen = self._look(ctx)
        if isinstance(seen, Verdict):
            return seen
        if seen.found:
            found = seen.found
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return Verdict.failed(f"{self._wanted()} was sent: {_message(*found[0])}{more}")
        if seen.unknown:
            return Verdict.errored(
                f"cannot tell that {self._wanted()} was not sent: {_no_artifacts(seen.unknown)}"
            )
        runs = sum(1 for _ in seen.scope.each())
        return Verdict.passed(
            f"{self._wanted()} was not sent in {seen.scope.subject} ({pluralize(runs, 'run')}; "
            f"{_sent_list(seen.sent)})"
        )


def _no_artifacts(labels: list[str]) -> str:
    return (
        f"the record of {quote_list(labels)} has no readable trace.artifacts event, where "
        "OpenClaw writes the messages a run sent"
    )


# --- how the runs ended -------------------------------------------------------------------------


@register(
    category="run record",
    example="{}",
)
class RunCompleted(Assertion):
    """Every run in scope, sub-agents included, ended with stop reason `stop`."""

    type: Literal["run_completed"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scope = _scope(ctx)
        if isinstance(scope, Verdict):
            return scope
        problems = []
        runs = list(scope.each())
        for run in runs:
            why = _not_completed(run.run)
            if why:
                problems.append(f"{run.label}: {why}")
        if problems:
            shown_problems = "; ".join(problems[:5])
            more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
            return Verdict.failed(
                f"{pluralize(len(problems), 'run')} of {len(runs)} did not complete: "
                f"{shown_problems}{more}",
                len(problems),
                0,
            )
        labels = ", ".join(r.label for r in runs[:5])
        more = f" and {len(runs) - 5} more" if len(runs) > 5 else ""
        return Verdict.passed(
            f"{pluralize(len(runs), 'run')} ended with stop reason 'stop' ({labels}{more})", 0, 0
        )


# What OpenClaw's stop reasons other than `stop` mean (its model layer's values): said beside
# the reason, since a cut answer is recorded with a final status of success.
_STOP_REASONS = {
    "length": "the model's answer was cut at its output limit",
    "error": "the model call failed",
    "aborted": "the run was stopped before the model answered",
    "timeout": "the run timed out",
    "cancelled": "the run was cancelled",
    "toolUse": "the model's last answer asked for a tool and the run ended there",
}


def _not_completed(run: Trajectory) -> str:
    """How the run did not end normally, else ""."""
    problems = []
    if run.timed_out:
        problems.append("timed out")
    if run.aborted:
        problems.append("aborted")
    if run.stop_reason != "stop":
        reason = "none recorded" if run.stop_reason is None else f"'{_plain(run.stop_reason)}'"
        meaning = _STOP_REASONS.get(run.stop_reason or "")
        problems.append(
            f"stop reason {reason}{f' ({meaning})' if meaning else ''}, expected 'stop'"
        )
    if not run.has_ended:
        problems.append("its record has no session.ended (the run did not end)")
    if run.pending_children:
        problems.append(f"{pluralize(len(run.pending_children), 'sub-agent run')} did not end")
    if problems and run.final_status is not None:
        problems.append(f"final status '{_plain(run.final_status)}'")
    return ", ".join(problems)

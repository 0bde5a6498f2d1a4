"""Matching a call's recorded arguments with a contract's expected ones: literal values,
`{matches: <regex>}` patterns (searched together in one bounded child), `exact` and `ignore`;
a part OpenClaw cut or redacted is never decided either way (`Matcher.open_parts`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from clawspec.assertions.documents import same_value
from clawspec.assertions.patterns import check_pattern, search_all
from clawspec.assertions.run_scope import plain, shown

PATTERN_KEY = "matches"


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
class Matcher:
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
        if cut_reason(actual) is not None:
            self._open("", actual)
            return [], self.open_parts
        problems = self.differences(actual, expected)
        return problems, self.open_parts

    def _open(self, name: str, value: Any, detail: str | None = None) -> None:
        from clawspec.evidence.record import cut_detail

        said = detail or cut_detail(value) or "cut"
        what = f"the argument '{plain(name)}'" if name else "the arguments"
        self.open_parts.append(f"{what} {said}")

    def differences(self, actual: Any, expected: dict[str, Any], prefix: str = "") -> list[str]:
        """Each way `actual` does not match `expected`: "key: expected X, found Y" (a part
        OpenClaw cut is added to `open_parts` instead)."""
        from clawspec.evidence.record import TRUNCATED_KEY, container_cut, credential_key

        if not isinstance(actual, dict):
            return [f"{plain(prefix[:-1]) or 'args'}: expected a mapping, found {shown(actual)}"]
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
                    problems.append(f"{plain(name)}: missing (expected {self._wanted(want)})")
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
                    problems.append(f"{plain(name)}: not expected (found {shown(actual[key])})")
        return problems

    def _value(self, got: Any, want: Any, name: str) -> list[str]:
        from clawspec.evidence.record import ARRAY_SIZE_LIMIT, container_cut

        if cut_reason(got) is not None:
            self._open(name, got)
            return []
        items_cut = container_cut(got) if isinstance(got, list) else None
        if isinstance(want, list) and items_cut is not None:
            marked = cut_reason(got[-1]) == ARRAY_SIZE_LIMIT
            known = got[:-1] if marked else got
            sent = got[-1].get("originalLength") if marked else None
            if type(sent) is int and sent != len(want):
                return [f"{plain(name)}: expected {len(want)} items, found {sent}"]
            if len(want) < len(known):
                return [f"{plain(name)}: expected {len(want)} items, found {len(known)} or more"]
            inner = [
                p
                for i, (g, w) in enumerate(zip(known, want, strict=False))
                for p in self._value(g, w, f"{name}[{i}]")
            ]
            if not inner:
                self._open(name, None, items_cut)
            return inner
        if is_pattern(want) and not isinstance(got, str) and holds_cut(got):
            self._open(name, got, "with parts OpenClaw cut or redacted")
            return []
        if is_pattern(want):
            pattern = want[PATTERN_KEY]
            text = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)
            if self._search(pattern, text):
                return []
            return [f"{plain(name)}: expected a match of '{pattern}', found {shown(got)}"]
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
            return [f"{plain(name)}: expected {self._wanted(want)}, found {shown(got)}"]
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
        found = search_each(pairs, "the calls' arguments")
        if isinstance(found, str):
            return found
        self.results = dict(zip(pairs, found, strict=True))
        return None


def cut_reason(value: Any) -> str | None:
    """OpenClaw's reason when `value` is a marker of its own or text it redacted, else None."""
    from clawspec.evidence.record import REDACTED, bound_marker, cut_detail

    reason = bound_marker(value)
    if reason is not None:
        return reason
    return REDACTED if isinstance(value, str) and cut_detail(value) is not None else None


def holds_cut(value: Any) -> bool:
    """Whether a cut part is anywhere in `value`."""
    from clawspec.evidence.record import args_cuts

    return bool(args_cuts(value))


def search_each(pairs: list[tuple[str, str]], subject: str) -> list[bool] | str:
    """Whether `re.search` finds each (pattern, text), one bounded search of all."""
    found = search_all(pairs, subject)
    return found if isinstance(found, str) else [match is not None for match in found]

"""Regular expressions from contracts, searched within a bound.

Python's `re` backtracks without limit and cannot be interrupted from inside the process (a
nested repeat such as `(a+)+$` takes exponential time), so every search of a contract's pattern
runs in a child interpreter stopped at a bound. The patterns and texts travel as ASCII JSON
(a lone surrogate survives the trip); one child searches all the pairs an assertion needs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence

from clawspec.text import one_line, quote_list

# The longest the searches of one assertion may take together.
PATTERN_SECONDS = 5.0
# What the child runs: [[pattern, text], ...] in, each match's [start, text] or null out.
_SEARCH = (
    "import json,re,sys\n"
    "out=[]\n"
    "for p,t in json.load(sys.stdin):\n"
    " m=re.search(p,t)\n"
    " out.append(None if m is None else [m.start(),m.group(0)])\n"
    "json.dump(out,sys.stdout)\n"
)

Match = tuple[int, str]  # where the match starts, and what it matched


def check_pattern(pattern: str, field: str = "pattern") -> None:
    """Raise ValueError saying where `pattern` (the value of `field`) is not a regular
    expression."""
    try:
        re.compile(pattern)
    except re.error as exc:
        where = f" at position {exc.pos + 1}" if exc.pos is not None else ""
        raise ValueError(
            f"'{field}' is not a regular expression: {exc.msg}{where} (escape literal "
            "characters such as ( [ . * + ? with a backslash)"
        ) from None


def search_all(
    pairs: Sequence[tuple[str, str]], subject: str, seconds: float | None = None
) -> list[Match | None] | str:
    """`re.search(pattern, text)` for each pair, all stopped after `seconds` (default
    PATTERN_SECONDS): each match (None without one), or a message saying why they could not be
    decided (`subject` names what was searched: "the reply (65 characters)")."""
    if not pairs:
        return []
    seconds = PATTERN_SECONDS if seconds is None else seconds
    patterns = list(dict.fromkeys(pattern for pattern, _ in pairs))
    named = f"the pattern '{patterns[0]}'" if len(patterns) == 1 else quote_list(patterns)
    if len(patterns) > 1:
        named = f"the patterns {named}"
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _SEARCH],
            input=json.dumps([list(pair) for pair in pairs]),
            capture_output=True,
            text=True,
            encoding="ascii",
            timeout=seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        which = "it backtracks" if len(patterns) == 1 else "one backtracks"
        return (
            f"{named} did not finish on {subject} within {seconds:g} s: {which} too much "
            "(nested repeats such as (a+)+ or (a|a)* take exponential time); make it more "
            "specific"
        )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{named} could not be searched for: {one_line(last, 300)}"
    return [None if m is None else (int(m[0]), str(m[1])) for m in json.loads(done.stdout)]

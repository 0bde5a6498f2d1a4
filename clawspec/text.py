"""Text helpers for everything that leaves the process: cleaning, redaction, numbers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from clawspec import secrets as _secrets

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
# Bidirectional controls make a terminal or a log viewer show text in another order than it
# is written ("Trojan Source"): an agent's reply could make a line read as something else.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# XML 1.0 and most terminals choke on C0 controls other than tab, LF, CR (and on DEL/C1).
_CONTROL = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]")
# What a name cannot hold and still be shown as written, on one line: every control character
# (ANSI escapes start with one), the line separators, the bidirectional controls.
UNSHOWABLE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
MASK = _secrets.MASK
MIN_SECRET_LENGTH = _secrets.MIN_LENGTH  # shorter values would mask ordinary words
# The only ways to shorten a text for output: mask, cut, mask a secret's prefix the cut left
# (clawspec/secrets.py). A plain slice would show the first half of a secret cut in two.
cut = _secrets.cut
cut_bytes = _secrets.cut_bytes


def strip_ansi(text: str) -> str:
    """Remove ANSI colour/escape sequences."""
    return _ANSI.sub("", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """Return `text` as every UTF-8 writer takes it: a surrogate pair becomes its character and a
    lone surrogate (JavaScript's JSON writes one for an emoji cut in half; a file name that is
    not UTF-8 gives some) becomes U+FFFD."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean(text: str) -> str:
    """Strip ANSI codes and control characters and mask every secret (the active registry's
    values and the secret patterns: clawspec/secrets.py)."""
    if _CONTROL.search(text):  # ESC is a control character: no control, no ANSI sequence
        text = _CONTROL.sub("", strip_ansi(text))
    return _secrets.mask(text)


_BREAKS = re.compile(r"[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")


def flat(text: str) -> str:
    """`text` with its line breaks as spaces: a name, a path or a message printed inside a line
    never starts one of its own, where a CI system would read it as a command (`::error::`)."""
    return _BREAKS.sub(" ", text)


def console_line(text: str) -> str:
    """`text` as one line of a command's output: `flat` and `clean` (a name from a workspace
    must not start a line of its own, nor move the cursor or the title)."""
    return clean(flat(text))


def cleaner() -> Callable[[str], str]:
    """`clean`, for many strings: a printable string holds no ANSI code and no control
    character, so most strings only need the secrets looked for."""

    def cleaned(text: str) -> str:
        if text.isprintable():
            return _secrets.mask(text)  # the registered secrets and patterns (clawspec/secrets.py)
        return clean(text)

    return cleaned


def redact(text: str) -> str:
    """Replace every registered secret and secret pattern (clawspec/secrets.py), longest
    first, with ***."""
    return _secrets.mask(text)


def one_line(text: str, limit: int = 300) -> str:
    """Mask secrets, collapse whitespace to one line and `cut` it to `limit` characters.

    Masking comes first (a secret may span lines): a cut through a secret would leave a part
    no mask recognises.
    """
    return cut(" ".join(_secrets.mask(text).split()), limit)


def pluralize(count: int, noun: str, plural: str | None = None) -> str:
    """Return '1 scenario' / '3 scenarios'."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def fmt_number(value: float) -> str:
    """Format with thousands separators, dropping a useless '.0'."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return f"{int(value):,}"


def fmt_duration_ms(ms: float) -> str:
    """Return a compact human duration: '850 ms', '4.1 s', '30 s', '2 min 5 s' (the one
    duration format of every message and report)."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}".removesuffix(".0") + " s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


def fmt_usd(value: float) -> str:
    """Return '$0.0712', '$1.25', '$0'."""
    text = f"{value:,.6f}".rstrip("0").rstrip(".")
    return f"${text}"


def capped(items: Iterable[str], limit: int = 5, sep: str = ", ", *, quote: bool = False) -> str:
    """Join at most `limit` items, then "… and N more" (one-line messages, capped lists)."""
    items = list(items)
    shown = sep.join(f"'{i}'" if quote else i for i in items[:limit])
    return shown + (f" … and {len(items) - limit} more" if len(items) > limit else "")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """` (did you mean 'report_dir'?)` when one of `choices` is close to `name`, else ''."""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def quote_list(items: Iterable[str], limit: int = 5) -> str:
    """Return "'a', 'b' … and 3 more" with at most `limit` items shown."""
    return capped(items, limit, quote=True)


class FileWarning(str):
    """A warning (its text) about files, with each file and what the warning says of it alone:
    where a CI system can show a warning on a file (GitHub Actions), it is shown there."""

    files: tuple[tuple[str, str], ...]

    def __new__(cls, text: str, files: Iterable[tuple[str, str]]) -> FileWarning:
        warning = super().__new__(cls, text)
        warning.files = tuple(files)
        return warning

"""Text from outside shown as data in GitHub Markdown (job summary, PR comment, check run).

Scenario names, contract paths, assertion messages, evidence, model names and what a state file
holds come from contracts, agents and models. On GitHub they must read as the same characters and
never turn into markup: no image, link, autolink, mention, issue or commit reference, no HTML.
One function per place in a document:

- `inline`: running text (list items, headings, quotes, link labels);
- `table_cell`: the same, and `|` escaped (only a table cell ends at a pipe);
- `code_span`: a code span whose fence is longer than any backtick run inside;
- `code_block`: a fenced block, likewise;
- `link`: a link ClawSpec builds itself: the label is data, the target only http(s).

Markdown punctuation is backslash-escaped; `<`, `>` and `&` become entities. Inside code GitHub
links nothing and entities show literally, so code is not escaped (only a table's `|`). A word of
running text that is an id or an address (one holding a run of 7 or more hex digits GitHub could
take for a commit SHA, a `scheme://` URL, a `www.` host) is shown as a code span: it reads and
copies as the same characters, and GitHub neither links it nor autolinks it. What else GitHub
links or pings after rendering (`@user`, `@org/team`, `#12`, `owner/repo#12`, `GH-12`, e-mail
addresses) gets a zero-width space (`&#8203;`) where the pattern would match: readers see the same
characters, GitHub sees no reference.

Each function first strips ANSI codes and control characters and masks the secrets: escaping
could split a secret so that a pass over the whole document would no longer find it.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from clawspec.text import clean, cut, valid_unicode

ZERO_WIDTH_SPACE = "&#8203;"
# Marks where a zero-width space goes until the text is escaped. A noncharacter ("not for
# interchange"): one in the input becomes U+FFFD.
_MARK = "\ufdd0"
# What GitHub turns into a mention, a reference or a link (when the text holds the first part);
# the mark goes after the match.
_REFERENCES = (
    ("@", re.compile(r"@(?=[0-9A-Za-z_-])")),  # @user, @org/team, user@host (e-mail autolink)
    ("#", re.compile(r"#(?=[0-9])")),  # #12, owner/repo#12
    ("-", re.compile(r"(?i:gh)-(?=[0-9])")),  # GH-12
)
_AFTER_MATCH = "\\g<0>" + _MARK
# A commit SHA (7 to 40 hex digits) GitHub links when it names a commit of the repository: a word
# holding one (a run of 7 or more hex digits, one a digit, not inside a longer word) is code.
_HEX = re.compile(r"[0-9A-Fa-f]{7,}")
# A URL (any scheme) or a www. host GitHub would autolink: the word is code.
_ADDRESS = re.compile(r"://|^(?i:www)\.")
# A word that may be one (checked by `_as_code`): it holds `://`, `www.` or 7 hex digits.
_CANDIDATE = re.compile(r"(?<!\S)\S*?(?:://|(?i:www)\.|[0-9A-Fa-f]{7})\S*")
# Punctuation of the sentence around a word, not part of it.
_OPENERS = "([{<'\""
_CLOSERS = ")]}>'\".,;:!?"
# `_` emphasises only at a word's edge: escape it unless letters or digits surround it.
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# At the start of a line: a heading, a bullet, a setext underline or a thematic break (a
# backslash goes before it), or an ordered list item (a backslash goes before its "." or ")").
_BLOCK_MARKER = re.compile(r"(?:#{1,6}|[+-])(?=[ \t]|$)|[=-]+[ \t]*$")
_LIST_NUMBER = re.compile(r"[0-9]{1,9}(?=[.)](?:[ \t]|$))")
_BACKTICKS = re.compile(r"`+")

# In this order: a backslash first (the others add some), the entities' "&" before the entities.
_INLINE = (
    ("\\", "\\\\"),
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ("`", "\\`"),
    ("*", "\\*"),
    ("~", "\\~"),
    ("[", "\\["),
    ("]", "\\]"),
    ("$", "\\$"),  # GitHub renders $…$ as maths
    (_MARK, ZERO_WIDTH_SPACE),
)
_CELL = (*_INLINE, ("|", "\\|"))
# Kept as they are in a link target; the rest is percent-encoded. "&" becomes "&amp;": a target's
# entities are decoded before its backslash escapes, so a backslash would not keep "&amp;" as is.
_URL_SAFE = "!#$%&'*+,/:;=?@[]~-._"


def _data(text: str) -> str:
    """Text as it may be shown: valid Unicode, no ANSI or control characters, secrets masked."""
    text = valid_unicode(clean(text))
    return text.replace(_MARK, "\ufffd") if _MARK in text else text


def _flat(text: str, limit: int | None) -> str:
    """`_data` on one line, cut to `limit` characters (masked first: a cut could split a secret)."""
    flat = " ".join(_data(text).split())
    return cut(flat, limit) if limit else flat


def _is_sha(match: re.Match[str]) -> bool:
    """True when a run of hex digits could be a commit SHA: not part of a longer word, a digit."""
    run, text = match.group(), match.string
    start, end = match.span()
    return not (
        (start and text[start - 1].isascii() and text[start - 1].isalnum())
        or (end < len(text) and text[end].isascii() and text[end].isalnum())
        or run.isalpha()
    )


def _as_code(word: str) -> bool:
    """True when a word is an id or an address: shown as code, which GitHub never links."""
    return bool(_ADDRESS.search(word)) or any(_is_sha(m) for m in _HEX.finditer(word))


def _escape(flat: str, escapes: tuple[tuple[str, str], ...], *, table: bool = False) -> str:
    """Escape one line of running text; its ids and addresses become code spans (`_as_code`)."""
    if "://" not in flat and not _HEX.search(flat) and "www." not in flat.lower():
        return _escape_text(flat, escapes)  # the usual case, told at C speed
    parts: list[str] = []
    done = 0  # where the running text not escaped yet starts
    for match in _CANDIDATE.finditer(flat):
        word = match.group()
        core = word.lstrip(_OPENERS)
        inner = core.rstrip(_CLOSERS)
        if not inner or not _as_code(inner):
            continue
        start = match.start() + len(word) - len(core)
        if start > done:
            parts.append(_escape_text(flat[done:start], escapes))
        parts.append(_code(inner, table))
        done = start + len(inner)
    if not parts:
        return _escape_text(flat, escapes)
    if done < len(flat):
        parts.append(_escape_text(flat[done:], escapes))
    return "".join(parts)


def _escape_text(flat: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for first, pattern in _REFERENCES:
        if first in flat:
            flat = pattern.sub(_AFTER_MATCH, flat)
    for char, escaped in escapes:
        if char in flat:
            flat = flat.replace(char, escaped)
    if "_" in flat:
        flat = _EDGE_UNDERSCORE.sub(r"\\_", flat)
    # Data may start a line in a cell or a quote: no marker there may open a block.
    if _BLOCK_MARKER.match(flat):
        return "\\" + flat
    if number := _LIST_NUMBER.match(flat):
        return f"{number.group()}\\{flat[number.end() :]}"
    return flat


def inline(text: str, limit: int | None = None) -> str:
    """Return `text` as one line of Markdown that shows exactly it (cut to `limit` characters)."""
    return _escape(_flat(text, limit), _INLINE)


def table_cell(text: str, limit: int | None = None) -> str:
    """Return `text` for a table cell: `inline`, and `|` escaped."""
    return _escape(_flat(text, limit), _CELL, table=True)


def code_span(text: str, limit: int | None = None, *, table: bool = False) -> str:
    """Return `text` as a one-line code span ("" for no text); `table` escapes `|` for a cell."""
    flat = _flat(text, limit)
    return _code(flat, table) if flat else ""


def _code(flat: str, table: bool) -> str:
    """A code span of one line of clean text."""
    if table:  # a table splits its row before it sees code; the backslash goes away
        flat = flat.replace("|", "\\|")
    fence = "`" * (max(map(len, _BACKTICKS.findall(flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def code_block(text: str, info: str = "") -> str:
    """Return `text` as a fenced code block, its lines kept; `info` names the language."""
    body = _data(text).replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    fence = "`" * max(3, max(map(len, _BACKTICKS.findall(body)), default=0) + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def link_target(url: str) -> str | None:
    """Return `url` as a link target, or None when it is not an absolute http(s) URL."""
    url = _data(url).strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(url, safe=_URL_SAFE).replace("&", "&amp;")


def link(
    label: str,
    url: str | None,
    limit: int | None = None,
    *,
    table: bool = False,
) -> str:
    """Return a link to `url` showing `label` as data; only the label when `url` is not http(s)."""
    text = (table_cell if table else inline)(label, limit)
    target = link_target(url) if url else None
    return f"[{text}]({target})" if target and text else text

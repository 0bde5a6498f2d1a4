"""The one cut (clawspec/secrets.py `cut`, `cut_bytes`): mask, cut, mask a secret's prefix left.

Every place that shortens a text for output goes through it; these tests pin down its rule: a
secret the text holds whole is masked before the cut (so it is never cut), and a prefix of a
secret at the end of what is kept (the text held only that much of it, or a cut before this one
left it) counts as the secret from `PREFIX_MIN` characters on.
"""

from __future__ import annotations

import re
from pathlib import Path
from secrets import token_urlsafe

import pytest

from clawspec import secrets as registry
from clawspec.secrets import CUT_MARK, MASK, PREFIX_MIN, cut, cut_bytes, mask
from clawspec.text import one_line

SECRET = "tok_" + token_urlsafe(39)  # 56 characters, as the hook token of the report
WINDOW = 8
# What follows a prefix of the secret: "#" is outside the token alphabet, so the prefix and
# its tail never spell the whole secret (with a letter, SECRET[:55] + "b" may be SECRET).
TAIL = "#" * 100


def _leaks(text: str, secret: str = SECRET) -> bool:
    return any(secret[i : i + WINDOW] in text for i in range(len(secret) - WINDOW + 1))


@pytest.fixture
def known() -> object:
    with registry.scope() as active:
        active.add(SECRET)
        yield active


def test_the_reported_case_a_quoted_value_cut_at_80(known: object) -> None:
    """50 times "x" and the token, quoted: the cut at 80 fell 28 characters into the token."""
    quoted = '"' + "x" * 50 + SECRET + '"'
    assert cut(quoted, 80) == '"' + "x" * 50 + MASK + '"'  # masked first, it fits


@pytest.mark.parametrize("limit", [20, 60, 80, 120])
def test_a_secret_straddling_the_cut_never_shows(known: object, limit: int) -> None:
    for start in range(0, limit + 2):
        text = "x" * start + SECRET + " tail" * 40
        shown = cut(text, limit)
        assert len(shown) <= limit
        assert shown.endswith(CUT_MARK)
        assert not _leaks(shown), (start, shown)
        if start + len(MASK) < limit - 1:  # the mask fits before the cut: it is shown
            assert shown.startswith("x" * start + MASK), (start, shown)


def test_a_text_that_fits_is_masked_and_not_cut(known: object) -> None:
    assert cut(f"key {SECRET} end", 100) == f"key {MASK} end"
    assert cut("short", 5) == "short"
    assert cut("longer", 5) == "long" + CUT_MARK


@pytest.mark.parametrize("kept", range(PREFIX_MIN, len(SECRET)))
def test_a_secret_prefix_left_at_the_end_is_masked(known: object, kept: int) -> None:
    """The text holds only the start of the secret (cut before it reached us): the cut that
    ends right after `kept` characters of it shows none of them."""
    text = "a" * 30 + SECRET[:kept] + TAIL
    shown = cut(text, 30 + kept + 1)
    assert shown == "a" * 30 + MASK + CUT_MARK
    assert not _leaks(shown)


@pytest.mark.parametrize("kept", range(1, PREFIX_MIN))
def test_a_prefix_shorter_than_the_minimum_stays(known: object, kept: int) -> None:
    """Fewer than PREFIX_MIN characters are as likely to be ordinary text: not masked."""
    text = "a" * 30 + SECRET[:kept] + TAIL
    assert cut(text, 30 + kept + 1) == "a" * 30 + SECRET[:kept] + CUT_MARK


def test_a_prefix_is_masked_only_at_the_end_of_a_cut(known: object) -> None:
    """Inside a text, a secret's first characters followed by other text are not the secret."""
    text = f"id {SECRET[:12]}-other and more"
    assert cut(text, 100) == text
    assert mask(text) == text


def test_the_longest_dangling_prefix_goes_whole(known: object) -> None:
    """The tail `SECRET[:8] SECRET[:20]`-like overlaps: everything from the earliest start."""
    with registry.scope() as active:
        repeated = "abcdefgh" * 4  # a secret whose prefix occurs again inside itself
        active.add(repeated)
        shown = cut("z " + repeated[:20] + "rest" * 10, 23)
        assert shown == "z " + MASK + CUT_MARK


def test_a_secret_registered_later_counts_too() -> None:
    other = "sk-" + token_urlsafe(30)
    with registry.scope():
        registry.register(other)  # e.g. a token made after the first output
        shown = cut("x" + other[:15] + "y" * 50, 17)
        assert shown == "x" + MASK + CUT_MARK
        assert cut(f"x{other}y", 100) == f"x{MASK}y"


def test_the_registry_scope_matters() -> None:
    """Outside a scope nothing is registered: a prefix of an unknown value is ordinary text."""
    text = "a" * 10 + SECRET[:20] + "b" * 50
    assert cut(text, 31) == "a" * 10 + SECRET[:20] + CUT_MARK


def test_a_cut_aws_access_key_id_is_masked_without_registration() -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    assert cut(f"id {key} rest", 100) == f"id {MASK} rest"  # the whole one: a pattern
    assert cut(f"id {key[:12]}" + "z" * 40, 16) == "id " + MASK + CUT_MARK
    assert cut("id AKIA1" + "z" * 40, 9) == "id AKIA1" + CUT_MARK  # too short to tell


@pytest.mark.parametrize("limit", [10, 30, 64, 65, 66, 90])
def test_cut_bytes_masks_and_never_splits_a_character(known: object, limit: int) -> None:
    for start in range(0, 40):
        text = "é" * start + SECRET + "ü" * 60
        shown = cut_bytes(text, limit)
        assert len(shown.encode("utf-8")) <= limit
        assert "\ufffd" not in shown
        assert not _leaks(shown), (start, shown)
    data = "€" * 40  # 3 bytes each: 120 bytes
    assert cut_bytes(data, 200) == data
    assert cut_bytes(data, 10) == "€€" + CUT_MARK


def test_cut_bytes_masks_a_dangling_prefix(known: object) -> None:
    text = "ä" * 5 + SECRET[:30] + "b" * 50
    assert cut_bytes(text, 10 + 20 + 3) == "ä" * 5 + MASK + CUT_MARK


def test_a_cut_without_a_mark(known: object) -> None:
    assert cut("x" * 10 + SECRET, 20, mark="") == "x" * 10 + MASK
    assert cut("x" * 10 + SECRET[:20] + "y" * 9, 20, mark="") == "x" * 10 + MASK


def test_a_limit_shorter_than_the_mark() -> None:
    assert cut("abcdef", 1) == CUT_MARK
    assert cut("abcdef", 0) == ""
    assert cut("abcdef", 2, mark="[cut]") == "[c"
    assert cut_bytes("abcdef", 3) == CUT_MARK  # three bytes in UTF-8
    assert cut_bytes("abcdef", 2) == ""


def test_mask_treats_a_prefix_before_the_cut_mark_as_the_secret(known: object) -> None:
    """A text cut before it was masked (by a server, by code that cut a quoted value inside a
    longer message): each `…` shows where a cut was, and a prefix right before it goes."""
    text = f'found "xx{SECRET[:28]}…"; other: "{SECRET[:9]}…" and {SECRET[:12]} whole'
    assert mask(text) == f'found "xx{MASK}…"; other: "{MASK}…" and {SECRET[:12]} whole'
    assert registry.needs_mask(text)
    assert not registry.needs_mask(f"{SECRET[:7]}… and {SECRET[:12]} whole")


def test_one_line_is_a_cut(known: object) -> None:
    text = "line one\n  " + "x" * 50 + SECRET + "\nnext"
    assert one_line(text, 80) == "line one " + "x" * 50 + MASK + " next"
    shown = one_line("a\n" + "x" * 50 + SECRET[:40] + "\n" * 3 + "b" * 50, 80)
    assert shown == "a " + "x" * 50 + MASK + CUT_MARK


def test_cutting_a_cut_text_again_shows_nothing_more(known: object) -> None:
    first = cut("x" * 30 + SECRET, 60)
    for limit in range(1, 60):
        assert not _leaks(cut(first, limit))


# Slicing a text and appending a cut mark instead of calling `cut`: a plain slice shows
# the first half of a secret cut in two. Allowed: the lint rule that previews 4 characters of a
# credential it found (fewer than PREFIX_MIN, so no run the leak check looks for).
_PLAIN_CUT = re.compile(r"\[[^\[\]\n]*:[^\[\]\n]*\]\s*\+\s*(?:\"…\"|'…'|\"\.\.\.\")")
_ALLOWED = {("clawspec/lint/rules.py", "[:4]")}


def test_no_text_is_cut_by_a_plain_slice() -> None:
    root = Path(__file__).resolve().parents[2]
    found = []
    for path in sorted((root / "clawspec").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _PLAIN_CUT.search(line) and not any(
                name == allowed and snippet in line for allowed, snippet in _ALLOWED
            ):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "cut with clawspec.text.cut instead:\n" + "\n".join(found)


def test_the_plain_cut_check_sees_a_plain_cut() -> None:
    assert _PLAIN_CUT.search('    return text[: limit - 1] + "…"')
    assert _PLAIN_CUT.search("shown = value[:79] + '…'")
    assert not _PLAIN_CUT.search('return cut(text, limit) + " more"')

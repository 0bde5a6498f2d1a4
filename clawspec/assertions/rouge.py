"""ROUGE-L F1 for `artifact_matches_golden`, with a cost that stays bounded.

ROUGE-L is the longest common subsequence (LCS) of two word sequences: recall is its length
over the reference's words, precision over the candidate's, and the score their harmonic mean.
rouge-score fills an n x m table in Python (a 100,000-word pair: ten billion cells). Here the
LCS length comes from a bit-parallel algorithm (Allison & Dix 1986; Hyyrö 2004): the shorter
sequence is a row of bits, and each word of the longer one updates the whole row in a few
big-integer operations, so the cost is n x m / 64 machine words, at C speed. Words of the
longer sequence that the shorter never uses leave the row as it is and are skipped. The result
equals rouge-score's (`RougeScorer(["rougeL"])` with this tokenizer: lower-cased `\\w+` runs,
non-ASCII letters kept).

Each side is cut off at `max_tokens` + 1 words (`limits.rouge_max_tokens`): past that the
caller reports an error rather than compare (TooManyWordsError).
"""

from __future__ import annotations

import re
from itertools import islice

_WORD = re.compile(r"\w+")


class TooManyWordsError(ValueError):
    """A text has more words than ROUGE-L compares (`limits.rouge_max_tokens`)."""

    def __init__(self, which: int, limit: int) -> None:
        super().__init__(f"more than {limit:,} words")
        self.which = which  # 0: the reference, 1: the candidate
        self.limit = limit


def words(text: str, max_tokens: int | None = None) -> list[str]:
    """The lower-cased words of `text`, at most `max_tokens` + 1 of them."""
    found = (match.group() for match in _WORD.finditer(text.lower()))
    return list(found if max_tokens is None else islice(found, max_tokens + 1))


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of `a` and `b` (bit-parallel)."""
    if len(a) < len(b):
        a, b = b, a  # b, the shorter, is the row of bits
    if not b:
        return 0
    shared = set(a)
    positions: dict[str, list[int]] = {}
    for index, word in enumerate(b):
        if word in shared:
            positions.setdefault(word, []).append(index)
    masks = {word: _bits(found) for word, found in positions.items()}
    full = (1 << len(b)) - 1
    row = full  # a 1 bit: that position of b is not (yet) matched
    for word in a:
        mask = masks.get(word)
        if mask is not None:
            matched = row & mask
            # Carries out of the top bit gather above it and never flow back down (`matched`
            # is a subset of `row`: no borrow): one mask at the end instead of one per word.
            row = (row + matched) | (row - matched)
    return len(b) - (row & full).bit_count()


def _bits(positions: list[int]) -> int:
    """The integer with exactly the bits at `positions` set."""
    bits = bytearray(positions[-1] // 8 + 1)
    for position in positions:
        bits[position >> 3] |= 1 << (position & 7)
    return int.from_bytes(bits, "little")


def rouge_l_f1(reference: str, candidate: str, max_tokens: int | None = None) -> float:
    """ROUGE-L F1 of `candidate` against `reference`, Unicode-aware, no stemming.

    Raises TooManyWordsError when either text has more than `max_tokens` words."""
    sides = [words(reference, max_tokens), words(candidate, max_tokens)]
    for which, side in enumerate(sides):
        if max_tokens is not None and len(side) > max_tokens:
            raise TooManyWordsError(which, max_tokens)
    target, prediction = sides
    if not target or not prediction:
        return 0.0
    common = lcs_length(target, prediction)
    precision, recall = common / len(prediction), common / len(target)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)

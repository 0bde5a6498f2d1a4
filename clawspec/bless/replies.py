"""`reply_contains` items: sentences of every reply (whitespace-normalised, case-folded), and
the others listed apart (held in only some runs, past the limit, or not what the agent said)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from clawspec.bless.observed import MAX_REPLY_CHARS, reply_was_cut
from clawspec.bless.proposal import (
    MASKED,
    MAX_REPLY_SENTENCES,
    MIN_SENTENCE_CHARS,
    TEMPLATED,
    VARIABLE,
    VOLATILE,
    Item,
    Proposal,
    apart,
    over_limit,
    place,
    with_variables,
)
from clawspec.gateway.trajectory.cuts import cut_detail
from clawspec.reports.model import AttemptEvidence
from clawspec.secrets import MASK

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences(reply: str, variables: Mapping[str, str]) -> list[tuple[str, str]]:
    """The reply's sentences (whitespace-normalised, the variables' values as the variables),
    each with why it cannot be proposed ("" when it can); one shorter than MIN_SENTENCE_CHARS
    is no candidate at all. The last part of a reply kept cut is no sentence the agent ended."""
    found = []
    parts = _SENTENCE_END.split(reply)
    cut = reply_was_cut(reply)
    for number, part in enumerate(parts, start=1):
        text = " ".join(part.split())
        if len(text) < MIN_SENTENCE_CHARS:
            continue
        if cut and number == len(parts):
            found.append((text, f"is where a reply over {MAX_REPLY_CHARS:,} characters was cut"))
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
        text = with_variables(text, variables)
        volatile = VOLATILE.search(VARIABLE.sub("", text))
        found.append((text, "holds a date or id no template variable gives" if volatile else ""))
    return found


def replies(
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
            apart(proposal, proposal.left_out, Item(key, mapping, comment), what)
        elif held < k:
            comment = f"held in {held} of {k} runs"
            what = "reply sentences held in only some runs"
            apart(proposal, proposal.unstable, Item(key, mapping, comment), what)
        elif proposed < MAX_REPLY_SENTENCES:
            proposed += 1
            place(proposal, Item(key, mapping, ""), held, k, "a sentence of every reply")
        else:
            comment = f"held in {k} of {k} runs; a sentence of every reply"
            limit = f"at most {MAX_REPLY_SENTENCES} sentences of the reply are proposed"
            over_limit(proposal, Item(key, mapping, comment), limit)

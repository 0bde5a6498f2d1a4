"""Reply assertions: judge what the agent said, its run's final assistant text.

The reply comes from the evidence layer (`clawspec.evidence.reply`: OpenClaw's run record);
when it cannot be read, every reply assertion is `error` with the reason, never a pass or a
skip. The reply exists only once the agent ran: in `given` these types are a load error
(`contracts.checks`, by their category).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from pydantic import ConfigDict, Field, field_validator, model_validator

from clawspec.assertions.artifact import check_word_sources, check_words, word_hits, word_list
from clawspec.assertions.base import Assertion, EvalContext, Verdict, WorkspacePath
from clawspec.assertions.patterns import check_pattern, search_all
from clawspec.assertions.registry import register
from clawspec.text import clean, one_line, quote_list, valid_unicode

# The reply's reader (the log, the run record) is needed only to evaluate: `clawspec validate`
# builds these models without importing it (tests/test_startup.py).
if TYPE_CHECKING:
    from clawspec.evidence.reply import Reply

SHOWN_CHARS = 200  # of the reply, in a verdict's message


def normalized(text: str, case_sensitive: bool) -> str:
    """Whitespace runs as one space, ends trimmed; case-folded unless `case_sensitive`."""
    collapsed = " ".join(text.split())
    return collapsed if case_sensitive else collapsed.casefold()


def shown(text: str) -> str:
    """The reply as a message quotes it: one line without control characters, masked, cut."""
    return f'"{one_line(clean(valid_unicode(text)), SHOWN_CHARS)}"'


class Said(NamedTuple):
    source: str  # what names it: "turn 2", "run <id>"
    text: str
    redacted: bool  # OpenClaw recorded it with a part redacted (a secret it recognised)


def reply_texts(ctx: EvalContext) -> list[Said] | Verdict:
    """The scope's replies, or the verdict that ends the assertion (`error`: they cannot be
    read; `fail`: no run wrote a final text). In a turn or a plain scenario there is one
    reply; in a conversation's `then`, every turn's."""
    from clawspec.evidence.reply import replies

    found = replies(ctx)
    if isinstance(found, Verdict):
        return found
    texts = [Said(r.source, r.text, r.redacted) for r in found if r.text is not None]
    if not texts:
        return Verdict.failed(_no_text(found))
    return texts


def undecided(texts: list[Said], what: str) -> Verdict | None:
    """`error` when a reply the verdict rests on was recorded with a part OpenClaw redacted
    (the secret in it shown as `abcdef…wxyz` or `<redacted>`): a text the agent said may hide
    there, so a failure to find it, or a pass for not finding it, would be a guess."""
    hidden = next((said for said in texts if said.redacted), None)
    if hidden is None:
        return None
    return Verdict.errored(
        f"OpenClaw recorded the reply of {hidden.source} with a part it redacted (a secret it "
        f"recognised): what it hid cannot be compared, so whether the reply {what} cannot be "
        f"decided: {shown(hidden.text)}"
    )


def redaction_form(text: str) -> bool:
    """Whether an expected text or a match holds the form of OpenClaw's redaction."""
    from clawspec.evidence.reply import redaction_form as form

    return form(text)


def reply_text(ctx: EvalContext) -> str | Verdict:
    """The scope's reply as one text (a conversation's: the transcript, each message
    labelled), for a judge that reads it whole."""
    from clawspec.evidence.reply import replies

    found = replies(ctx)
    if isinstance(found, Verdict):
        return found
    if ctx.run.transcript is None or len(found) == 1:
        if found[-1].text is None:
            return Verdict.failed(_no_text(found))
        return found[-1].text
    lines = []
    for reply in found:
        lines.append(f"User ({reply.source}): {reply.say}")
        lines.append(
            f"Agent ({reply.source}): {reply.text if reply.text is not None else '(no reply)'}"
        )
    return "\n\n".join(lines)


def _no_text(found: tuple[Reply, ...]) -> str:
    if len(found) == 1:
        return f"{found[0].source} ended without a final text: there is no reply to judge"
    return f"none of the {len(found)} turns ended with a final text: there is no reply to judge"


AROUND_CHARS = 80  # of the reply on each side of a match a message quotes


def _as_written(reply: str, compared: str) -> str:
    """The reply with whitespace collapsed, in its own case where folding kept every position
    (else the folded text the match was found in)."""
    collapsed = " ".join(reply.split())
    return collapsed if len(collapsed) == len(compared) else compared


def _around(text: str, at: int, length: int) -> str:
    """The part of `text` around the match at `at` as a message quotes it (`…` where cut): a
    long reply's first characters would not show what matched."""
    start, end = max(0, at - AROUND_CHARS), min(len(text), at + length + AROUND_CHARS)
    part = one_line(clean(valid_unicode(text[start:end])), end - start + 1)
    return f'"{"…" if start else ""}{part}{"…" if end < len(text) else ""}"'


def _quoted(texts: list[Said]) -> str:
    """The replies as a message quotes them: the only one, or each named by its turn."""
    if len(texts) == 1:
        return shown(texts[0].text)
    return "; ".join(f"{said.source}: {shown(said.text)}" for said in texts)


def _texts(value: list[str] | None) -> list[str] | None:
    # A blank text is in every reply once whitespace is collapsed: it would always pass.
    if value is not None and any(not item.strip() for item in value):
        raise ValueError("entries must not be empty")
    return value


def _text(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("'text' must not be blank")
    return value


@register(
    category="reply",
    example='text: "Zed"',
)
class ReplyContains(Assertion):
    """The agent's reply contains a text (whitespace collapsed; case-folded by default)."""

    one_of = (("text", "any_of", "all_of"),)
    # The JSON Schema states `_one_form` too (clawspec/authoring/schema.py).
    model_config = ConfigDict(
        json_schema_extra={
            "x-rules": [
                {"not": {"required": ["text", "any_of"]}},
                {"not": {"required": ["text", "all_of"]}},
            ]
        }
    )

    type: Literal["reply_contains"]
    text: str | None = Field(None, min_length=1, description="Text the reply must contain.")
    any_of: list[str] | None = Field(
        None, min_length=1, description="At least one of these texts must be in the reply."
    )
    all_of: list[str] | None = Field(
        None, min_length=1, description="Every one of these texts must be in the reply."
    )
    case_sensitive: bool = Field(False, description="Compare case as written (default: folded).")

    @field_validator("any_of", "all_of")
    @classmethod
    def _no_blank_entries(cls, value: list[str] | None) -> list[str] | None:
        return _texts(value)

    @field_validator("text")
    @classmethod
    def _no_blank_text(cls, value: str | None) -> str | None:
        return _text(value)

    @model_validator(mode="after")
    def _one_form(self) -> ReplyContains:
        if self.text is not None and (self.any_of is not None or self.all_of is not None):
            raise ValueError("'text' cannot be combined with 'any_of' or 'all_of'")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        texts = reply_texts(ctx)
        if isinstance(texts, Verdict):
            return texts
        expected = (
            [self.text] if self.text is not None else [*(self.all_of or ()), *(self.any_of or ())]
        )
        # In a conversation's `then` it holds when any reply holds it.
        for source, reply, redacted in texts:
            if not self._problems(normalized(reply, self.case_sensitive)):
                if redacted and any(redaction_form(t) for t in expected):
                    break  # found in OpenClaw's redaction, not in what the agent said
                where = f" ({source})" if len(texts) > 1 else ""
                return Verdict.passed(f"the reply{where} {self._held()}")
        if blocked := undecided(texts, self._wanted()):
            return blocked
        subject = "the reply" if len(texts) == 1 else f"none of the {len(texts)} replies"
        how = "" if self.case_sensitive else " (ignoring case)"
        problems = self._problems(normalized(texts[-1].text, self.case_sensitive))
        if len(texts) > 1:
            return Verdict.failed(f"{subject} {self._wanted()}{how}: {_quoted(texts)}")
        return Verdict.failed(f"{subject} {' and '.join(problems)}{how}: {_quoted(texts)}")

    def _problems(self, haystack: str) -> list[str]:
        def held(texts: list[str]) -> list[str]:
            return [t for t in texts if normalized(t, self.case_sensitive) in haystack]

        if self.text is not None:
            return [] if held([self.text]) else [f"does not contain '{self.text}'"]
        problems = []
        if self.all_of is not None:
            missing = [t for t in self.all_of if t not in held(self.all_of)]
            if missing:
                problems.append(f"lacks {quote_list(missing)} of all_of")
        if self.any_of is not None and not held(self.any_of):
            problems.append(f"contains none of any_of {quote_list(self.any_of)}")
        return problems

    def _held(self) -> str:
        if self.text is not None:
            return f"contains '{self.text}'"
        return "contains the expected texts"

    def _wanted(self) -> str:
        if self.text is not None:
            return f"contains '{self.text}'"
        parts = []
        if self.all_of is not None:
            parts.append(f"all of {quote_list(self.all_of)}")
        if self.any_of is not None:
            parts.append(f"any of {quote_list(self.any_of)}")
        return f"contains {' and '.join(parts)}"


@register(
    category="reply",
    example="words: [sorry, cannot help]",
    negative=True,
)
class ReplyNotContains(Assertion):
    """The agent's reply does not contain a text, or any of a list of words."""

    one_of = (("text", "words", "source"),)
    # The JSON Schema states `_one_form` too (clawspec/authoring/schema.py).
    model_config = ConfigDict(
        json_schema_extra={
            "x-rules": [
                {"dependentRequired": {"source": ["key"], "key": ["source"]}},
                {"not": {"required": ["text", "words"]}},
                {"not": {"required": ["text", "source"]}},
            ]
        }
    )

    type: Literal["reply_not_contains"]
    text: str | None = Field(
        None, min_length=1, description="Text that must not be in the reply (as reply_contains)."
    )
    words: list[str] | None = Field(None, description="Words/phrases that must not appear.")
    source: WorkspacePath | None = Field(None, description="YAML file holding a word list.")
    key: str | None = Field(None, description="Key (dotted allowed) of the list in `source`.")
    case_sensitive: bool = Field(False, description="For `text`: compare case as written.")

    @field_validator("words")
    @classmethod
    def _no_blank_words(cls, words: list[str] | None) -> list[str] | None:
        return check_words(words)

    @field_validator("text")
    @classmethod
    def _no_blank_text(cls, value: str | None) -> str | None:
        return _text(value)

    @model_validator(mode="after")
    def _one_form(self) -> ReplyNotContains:
        if self.text is not None:
            if self.words is not None or self.source is not None or self.key is not None:
                raise ValueError("'text' cannot be combined with 'words' or 'source' + 'key'")
        else:
            check_word_sources(self.words, self.source, self.key)
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        words: list[str] = []
        if self.text is None:
            loaded = word_list(ctx, self.words, self.source, self.key)
            if isinstance(loaded, Verdict):
                return loaded
            words = loaded
        texts = reply_texts(ctx)
        if isinstance(texts, Verdict):
            return texts
        # In a conversation's `then` it fails when any reply holds the text.
        for source, reply, redacted in texts:
            where = f" ({source})" if len(texts) > 1 else ""
            if self.text is not None:
                needle = normalized(self.text, self.case_sensitive)
                haystack = normalized(reply, self.case_sensitive)
                at = haystack.find(needle)
                if at >= 0 and not (redacted and redaction_form(self.text)):
                    return Verdict.failed(
                        f"the reply{where} contains '{self.text}' at character {at + 1:,} of "
                        f"{len(haystack):,} (whitespace collapsed): "
                        f"{_around(_as_written(reply, haystack), at, len(needle))}",
                        1,
                        0,
                    )
                continue
            hits = word_hits(reply, [w for w in words if not (redacted and redaction_form(w))])
            if hits:
                return Verdict.failed(
                    f"the reply{where} contains {', '.join(hits)}: {shown(reply)}", len(hits), 0
                )
        what = f"holds '{self.text}'" if self.text is not None else "holds none of the words"
        if blocked := undecided(texts, what):
            return blocked
        if self.text is not None:
            if len(texts) == 1:
                return Verdict.passed(f"the reply does not contain '{self.text}'", 0, 0)
            return Verdict.passed(f"none of the {len(texts)} replies contains '{self.text}'", 0, 0)
        subject = "the reply" if len(texts) == 1 else f"the {len(texts)} replies"
        return Verdict.passed(f"none of {len(words)} words found in {subject}", 0, 0)


@register(
    category="reply",
    example=r'pattern: "order #\\d+ (confirmed|queued)"',
)
class ReplyMatches(Assertion):
    """The agent's reply matches a regular expression (re.search, no implicit flags)."""

    type: Literal["reply_matches"]
    pattern: str = Field(
        min_length=1, description="Python regular expression searched for in the reply."
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        if "{{" not in value:  # a template is checked once rendered, when the run evaluates it
            check_pattern(value)
        return value

    def evaluate(self, ctx: EvalContext) -> Verdict:
        try:
            check_pattern(self.pattern)
        except ValueError as exc:
            return Verdict.errored(str(exc))
        texts = reply_texts(ctx)
        if isinstance(texts, Verdict):
            return texts
        # In a conversation's `then` it holds when any reply matches: one bounded search of all.
        size = sum(len(said.text) for said in texts)
        subject = f"the reply ({size:,} characters)"
        if len(texts) > 1:
            subject = f"the {len(texts)} replies ({size:,} characters)"
        results = search_all([(self.pattern, said.text) for said in texts], subject)
        if isinstance(results, str):
            return Verdict.errored(results)
        for said, found in zip(texts, results, strict=True):
            if found is not None:
                start, text = found
                if said.redacted and redaction_form(text):
                    continue  # it matched OpenClaw's redaction, not what the agent said
                where = f" ({said.source})" if len(texts) > 1 else ""
                return Verdict.passed(
                    f"the reply{where} matches '{self.pattern}' at character {start + 1}: "
                    f"{shown(text)}"
                )
        if blocked := undecided(texts, f"matches '{self.pattern}'"):
            return blocked
        if len(texts) == 1:
            return Verdict.failed(f"the reply does not match '{self.pattern}': {_quoted(texts)}")
        return Verdict.failed(
            f"none of the {len(texts)} replies matches '{self.pattern}': {_quoted(texts)}"
        )

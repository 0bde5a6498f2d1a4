"""Artifact assertions: inspect the files the agent wrote."""

from __future__ import annotations

import difflib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from clawspec import markdown_doc
from clawspec.assertions import documents, rouge
from clawspec.assertions.base import Assertion, EvalContext, Verdict, WorkspacePath
from clawspec.assertions.registry import register
from clawspec.text import fmt_number, quote_list

TIMEOUT = Field(0, ge=0, description="Seconds to wait for the file to appear (default 0).")
UPDATED_AFTER = Field(None, description="ISO timestamp; the file's mtime must be at or after it.")


def max_bytes(ctx: EvalContext) -> int:
    """The most bytes an assertion reads of one file (`limits.file_max_bytes`)."""
    return ctx.settings.limits.file_max_bytes


def parse_instant(value: str) -> datetime:
    """Parse an ISO-8601 instant; a value without offset is taken as UTC."""
    instant = datetime.fromisoformat(value.strip())
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


class _FileAssertion(Assertion):
    """Shared waiting rules: `timeout` polls for the file, `updated_after` compares mtime."""

    path: WorkspacePath = Field(description="File to inspect; templates allowed.")
    timeout: float = TIMEOUT
    updated_after: str | None = UPDATED_AFTER

    @field_validator("updated_after")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        if value is not None and "{{" not in value:
            try:
                parse_instant(value)
            except ValueError:
                raise ValueError(
                    f"'updated_after' is not an ISO-8601 timestamp: '{value}'"
                ) from None
        return value

    def await_file(self, ctx: EvalContext) -> Path | Verdict:
        """Wait for the artifact; return its path, or the failing verdict."""
        path = ctx.path(self.path)
        since = parse_instant(self.updated_after) if self.updated_after else None

        def fresh(mtime: float) -> bool:
            return since is None or datetime.fromtimestamp(mtime, UTC) >= since

        def ready() -> bool:
            try:
                stat = path.stat()
            except OSError:
                return False
            # An empty file is most often one being written (created, not filled yet): while
            # the timeout lasts, wait for its content rather than judge the empty file.
            return stat.st_size > 0 and fresh(stat.st_mtime)

        if ctx.wait_until(ready, self.timeout):
            return path
        try:
            stat = path.stat()
        except OSError:
            stat = None
        if stat is not None and stat.st_size == 0 and fresh(stat.st_mtime):
            return path  # it stayed empty: judge it as it is
        waited = f" after waiting {fmt_number(self.timeout)} s" if self.timeout else ""
        if not path.exists():
            return Verdict.failed(f"'{self.path}' not found{waited}")
        modified = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
        return Verdict.failed(
            f"'{self.path}' is stale: modified {modified}, before {self.updated_after}{waited}",
            modified,
            self.updated_after,
        )


@register(category="artifact", example="path: memory/drafts/{{today}}-output.md")
class ArtifactExists(_FileAssertion):
    """A file exists after the step completes."""

    type: Literal["artifact_exists"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        found = self.await_file(ctx)
        if isinstance(found, Verdict):
            return found
        return Verdict.passed(f"'{self.path}' exists ({fmt_number(found.stat().st_size)} bytes)")


@register(
    category="artifact",
    example="path: memory/drafts/{{today}}-output.md\nsections: [hook, body, cta]",
)
class ArtifactContains(_FileAssertion):
    """A file contains required sections (Markdown headings) or fields (YAML/JSON keys)."""

    one_of = (("sections", "fields"),)
    type: Literal["artifact_contains"]
    sections: list[str] | None = Field(None, description="Headings that must appear (ATX/setext).")
    fields: list[str] | None = Field(
        None, description="Keys (dotted for nested) of a YAML/JSON file or Markdown front matter."
    )

    def evaluate(self, ctx: EvalContext) -> Verdict:
        found = self.await_file(ctx)
        if isinstance(found, Verdict):
            return found
        problems: list[str] = []
        if self.sections:
            try:
                text = documents.read_text(found, max_bytes(ctx), errors="replace")
            except documents.DataError as exc:
                return Verdict.errored(str(exc))
            headings = markdown_doc.markdown_headings(text)
            present = {markdown_doc.normalize_heading(heading) for _, heading, _ in headings}
            missing = [s for s in self.sections if markdown_doc.normalize_heading(s) not in present]
            if missing:
                problems.append(f"missing sections {quote_list(missing)}")
        if self.fields:
            try:
                data = documents.document_fields(found, max_bytes(ctx))
            except documents.NoFrontMatterError:
                # Nothing to parse is the agent's omission (fail); unparsable data is an error.
                data, problems = {}, [*problems, "no YAML front matter"]
            except documents.DataError as exc:
                return Verdict.errored(str(exc))
            missing = [f for f in self.fields if documents.is_missing(documents.lookup(data, f))]
            if missing:
                problems.append(f"missing fields {quote_list(missing)}")
        if problems:
            return Verdict.failed(f"'{self.path}': " + "; ".join(problems))
        checked = len(self.sections or []) + len(self.fields or [])
        return Verdict.passed(f"'{self.path}' has all {checked} required sections/fields")


@register(
    category="artifact",
    example="path: memory/drafts/{{today}}-output.md\nwords: [urgent, guaranteed, limited time]",
)
class ArtifactAbsentWords(_FileAssertion):
    """Words or phrases do not appear in the file (brand safety, tone)."""

    # The JSON Schema states `_words_or_source` too (clawspec/authoring/schema.py).
    model_config = ConfigDict(
        json_schema_extra={
            "x-rules": [
                {"dependentRequired": {"source": ["key"], "key": ["source"]}},
                {"anyOf": [{"required": ["words"]}, {"required": ["source"]}]},
            ]
        }
    )

    type: Literal["artifact_absent_words"]
    words: list[str] | None = Field(None, description="Words/phrases that must not appear.")
    source: WorkspacePath | None = Field(None, description="YAML file holding a word list.")
    key: str | None = Field(None, description="Key (dotted allowed) of the list in `source`.")

    @field_validator("words")
    @classmethod
    def _no_blank_words(cls, words: list[str] | None) -> list[str] | None:
        return check_words(words)

    @model_validator(mode="after")
    def _words_or_source(self) -> ArtifactAbsentWords:
        check_word_sources(self.words, self.source, self.key)
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        words = word_list(ctx, self.words, self.source, self.key)
        if isinstance(words, Verdict):
            return words
        found = self.await_file(ctx)
        if isinstance(found, Verdict):
            return found
        try:
            text = documents.read_text(found, max_bytes(ctx), errors="replace")
        except documents.DataError as exc:
            return Verdict.errored(str(exc))
        hits = word_hits(text, words)
        if hits:
            return Verdict.failed(f"'{self.path}' contains {', '.join(hits)}", len(hits), 0)
        return Verdict.passed(f"none of {len(words)} words found in '{self.path}'", 0, 0)


# The word list of `artifact_absent_words`, shared with `reply_not_contains` (reply.py): the
# same fields, checks and matching rule wherever a list of forbidden words is given.


def check_words(words: list[str] | None) -> list[str] | None:
    if words and any(not word.strip() for word in words):
        raise ValueError("'words' must not contain empty entries")
    return words


def check_word_sources(words: list[str] | None, source: str | None, key: str | None) -> None:
    if (source is None) != (key is None):
        raise ValueError("'source' and 'key' must be given together")
    if not words and source is None:
        raise ValueError("one of 'words' or 'source' + 'key' is required")


def word_list(
    ctx: EvalContext, words: list[str] | None, source: str | None, key: str | None
) -> list[str] | Verdict:
    """`words`, then the words of `source`'s list under `key` not among them already."""
    found = list(words or [])
    if source is not None and key is not None:
        loaded = _load_source(ctx, source, key)
        if isinstance(loaded, Verdict):
            return loaded
        found += [w for w in loaded if w not in found]
    return found


def word_hits(text: str, words: list[str]) -> list[str]:
    """Each word found in `text`, with the lines it is on: "'urgent' (lines 2, 5)"."""
    hits = []
    for word in words:
        lines = [text.count("\n", 0, m.start()) + 1 for m in _word_pattern(word).finditer(text)]
        if lines:
            where = ", ".join(map(str, sorted(set(lines))[:10]))
            hits.append(f"'{word}' (line{'s' if len(set(lines)) > 1 else ''} {where})")
    return hits


def _load_source(ctx: EvalContext, source: str, key: str) -> list[str] | Verdict:
    try:
        data = documents.load_data(ctx.path(source), max_bytes(ctx))
    except FileNotFoundError:
        return Verdict.errored(f"word list '{source}' not found")
    except documents.DataError as exc:
        return Verdict.errored(str(exc))
    value = documents.lookup(data, key)
    if documents.is_missing(value):
        return Verdict.errored(f"word list '{source}' has no key '{key}'")
    if not isinstance(value, list) or not all(isinstance(w, str | int) for w in value):
        return Verdict.errored(f"'{key}' in '{source}' is not a list of words")
    return [str(w) for w in value if str(w).strip()]


def _word_pattern(word: str) -> re.Pattern[str]:
    """Whole word/phrase, case-insensitive; a phrase matches across any whitespace."""
    body = r"\s+".join(re.escape(part) for part in word.split())
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


@register(
    category="artifact",
    example="path: memory/drafts/{{today}}-output.md\n"
    "golden: tests/golden/email-output.md\nrouge_threshold: 0.8",
)
class ArtifactMatchesGolden(_FileAssertion):
    """A file is similar enough to a golden reference (ROUGE-L F1)."""

    type: Literal["artifact_matches_golden"]
    golden: WorkspacePath = Field(description="Golden reference file.")
    rouge_threshold: float = Field(0.7, ge=0, le=1, description="Minimum ROUGE-L F1 (0.7).")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        golden = ctx.path(self.golden)
        if not golden.is_file():
            return Verdict.errored(f"golden file '{self.golden}' not found")
        found = self.await_file(ctx)
        if isinstance(found, Verdict):
            return found
        limit = max_bytes(ctx)
        try:
            reference = documents.read_text(golden, limit, errors="replace", shown=self.golden)
            candidate = documents.read_text(found, limit, errors="replace", shown=self.path)
        except documents.DataError as exc:
            return Verdict.errored(str(exc))
        words = ctx.settings.limits.rouge_max_tokens
        try:
            score = round(rouge.rouge_l_f1(reference, candidate, words), 4)
        except rouge.TooManyWordsError as exc:
            shown = (self.golden, self.path)[exc.which]
            return Verdict.errored(
                f"'{shown}' has more than {words:,} words, more than ROUGE-L compares "
                "(limits.rouge_max_tokens)"
            )
        text = f"ROUGE-L F1 {score:.3f} {{}} {self.rouge_threshold:g} against '{self.golden}'"
        diff = golden_diff(reference, candidate, self.golden, self.path)
        if score >= self.rouge_threshold:
            return Verdict.passed(text.format("≥"), score, self.rouge_threshold, details=diff)
        return Verdict.failed(text.format("<"), score, self.rouge_threshold, details=diff)


GOLDEN_DIFF_LINES = 48  # the report keeps 50 detail lines; the last says what was left out
# difflib's matching can take minutes on large, different files: above this many lines (both
# files together) the details say so instead of showing a diff.
GOLDEN_DIFF_MAX_INPUT = 20_000


def golden_diff(reference: str, candidate: str, golden: str, path: str) -> tuple[str, ...]:
    """The unified diff golden → artifact (two lines of context), capped for the reports."""
    old, new = reference.splitlines(), candidate.splitlines()
    if len(old) + len(new) > GOLDEN_DIFF_MAX_INPUT:
        return (
            f"(no diff: the files have {len(old) + len(new):,} lines together, more than the "
            f"{GOLDEN_DIFF_MAX_INPUT:,} a diff is computed for)",
        )
    lines = list(difflib.unified_diff(old, new, golden, path, n=2, lineterm=""))
    if len(lines) <= GOLDEN_DIFF_LINES + 1:
        return tuple(lines)
    left = len(lines) - GOLDEN_DIFF_LINES
    return (*lines[:GOLDEN_DIFF_LINES], f"… {left} more diff lines")


@register(
    category="artifact",
    example="path: memory/state.yaml\nexpected_status: ready\n"
    "expected_fields:\n  phase: complete\n  retries: 0",
)
class StateFile(Assertion):
    """A YAML/JSON state file holds an expected status and/or set of fields."""

    # The JSON Schema states `_not_both_paths` too (clawspec/authoring/schema.py).
    model_config = ConfigDict(
        json_schema_extra={"x-rules": [{"not": {"required": ["path", "state_path"]}}]}
    )

    one_of = (("path", "state_path"),)
    type: Literal["state_file"]
    path: WorkspacePath | None = Field(None, description="State file (or use `state_path`).")
    state_path: WorkspacePath | None = Field(
        None, description="Alias of `path`. Give either `path` or `state_path`, not both."
    )
    expected_status: Any = Field(None, description="Value the `status` key must equal.")
    expected_fields: dict[str, Any] | None = Field(
        None, description="Subset the file must contain; dotted keys reach nested values."
    )

    @model_validator(mode="after")
    def _not_both_paths(self) -> StateFile:
        # Both given, `path` would win and `state_path` be ignored without a word.
        if self.path is not None and self.state_path is not None:
            raise ValueError("give either 'path' or 'state_path', not both")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        shown = self.path or self.state_path or ""
        try:
            data = documents.load_data(ctx.path(shown), max_bytes(ctx))
        except FileNotFoundError:
            return Verdict.failed(f"state file '{shown}' not found")
        except documents.DataError as exc:
            return Verdict.errored(str(exc))
        if not isinstance(data, dict):
            return Verdict.errored(f"state file '{shown}' is not a mapping")
        expected: dict[str, Any] = dict(self.expected_fields or {})
        problems = []
        if self.expected_status is not None:
            problems += documents.subset_mismatches(data, {"status": self.expected_status})
        problems += documents.subset_mismatches(data, expected)
        if problems:
            return Verdict.failed(f"'{shown}': " + "; ".join(problems[:10]))
        count = len(expected) + (self.expected_status is not None)
        return Verdict.passed(f"'{shown}' matches {count} expected value(s)")

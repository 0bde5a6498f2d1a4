"""Semantic assertions: an LLM judges quality against a rubric.

Both types share one procedure (`judge_artifacts`): read the files locally, ask the judge one or
more times through `clawspec.judge`, and fail closed: only a valid score at or above the
threshold on every call passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from clawspec.assertions.base import Assertion, EvalContext, Need, Status, Verdict, WorkspacePath
from clawspec.assertions.registry import register
from clawspec.judge.prompt import (
    IDENTITY_RUBRIC,
    SCALE,
    SYSTEM_PROMPT,
    Artifact,
    extract_section,
    heading_names,
    make_artifact,
    render_user_prompt,
    truncation_note,
)
from clawspec.text import one_line, quote_list, redact

# The judge's client and answer parsing are needed only to evaluate: `clawspec validate` builds
# these models without importing them (tests/test_startup.py).
if TYPE_CHECKING:
    from clawspec.judge.verdict import JudgeAnswer

THRESHOLD = Field(
    3, ge=SCALE[0], le=SCALE[1], description="Minimum score to pass (default 3 of 1-5)."
)


@register(
    category="semantic",
    needs={Need.JUDGE},
    example="path: memory/drafts/{{today}}-output.md\n"
    'rubric: "Score 1-5: Is this email persuasive and brand-safe?"\npass_threshold: 4',
)
class LlmJudge(Assertion):
    """An LLM scores a file, or the agent's reply, against a rubric; passes at the threshold."""

    exactly_one_of = (("path", "source"),)

    type: Literal["llm_judge"]
    path: WorkspacePath | None = Field(None, description="File to evaluate.")
    rubric: str = Field(min_length=1, description="Scoring instruction for the judge.")
    pass_threshold: float = THRESHOLD
    section: str | None = Field(None, description="Judge only this Markdown section.")
    consistency: bool = Field(False, description="Ask several times; every score must pass.")
    # After the original fields: judging what the agent said came later.
    source: Literal["reply"] | None = Field(
        None, description="`reply`: evaluate the agent's reply instead of a file (no `path`)."
    )

    def evaluate(self, ctx: EvalContext) -> Verdict:
        if self.path is not None:
            text = _read_artifact(ctx, self.path)
            shown = self.path
        else:
            from clawspec.assertions.reply import reply_text

            text, shown = reply_text(ctx), "the reply"
        if isinstance(text, Verdict):
            return text
        if self.section is not None:
            found = extract_section(text, self.section)
            if found is None:
                headings = heading_names(text)
                where = f"'{shown}'" if self.path is not None else shown
                listed = f"headings: {quote_list(headings)}" if headings else "no headings"
                return Verdict.failed(f"section '{self.section}' not found in {where} ({listed})")
            text = found
        limit = ctx.settings.judge.max_input_chars
        artifact = make_artifact("artifact", shown, text, limit, self.section)
        runs = ctx.settings.judge.consistency_runs if self.consistency else 1
        return judge_artifacts(ctx, self.rubric, [artifact], self.pass_threshold, runs)


@register(
    category="semantic",
    needs={Need.JUDGE},
    example="output_path: memory/drafts/{{today}}-output.md\n"
    "soul_path: agents/marketing/brand/SOUL.md",
)
class AgentIdentityConsistent(Assertion):
    """An agent's output is consistent with the persona and principles of its SOUL.md."""

    type: Literal["agent_identity_consistent"]
    output_path: WorkspacePath = Field(description="The agent's output file.")
    soul_path: WorkspacePath = Field(description="The agent's SOUL.md.")
    pass_threshold: float = THRESHOLD

    def evaluate(self, ctx: EvalContext) -> Verdict:
        # A missing SOUL.md is a broken setup (error); a missing output is the agent's failure.
        soul_file = ctx.path(self.soul_path)
        if not soul_file.is_file():
            return Verdict.errored(f"SOUL file '{self.soul_path}' not found")
        soul = _read(soul_file, self.soul_path, ctx.settings.limits.file_max_bytes)
        if isinstance(soul, Verdict):
            return soul
        output = _read_artifact(ctx, self.output_path)
        if isinstance(output, Verdict):
            return output
        limit = ctx.settings.judge.max_input_chars
        artifacts = [
            make_artifact("soul", self.soul_path, soul, limit),
            make_artifact("output", self.output_path, output, limit),
        ]
        return judge_artifacts(ctx, IDENTITY_RUBRIC, artifacts, self.pass_threshold, 1)


def judge_artifacts(
    ctx: EvalContext, rubric: str, artifacts: list[Artifact], threshold: float, runs: int
) -> Verdict:
    """Ask the judge `runs` times within one `judge.timeout` budget and decide (fail-closed)."""
    from clawspec.judge.client import JudgeCallError, JudgeClient, JudgeNotConfiguredError
    from clawspec.judge.verdict import (
        JudgeAnswerError,
        Usage,
        decide,
        parse_answer,
        usage_record,
    )

    settings = ctx.settings.judge
    try:
        client = JudgeClient.from_settings(settings, stop=ctx.stop, clock=ctx.clock)
    except JudgeNotConfiguredError as exc:
        return Verdict.skipped(str(exc))
    user = render_user_prompt(rubric, artifacts)
    deadline = ctx.clock() + settings.timeout
    answers: list[JudgeAnswer] = []
    usage = Usage()
    failure: str | None = None
    try:
        for number in range(1, runs + 1):
            try:
                reply = client.ask(SYSTEM_PROMPT, user, deadline)
                usage += reply.usage
                answers.append(parse_answer(reply.content, reply.stop_reason))
            except (JudgeCallError, JudgeAnswerError) as exc:
                failure = f"call {number} of {runs}: {exc}" if runs > 1 else str(exc)
                break
    finally:
        client.close()
    record = usage_record(settings.model, usage, ctx.settings.model_pricing)
    if failure is not None:
        return Verdict(Status.ERROR, redact(failure), usage=record)
    passed, message, score = decide(answers, threshold, truncation_note(artifacts))
    details = (
        *(
            f"call {i}: score {a.score}: {one_line(a.reasoning, 500)}"
            for i, a in enumerate(answers, 1)
        ),
        f"rubric: {one_line(rubric, 500)}",  # last: readers key on the `call` lines first
    )
    return Verdict(
        Status.PASS if passed else Status.FAIL,
        redact(message),
        value=score,
        limit=threshold,
        details=tuple(redact(d) for d in details),
        usage=record,
    )


def _read_artifact(ctx: EvalContext, path: str) -> str | Verdict:
    """Read an artifact the agent should have written; missing = fail."""
    file = ctx.path(path)
    if not file.exists():
        return Verdict.failed(f"'{path}' not found")
    if not file.is_file():
        return Verdict.failed(f"'{path}' is not a file")
    return _read(file, path, ctx.settings.limits.file_max_bytes)


def _read(file: Path, shown: str, max_bytes: int) -> str | Verdict:
    from clawspec.assertions.documents import DataError, read_text

    try:
        return read_text(file, max_bytes, errors="replace", shown=shown)
    except OSError as exc:
        return Verdict.errored(f"cannot read '{shown}': {exc.strerror or exc}")
    except DataError as exc:  # over limits.file_max_bytes
        return Verdict.errored(str(exc))

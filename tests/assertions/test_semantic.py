"""llm_judge and agent_identity_consistent with the real `anthropic` SDK and local servers.

The servers (tests/support/anthropic_api.py, bedrock_api.py) speak the real wire formats; the
judge's answers are scripted per test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec import secrets as registry
from clawspec.assertions.base import Status, Verdict
from clawspec.config.settings import Settings
from tests.support.anthropic_api import API_KEY, AnthropicApi
from tests.support.bedrock_api import MODEL_ID, REGION, BedrockApi, isolate_aws
from tests.support.harness import evaluate_one, make_context

MODEL = "claude-sonnet-4-6"
RUBRIC = "Score 1-5: Is this email persuasive and brand-safe?"
EMAIL = "# Launch\n\nOur new planner ships today.\n\n## CTA\n\nTry it free.\n"
SOUL = "# Persona\n\nCalm, precise, never pushy.\n\n# Principles\n\nNo false urgency.\n"
NOT_CONFIGURED = (
    "judge not configured: set ANTHROPIC_API_KEY (or judge.provider: bedrock with AWS credentials)"
)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicApi]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    with AnthropicApi() as server:
        yield server


def settings(api: AnthropicApi, **judge: Any) -> Settings:
    return Settings.model_validate(
        {
            "judge": {"base_url": api.base_url, "model": MODEL, "timeout": 5, **judge},
            "model_pricing": {"claude-sonnet-4": {"input_per_mtok": 3, "output_per_mtok": 15}},
        }
    )


def judge(
    workspace: Path, api: AnthropicApi, assertion: dict[str, Any], **judge_settings: Any
) -> Verdict:
    with registry.scope():  # a run's registry: the judge registers the key it resolved
        verdict = evaluate_one(assertion, make_context(workspace, settings(api, **judge_settings)))
    # No secret ever leaves in a verdict.
    assert API_KEY not in repr(verdict)
    assert "\n" not in verdict.message
    return verdict


def llm_judge(**fields: Any) -> dict[str, Any]:
    return {"type": "llm_judge", "path": "out.md", "rubric": RUBRIC, **fields}


@pytest.fixture
def email(workspace: Path) -> Path:
    path = workspace / "out.md"
    path.write_text(EMAIL, encoding="utf-8")
    return path


def test_llm_judge_passes_on_high_score_with_usage_and_cost(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script(
        {
            "score": 5,
            "reasoning": "Clear offer, calm tone.",
            "usage": {"input_tokens": 1000, "output_tokens": 100},
        }
    )
    verdict = judge(workspace, api, llm_judge(pass_threshold=4))
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "score 5 ≥ 4: Clear offer, calm tone.",
    )
    assert (verdict.value, verdict.limit) == (5, 4)
    assert verdict.usage == {
        "model": MODEL,
        "calls": 1,
        "input_tokens": 1000,
        "output_tokens": 100,
        "cost_usd": 0.0045,
    }
    prompt = api.requests[0].body["messages"][0]["content"]
    assert f'<artifact path="out.md">\n{EMAIL.rstrip()}\n</artifact>' in prompt
    assert f"<rubric>\n{RUBRIC}\n</rubric>" in prompt


def test_an_answer_without_usage_is_of_unknown_cost_never_0(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    """A proxy in `base_url` that drops the answer's `usage`: the call is counted, its tokens
    and cost are unknown (null, and said), never $0."""
    api.script({"score": 5, "reasoning": "Clear offer.", "usage": None})
    verdict = judge(workspace, api, llm_judge(pass_threshold=4))
    assert verdict.status == Status.PASS
    assert verdict.usage == {
        "model": MODEL,
        "calls": 1,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "unmetered_calls": 1,
    }


def test_llm_judge_fails_on_low_score(workspace: Path, api: AnthropicApi, email: Path) -> None:
    api.script({"score": 2, "reasoning": "Pushy:\n'act now'."})
    verdict = judge(workspace, api, llm_judge())
    assert (verdict.status, verdict.message) == (Status.FAIL, "score 2 < 3: Pushy: 'act now'.")
    assert verdict.usage is not None and verdict.usage["calls"] == 1


def test_llm_judge_threshold_is_inclusive(workspace: Path, api: AnthropicApi, email: Path) -> None:
    api.script({"score": 3, "reasoning": "Adequate."})
    assert judge(workspace, api, llm_judge()).message == "score 3 ≥ 3: Adequate."


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (
            {"tool_input": {"score": "five", "reasoning": "great"}},
            "judge's verdict is invalid: score: Input should be a valid integer, found 'five'",
        ),
        ({"tool_input": {"reasoning": "great"}}, "judge's verdict is invalid: score: missing"),
        (
            {"tool_input": {"score": 9, "reasoning": "great"}},
            "judge's verdict is invalid: score: 9 is outside 1-5",
        ),
        (
            {"text": "PASS - looks great"},
            "judge answered without calling 'record_verdict' (got text; stop_reason end_turn)",
        ),
    ],
)
def test_llm_judge_is_error_never_pass_on_malformed_answer(
    workspace: Path, api: AnthropicApi, email: Path, step: dict[str, Any], message: str
) -> None:
    api.script(step)
    verdict = judge(workspace, api, llm_judge())
    assert (verdict.status, verdict.message) == (Status.ERROR, message)
    # The failed answer was still billed: its usage is reported.
    assert verdict.usage is not None and verdict.usage["calls"] == 1


def test_llm_judge_retries_429_with_retry_after_then_passes(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script({"status": 429, "headers": {"retry-after": "1"}}, {"score": 4, "reasoning": "Ok."})
    verdict = judge(workspace, api, llm_judge())
    assert (verdict.status, verdict.message) == (Status.PASS, "score 4 ≥ 3: Ok.")
    first, second = api.requests
    assert second.at - first.at >= 0.95


def test_llm_judge_persistent_500s_end_in_error_within_time_bound(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script({"status": 500, "message": "Internal server error"})
    context = make_context(workspace, settings(api, timeout=1.5))
    verdict = evaluate_one(llm_judge(), context)
    assert verdict.status is Status.ERROR
    assert verdict.message.startswith("judge gave up after ")
    # On a loaded machine the deadline may cut the last attempt short; the server's answer
    # still names the cause.
    assert re.search(
        r"\(judge\.timeout 1\.5 s\): last HTTP 500 api_error: Internal server error"
        r"(, then timed out)?$",
        verdict.message,
    ), verdict.message
    # Ignoring the 1.5 s deadline means retries with backoff for much longer: the count of
    # requests tells the two apart, where timing them would depend on the machine's load.
    assert 2 <= len(api.requests) < 10
    assert verdict.usage is not None and verdict.usage["calls"] == 0


def test_llm_judge_consistency_fails_when_one_score_fails_and_lists_all(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script(
        {"score": 5, "reasoning": "Great."},
        {"score": 5, "reasoning": "Great."},
        {"score": 2, "reasoning": "The CTA is pushy."},
    )
    verdict = judge(workspace, api, llm_judge(pass_threshold=4, consistency=True))
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "scores 5, 5, 2 (disagree): 2 < 4: The CTA is pushy.",
    )
    assert verdict.details == (
        "call 1: score 5: Great.",
        "call 2: score 5: Great.",
        "call 3: score 2: The CTA is pushy.",
        f"rubric: {RUBRIC}",
    )
    assert len(api.requests) == 3
    assert verdict.usage is not None and verdict.usage["calls"] == 3


def test_llm_judge_consistency_passes_when_every_score_passes(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script({"score": 4, "reasoning": "Good."})
    verdict = judge(workspace, api, llm_judge(consistency=True), consistency_runs=4)
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "scores 4, 4, 4, 4 (agree): 4 ≥ 3: Good.",
    )
    assert len(api.requests) == 4


def test_llm_judge_consistency_error_in_one_call_is_error(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script({"score": 5}, {"text": "5"})
    verdict = judge(workspace, api, llm_judge(consistency=True))
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        "call 2 of 3: judge answered without calling 'record_verdict' (got text; "
        "stop_reason end_turn)",
    )
    assert len(api.requests) == 2


def test_llm_judge_skips_without_api_key(
    workspace: Path, api: AnthropicApi, email: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    verdict = judge(workspace, api, llm_judge())
    assert (verdict.status, verdict.message) == (Status.SKIP, NOT_CONFIGURED)
    assert api.requests == []


def test_llm_judge_fails_when_artifact_missing(workspace: Path, api: AnthropicApi) -> None:
    verdict = judge(workspace, api, llm_judge())
    assert (verdict.status, verdict.message) == (Status.FAIL, "'out.md' not found")
    assert api.requests == []


def test_llm_judge_section_sends_only_that_section_with_subsections(
    workspace: Path, api: AnthropicApi
) -> None:
    (workspace / "out.md").write_text(
        "# Email\n\n## Hook\n\nBig news.\n\n### Subject line\n\nMeet Planner.\n\n"
        "## Body\n\nDetails.\n",
        encoding="utf-8",
    )
    verdict = judge(workspace, api, llm_judge(section="hook"))
    assert verdict.status is Status.PASS
    prompt = api.requests[0].body["messages"][0]["content"]
    assert prompt.startswith(
        '<artifact path="out.md" section="hook">\n'
        "## Hook\n\nBig news.\n\n### Subject line\n\nMeet Planner.\n</artifact>"
    )
    assert "Details." not in prompt


def test_llm_judge_fails_when_section_missing(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    verdict = judge(workspace, api, llm_judge(section="Pricing"))
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "section 'Pricing' not found in 'out.md' (headings: 'Launch', 'CTA')",
    )
    assert api.requests == []


def test_llm_judge_truncates_a_5_mb_artifact(workspace: Path, api: AnthropicApi) -> None:
    size = 5 * 1024 * 1024
    (workspace / "big.md").write_text("word " * (size // 5), encoding="utf-8")
    verdict = judge(workspace, api, llm_judge(path="big.md"), max_input_chars=20_000)
    assert verdict.status is Status.PASS
    assert verdict.message == (
        "score 5 ≥ 3 ('big.md' truncated to 20,000 of 5,242,880 chars): Fine."
    )
    (request,) = api.requests
    assert len(request.raw_body) < 25_000
    assert "only the first 20,000 are shown above" in request.body["messages"][0]["content"]


def test_llm_judge_masks_api_key_echoed_by_the_server(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script({"status": 400, "message": f"key {API_KEY} may not use this model"})
    verdict = judge(workspace, api, llm_judge())
    assert verdict.status is Status.ERROR
    assert verdict.message == (
        "judge request rejected: HTTP 400 invalid_request_error: key *** may not use this model"
    )


@pytest.fixture
def soul(workspace: Path) -> Path:
    path = workspace / "agents" / "brand" / "SOUL.md"
    path.parent.mkdir(parents=True)
    path.write_text(SOUL, encoding="utf-8")
    return path


IDENTITY = {
    "type": "agent_identity_consistent",
    "output_path": "out.md",
    "soul_path": "agents/brand/SOUL.md",
}


def test_identity_passes_and_judge_sees_soul_then_output(
    workspace: Path, api: AnthropicApi, email: Path, soul: Path
) -> None:
    api.script({"score": 4, "reasoning": "Calm voice, no urgency."})
    verdict = judge(workspace, api, IDENTITY)
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "score 4 ≥ 3: Calm voice, no urgency.",
    )
    prompt = api.requests[0].body["messages"][0]["content"]
    assert prompt.startswith(f'<soul path="agents/brand/SOUL.md">\n{SOUL.rstrip()}\n</soul>\n\n')
    assert f'<output path="out.md">\n{EMAIL.rstrip()}\n</output>' in prompt
    assert "persona (identity, voice, tone)" in prompt


def test_identity_fails_below_custom_threshold(
    workspace: Path, api: AnthropicApi, email: Path, soul: Path
) -> None:
    api.script({"score": 4, "reasoning": "Slightly salesy."})
    verdict = judge(workspace, api, {**IDENTITY, "pass_threshold": 5})
    assert (verdict.status, verdict.message) == (Status.FAIL, "score 4 < 5: Slightly salesy.")


def test_identity_errors_on_malformed_answer(
    workspace: Path, api: AnthropicApi, email: Path, soul: Path
) -> None:
    api.script({"tool_input": {"score": None, "reasoning": "?"}})
    verdict = judge(workspace, api, IDENTITY)
    assert verdict.status is Status.ERROR
    assert verdict.message.startswith("judge's verdict is invalid: score: ")


def test_identity_errors_when_soul_missing(workspace: Path, api: AnthropicApi, email: Path) -> None:
    verdict = judge(workspace, api, IDENTITY)
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        "SOUL file 'agents/brand/SOUL.md' not found",
    )


def test_identity_fails_when_output_missing(workspace: Path, api: AnthropicApi, soul: Path) -> None:
    verdict = judge(workspace, api, IDENTITY)
    assert (verdict.status, verdict.message) == (Status.FAIL, "'out.md' not found")


def test_identity_skips_without_credentials(
    workspace: Path, api: AnthropicApi, email: Path, soul: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    verdict = judge(workspace, api, IDENTITY)
    assert (verdict.status, verdict.message) == (Status.SKIP, NOT_CONFIGURED)


def test_llm_judge_through_bedrock(
    workspace: Path, email: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with BedrockApi([{"score": 2, "reasoning": "Off-brand."}]) as server:
        config = Settings.model_validate(
            {"judge": {"provider": "bedrock", "model": MODEL_ID, "base_url": server.base_url}}
        )
        verdict = evaluate_one(llm_judge(), make_context(workspace, config))
        assert len(server.requests) == 1
    assert (verdict.status, verdict.message) == (Status.FAIL, "score 2 < 3: Off-brand.")
    assert verdict.usage is not None and verdict.usage["model"] == MODEL_ID


def test_llm_judge_bedrock_without_aws_credentials_skips(
    workspace: Path, email: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=False)
    config = Settings.model_validate(
        {"judge": {"provider": "bedrock", "model": MODEL_ID, "region": REGION}}
    )
    verdict = evaluate_one(llm_judge(), make_context(workspace, config))
    assert (verdict.status, verdict.message) == (Status.SKIP, NOT_CONFIGURED)


@pytest.mark.parametrize("threshold", [0, 5.5])
def test_pass_threshold_must_be_on_the_scale(threshold: float) -> None:
    from pydantic import ValidationError

    from clawspec.assertions.semantic import LlmJudge

    with pytest.raises(ValidationError, match="pass_threshold"):
        LlmJudge.model_validate(llm_judge(pass_threshold=threshold))


def test_llm_judge_consistency_calls_share_one_time_budget(
    workspace: Path, api: AnthropicApi, email: Path
) -> None:
    api.script({"delay": 0.7, "score": 5})
    context = make_context(workspace, settings(api, timeout=1))
    verdict = evaluate_one(llm_judge(consistency=True), context)
    assert verdict.status is Status.ERROR
    assert verdict.message.startswith("call 2 of 3: judge gave up after 1 attempt in ")
    assert verdict.message.endswith("(judge.timeout 1 s): last timed out")
    assert verdict.usage is not None and verdict.usage["calls"] == 1
    assert len(api.requests) == 2  # the third call was not made: the budget was used up

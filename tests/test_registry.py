"""The registry is the single source of the assertion types (nothing listed by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clawspec.assertions import REGISTRY
from clawspec.assertions.registry import CATEGORIES

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "seed" / "assertion-reference.txt"
REFERENCE_TYPES = {
    "precondition": ["file_present", "file_absent", "gateway_healthy", "env_present"],
    "artifact": [
        "artifact_exists",
        "artifact_contains",
        "artifact_absent_words",
        "artifact_matches_golden",
        "state_file",
    ],
    "behavioral": [
        "gateway_response",
        "log_entry",
        "decision_routed_to",
        "tool_was_called",
        "tool_not_called",
        "delegation_occurred",
        "tool_not_permitted",
        "token_budget",
    ],
    "trace": [
        "llm_call_count",
        "tool_sequence",
        "model_used",
        "delegation_path",
        "per_span_budget",
        "trace_token_budget",
        "trace_duration",
        "trace_cost",
        "no_span_errors",
        "tool_not_invoked",
    ],
    "semantic": ["llm_judge", "agent_identity_consistent"],
}
# Types the product contract adds beyond the seed reference (SPEC.md §15: what the agent said).
ADDED_TYPES = {
    "reply": ["reply_contains", "reply_not_contains", "reply_matches"],
    # SPEC.md §16: the run's record (trajectory) as evidence.
    "run record": [
        "tool_called_with",
        "tool_call_count",
        "no_tool_loop",
        "message_sent",
        "message_not_sent",
        "run_completed",
    ],
}


def test_registry_holds_the_referenced_29_types_and_the_added_ones_in_their_categories() -> None:
    assert sum(map(len, REFERENCE_TYPES.values())) == 29
    every = {**REFERENCE_TYPES, **ADDED_TYPES}
    assert {name: spec.category for name, spec in REGISTRY.items()} == {
        name: category for category, names in every.items() for name in names
    }
    assert set(CATEGORIES) == set(every)


@pytest.mark.skipif(not REFERENCE.is_file(), reason="no assertion reference here")
def test_registry_matches_the_assertion_reference() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for names in REFERENCE_TYPES.values():
        for name in names:
            assert f"\n{name}\n" in text, name


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_each_type_is_fully_described_and_its_example_loads(name: str) -> None:
    spec = REGISTRY[name]
    assert spec.summary.endswith((".", ")")), spec.summary
    for field in spec.fields:
        assert spec.model.model_fields[field].description, f"{name}.{field} has no description"
    example = yaml.safe_load(spec.example) or {}
    assert spec.model.model_validate({"type": name, **example}).type == name


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("tool_was_called", ["tool", "log_path", "run_id"]),
        ("artifact_absent_words", ["path", "timeout", "updated_after", "words", "source", "key"]),
        ("state_file", ["path", "state_path", "expected_status", "expected_fields"]),
        # The seed's names, and `source: reply` added after them (judge the agent's reply).
        ("llm_judge", ["path", "rubric", "pass_threshold", "section", "consistency", "source"]),
        ("delegation_path", ["expected", "routing_path", "routing_decisions", "state_path"]),
        (
            "token_budget",
            # The seed's names, and one optional field added after them (a run cost limit).
            [
                "log_path",
                "run_id",
                "max_total_tokens",
                "max_input_tokens",
                "max_output_tokens",
                "max_cost_usd",
            ],
        ),
    ],
)
def test_fields_keep_the_referenced_names(name: str, fields: list[str]) -> None:
    assert REGISTRY[name].fields == fields


def test_log_based_fields_the_reference_requires_stay_accepted_but_are_optional() -> None:
    model = REGISTRY["tool_not_called"].model
    assert model.model_validate({"type": "tool_not_called", "tool": "x"}).log_path is None
    full = {"type": "tool_not_called", "tool": "x", "log_path": "/tmp/a.log", "run_id": "r"}
    assert model.model_validate(full).run_id == "r"


def test_a_type_without_an_evaluator_is_refused_when_registered() -> None:
    from typing import Literal

    from clawspec.assertions.base import Assertion
    from clawspec.assertions.registry import register

    class Unfinished(Assertion):
        type: Literal["unfinished_check"]

    with pytest.raises(TypeError, match="'unfinished_check' has no evaluate"):
        register(category="artifact", example="{}")(Unfinished)
    assert "unfinished_check" not in REGISTRY

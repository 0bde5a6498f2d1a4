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


def test_a_type_the_table_does_not_place_in_its_module_is_refused_when_registered() -> None:
    from typing import Literal

    from clawspec.assertions.base import Assertion, Verdict
    from clawspec.assertions.registry import register

    class Stray(Assertion):
        type: Literal["stray_check"]

        def evaluate(self, ctx: object) -> Verdict:  # type: ignore[override]
            raise AssertionError("never evaluated")

    with pytest.raises(ValueError, match=r"'stray_check' .* is not in DEFINED_IN"):
        register(category="artifact", example="{}")(Stray)
    assert "stray_check" not in REGISTRY


def test_the_table_of_modules_is_what_the_modules_register() -> None:
    import importlib

    from clawspec.assertions.registry import DEFINED_IN

    for module in set(DEFINED_IN.values()):
        importlib.import_module(f"clawspec.assertions.{module}")
    registered = {
        name: spec.model.__module__.rpartition(".")[2]
        for name, spec in REGISTRY._specs.items()  # what the imports registered, nothing more
    }
    assert registered == DEFINED_IN
    assert list(REGISTRY) == list(DEFINED_IN)  # the reference's and the schema's order


def test_loading_a_contract_imports_only_the_modules_of_the_types_it_uses(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "c.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        "  - name: a\n    when: {invoke: go}\n"
        "    then: [{type: artifact_exists, path: out.md}, {type: reply_contains, text: hi}]\n"
    )
    code = (
        "import sys; from clawspec import api; api.load([sys.argv[1]]); "
        "print(sorted(m.rpartition('.')[2] for m in sys.modules "
        "if m.startswith('clawspec.assertions.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "c.yaml")],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    imported = set(eval(done.stdout))  # a printed list of names
    assert {"artifact", "reply"} <= imported
    assert not imported & {"behavioral", "precondition", "semantic", "trace", "trajectory"}


HOSTILE_ITEMS: list[object] = [
    "x",
    5,
    None,
    [1],
    {},
    {"type": 5},
    {"type": ["a"]},
    {"type": True},
    {"type": "nope"},
    {"type": "artifact_exists"},
    {"type": "artifact_exists", "path": 3, "bogus": 1},
    {"type": "tool_call_count", "tool": "write", "min": "x"},
    {"type": "reply_contains"},
    {"type": "llm_judge", "rubric": None},
]


@pytest.mark.parametrize("item", HOSTILE_ITEMS, ids=repr)
def test_an_item_gets_the_errors_the_union_of_every_type_would_give(item: object) -> None:
    """Each item is validated by its own type's model; what a user is told (error types,
    messages, context, locations) is what the discriminated union of all of them said, but
    for the tag the union put after the item's index."""
    from pydantic import TypeAdapter, ValidationError

    from clawspec.assertions.registry import assertion_union
    from clawspec.contracts.models import AnyAssertion

    def errors(adapter: TypeAdapter[object]) -> list[tuple[object, ...]]:
        try:
            adapter.validate_python([item])
        except ValidationError as exc:
            return [(e["type"], e["loc"], e["msg"], str(e.get("ctx"))) for e in exc.errors()]
        return []

    union = errors(TypeAdapter(list[assertion_union()]))  # type: ignore[misc]
    untagged = [
        (kind, loc[:1] + loc[2:] if len(loc) > 1 and loc[1] in REGISTRY else loc, msg, ctx)
        for kind, loc, msg, ctx in union
    ]
    assert errors(TypeAdapter(list[AnyAssertion])) == untagged
    assert union  # every item here is invalid


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_boolean_is_never_a_number_of_an_assertion(name: str) -> None:
    """YAML reads `yes` as true, which lax validation would take as 1: every numeric field
    of every type refuses it (the list in Assertion's validator is whole)."""
    from pydantic import ValidationError

    from clawspec.inputs.numbers import numeric_fields

    spec = REGISTRY[name]
    example = {"type": name, **yaml.safe_load(spec.example)}
    spec.model.model_validate(example)  # the example itself is valid
    for field in numeric_fields(spec.model):
        with pytest.raises(ValidationError) as caught:
            spec.model.model_validate({**example, field: True})
        errors = caught.value.errors()
        assert [e["loc"] for e in errors] == [(field,)], errors
        assert errors[0]["type"] == "number_not_boolean"


def test_a_quoted_number_is_still_the_number() -> None:
    model = REGISTRY["tool_call_count"].model
    assert model.model_validate({"type": "tool_call_count", "tool": "write", "min": "2"}).min == 2


def test_every_numeric_field_of_a_contract_is_in_the_validator_s_list() -> None:
    from clawspec.contracts import models
    from clawspec.inputs.numbers import numeric_fields

    sections = [
        value
        for value in vars(models).values()
        if isinstance(value, type) and issubclass(value, models._Strict)
    ]
    numeric = set().union(*(numeric_fields(section) for section in sections))
    validator = models._Strict.__pydantic_decorators__.field_validators["_no_boolean_number"]
    assert numeric and numeric <= set(validator.info.fields)


@pytest.mark.parametrize("section", ["Defaults", "Turn", "Scenario"])
def test_a_boolean_is_never_a_number_of_a_contract(section: str) -> None:
    from pydantic import ValidationError

    from clawspec.contracts import models
    from clawspec.inputs.numbers import numeric_fields

    model = getattr(models, section)
    base = {
        "Defaults": {},
        "Turn": {"say": "hi"},
        "Scenario": {"name": "s", "when": {"invoke": "go"}},
    }[section]
    fields = numeric_fields(model)
    assert fields, section
    for field in fields:
        with pytest.raises(ValidationError) as caught:
            model.model_validate({**base, field: True})
        assert [e["type"] for e in caught.value.errors()] == ["number_not_boolean"], field

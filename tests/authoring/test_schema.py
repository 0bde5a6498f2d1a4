"""The shipped JSON Schemas: current, accepted by a standard validator on every good contract and
config, and rejecting every malformed contract the loader rejects for a schema reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from clawspec.authoring.schema import KINDS, render, schema_path
from clawspec.cli import main

REPO = Path(__file__).resolve().parents[2]
INVALID = REPO / "tests" / "contracts" / "invalid"
CONTRACTS = sorted(
    [
        *(REPO / "examples").rglob("scenarios.yaml"),
        *(REPO / "tests" / "contracts" / "valid").glob("*.yaml"),
        *(REPO / "tests" / "e2e" / "contracts").rglob("*.clawspec.yaml"),
    ]
)
# the project's own folders only (not .cache, .venv or an image's root file system in them)
CONFIGS = sorted(
    path for top in ("examples", "tests") for path in (REPO / top).rglob("clawspec.yaml")
)

# Malformed contracts only the loader can reject: what a JSON Schema cannot express or never
# sees (README "Editor set-up" lists the same).
LOADER_ONLY = {
    "conversation_bad_reply_pattern": "invalid regular expressions",
    "conversation_blank_say": "a blank turn message",
    "conversation_reply_assertion_in_given": "reply assertions in 'given'",
    "conversation_without_assertions": "a conversation without any assertion",
    "duplicate_name_not_first_key": "duplicate scenario names",
    "duplicate_scenario_name": "duplicate scenario names",
    "escaped_template_variable": "template variables",
    "llm_call_count_min_above_max": "a minimum greater than the maximum",
    "malformed_template_variable": "template variables",
    "path_escapes_workspace": "paths climbing out of the workspace",
    "scenario_name_control_character": "control characters in scenario names",
    "scenario_named_like_an_outline_row": "duplicate scenario names",
    "unknown_template_variable": "template variables",
    "unset_env_variable": "unset {{env.NAME}} variables",
    "yaml_duplicate_key": "duplicate YAML keys (a YAML parser keeps the last one)",
    "yaml_bad_indent": "YAML syntax errors (no document to validate)",
    "yaml_control_character": "characters YAML does not allow (no document to validate)",
    "yaml_tab_indent": "YAML syntax errors (no document to validate)",
    "yaml_unclosed_quote": "YAML syntax errors (no document to validate)",
}


def validator(kind: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_path(kind).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _errors(kind: str, data: Any) -> list[str]:
    return [error.message for error in validator(kind).iter_errors(data)]


@pytest.mark.parametrize("kind", KINDS)
def test_shipped_schema_is_current(kind: str) -> None:
    assert schema_path(kind).read_text(encoding="utf-8") == render(kind), (
        "stale schema: run `python -m clawspec.authoring.schema`"
    )


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_bundled_contract_validates(path: Path) -> None:
    assert _errors("contract", yaml.safe_load(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_bundled_config_validates(path: Path) -> None:
    assert _errors("config", yaml.safe_load(path.read_text(encoding="utf-8")) or {}) == []


@pytest.mark.parametrize("path", sorted(INVALID.glob("*.yaml")), ids=lambda p: p.stem)
def test_malformed_contract_is_rejected_by_the_schema_too(path: Path) -> None:
    if path.stem in LOADER_ONLY:
        pytest.skip(f"only the loader sees {LOADER_ONLY[path.stem]}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert _errors("contract", data), f"{path.name}: the schema accepts what the loader rejects"


@pytest.mark.parametrize("stem", sorted(LOADER_ONLY))
def test_loader_only_exceptions_are_really_invisible_to_the_schema(stem: str) -> None:
    """The exception list stays honest: each listed case does pass the schema (or is not YAML)."""
    text = (INVALID / f"{stem}.yaml").read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    assert _errors("contract", data) == []


def test_unknown_assertion_type_lists_the_known_ones() -> None:
    errors = _errors(
        "contract",
        {
            "version": "1.0",
            "target": {"type": "skill", "path": "skills/x"},
            "scenarios": [{"name": "a", "when": {"invoke": "go"}, "then": [{"type": "nope"}]}],
        },
    )
    assert any("'nope' is not one of" in e and "artifact_exists" in e for e in errors)


def test_config_schema_rejects_unknown_options_and_literal_secrets() -> None:
    assert _errors("config", {"concurency": 2})
    assert _errors("config", {"hooks_token": "abc123"})
    assert _errors("config", {"hooks_token": "${MY_TOKEN}"}) == []


def test_config_schema_accepts_clawspec_0_1_options_as_deprecated() -> None:
    legacy = {
        "ledger_path": "coverage-ledger.yaml",
        "observability_backend": "none",
        "observability": {"time_window_padding_ms": 100, "opik": {"project_name": "p"}},
        "model_pricing": {"m": {"input_per_1k": 0.003, "output_per_1k": 0.015}},
    }
    assert _errors("config", legacy) == []
    schema = json.loads(schema_path("config").read_text(encoding="utf-8"))
    assert schema["properties"]["ledger_path"]["deprecated"] is True


@pytest.mark.parametrize("kind", KINDS)
def test_schema_command_prints_the_shipped_schema(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", kind]) == 0
    assert capsys.readouterr().out == schema_path(kind).read_text(encoding="utf-8")


def test_schema_command_prints_the_report_schema_tools_can_validate_against(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from clawspec.reports.json_report import generate_schema
    from clawspec.reports.json_report import schema_path as report_schema

    assert main(["schema", "report"]) == 0
    printed = capsys.readouterr().out
    assert printed == report_schema().read_text(encoding="utf-8") == generate_schema()
    assert json.loads(printed)["title"] == "ClawSpec run report"


def test_schema_command_rejects_an_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["schema", "junit"])
    assert stop.value.code == 2
    assert "invalid choice: 'junit'" in capsys.readouterr().err


def test_config_schema_knows_the_lint_rule_ids() -> None:
    assert _errors("config", {"lint": {"rules": {"name-not-kebab-case": "off"}}}) == []
    assert _errors("config", {"lint": {"rules": {"no-such-rule": "off"}}})
    assert _errors("config", {"lint": {"rules": {"name-not-kebab-case": "loud"}}})


def test_a_typed_field_of_an_outline_may_be_one_row_placeholder() -> None:
    schema = json.loads(schema_path("contract").read_text("utf-8"))
    contract = {
        "version": "1.0",
        "target": {"type": "skill", "path": "s"},
        "scenarios": [
            {
                "name": "drafts",
                "examples": [{"budget": 5, "t": 3}],
                "timeout": "{{vars.t}}",
                "when": {"invoke": "x"},
                "then": [{"type": "token_budget", "max_total_tokens": "{{ vars.budget }}"}],
            }
        ],
    }
    jsonschema.validate(contract, schema)
    contract["scenarios"][0]["then"][0]["max_total_tokens"] = "about {{vars.budget}}"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(contract, schema)


def test_a_quoted_number_the_loader_reads_is_valid_in_both_schemas(tmp_path: Path) -> None:
    """The guide: a number field takes a number or a quoted one (`min: "2"` is 2)."""
    contract = {
        "version": "1.0",
        "target": {"type": "skill", "path": "s"},
        "defaults": {"timeout": "120"},
        "scenarios": [
            {
                "name": "drafts",
                "when": {"invoke": "x"},
                "then": [
                    {"type": "tool_call_count", "tool": "write", "min": "2"},
                    {"type": "artifact_exists", "path": "out.md", "timeout": " 5.5 "},
                ],
            }
        ],
    }
    assert _errors("contract", contract) == []
    (tmp_path / "s").mkdir()
    (tmp_path / "c.clawspec.yaml").write_text(json.dumps(contract), encoding="utf-8")
    assert main(["validate", str(tmp_path / "c.clawspec.yaml")]) == 0  # the loader agrees
    config = {"concurrency": "4", "min_pass_rate": "0.5", "gateway": {"ready_timeout": "60"}}
    assert _errors("config", config) == []
    contract["scenarios"][0]["then"][0]["min"] = "two"
    assert _errors("contract", contract)
    assert _errors("config", {"concurrency": "4 lanes"})

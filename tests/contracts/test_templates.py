"""Templates are rendered into the typed models loaded once: the same result as validating the
rendered YAML again, without the YAML, for any set of values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from clawspec.assertions import REGISTRY
from clawspec.contracts import templates
from clawspec.contracts.loader import load_contracts
from clawspec.contracts.models import When

VALUES = {
    "today": "2026-11-27",
    "run_id": "r-123",
    "run_started_at": "2026-11-27T09:40:00.000000+00:00",
    "scenario": "smoke",
    "target": "skills/news",
    "workspace": "/ws",
    "gateway_log": "/tmp/openclaw/openclaw-2026-11-27.log",
}
ENVIRON = {"REPORT_DIR": "out", "SINCE": "2026-11-26T00:00:00Z", "BAD_SINCE": "yesterday"}


def test_a_model_without_templates_is_returned_as_it_is() -> None:
    model = REGISTRY["artifact_exists"].model.model_validate(
        {"type": "artifact_exists", "path": "out/a.md", "timeout": 3}
    )
    assert templates.render_model(model, VALUES, ENVIRON) is model


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "artifact_exists", "path": "{{env.REPORT_DIR}}/{{today}}.md", "timeout": 2},
        {
            "type": "artifact_absent_words",
            "path": "out/{{run_id}}.md",
            "words": ["{{scenario}} failed", "plain"],
            "updated_after": "{{env.SINCE}}",
        },
        {"type": "log_entry", "pattern": "run {{run_id}}", "path": "{{gateway_log}}"},
        {
            "type": "state_file",
            "path": "state/{{run_id}}.yaml",
            "expected_fields": {"run": "{{run_id}}", "count": 3, "nested": {"day": "{{today}}"}},
        },
        {
            "type": "tool_was_called",
            "tool": "write",
            "log_path": "{{gateway_log}}",
            "run_id": "{{run_id}}",
        },
    ],
    ids=lambda raw: raw["type"],
)
def test_rendering_the_typed_model_equals_validating_the_rendered_yaml(raw: dict) -> None:
    model = REGISTRY[raw["type"]].model
    typed = model.model_validate(raw)
    rendered = templates.render_model(typed, VALUES, ENVIRON)
    assert rendered == model.model_validate(templates.render_data(raw, VALUES, ENVIRON))
    assert rendered.model_fields_set == typed.model_fields_set  # defaults stay defaults
    assert "{{" not in repr(rendered)


def test_one_typed_model_renders_with_each_set_of_values_and_is_left_as_loaded() -> None:
    """What a scenario outline's rows need: one model, rendered with each row's values."""
    typed = REGISTRY["artifact_exists"].model.model_validate(
        {"type": "artifact_exists", "path": "out/{{scenario}}.md"}
    )
    rows = [VALUES | {"scenario": name} for name in ("alpha", "beta")]
    paths = [templates.render_model(typed, row, ENVIRON).path for row in rows]
    assert paths == ["out/alpha.md", "out/beta.md"]
    assert typed.path == "out/{{scenario}}.md"


def test_a_rendered_value_must_meet_the_rules_a_written_one_does() -> None:
    typed = REGISTRY["artifact_exists"].model.model_validate(
        {"type": "artifact_exists", "path": "a.md", "updated_after": "{{env.BAD_SINCE}}"}
    )
    with pytest.raises(ValidationError, match="'updated_after' is not an ISO-8601 timestamp"):
        templates.render_model(typed, VALUES, ENVIRON)


def test_an_unset_environment_variable_is_a_template_error() -> None:
    when = When.model_validate({"invoke": "/send {{env.MISSING}}"})
    with pytest.raises(templates.TemplateError, match="'MISSING' is not set"):
        templates.render_model(when, VALUES, ENVIRON)


def test_when_renders_its_message_and_params(tmp_path: Path) -> None:
    contract = {
        "version": "1.0",
        "target": {"type": "skill", "path": "skills/news"},
        "scenarios": [
            {
                "name": "smoke",
                "when": {
                    "invoke": "/send {{run_id}}",
                    "params": {"day": "{{today}}", "n": 2, "tags": ["{{scenario}}"]},
                },
                "then": [{"type": "artifact_exists", "path": "out/{{run_id}}.md"}],
            }
        ],
    }
    path = tmp_path / "c.clawspec.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    (loaded,) = load_contracts([path], tmp_path, ENVIRON)
    scenario = loaded.contract.scenarios[0]
    when = templates.render_model(scenario.when, VALUES, ENVIRON)
    assert (when.invoke, when.params) == (
        "/send r-123",
        {"day": "2026-11-27", "n": 2, "tags": ["smoke"]},
    )
    assert scenario.when.params["day"] == "{{today}}"

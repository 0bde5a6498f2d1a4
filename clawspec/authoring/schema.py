"""JSON Schemas for contracts and `clawspec.yaml`, generated from the models and the registry.

The pydantic models (which the registry builds the assertion union from) are the single source,
as for the assertion tables. `python -m clawspec.authoring.schema` rewrites the shipped files in
`clawspec/schemas/`; `tests/authoring/test_schema.py` fails when they are stale. Editors use them
through the `# yaml-language-server: $schema=…` line `clawspec init` writes.

What the schema cannot see, only the loader checks (docs/guide.md "Editor set-up"): template
variables and unset `{{env.NAME}}`, paths that climb out of the workspace, duplicate scenario
names, duplicate YAML keys, ISO timestamps in `updated_after`, and `llm_call_count` `min` > `max`.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from clawspec.assertions.registry import REGISTRY

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
# Draft-07: what the editors' YAML language server (VS Code, Neovim, JetBrains) fully supports.
DRAFT = "http://json-schema.org/draft-07/schema#"
KINDS = ("contract", "config")


def schema_path(kind: str) -> Path:
    """The shipped schema file of `kind` (contract or config)."""
    return SCHEMAS / f"{kind}.schema.json"


def _accept_numbers_as_text(node: Any) -> None:
    """The models coerce numbers to strings (`trigger: 123`); the schema accepts them too."""
    if isinstance(node, dict):
        if node.get("type") == "string" and not ({"const", "enum", "pattern"} & set(node)):
            node["type"] = ["string", "number"]
        for value in node.values():
            _accept_numbers_as_text(value)
    elif isinstance(node, list):
        for value in node:
            _accept_numbers_as_text(value)


# A quoted number the loader reads as the number (`min: "2"`, `concurrency: "4"`): what
# pydantic parses from text. `pattern` applies to strings only, so a numeric field's own
# bounds still hold for a number and the pattern for its quoted form.
_INTEGER_TEXT = r"^\s*[+-]?\d[\d_]*(\.0*)?\s*$"
_NUMBER_TEXT = r"^\s*[+-]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$"


def _accept_quoted_numbers(node: Any) -> None:
    """A number field takes a quoted number too (docs/guide.md "Contracts")."""
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("integer", "number") and "pattern" not in node:
            node["type"] = [kind, "string"]
            node["pattern"] = _INTEGER_TEXT if kind == "integer" else _NUMBER_TEXT
        for value in node.values():
            _accept_quoted_numbers(value)
    elif isinstance(node, list):
        for value in node:
            _accept_quoted_numbers(value)


ROW_PLACEHOLDER = r"^\{\{\s*vars\.[A-Za-z_][\w.]*\s*\}\}$"


def _accept_row_placeholders(node: Any, skip: tuple[str, ...] = ()) -> None:
    """A field of an outline may be one `{{vars.NAME}}` that a row's typed value replaces
    (`max_total_tokens: "{{vars.budget}}"`): typed fields accept that string too."""
    if isinstance(node, list):
        for item in node:
            _accept_row_placeholders(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for field, sub in value.items():
                if field in skip or not isinstance(sub, dict):
                    continue
                placeholder = {"type": "string", "pattern": ROW_PLACEHOLDER}
                options = sub.get("anyOf")
                if isinstance(options, list):  # an optional field: `X | None`
                    if not any(_texts(option) for option in options):
                        options.append(placeholder)
                elif "type" in sub and not _texts(sub):
                    value[field] = {"anyOf": [dict(sub), placeholder]}
                else:
                    _accept_row_placeholders(sub)
        else:
            _accept_row_placeholders(value)


def _texts(node: Any) -> bool:
    kind = node.get("type") if isinstance(node, dict) else None
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _as_draft_07(node: Any) -> Any:
    """Pydantic writes 2020-12 (`$defs`, `dependentRequired`); editors read draft-07
    (`definitions`, `dependencies`), and VS Code shows `deprecationMessage`."""
    if isinstance(node, list):
        return [_as_draft_07(item) for item in node]
    if not isinstance(node, dict):
        return node
    renamed = {"$defs": "definitions", "dependentRequired": "dependencies"}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace("#/$defs/", "#/definitions/")
        else:
            out[renamed.get(key, key)] = _as_draft_07(value)
    if out.get("deprecated") is True and "description" in out:
        out["deprecationMessage"] = out["description"]
    return out


def _drop_titles(node: Any) -> None:
    """Pydantic's generated titles ('Max Total Tokens') only repeat the key; editors show them."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for value in props.values():
                if isinstance(value, dict):
                    value.pop("title", None)
        for value in node.values():
            _drop_titles(value)
    elif isinstance(node, list):
        for value in node:
            _drop_titles(value)


def _required_groups(spec_model: Any) -> list[dict[str, Any]]:
    """The models' "one of" / "exactly one of" rules as schema keywords."""
    rules: list[dict[str, Any]] = []
    for group in spec_model.one_of:
        rules.append({"anyOf": [{"required": [name]} for name in group]})
    for group in spec_model.exactly_one_of:
        rules.append({"oneOf": [{"required": [name]} for name in group]})
    return rules


def _assertion_schema(defs: dict[str, Any]) -> dict[str, Any]:
    """One assertion: `type` picks the model (if/then), so editors complete each type's fields."""
    branches = []
    for name, spec in REGISTRY.items():
        model_def = defs[spec.model.__name__]
        rules = _required_groups(spec.model) + model_def.pop("x-rules", [])
        if rules:
            model_def.setdefault("allOf", []).extend(rules)
        branches.append(
            {
                "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
                "then": {"$ref": f"#/definitions/{spec.model.__name__}"},
            }
        )
    return {
        "type": "object",
        "description": "An assertion; `type` names one of the registered assertion types.",
        "required": ["type"],
        "properties": {
            "type": {
                "enum": list(REGISTRY),
                "description": " | ".join(
                    f"{name}: {spec.summary}" for name, spec in REGISTRY.items()
                ),
            }
        },
        "allOf": branches,
    }


def contract_schema() -> dict[str, Any]:
    """Return the JSON Schema of a contract file."""
    from clawspec.contracts.models import Contract

    schema = copy.deepcopy(Contract.model_json_schema())
    defs = schema["$defs"]
    defs["Assertion"] = _assertion_schema(defs)
    scenario = defs["Scenario"]["properties"]
    for phase in ("given", "then"):
        scenario[phase]["items"] = {"$ref": "#/definitions/Assertion"}
    defs["Turn"]["properties"]["then"]["items"] = {"$ref": "#/definitions/Assertion"}
    # Scenario._when_or_turns: one message or a conversation; one message needs a `then`.
    defs["Scenario"]["allOf"] = [
        {"oneOf": [{"required": ["when"]}, {"required": ["turns"]}]},
        {
            "if": {"required": ["when"]},
            "then": {
                "required": ["then"],
                "properties": {"then": {"minItems": 1}},
                "not": {"required": ["stop_on_failure"]},
            },
        },
    ]
    # `version: 1.0` unquoted is a YAML float; the loader accepts it (Contract._unquoted_version).
    schema["properties"]["version"] = {
        "enum": ["1.0", 1.0],
        "description": 'Contract format version: "1.0".',
    }
    _accept_numbers_as_text(schema)
    for name in ("When", "Turn", *(spec.model.__name__ for spec in REGISTRY.values())):
        if name in defs:
            _accept_row_placeholders(
                defs[name], skip=("type", "then") if name == "Turn" else ("type",)
            )
    keep = ("name", "examples", "given", "then", "when", "turns")
    _accept_row_placeholders({"properties": scenario}, skip=keep)
    _accept_quoted_numbers(schema)  # after: a typed field still takes a row's placeholder
    _drop_titles(schema)
    schema.update(
        {
            "$schema": DRAFT,
            "$id": "https://clawspec.dev/schemas/contract.schema.json",
            "title": "ClawSpec contract",
            "description": "Scenario contract (given/when/then) run against an OpenClaw gateway.",
        }
    )
    return schema


def config_schema() -> dict[str, Any]:
    """Return the JSON Schema of `clawspec.yaml` (legacy options allowed, marked deprecated)."""
    from clawspec.config.settings import Settings
    from clawspec.config_options import LEGACY_OPTIONS

    schema = copy.deepcopy(Settings.model_json_schema())
    props = schema["properties"]
    props.pop("masked", None)
    for secret in ("hooks_token", "gateway_auth_token", "github_token"):
        props[secret] = {
            "type": "string",
            "pattern": r"^\$\{\w+\}$",
            "description": "A reference to an environment variable (`${VAR}`), never a secret.",
        }
    for option in LEGACY_OPTIONS:
        where = props if len(option.loc) == 1 else None
        if option.loc[:1] == ("observability",) and len(option.loc) == 2:
            where = schema["$defs"]["ObservabilitySettings"]["properties"]
        if where is None or option.loc[-1] in where:
            continue  # deeper legacy keys (`observability.opik.*`), or an option still current
        note = option.note if option.target is None else f"now '{'.'.join(option.target)}'"
        where[option.loc[-1]] = {"deprecated": True, "description": f"legacy ClawSpec: {note}."}
    schema["$defs"]["ObservabilitySettings"]["properties"]["opik"] = {
        "type": "object",
        "deprecated": True,
        "description": (
            "legacy ClawSpec: now 'observability.project' and 'observability.workspace'."
        ),
    }
    # Legacy ClawSpec priced per thousand tokens; those entries still load (converted, with a
    # warning).
    schema["$defs"]["ModelPrice"] = {
        "anyOf": [
            schema["$defs"]["ModelPrice"],
            {
                "type": "object",
                "deprecated": True,
                "properties": {
                    "input_per_1k": {"type": "number"},
                    "output_per_1k": {"type": "number"},
                },
                "additionalProperties": False,
            },
        ]
    }
    _lint_rule_ids(schema["$defs"]["LintSettings"]["properties"]["rules"])
    schema["$defs"]["LintIgnore"]["properties"]["rule"]["enum"] = list(
        schema["$defs"]["LintSettings"]["properties"]["rules"]["properties"]
    )
    _accept_quoted_numbers(schema)
    _drop_titles(schema)
    schema.update(
        {
            "$schema": DRAFT,
            "$id": "https://clawspec.dev/schemas/config.schema.json",
            "title": "ClawSpec configuration (clawspec.yaml)",
        }
    )
    return schema


def _lint_rule_ids(rules: dict[str, Any]) -> None:
    """`lint.rules` keys are the lint rule registry's ids (an unknown id is a config error;
    the configuration reads them from here, `clawspec/config/lint_rules.py`)."""
    from clawspec.lint.rules import RULES

    setting = rules.pop("additionalProperties")
    rules["properties"] = {
        rule.id: {**setting, "description": f"{rule.summary} (default: {rule.severity})"}
        for rule in RULES.values()
    }
    rules["additionalProperties"] = False


def render(kind: str) -> str:
    """The schema of `kind` as the JSON text shipped in the package."""
    if kind not in KINDS:
        raise ValueError(f"unknown schema '{kind}' (expected one of {', '.join(KINDS)})")
    schema = _as_draft_07(contract_schema() if kind == "contract" else config_schema())
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all() -> list[Path]:
    """Regenerate the shipped schemas; return the files that changed."""
    changed = []
    for kind in KINDS:
        path, text = schema_path(kind), render(kind)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    written = write_all()
    print("\n".join(f"wrote {p}" for p in written) or "schemas up to date", file=sys.stdout)

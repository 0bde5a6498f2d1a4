"""What `lint` in clawspec.yaml may say: rule ids (`lint.rules`, `lint.ignore[].rule`) and the
setting of each rule.

The lint rule registry (`clawspec/lint/rules.py`) is the one source of the rule ids, but the
configuration sits below the lint package (lint reads settings) and cannot import it. The
shipped config schema is generated from that registry (`python -m clawspec.authoring.schema`;
`tests/authoring/test_schema.py` fails when it is stale), so the ids are read from there: every
command that loads the configuration refuses an unknown rule, as editors using the schema do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ValidationError, WrapValidator

from clawspec.text import did_you_mean

CONFIG_SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.json"


@cache
def known_lint_rules() -> tuple[str, ...]:
    """The lint rule ids, as the shipped config schema lists them under `lint.rules`."""
    schema = json.loads(CONFIG_SCHEMA.read_text(encoding="utf-8"))
    return tuple(schema["definitions"]["LintSettings"]["properties"]["rules"]["properties"])


def _known(rule: str) -> str:
    """A rule id the registry has: an unknown one would switch off, re-grade or silence
    nothing, and the typo would show only once `clawspec lint` ran."""
    known = known_lint_rules()
    if rule not in known:
        hint = did_you_mean(rule, known) or f" (known: {', '.join(known)})"
        raise ValueError(f"unknown rule '{rule}'{hint}")
    return rule


def _one_message(value: Any, handler: Callable[[Any], Any]) -> Any:
    """Say once what a rule's setting may be (the union would say it once per member)."""
    try:
        return handler(value)
    except ValidationError:
        raise ValueError("expected off, false, true, error or warning") from None


LintRuleId = Annotated[str, AfterValidator(_known)]
LintRuleSetting = Annotated[Literal["off", "error", "warning"] | bool, WrapValidator(_one_message)]

"""`{{variable}}` rendering for contract strings (docs/guide.md "Template variables")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from clawspec.secrets import register_env

Model = TypeVar("Model", bound=BaseModel)

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")

KNOWN = (
    "today",
    "run_id",
    "run_started_at",
    "scenario",
    "target",
    "workspace",
    "gateway_log",
)


class TemplateError(ValueError):
    """An unknown template variable or an unset `env.NAME`. `environment_only` when every
    problem said is an unset environment variable: the run's environment settles it, the
    contract itself is sound (what `lint`, run without the CI job's secrets, leaves aside)."""

    def __init__(self, message: str, *, environment_only: bool = False) -> None:
        super().__init__(message)
        self.environment_only = environment_only


def variables_in(text: str) -> list[str]:
    """Return the variable names used in `text`, in order."""
    return _VARIABLE.findall(text)


def check_variables(text: str, environ: Mapping[str, str], outline: bool = False) -> None:
    """Raise TemplateError naming every unknown variable, unset environment variable and
    placeholder that is not written as one (`{{run-id}}`, `{{today}`) in `text`.

    `vars.NAME` is known only in an outline (`outline`): each row's names are checked when
    the rows are read (contracts/outlines.py)."""
    found = [*_malformed(text)]
    unset: list[str] = []
    for name in variables_in(text):
        if name.startswith("vars."):
            if not outline:
                found.append(
                    f"'{{{{{name}}}}}' is a row variable, but this scenario has no 'examples' "
                    "(add the rows that define it, or remove the placeholder)"
                )
        elif name.startswith("env."):
            if name[4:] not in environ:
                unset.append(f"environment variable '{name[4:]}' is not set ({{{{{name}}}}})")
            else:
                # A contract's reference to a secret-named variable: masked in every output.
                register_env(name[4:], environ)
        elif name not in KNOWN:
            known = ", ".join(f"{{{{{k}}}}}" for k in (*KNOWN, "env.NAME", "vars.NAME"))
            found.append(f"unknown template variable '{{{{{name}}}}}' (known: {known})")
    if found or unset:
        said = "; ".join(dict.fromkeys([*found, *unset]))
        raise TemplateError(said, environment_only=not found)


# What a user meant as a placeholder but did not write as one: a name with other characters
# (`{{run-id}}`, `{{env.MY-VAR}}`, `{{}}`), or one closing brace (`{{today}`). Left as text, it
# would reach the agent and the assertions unrendered and could match a stale file.
_BRACED = re.compile(r"\{\{([^{}\n]{0,80})\}\}")
_UNCLOSED = re.compile(r"\{\{\s*([A-Za-z_][\w.-]*)\s*\}(?!\})")
_NAME = re.compile(r"\s*[A-Za-z_][\w.]*\s*")


def _malformed(text: str) -> list[str]:
    found = []
    for match in _BRACED.finditer(text):
        if not _NAME.fullmatch(match.group(1)):
            hint = _spelled(match.group(1))
            found.append(
                f"'{match.group(0)}' is not a template variable: a name holds only letters, "
                f"digits, '_' and '.'{hint}"
            )
    for match in _UNCLOSED.finditer(text):
        found.append(f"'{match.group(0)}' is missing a closing brace ('{{{{{match.group(1)}}}}}')")
    return found


def _spelled(written: str) -> str:
    """` (did you mean …?)` for a name written with `-` or spaces where `_` belongs."""
    name = re.sub(r"[\s-]+", "_", written.strip())
    if name in KNOWN or name.startswith(("env.", "vars.")):
        return f" (did you mean '{{{{{name}}}}}'?)"
    return ""


def render(text: str, values: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """Substitute every `{{name}}` in `text`."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("env."):
            if name[4:] not in environ:
                raise TemplateError(f"environment variable '{name[4:]}' is not set")
            register_env(name[4:], environ)
            return environ[name[4:]]
        if name not in values:
            raise TemplateError(f"unknown template variable '{{{{{name}}}}}'")
        return values[name]

    return _VARIABLE.sub(substitute, text)


def with_environment(text: str, environ: Mapping[str, str]) -> str:
    """`text` with its set `{{env.NAME}}` rendered, every other variable left as written: what
    is known of a string before the run (a path's `..` can only come from there)."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("env.") and name[4:] in environ:
            return environ[name[4:]]
        return match.group(0)

    return _VARIABLE.sub(substitute, text)


def render_data(data: Any, values: Mapping[str, str], environ: Mapping[str, str]) -> Any:
    """Render every string inside nested lists/mappings (mapping keys are left alone)."""
    if isinstance(data, str):
        return render(data, values, environ)
    if isinstance(data, list):
        return [render_data(item, values, environ) for item in data]
    if isinstance(data, dict):
        return {key: render_data(item, values, environ) for key, item in data.items()}
    return data


def render_model(model: Model, values: Mapping[str, str], environ: Mapping[str, str]) -> Model:
    """`model` with every `{{variable}}` in the values it was given rendered.

    The one render step for what a contract says (an assertion, a `when`): the typed model
    loaded once, with a scenario's values, whichever scenario supplies them. A model that holds
    no template is returned as it is; one that does is validated again from its given values,
    rendered, so a rendered value meets the rules a written one does (raises ValidationError
    if not, TemplateError for an unset `env.NAME`).
    """
    given = model.model_dump(exclude_unset=True)
    if not _holds_template(given):
        return model
    return type(model).model_validate(render_data(given, values, environ))


def _holds_template(data: Any) -> bool:
    if isinstance(data, str):
        return "{{" in data
    if isinstance(data, list):
        return any(_holds_template(item) for item in data)
    if isinstance(data, dict):
        return any(_holds_template(item) for item in data.values())
    return False

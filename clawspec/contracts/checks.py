"""Checks of a contract that pydantic cannot make: unique names, template variables, row
placeholders where no row can fill them, and paths that climb out of the workspace. They read
the raw data, so they report even when the structure has other errors."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawspec.assertions import REGISTRY
from clawspec.contracts import templates
from clawspec.contracts.explain import PHASES, format_at
from clawspec.contracts.outlines import placeholders
from clawspec.contracts.problems import Problem
from clawspec.inputs.paths import escapes_workspace, length_problem
from clawspec.inputs.source import Loc, SourceDoc
from clawspec.text import UNSHOWABLE, cut


def may_hold_templates(text: str) -> bool:
    r"""False when no string of a YAML document can hold '{{' (a template): YAML makes one only
    from a literal '{{' or, in a double-quoted string, from an escape (`\x7b`, `\` + line break);
    folded lines are joined with a space."""
    return "{{" in text or "\\" in text


def check_semantics(
    shown: str,
    doc: SourceDoc,
    workspace: Path,
    environ: Mapping[str, str],
    templated: bool,
) -> list[Problem]:
    """Checks pydantic cannot make (unique names, template variables, workspace paths); they
    read the raw data so they report even when the structure has other errors. `templated` is
    False when no string of the file can hold a template: the variable check is skipped."""
    errors: list[Problem] = []
    seen: set[str] = set()
    scenarios = doc.data.get("scenarios")
    for s_index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
        if not isinstance(scenario, dict):
            continue
        name = scenario.get("name")
        if isinstance(name, str) and (unshown := _unshowable(name)) is not None:
            loc = ("scenarios", s_index, "name")
            errors.append(format_at(shown, doc, loc, unshown, True))
        elif isinstance(name, str) and name in seen:
            # Point at the second occurrence of the name itself.
            loc = ("scenarios", s_index, "name")
            errors.append(format_at(shown, doc, loc, f"duplicate scenario name '{name}'", True))
        seen.add(name) if isinstance(name, str) else None
        outline = "examples" in scenario
        if templated:
            errors.extend(_check_outline_strings(shown, doc, s_index, scenario, outline))
        when = scenario.get("when")
        if templated and isinstance(when, dict):
            loc = ("scenarios", s_index, "when")
            errors.extend(_check_strings(shown, doc, loc, when, environ, outline))
        errors.extend(_check_has_assertions(shown, doc, s_index, scenario))
        turns = scenario.get("turns")
        for t_index, turn in enumerate(turns if isinstance(turns, list) else []):
            if not isinstance(turn, dict):
                continue
            loc = ("scenarios", s_index, "turns", t_index)
            errors.extend(_check_say(shown, doc, loc, turn, environ))
            if templated:
                data = {k: v for k, v in turn.items() if k != "then"}
                errors.extend(_check_strings(shown, doc, loc, data, environ, outline))
            errors.extend(
                _check_assertions(
                    shown, doc, (*loc, "then"), turn.get("then"), environ, templated, outline
                )
            )
        for phase in PHASES:
            loc = ("scenarios", s_index, phase)
            errors.extend(
                _check_assertions(shown, doc, loc, scenario.get(phase), environ, templated, outline)
            )
    return errors


def _unshowable(name: str) -> str | None:
    """Why a scenario name cannot be used, else None: every report shows names on one line and
    without control characters, so two names differing only by one would be one scenario."""
    found = UNSHOWABLE.search(name)
    if found is None:
        return None
    return (
        f"scenario name has the character U+{ord(found.group()):04X} (a control, line-break or "
        "text-direction character): every report shows names as written, on one line; remove it"
    )


def _check_has_assertions(
    shown: str, doc: SourceDoc, s_index: int, scenario: dict[str, Any]
) -> list[Problem]:
    """A scenario must check something: one message needs a `then`; a conversation at least
    one assertion across its turns and its `then`."""
    loc = ("scenarios", s_index)
    then = scenario.get("then")
    turns = scenario.get("turns")
    if isinstance(turns, list) and turns:
        held = bool(then) or any(isinstance(t, dict) and t.get("then") for t in turns)
        if held:
            return []
        message = "a conversation needs at least one assertion in its turns or its 'then'"
        return [format_at(shown, doc, (*loc, "turns"), message, True)]
    if "turns" in scenario or (then is None and "then" in scenario):
        return []  # `turns: []`, or `then:` left empty: pydantic says so
    if "then" not in scenario:
        return [format_at(shown, doc, loc, "missing field 'then'")]
    if isinstance(then, list) and not then:
        return [format_at(shown, doc, (*loc, "then"), "'then' needs at least one assertion", True)]
    return []


def _check_assertions(
    shown: str,
    doc: SourceDoc,
    loc: Loc,
    items: Any,
    environ: Mapping[str, str],
    templated: bool,
    outline: bool,
) -> list[Problem]:
    """The checks of one list of assertions (`given`, `then`, a turn's `then`) at `loc`."""
    errors: list[Problem] = []
    for a_index, raw in enumerate(items if isinstance(items, list) else []):
        if not isinstance(raw, dict):
            continue
        where = (*loc, a_index)
        if loc[-1] == "given" and (after := _AFTER_THE_RUN.get(_evidence_of(raw) or "")):
            errors.append(format_at(shown, doc, (*where, "type"), after))
        if templated:
            errors.extend(_check_strings(shown, doc, where, raw, environ, outline))
        errors.extend(_check_paths(shown, doc, where, raw, environ))
    return errors


def _check_say(
    shown: str, doc: SourceDoc, loc: Loc, turn: dict[str, Any], environ: Mapping[str, str]
) -> list[Problem]:
    """A turn's message that would be sent empty: blank as written, or nothing but template
    variables that may render empty (env values are known only at run time)."""
    say = turn.get("say")
    if not isinstance(say, str):
        return []
    if not say.strip():
        return [format_at(shown, doc, (*loc, "say"), "'say' is blank: a turn sends a message")]
    names = templates.variables_in(say)
    # Only environment values are known before the run; other variables never render empty.
    known = names and all(n.startswith("env.") and n[4:] in environ for n in names)
    if known and not templates.render(say, {}, environ).strip():
        shown_names = ", ".join(n[4:] for n in names)
        message = f"'say' renders blank: the environment gives {shown_names} no text"
        return [format_at(shown, doc, (*loc, "say"), message)]
    return []


def _evidence_of(raw: dict[str, Any]) -> str | None:
    """The category of what an assertion (raw data) judges: a judge that reads the reply
    judges the reply. Only the type's own module is imported to tell (assertions/registry.py)."""
    kind = raw.get("type")
    if kind == "llm_judge" and raw.get("source") == "reply":
        return "reply"
    spec = REGISTRY.get(kind) if isinstance(kind, str) else None  # e.g. `type: [x]`
    return spec.category if spec is not None else None


_REPLY_IN_GIVEN = (
    "a reply assertion cannot be in 'given': the reply exists only once the agent has run "
    "(move it to 'then')"
)
_RECORD_IN_GIVEN = (
    "a run record assertion cannot be in 'given': the run's record exists only once the agent "
    "has run (move it to 'then')"
)
# What exists only once the agent has run, by assertion category: never in `given`.
_AFTER_THE_RUN = {"reply": _REPLY_IN_GIVEN, "run record": _RECORD_IN_GIVEN}


def _check_outline_strings(
    shown: str, doc: SourceDoc, s_index: int, scenario: dict[str, Any], outline: bool
) -> list[Problem]:
    """Row placeholders where they cannot be: in a name (a row is named `name[row id]`), and
    outside `when`/`given`/`then` of a scenario without rows (those are checked with the
    other templates)."""
    errors: list[Problem] = []
    loc = ("scenarios", s_index)
    for key, item in scenario.items():
        if key in ("when", "turns", "examples", *PHASES) or (outline and key != "name"):
            continue
        for sub_loc, _, variable in placeholders(item):
            where = (*loc, key, *sub_loc)
            if key == "name":
                message = (
                    f"'name' cannot hold a placeholder ('{{{{vars.{variable}}}}}'): each row "
                    "runs as 'name[row id]'"
                )
            else:
                message = (
                    f"'{{{{vars.{variable}}}}}' is a row variable, but this scenario has no "
                    "'examples' (add the rows that define it, or remove the placeholder)"
                )
            errors.append(format_at(shown, doc, where, message))
    return errors


def _check_strings(
    shown: str,
    doc: SourceDoc,
    loc: Loc,
    data: dict[str, Any],
    environ: Mapping[str, str],
    outline: bool = False,
) -> list[Problem]:
    errors: list[Problem] = []
    for sub_loc, text in template_strings(data, loc, []):
        try:
            templates.check_variables(text, environ, outline)
        except templates.TemplateError as exc:
            errors.append(
                format_at(shown, doc, sub_loc, str(exc), environment_only=exc.environment_only)
            )
    return errors


def _check_paths(
    shown: str, doc: SourceDoc, loc: Loc, raw: dict[str, Any], environ: Mapping[str, str]
) -> list[Problem]:
    return [
        format_at(shown, doc, (*loc, name), message)
        for name, message in path_problems(raw, environ)
    ]


def path_problems(
    raw: dict[str, Any], environ: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """(field, message) for each path field of an assertion that climbs out of the workspace."""
    problems = []
    kind = raw.get("type")
    spec = REGISTRY.get(kind) if isinstance(kind, str) else None  # e.g. `type: [x]`: unhashable
    for name in spec.path_fields if spec else ():
        value = raw.get(name)
        # Templates never introduce '..' except through env values, which are known now (and
        # an outline's row values, checked on each row's scenario). The values themselves are
        # never said: an environment variable may be a secret.
        known = (
            templates.with_environment(value, environ)
            if isinstance(value, str) and environ is not None and "{{" in value
            else value
        )
        if isinstance(value, str) and escapes_workspace(value):
            problems.append((name, f"field '{name}': path '{value}' climbs out of the workspace"))
        elif isinstance(known, str) and escapes_workspace(known):
            problems.append(
                (
                    name,
                    f"field '{name}': path '{value}' climbs out of the workspace with the "
                    "environment's values",
                )
            )
        elif isinstance(value, str) and "{{" not in value and (too_long := length_problem(value)):
            shown = cut(value, 80)
            problem = f"field '{name}': path '{shown}' cannot name a file: {too_long}"
            problems.append((name, problem))
    return problems


def template_strings(
    data: dict[str, Any] | list[Any], loc: Loc, found: list[tuple[Loc, str]]
) -> list[tuple[Loc, str]]:
    """Add each string under `data` that holds '{{' (only those can name template variables)
    to `found`, with its location, in file order; other strings cost no location."""
    for key, item in data.items() if isinstance(data, dict) else enumerate(data):
        if isinstance(item, str):
            if "{{" in item:
                found.append(((*loc, key), item))
        elif isinstance(item, dict | list):
            template_strings(item, (*loc, key), found)
    return found

"""The lint rules: one function each, registered with an id, a default severity and a summary.

The registry is the single source of the rule list: the engine runs it, `clawspec.yaml`
(`lint.rules`) switches rules off or re-grades them by id, and the guide's table is generated
from it (`python -m clawspec.lint.docs`). Frontmatter facts follow OpenClaw's documented
SKILL.md format (name, description, metadata.openclaw.requires.{bins,anyBins,env}, primaryEnv,
user-invocable, command-dispatch/command-tool …); SOUL.md sections follow its SOUL template.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawspec.lint.document import Document
from clawspec.lint.envnames import environment_reads
from clawspec.lint.requires import unset_env, unset_message
from clawspec.lint.shell import analyse, package_binary
from clawspec.lint.suppress import directives

Hit = tuple[int, int, str]  # line, column, message
Check = Callable[[Document, "LintOptions"], Iterable[Hit]]
SEVERITIES = ("error", "warning")
# AgentSkills keys, OpenClaw's own, and the legacy ClawSpec ones (`triggers`, `version`, ...).
KNOWN_SKILL_KEYS = {
    "name",
    "description",
    "homepage",
    "metadata",
    "license",
    "compatibility",
    "allowed-tools",
    "user-invocable",
    "disable-model-invocation",
    "command-dispatch",
    "command-tool",
    "command-arg-mode",
    "triggers",
    "command",
    "version",
    "permissions",
}
KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
DESCRIPTION_MAX = 160  # OpenClaw's "creating skills": one line, under 160 characters
SOUL_MAX_CHARS = 20_000  # agents.defaults.bootstrapMaxChars: longer files are truncated
SECRETS = (
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("an OpenAI-style API key (sk-…)", re.compile(r"\bsk-(?!ant-)(?:proj-)?[A-Za-z0-9_\-]{20,}")),
    ("a PEM private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
)
# Shell builtins and POSIX utilities any host has; a skill need not gate on them.
COMMON_BINS = {
    "alias",
    "openclaw",
    "awk",
    "basename",
    "bash",
    "break",
    "case",
    "cat",
    "cd",
    "chmod",
    "command",
    "cp",
    "curl",
    "cut",
    "date",
    "declare",
    "dirname",
    "do",
    "done",
    "echo",
    "elif",
    "else",
    "env",
    "esac",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fi",
    "find",
    "for",
    "function",
    "grep",
    "head",
    "if",
    "in",
    "jq",
    "kill",
    "less",
    "ln",
    "local",
    "ls",
    "mkdir",
    "mktemp",
    "mv",
    "printf",
    "pwd",
    "read",
    "return",
    "rm",
    "sed",
    "set",
    "sh",
    "shift",
    "sleep",
    "sort",
    "source",
    "tail",
    "tar",
    "tee",
    "test",
    "then",
    "touch",
    "tr",
    "uname",
    "true",
    "type",
    "uniq",
    "unset",
    "until",
    "wc",
    "which",
    "while",
    "xargs",
    "zsh",
}


@dataclass(frozen=True)
class LintOptions:
    """Settings the rules read (from `clawspec.yaml` `lint`), and the environment `env-unset`
    reads (None: that rule has nothing to say, as for a file linted away from any run)."""

    soul_sections: tuple[str, ...] = ("Core Truths", "Boundaries", "Vibe")
    environ: Mapping[str, str] | None = None
    openclaw_config: Mapping[str, Any] | None = None  # the workspace's openclaw.json, if read


@dataclass(frozen=True)
class Rule:
    """One lint rule."""

    id: str
    severity: str
    kinds: frozenset[str]
    summary: str
    check: Check


RULES: dict[str, Rule] = {}


def rule(rule_id: str, severity: str, kinds: str, summary: str) -> Callable[[Check], Check]:
    """Register a rule; `kinds` names the files it checks: 'skill', 'soul', 'contract'."""

    def decorate(check: Check) -> Check:
        RULES[rule_id] = Rule(rule_id, severity, frozenset(kinds.split()), summary, check)
        return check

    return decorate


def _requires(doc: Document) -> dict[str, Any]:
    meta = (doc.frontmatter or {}).get("metadata")
    block = meta.get("openclaw") or meta.get("clawdbot") if isinstance(meta, dict) else None
    return block if isinstance(block, dict) else {}


def _string_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


@rule(
    "file-unreadable",
    "error",
    "skill soul",
    "The file is binary, not UTF-8 text, or over 1 MiB (not read further).",
)
def _unreadable(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.unreadable:
        yield 1, 1, doc.unreadable


@rule("file-empty", "error", "skill soul", "The file is empty or only whitespace.")
def _empty(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.unreadable is None and not doc.text.strip():
        yield 1, 1, "the file is empty"


@rule("secret-in-file", "error", "skill soul", "An API key, token or private key in the text.")
def _secrets(doc: Document, _: LintOptions) -> Iterable[Hit]:
    for number, line in enumerate(doc.lines, start=1):
        for what, pattern in SECRETS:
            match = pattern.search(line)
            if match:
                # Never echo the secret: four characters are enough to find it.
                shown = match.group(0)[:4] + "…"
                yield (
                    number,
                    match.start() + 1,
                    f"looks like {what} ('{shown}'); use the environment",
                )


@rule("frontmatter-missing", "error", "skill", "SKILL.md starts with a `---` frontmatter block.")
def _frontmatter_missing(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.text.strip() and doc.frontmatter is None and doc.frontmatter_problem is None:
        yield 1, 1, "no frontmatter: SKILL.md must start with '---', name and description, '---'"


@rule(
    "frontmatter-invalid", "error", "skill", "The frontmatter is not valid YAML or not a mapping."
)
def _frontmatter_invalid(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter_problem:
        message, mark = doc.frontmatter_problem
        yield mark.line, mark.column, message


@rule(
    "name-missing",
    "warning",
    "skill",
    "The frontmatter has a `name` (without one OpenClaw names the skill after its folder).",
)
def _name_missing(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter is not None and not str(doc.frontmatter.get("name") or "").strip():
        folder = doc.path.resolve().parent.name
        yield 2, 1, f"frontmatter has no 'name': OpenClaw uses the folder name '{folder}'"


@rule("description-missing", "error", "skill", "The frontmatter has a `description`.")
def _description_missing(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter is not None and not str(doc.frontmatter.get("description") or "").strip():
        yield 2, 1, "frontmatter has no 'description' (the agent picks skills by it)"


@rule("name-not-kebab-case", "error", "skill", "`name` uses lowercase letters, digits, hyphens.")
def _kebab(doc: Document, _: LintOptions) -> Iterable[Hit]:
    name = (doc.frontmatter or {}).get("name")
    if name is not None and str(name).strip() and not KEBAB.fullmatch(str(name)):
        mark = doc.key_mark(("name",))
        yield mark.line, mark.column, f"name '{name}' is not kebab-case (e.g. 'send-newsletter')"


@rule("name-folder-mismatch", "warning", "skill", "`name` equals the skill's folder name.")
def _folder(doc: Document, _: LintOptions) -> Iterable[Hit]:
    name = (doc.frontmatter or {}).get("name")
    folder = doc.path.resolve().parent.name
    if isinstance(name, str) and name.strip() and name != folder:
        mark = doc.key_mark(("name",))
        yield mark.line, mark.column, f"name '{name}' differs from the folder name '{folder}'"


@rule("description-too-long", "warning", "skill", "`description` is one line of ≤ 160 characters.")
def _description_long(doc: Document, _: LintOptions) -> Iterable[Hit]:
    text = str((doc.frontmatter or {}).get("description") or "")
    if len(text) > DESCRIPTION_MAX or "\n" in text.strip():
        mark = doc.key_mark(("description",))
        yield (
            mark.line,
            mark.column,
            (
                f"description has {len(text)} characters"
                f"{' on several lines' if chr(10) in text.strip() else ''}; keep one line under 160"
            ),
        )


@rule("unknown-frontmatter-key", "warning", "skill", "Frontmatter keys are ones OpenClaw reads.")
def _unknown_keys(doc: Document, _: LintOptions) -> Iterable[Hit]:
    for key in doc.frontmatter or {}:
        if key not in KNOWN_SKILL_KEYS:
            mark = doc.key_mark((key,))
            yield mark.line, mark.column, f"unknown frontmatter key '{key}' (OpenClaw ignores it)"


@rule("metadata-invalid", "error", "skill", "`metadata.openclaw.requires` lists are string lists.")
def _metadata(doc: Document, _: LintOptions) -> Iterable[Hit]:
    meta = (doc.frontmatter or {}).get("metadata")
    if meta is None:
        return
    mark = doc.key_mark(("metadata",))
    block = meta.get("openclaw") if isinstance(meta, dict) else None
    if not isinstance(meta, dict) or (block is not None and not isinstance(block, dict)):
        yield mark.line, mark.column, "metadata must be a mapping with an 'openclaw' mapping"
        return
    requires = (block or {}).get("requires", {})
    if not isinstance(requires, dict):
        yield mark.line, mark.column, "metadata.openclaw.requires must be a mapping"
        return
    for key in ("bins", "anyBins", "env", "config"):
        value = requires.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            yield (
                mark.line,
                mark.column,
                f"metadata.openclaw.requires.{key} must be a list of strings",
            )


@rule(
    "command-tool-missing", "error", "skill", "`command-dispatch: tool` names its `command-tool`."
)
def _command_tool(doc: Document, _: LintOptions) -> Iterable[Hit]:
    front = doc.frontmatter or {}
    if front.get("command-dispatch") == "tool" and not front.get("command-tool"):
        mark = doc.key_mark(("command-dispatch",))
        yield mark.line, mark.column, "command-dispatch: tool needs 'command-tool' (the tool name)"


@rule("env-undeclared", "warning", "skill", "Environment variables the body reads are declared.")
def _env(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter is None:
        return
    requires = _requires(doc).get("requires")
    declared = set(_string_list(requires.get("env") if isinstance(requires, dict) else None))
    declared.add(str(_requires(doc).get("primaryEnv") or ""))
    for use in environment_reads(doc):
        if use.name not in declared and not use.name.startswith("OPENCLAW_"):
            yield (
                use.line,
                use.column,
                f"'{use.name}' is read from the environment but not declared in "
                "metadata.openclaw.requires.env",
            )


@rule(
    "env-unset",
    "warning",
    "skill",
    "The `requires.env` variables are set here (else OpenClaw hides the skill from the agent).",
)
def _env_unset(doc: Document, options: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter is None or options.environ is None:
        return
    folder = doc.path.parent.name
    names = unset_env(doc.frontmatter, options.environ, options.openclaw_config, folder)
    if names:
        mark = doc.key_mark(("metadata",))
        yield mark.line, mark.column, unset_message(names)


def _skill_os(block: dict[str, Any]) -> set[str]:
    return set(_string_list(block.get("os")))


def _install_names(block: dict[str, Any]) -> set[str]:
    """Commands the metadata's `install` entries provide: their `bins` and package names."""
    names: set[str] = set()
    specs = block.get("install")
    for spec in specs if isinstance(specs, list) else []:
        if isinstance(spec, dict):
            names |= set(_string_list(spec.get("bins")))
            for key in ("package", "formula", "module"):
                if isinstance(spec.get(key), str):
                    names.add(package_binary(spec[key]))
    return names


@rule(
    "bin-undeclared",
    "warning",
    "skill",
    "Commands the body's shell blocks need on every host are declared (alternatives as anyBins).",
)
def _bins(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter is None:
        return
    block = _requires(doc)
    requires = block.get("requires") if isinstance(block.get("requires"), dict) else {}
    declared = set(_string_list(requires.get("bins")) + _string_list(requires.get("anyBins")))
    facts = analyse(doc, _skill_os(block))
    skip = COMMON_BINS | declared | facts.installed | facts.tested | _install_names(block)
    required = {u.binary for u in facts.uses if u.why_not_required is None} - skip
    groups = [g - COMMON_BINS for g in facts.groups]
    # One provided alternative covers its group; a group counts when two of its commands are
    # needed and none is provided.
    for group in groups:
        if group & skip:
            required -= group
    groups = [g for g in groups if len(g & required) > 1]
    grouped = set().union(*groups) if groups else set()
    reported: set[str] = set()
    for use in facts.uses:
        if use.why_not_required or use.binary in reported or use.binary not in required:
            continue
        group = next((g for g in groups if use.binary in g), None)
        if group is None:
            reported.add(use.binary)
            yield (
                use.line,
                use.column,
                f"'{use.binary}' is run but not declared in metadata.openclaw.requires.bins",
            )
        elif use.binary in grouped:
            reported |= group
            names = " or ".join(f"'{n}'" for n in sorted(group))
            yield (
                use.line,
                use.column,
                f"{names} (alternatives) are run but none is declared: list them in "
                "metadata.openclaw.requires.anyBins",
            )


SCRIPT_MAX_BYTES = 1_000_000  # a bundled script larger than this is not read
SCRIPT_MAX_FILES = 200


def _bundled_scripts(doc: Document) -> str:
    """The text of the skill's bundled `scripts/` (next to its SKILL.md), as far as it is text."""
    folder = doc.path.parent / "scripts"
    if not folder.is_dir():
        return ""
    texts: list[str] = []
    try:
        paths = sorted(p for p in folder.rglob("*") if p.is_file())[:SCRIPT_MAX_FILES]
    except OSError:
        return ""
    for path in paths:
        try:
            if path.stat().st_size > SCRIPT_MAX_BYTES:
                continue
            raw = path.read_bytes()
        except OSError:
            continue
        if b"\x00" not in raw[:8192]:  # binaries are not scripts
            texts.append(raw.decode("utf-8", errors="replace"))
    return "\n".join(texts)


@rule(
    "requirement-unused",
    "warning",
    "skill",
    "Declared bins and env are mentioned in the body or the skill's bundled `scripts/`.",
)
def _unused(doc: Document, _: LintOptions) -> Iterable[Hit]:
    """A gate nothing uses hides the skill for nothing (a stale requirement). A skill's
    bundled scripts (`scripts/` beside SKILL.md) use requirements the body need not name."""
    block = _requires(doc)
    requires = block.get("requires") if isinstance(block.get("requires"), dict) else {}
    body = "\n".join(line for _, line in doc.body_lines)
    scripts: str | None = None  # read only when the body does not mention a requirement
    for key in ("bins", "env"):
        for name in _string_list(requires.get(key)):
            word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
            if word.search(body):
                continue
            if scripts is None:
                scripts = _bundled_scripts(doc)
            if word.search(scripts):
                continue
            mark = doc.key_mark(("metadata",))
            yield (
                mark.line,
                mark.column,
                (
                    f"requires.{key} declares '{name}' but neither the body nor the skill's "
                    "scripts/ mention it"
                ),
            )


@rule("body-empty", "warning", "skill", "The skill has instructions after its frontmatter.")
def _body_empty(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if doc.frontmatter is not None and not any(line.strip() for _, line in doc.body_lines):
        yield doc.body_start - 1, 1, "no instructions after the frontmatter"


_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def headings(doc: Document) -> list[str]:
    """ATX heading texts, normalised for comparison (case, spaces, emphasis)."""
    found = []
    for _, line in doc.body_lines:
        match = _HEADING.match(line)
        if match:
            found.append(re.sub(r"[\s*_`]+", " ", match.group(1)).strip().casefold())
    return found


@rule(
    "soul-section-missing",
    "warning",
    "soul",
    "SOUL.md has the sections `lint.soul_sections` names.",
)
def _soul_sections(doc: Document, options: LintOptions) -> Iterable[Hit]:
    if doc.unreadable or not doc.text.strip():
        return
    present = headings(doc)
    for section in options.soul_sections:
        wanted = re.sub(r"\s+", " ", section).strip().casefold()
        if not any(h == wanted or h.endswith(f" {wanted}") for h in present):
            yield 1, 1, f"no '## {section}' section"


@rule("soul-too-long", "warning", "soul", "SOUL.md fits OpenClaw's 20,000-character bootstrap cap.")
def _soul_long(doc: Document, _: LintOptions) -> Iterable[Hit]:
    if len(doc.text) > SOUL_MAX_CHARS:
        line = doc.text[:SOUL_MAX_CHARS].count("\n") + 1
        yield (
            line,
            1,
            (
                f"{len(doc.text):,} characters; OpenClaw truncates bootstrap files after "
                f"{SOUL_MAX_CHARS:,} (agents.defaults.bootstrapMaxChars)"
            ),
        )


@rule(
    "contract-invalid",
    "error",
    "contract",
    "The contract loads: what `clawspec validate` reports (an unset `{{env.NAME}}` aside).",
)
def _contract_invalid(doc: Document, options: LintOptions) -> Iterable[Hit]:
    """A contract that does not load must not count as linted and clean. The variables a CI
    lint job may lack (secrets) are left to `validate`, where the run's environment is."""
    from clawspec.contracts.loader import load_contract

    # Also when its YAML did not parse (a syntax error, a key given twice): the other rules
    # read valid YAML only, this one says what `validate` would.
    if doc.unreadable is not None:
        return
    cwd = Path.cwd().resolve()
    here = doc.path.resolve()
    root = cwd if cwd in here.parents else here.parent
    found = load_contract(doc.path, root, options.environ or {})
    for problem in found if isinstance(found, list) else []:
        if problem.environment_only:
            continue
        where = problem.where
        if where.line is not None and (root / where.file).resolve() == here:
            yield where.line, where.column or 1, problem.message
        else:  # in another file (an outline's data file), or no place: said with its own
            yield 1, 1, problem.text


@rule(
    "outline-column-unused",
    "warning",
    "contract",
    "Every column of a scenario outline's rows is used as `{{vars.NAME}}`.",
)
def _outline_column_unused(doc: Document, _: LintOptions) -> Iterable[Hit]:
    """A row value no placeholder reads changes nothing the row runs: a misspelt placeholder
    or a stale column. Rows of a data file are read as the run reads them."""
    from clawspec.contracts.outlines import RESERVED, placeholders, read_rows

    data = doc.contract.data if doc.contract is not None else None
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    for index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
        if not isinstance(scenario, dict) or "examples" not in scenario:
            continue
        body = {k: v for k, v in scenario.items() if k not in ("examples", "name")}
        used = {name for _, _, name in placeholders(body)}
        loc = ("scenarios", index, "examples")
        # Data files are read inside the current folder (the contract's own when outside it).
        cwd = Path.cwd().resolve()
        root = cwd if cwd in doc.path.resolve().parents else doc.path.resolve().parent
        rows = read_rows(
            scenario["examples"], doc.contract, loc, doc.display, doc.path, root, 16 * 1024 * 1024
        )
        reported: set[str] = set()
        for row in rows.rows:
            for key in row.values:
                if key in used or key in reported or key in RESERVED:
                    continue
                reported.add(key)
                if row.source is not None or row.shown != doc.display:
                    mark = doc.contract.value_mark((*loc, "file"))
                    line, column = mark.line, mark.column
                    about = f"column '{key}' of {row.shown}"
                else:
                    key_mark = doc.contract.key_mark((*row.loc, key))
                    line, column = key_mark.line, key_mark.column
                    about = f"row key '{key}'"
                yield (
                    line,
                    column,
                    f"{about} is used by no '{{{{vars.{key}}}}}' in scenario "
                    f"'{scenario.get('name')}' (a misspelt placeholder, or a column to remove)",
                )


@rule(
    "directive-invalid",
    "warning",
    "skill soul",
    "A `<!-- clawspec-lint: disable=RULE -->` comment names known rules.",
)
def _directive(doc: Document, _: LintOptions) -> Iterable[Hit]:
    for found in directives(doc):
        if found.problem:
            yield found.line, found.column, found.problem
        elif found.rule not in RULES:
            yield (
                found.line,
                found.column,
                f"clawspec-lint: disable names unknown rule '{found.rule}' (it silences nothing)",
            )

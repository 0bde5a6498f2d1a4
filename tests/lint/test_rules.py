"""Each lint rule on a file that breaks it (position and message exact) and on one that does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.lint.engine import Finding, lint_files
from clawspec.lint.rules import RULES, LintOptions

GOOD_SKILL = """---
name: send-newsletter
description: Draft the weekly newsletter into memory/drafts.
metadata:
  openclaw:
    requires: {bins: [resend], env: [RESEND_API_KEY]}
---
# Send newsletter

Use `$RESEND_API_KEY` with:

```bash
resend send --to members
```
"""
GOOD_SOUL = """# SOUL.md - Who You Are

## Core Truths
Be useful.

## Boundaries
- Never send email.

## Vibe
Brief.
"""

# rule id → (file name, text, expected line, column, message). Each text breaks only that rule
# (apart from rules that follow from the same fact, which the test filters out by rule id).
CASES: dict[str, tuple[str, bytes | str, int, int, str]] = {
    "file-unreadable": ("SKILL.md", b"\x89PNG\r\n\x1a\n\x00\x00", 1, 1, "binary file"),
    "file-empty": ("SKILL.md", "", 1, 1, "the file is empty"),
    "secret-in-file": (
        "SKILL.md",
        GOOD_SKILL + "\nkey: sk-ant-api03-abcdefghijklmnopqrstuvwxyz\n",
        16,
        6,
        "looks like an Anthropic API key ('sk-a…'); use the environment",
    ),
    "frontmatter-missing": (
        "SKILL.md",
        "# Just a title\n\nNo frontmatter here.\n",
        1,
        1,
        "no frontmatter: SKILL.md must start with '---', name and description, '---'",
    ),
    "frontmatter-invalid": (
        "SKILL.md",
        "---\nname: send-newsletter\ndescription: [unclosed\n---\nBody.\n",
        3,
        23,
        "invalid YAML",
    ),
    "name-missing": (
        "SKILL.md",
        "---\ndescription: Drafts things.\n---\nBody.\n",
        2,
        1,
        "frontmatter has no 'name': OpenClaw uses the folder name 'send-newsletter'",
    ),
    "description-missing": (
        "SKILL.md",
        "---\nname: send-newsletter\n---\nBody.\n",
        2,
        1,
        "frontmatter has no 'description' (the agent picks skills by it)",
    ),
    "name-not-kebab-case": (
        "SKILL.md",
        GOOD_SKILL.replace("name: send-newsletter", "name: Send_Newsletter"),
        2,
        1,
        "name 'Send_Newsletter' is not kebab-case (e.g. 'send-newsletter')",
    ),
    "name-folder-mismatch": (
        "SKILL.md",
        GOOD_SKILL.replace("name: send-newsletter", "name: newsletter"),
        2,
        1,
        "name 'newsletter' differs from the folder name 'send-newsletter'",
    ),
    "description-too-long": (
        "SKILL.md",
        GOOD_SKILL.replace("Draft the weekly newsletter into memory/drafts.", "x" * 161),
        3,
        1,
        "description has 161 characters; keep one line under 160",
    ),
    "unknown-frontmatter-key": (
        "SKILL.md",
        GOOD_SKILL.replace("metadata:", "colour: blue\nmetadata:"),
        4,
        1,
        "unknown frontmatter key 'colour' (OpenClaw ignores it)",
    ),
    "metadata-invalid": (
        "SKILL.md",
        GOOD_SKILL.replace("{bins: [resend], env: [RESEND_API_KEY]}", "{bins: resend}"),
        4,
        1,
        "metadata.openclaw.requires.bins must be a list of strings",
    ),
    "command-tool-missing": (
        "SKILL.md",
        GOOD_SKILL.replace("metadata:", "command-dispatch: tool\nmetadata:"),
        4,
        1,
        "command-dispatch: tool needs 'command-tool' (the tool name)",
    ),
    "env-unset": (
        "SKILL.md",
        GOOD_SKILL.replace("env: [RESEND_API_KEY]", "env: [RESEND_API_KEY, RESEND_AUDIENCE]")
        + "\nThe audience is `$RESEND_AUDIENCE`.\n",
        4,
        1,
        "requires.env RESEND_AUDIENCE not set here: OpenClaw hides the skill from the agent",
    ),
    "env-undeclared": (
        "SKILL.md",
        GOOD_SKILL + "\nThen read ${ATTIO_API_KEY}.\n",
        16,
        11,
        "'ATTIO_API_KEY' is read from the environment but not declared in "
        "metadata.openclaw.requires.env",
    ),
    "bin-undeclared": (
        "SKILL.md",
        GOOD_SKILL.replace("resend send --to members", "resend send | gh issue list"),
        13,
        15,
        "'gh' is run but not declared in metadata.openclaw.requires.bins",
    ),
    "requirement-unused": (
        "SKILL.md",
        GOOD_SKILL.replace("{bins: [resend],", "{bins: [resend, gh],"),
        4,
        1,
        "requires.bins declares 'gh' but neither the body nor the skill's scripts/ mention it",
    ),
    "directive-invalid": (
        "SKILL.md",
        GOOD_SKILL + "<!-- clawspec-lint: disable=bin-undeclared, no-such-rule -->\n",
        15,
        1,
        "clawspec-lint: disable names unknown rule 'no-such-rule' (it silences nothing)",
    ),
    "body-empty": (
        "SKILL.md",
        "---\nname: send-newsletter\ndescription: Drafts.\n---\n\n",
        4,
        1,
        "no instructions after the frontmatter",
    ),
    "soul-section-missing": (
        "SOUL.md",
        GOOD_SOUL.replace("## Vibe", "## Tone"),
        1,
        1,
        "no '## Vibe' section",
    ),
    "soul-too-long": ("SOUL.md", GOOD_SOUL + ("word " * 4000 + "\n") * 2, 11, 1, "characters"),
    "contract-invalid": (
        "case.clawspec.yaml",
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n  - name: drafts\n'
        "    when: {invoke: /send}\n    then: [{type: tool_was_caled, tool: x}]\n",
        6,
        13,
        "unknown assertion type 'tool_was_caled' (did you mean 'tool_was_called'?)",
    ),
    "outline-column-unused": (
        "case.clawspec.yaml",
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n  - name: drafts\n'
        "    examples:\n      - {id: a, topic: A, tags: [x], description: d}\n"
        "      - {topic: B, colour: red}\n"
        '    when: {invoke: "/send {{vars.topic}}"}\n    then: [{type: file_absent, path: x}]\n',
        7,
        20,
        "row key 'colour' is used by no '{{vars.colour}}' in scenario 'drafts'",
    ),
}


def _write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    folder = tmp_path / "send-newsletter"
    folder.mkdir(exist_ok=True)
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


# The environment the rules see: GOOD_SKILL's one `requires.env` is set.
ENVIRON = {"RESEND_API_KEY": "re_test_key"}


def _findings(path: Path, rule_id: str | None = None) -> list[Finding]:
    findings = lint_files([path], options=LintOptions(environ=ENVIRON)).findings
    return [f for f in findings if rule_id is None or f.rule == rule_id]


def test_every_rule_has_a_case() -> None:
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_reports_the_problem_at_its_position(tmp_path: Path, rule_id: str) -> None:
    name, text, line, column, message = CASES[rule_id]
    found = _findings(_write(tmp_path, name, text), rule_id)
    assert len(found) == 1, found
    assert (found[0].line, found[0].column) == (line, column)
    assert message in found[0].message
    assert found[0].severity == RULES[rule_id].severity


@pytest.mark.parametrize(("name", "text"), [("SKILL.md", GOOD_SKILL), ("SOUL.md", GOOD_SOUL)])
def test_a_good_file_has_no_findings(tmp_path: Path, name: str, text: str) -> None:
    assert _findings(_write(tmp_path, name, text)) == []


def test_crlf_file_is_read_with_the_same_positions(tmp_path: Path) -> None:
    text = CASES["name-not-kebab-case"][1].replace("\n", "\r\n")
    found = _findings(_write(tmp_path, "SKILL.md", text), "name-not-kebab-case")
    assert [(f.line, f.column) for f in found] == [(2, 1)]


def test_binary_file_gets_one_clear_finding_and_nothing_else(tmp_path: Path) -> None:
    found = _findings(_write(tmp_path, "SOUL.md", b"\x00\x01\x02binary"))
    assert [(f.rule, f.message) for f in found] == [
        ("file-unreadable", "binary file (NUL bytes): expected UTF-8 Markdown")
    ]


def test_latin1_file_is_reported_as_not_utf8(tmp_path: Path) -> None:
    found = _findings(_write(tmp_path, "SKILL.md", "---\nname: caf\xe9\n---\n".encode("latin-1")))
    assert [f.rule for f in found] == ["file-unreadable"]
    assert found[0].message == "not UTF-8 text (byte 0xe9 at offset 13)"


def test_empty_soul_is_one_finding(tmp_path: Path) -> None:
    assert [f.rule for f in _findings(_write(tmp_path, "SOUL.md", "\n  \n"))] == ["file-empty"]


def test_unclosed_frontmatter_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    found = _findings(_write(tmp_path, "SKILL.md", "---\nname: x\nno end\n"))
    assert [(f.rule, f.line, f.message) for f in found] == [
        ("frontmatter-invalid", 1, "frontmatter opened with '---' on line 1 is never closed")
    ]


def test_secret_is_never_echoed_in_full(tmp_path: Path) -> None:
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    found = _findings(_write(tmp_path, "SOUL.md", GOOD_SOUL + pem), "secret-in-file")
    assert [(f.line, f.message) for f in found] == [
        (11, "looks like a PEM private key ('----…'); use the environment")
    ]


def test_openclaw_json5_style_metadata_is_understood(tmp_path: Path) -> None:
    """OpenClaw's bundled skills write metadata as an inline JSON5-like mapping."""
    text = (
        '---\nname: send-newsletter\ndescription: "Sends."\nmetadata:\n  {\n    "openclaw":\n'
        '      {\n        "requires": { "bins": ["gh"] },\n        "primaryEnv": "GH_TOKEN",\n'
        "      },\n  }\n---\n\n```bash\ngh pr list  # uses $GH_TOKEN\n```\n"
    )
    assert _findings(_write(tmp_path, "SKILL.md", text)) == []


def test_a_skill_without_a_name_is_a_warning_since_openclaw_uses_its_folder(
    tmp_path: Path,
) -> None:
    text = "---\ndescription: Drafts things.\n---\nBody.\n"
    found = _findings(_write(tmp_path, "SKILL.md", text))
    assert [(f.rule, f.severity) for f in found] == [("name-missing", "warning")]
    assert "folder name 'send-newsletter'" in found[0].message
    assert main(["lint", str(tmp_path)]) == 0  # a warning: lint passes unless --strict


def test_a_shell_comment_is_not_a_command(tmp_path: Path) -> None:
    text = GOOD_SKILL.replace(
        "resend send --to members",
        "resend send --to members  # retries once; exits 1 on failure && then stops\n"
        "# first line comment; exits too\n"
        "resend list | sort   #| wc; exits",
    )
    assert _findings(_write(tmp_path, "SKILL.md", text), "bin-undeclared") == []
    # A command after a `#` that does not start a word is still a command.
    text = GOOD_SKILL.replace("resend send --to members", "echo a#b; gh issue list")
    found = _findings(_write(tmp_path, "SKILL.md", text), "bin-undeclared")
    assert [f.message.split("'")[1] for f in found] == ["gh"]


def test_requirements_used_by_the_bundled_scripts_are_used(tmp_path: Path) -> None:
    text = GOOD_SKILL.replace(
        "{bins: [resend], env: [RESEND_API_KEY]}",
        "{bins: [resend, gh, ffmpeg], env: [RESEND_API_KEY, GH_TOKEN, STALE_KEY]}",
    )
    path = _write(tmp_path, "SKILL.md", text)
    scripts = path.parent / "scripts"
    (scripts / "lib").mkdir(parents=True)
    (scripts / "publish.sh").write_text('#!/bin/sh\ngh release create "$1"\n', "utf-8")
    (scripts / "lib" / "auth.py").write_text("import os\nTOKEN = os.environ['GH_TOKEN']\n", "utf-8")
    (scripts / "logo.png").write_bytes(b"\x89PNG\x00ffmpeg")  # binary: not a use
    found = _findings(path, "requirement-unused")
    assert sorted(f.message.split("'")[1] for f in found) == ["STALE_KEY", "ffmpeg"]
    # The same skill without its scripts/ folder: gh and GH_TOKEN are unused again.
    for script in sorted(scripts.rglob("*"), reverse=True):
        script.unlink() if script.is_file() else script.rmdir()
    found = _findings(path, "requirement-unused")
    assert sorted(f.message.split("'")[1] for f in found) == [
        "GH_TOKEN",
        "STALE_KEY",
        "ffmpeg",
        "gh",
    ]


def test_an_unused_column_of_a_data_file_is_reported_at_the_examples_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    contract = _write(
        tmp_path,
        "case.clawspec.yaml",
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n  - name: drafts\n'
        "    examples: {file: cases.csv}\n"
        '    when: {invoke: "/send {{vars.topic}} {{ vars.size }}"}\n'
        "    then: [{type: file_absent, path: x}]\n",
    )
    (contract.parent / "cases.csv").write_text("id,topic,size,stale\na,A,1,z\n", "utf-8")
    found = _findings(contract, "outline-column-unused")
    assert [(f.line, f.column, f.message) for f in found] == [
        (
            5,
            22,
            "column 'stale' of send-newsletter/cases.csv is used by no '{{vars.stale}}' in "
            "scenario 'drafts' (a misspelt placeholder, or a column to remove)",
        )
    ]
    # Every column used: nothing to say.
    (contract.parent / "cases.csv").write_text("id,topic,size\na,A,1\n", "utf-8")
    assert _findings(contract, "outline-column-unused") == []

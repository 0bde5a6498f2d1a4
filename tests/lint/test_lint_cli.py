"""`clawspec lint` end to end: discovery, configuration, exit codes and every output form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.lint.rules import RULES
from tests.lint.test_rules import GOOD_SKILL, GOOD_SOUL

BAD_NAME = GOOD_SKILL.replace("name: send-newsletter", "name: Send_Newsletter")
LONG_DESCRIPTION = GOOD_SKILL.replace("Draft the weekly newsletter into memory/drafts.", "x" * 170)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skills" / "send-newsletter").mkdir(parents=True)
    (tmp_path / "agents" / "brand").mkdir(parents=True)
    (tmp_path / "skills" / "send-newsletter" / "SKILL.md").write_text(GOOD_SKILL, "utf-8")
    (tmp_path / "agents" / "brand" / "SOUL.md").write_text(GOOD_SOUL, "utf-8")
    (tmp_path / "clawspec.yaml").write_text("report_dir: reports\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RESEND_API_KEY", "re_test_key")  # GOOD_SKILL's requires.env
    return tmp_path


def _skill(project: Path, text: str) -> None:
    (project / "skills" / "send-newsletter" / "SKILL.md").write_text(text, "utf-8")


def test_clean_workspace_passes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint"]) == 0
    assert capsys.readouterr().out == "0 errors, 0 warnings in 2 files\n"


def test_an_unset_requires_env_is_a_warning_unless_openclaw_json_gives_it(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RESEND_API_KEY")
    assert main(["lint"]) == 0  # a warning: it may well be set where the contracts run
    out = capsys.readouterr().out
    assert (
        "skills/send-newsletter/SKILL.md:4:1: warning [env-unset] requires.env RESEND_API_KEY "
        "not set here: OpenClaw hides the skill from the agent where they are unset"
    ) in out
    assert main(["lint", "--strict"]) == 1
    capsys.readouterr()
    # OpenClaw injects a skill's `skills.entries.<name>.env` itself: nothing to say.
    config = '{skills: {entries: {"send-newsletter": {env: {RESEND_API_KEY: "re_x"}}}}}'
    (project / "openclaw.json").write_text(config, "utf-8")
    assert main(["lint"]) == 0
    assert capsys.readouterr().out == "0 errors, 0 warnings in 2 files\n"


def test_error_fails_with_file_line_column(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _skill(project, BAD_NAME)
    assert main(["lint"]) == 1
    out = capsys.readouterr().out
    assert (
        "skills/send-newsletter/SKILL.md:2:1: error [name-not-kebab-case] name "
        "'Send_Newsletter' is not kebab-case (e.g. 'send-newsletter')\n"
    ) in out
    assert out.endswith("1 error, 1 warning in 2 files\n")


def test_warnings_fail_only_with_strict(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _skill(project, LONG_DESCRIPTION)
    assert main(["lint"]) == 0
    assert "warning [description-too-long]" in capsys.readouterr().out
    assert main(["lint", "--strict"]) == 1


def test_rules_are_switched_off_and_regraded_in_clawspec_yaml(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _skill(project, BAD_NAME)
    (project / "clawspec.yaml").write_text(
        "lint:\n  rules:\n    name-not-kebab-case: warning\n    name-folder-mismatch: off\n",
        "utf-8",
    )
    assert main(["lint"]) == 0
    out = capsys.readouterr().out
    assert "warning [name-not-kebab-case]" in out
    assert "name-folder-mismatch" not in out
    (project / "clawspec.yaml").write_text(
        "lint:\n  rules:\n    name-not-kebab-case: false\n    name-folder-mismatch: false\n",
        "utf-8",
    )
    assert main(["lint", "--strict"]) == 0


def test_soul_sections_come_from_clawspec_yaml(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "clawspec.yaml").write_text("lint:\n  soul_sections: [Security Rules]\n", "utf-8")
    assert main(["lint", "agents", "--strict"]) == 1
    assert (
        "agents/brand/SOUL.md:1:1: warning [soul-section-missing] no '## Security Rules' section"
        in capsys.readouterr().out
    )


CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/send-newsletter}
scenarios:
  - name: drafts
    when: {invoke: "/send-newsletter"}
    then:
      - {type: artifact_exists, path: memory/drafts/weekly.md}
"""
BAD_LINT_SECTION = """\
report_dir: reports
lint:
  rules:
    no-such-rule: off
    bin-undeclard: warning
  ignore:
    - {rule: env-undeclard, path: 'skills/**'}
"""


@pytest.mark.parametrize("command", ["validate", "run", "lint"])
def test_a_bad_lint_section_is_a_config_error_of_every_command_where_it_is_written(
    project: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Checked with the rest of the configuration: `validate` finds the typo and `run` does
    not start, instead of it showing only once someone runs `lint`."""
    contract = project / "skills" / "send-newsletter" / "tests" / "scenarios.yaml"
    contract.parent.mkdir()
    contract.write_text(CONTRACT, "utf-8")
    config = project / "clawspec.yaml"
    config.write_text(BAD_LINT_SECTION, "utf-8")
    assert main([command]) == 2
    known = ", ".join(sorted(RULES))  # the lint rule registry's ids, all of them
    assert capsys.readouterr().err == (
        f"error: {config}:4:5: lint.rules: unknown rule 'no-such-rule' (known: {known})\n"
        f"{config}:5:5: lint.rules: unknown rule 'bin-undeclard' "
        "(did you mean 'bin-undeclared'?)\n"
        f"{config}:7:8: lint.ignore.0.rule: unknown rule 'env-undeclard' "
        "(did you mean 'env-undeclared'?)\n"
    )
    assert not (project / "reports").exists()  # nothing ran, no report was written
    config.write_text(
        "lint:\n  rules: {bin-undeclared: warning, body-empty: off}\n"
        "  ignore: [{rule: env-undeclared, path: 'skills/**'}]\n",
        "utf-8",
    )
    assert main(["validate"]) == 0


def test_a_rule_setting_that_is_no_severity_is_said_once_where_it_is_written(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project / "clawspec.yaml"
    config.write_text("lint:\n  rules:\n    body-empty: loud\n", "utf-8")
    assert main(["lint"]) == 2
    assert capsys.readouterr().err == (
        f"error: {config}:3:5: lint.rules.body-empty: expected off, false, true, error or "
        "warning, found 'loud'\n"
    )


def test_json_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _skill(project, BAD_NAME)
    assert main(["lint", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["errors"] == 1
    assert data["warnings"] == 1
    assert data["files"] == ["agents/brand/SOUL.md", "skills/send-newsletter/SKILL.md"]
    assert data["findings"][0] == {
        "rule": "name-not-kebab-case",
        "severity": "error",
        "file": "skills/send-newsletter/SKILL.md",
        "line": 2,
        "column": 1,
        "message": "name 'Send_Newsletter' is not kebab-case (e.g. 'send-newsletter')",
    }


def test_github_annotations_and_summary(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _skill(project, BAD_NAME)
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project))
    assert main(["lint"]) == 1
    out = capsys.readouterr().out
    assert (
        "::error file=skills/send-newsletter/SKILL.md,line=2,title=ClawSpec lint%3A "
        "name-not-kebab-case::name 'Send_Newsletter' is not kebab-case (e.g. 'send-newsletter')"
    ) in out
    assert "::warning file=skills/send-newsletter/SKILL.md,line=2," in out
    text = summary.read_text("utf-8")
    assert text.startswith("## ClawSpec lint: failed\n\n1 error, 1 warning in 2 files\n")
    assert "| error | `name-not-kebab-case` | `skills/send-newsletter/SKILL.md:2:1` | name " in text


def test_binary_and_empty_files_never_crash_the_command(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "skills" / "send-newsletter" / "SKILL.md").write_bytes(b"\x00\xff\xfe")
    (project / "agents" / "brand" / "SOUL.md").write_text("", "utf-8")
    assert main(["lint"]) == 1
    out = capsys.readouterr().out
    assert "agents/brand/SOUL.md:1:1: error [file-empty] the file is empty" in out
    assert "skills/send-newsletter/SKILL.md:1:1: error [file-unreadable] binary file" in out
    assert "Traceback" not in out


def test_a_huge_skill_file_is_a_finding_read_no_further(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SKILL.md of 30 MB took 18 s and 200 MB of memory to lint; now its first MiB is read."""
    skill = project / "skills" / "send-newsletter" / "SKILL.md"
    with skill.open("w", encoding="utf-8") as handle:
        handle.write("---\nname: send-newsletter\ndescription: x\n---\n")
        handle.write("a" * 30_000_000)
    assert main(["lint"]) == 1
    out = capsys.readouterr().out
    assert (
        "skills/send-newsletter/SKILL.md:1:1: error [file-unreadable] over 1,048,576 bytes, "
        "more than a skill's or an agent's instructions holds: not linted"
    ) in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["lint", "README.md"],
            "README.md: lint reads SKILL.md, SOUL.md and contract (YAML) files",
        ),
        (["lint", "missing"], "missing: no such file or folder"),
        (["lint", "reports"], "no SKILL.md, SOUL.md or contract found in reports"),
    ],
)
def test_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (project / "README.md").write_text("# x\n", "utf-8")
    (project / "reports").mkdir()
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_a_contract_whose_yaml_does_not_parse_is_never_linted_clean(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Keys given twice or a YAML syntax error: `validate` refuses the contract, so lint says
    so too (its other rules read valid YAML only); a data file's problem keeps its own place."""
    tests = project / "skills" / "send-newsletter" / "tests"
    (tests / "data").mkdir(parents=True)
    head = 'version: "1.0"\ntarget: {type: skill, path: skills/send-newsletter}\nscenarios:\n'
    (tests / "twice.clawspec.yaml").write_text(
        head + "  - name: one\n    when: {invoke: /x}\n    when: {invoke: /y}\n"
        "    then: [{type: artifact_exists, path: a.md, path: b.md}]\n",
        "utf-8",
    )
    (tests / "broken.clawspec.yaml").write_text(
        head + '  - name: one\n    when: {invoke: "/x"\n', "utf-8"
    )
    (tests / "rows.clawspec.yaml").write_text(
        head + '  - name: drafts\n    when: {invoke: "/x {{vars.topic}}"}\n'
        "    then: [{type: artifact_exists, path: a.md}]\n"
        "    examples: {file: data/rows.yaml}\n",
        "utf-8",
    )
    (tests / "data" / "rows.yaml").write_text("- {id: a, topic: A, topic: B}\n", "utf-8")
    assert main(["lint", "skills"]) == 1
    out = capsys.readouterr().out.splitlines()
    where = "skills/send-newsletter/tests"
    assert out[:-1] == [
        f"{where}/broken.clawspec.yaml:6:1: error [contract-invalid] invalid YAML: expected ',' "
        "or '}', but got '<stream end>' (while parsing a flow mapping at 5:11)",
        f"{where}/rows.clawspec.yaml:1:1: error [contract-invalid] {where}/data/rows.yaml:1:21: "
        "scenario 'drafts': duplicate key 'topic' (first given at 1:11): remove or rename one "
        "of them",
        f"{where}/twice.clawspec.yaml:6:5: error [contract-invalid] duplicate key 'when' (first "
        "given at 5:5): remove or rename one of them",
        f"{where}/twice.clawspec.yaml:7:48: error [contract-invalid] duplicate key 'path' (first "
        "given at 7:36): remove or rename one of them",
    ]


def test_a_contract_problem_is_pointed_at_in_a_file_whose_name_reads_like_a_place(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The problem's place travels as a value: a file name holding `:1:1: ` is not taken for
    the place (it was, and the problem was said at 1:1 with the whole message)."""
    tests = project / "skills" / "send-newsletter" / "tests"
    tests.mkdir(parents=True)
    (tests / "v:1:1: odd.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: skills/send-newsletter}\nscenarios:\n'
        "  - name: one\n    when: {invoke: /x}\n    then:\n      - type: file_exists\n",
        "utf-8",
    )
    assert main(["lint", "skills"]) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "[contract-invalid]" in x]
    assert line == (
        "skills/send-newsletter/tests/v:1:1: odd.clawspec.yaml:7:9: error [contract-invalid] "
        "scenario 'one', then[0] (file_exists): unknown assertion type 'file_exists' (did you "
        "mean 'file_present'?)"
    )


def test_an_unset_env_variable_is_left_to_validate_but_not_a_problem_said_beside_it(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lint job may lack the run's secrets: a `{{env.NAME}}` unset there is `validate`'s to
    say, in a scenario or an outline's row. A text whose other problem is said beside it is
    not skipped with it (it was, by the message's wording)."""
    monkeypatch.delenv("LINT_ONLY_TOKEN", raising=False)
    tests = project / "skills" / "send-newsletter" / "tests"
    tests.mkdir(parents=True)
    head = 'version: "1.0"\ntarget: {type: skill, path: skills/send-newsletter}\nscenarios:\n'
    (tests / "secret.clawspec.yaml").write_text(
        head + '  - name: one\n    when: {invoke: "/x {{env.LINT_ONLY_TOKEN}}"}\n'
        "    then: [{type: artifact_exists, path: a.md}]\n"
        '  - name: rows\n    when: {invoke: "/x {{vars.key}}"}\n'
        "    then: [{type: artifact_exists, path: a.md}]\n"
        '    examples: [{key: "{{env.LINT_ONLY_TOKEN}}"}]\n',
        "utf-8",
    )
    assert main(["lint", "skills"]) == 0
    assert capsys.readouterr().out == "0 errors, 0 warnings in 2 files\n"
    (tests / "secret.clawspec.yaml").write_text(
        head + '  - name: one\n    when: {invoke: "/x {{env.LINT_ONLY_TOKEN}} {{todya}}"}\n'
        "    then: [{type: artifact_exists, path: a.md}]\n",
        "utf-8",
    )
    assert main(["lint", "skills"]) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "[contract-invalid]" in x]
    assert line.startswith(
        "skills/send-newsletter/tests/secret.clawspec.yaml:5:20: error [contract-invalid] "
        "scenario 'one': unknown template variable '{{todya}}'"
    ), line
    assert "environment variable 'LINT_ONLY_TOKEN' is not set" in line

"""Contract loading through the real CLI: malformed files, discovery, error collection, templates.

Every `invalid/<case>.yaml` must make `clawspec validate` exit 2 and print exactly
`invalid/<case>.expected` on stderr (`file:line:column` at the offending key, at the
assertion's start for missing fields and "one of" rules, at the second occurrence of a duplicate
scenario name, at YAML's problem mark for syntax errors).

`python tests/contracts/test_loader.py --regen` rewrites the .expected files from what the code
prints now; read every changed position against the SPEC before committing it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.config.settings import DEFAULT_PATTERNS
from clawspec.contracts.discovery import discover

HERE = Path(__file__).parent
INVALID = HERE / "invalid"
VALID = HERE / "valid"
CASES = sorted(p.stem for p in INVALID.glob("*.yaml"))

VALID_CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/newsletter}
scenarios:
  - name: smoke
    given:
      - type: file_present
        path: SKILL.md
    when: {invoke: /send-newsletter}
    then:
      - type: artifact_exists
        path: out/{{today}}.md
"""


def _validate(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, str, str]:
    code = main(["validate", *paths])
    out, err = capsys.readouterr()
    return code, out, err


def _copy_case(case: str, workspace: Path) -> str:
    shutil.copy(INVALID / f"{case}.yaml", workspace / f"{case}.yaml")
    return f"{case}.yaml"


def test_invalid_corpus_covers_every_required_problem() -> None:
    assert len(CASES) >= 24
    missing = [c for c in CASES if not (INVALID / f"{c}.expected").is_file()]
    assert missing == []


@pytest.mark.parametrize("case", CASES)
def test_validate_rejects_malformed_contract_with_exact_location(
    case: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _copy_case(case, workspace)
    code, out, err = _validate(capsys, name)
    assert (code, out) == (2, "")
    assert err == (INVALID / f"{case}.expected").read_text(encoding="utf-8")


# Positions spelled out here as well, so a careless --regen cannot silently move them.
@pytest.mark.parametrize(
    ("case", "position", "fragment"),
    [
        ("yaml_tab_indent", "5:1", "invalid YAML: found character '\\t'"),
        # libyaml counts bytes: the column is the character's, after two-byte characters
        ("yaml_control_character", "5:17", "invalid YAML: character U+007F is not allowed"),
        # two names differing only by an escape would be one scenario in every report
        ("scenario_name_control_character", "7:5", "scenario 'dup\\x1b[0m': scenario name has"),
        ("yaml_bad_indent", "5:4", "invalid YAML: expected <block end>"),
        ("yaml_unclosed_quote", "9:1", "(while scanning a quoted scalar at 4:11)"),
        ("yaml_duplicate_key", "9:9", "duplicate key 'path'"),
        ("empty_file", "1:1", "found an empty file"),
        ("top_level_list", "1:1", "found list"),
        ("version_string_2", "1:1", "unsupported version '2.0': expected \"1.0\""),
        ("version_int_2", "1:1", 'unsupported version 2: expected "1.0"'),
        ("missing_version", "1:1", "missing field 'version'"),
        ("missing_target", "1:1", "missing field 'target'"),
        ("missing_scenarios", "1:1", "missing field 'scenarios'"),
        ("empty_scenarios", "3:1", "'scenarios' needs at least one scenario"),
        ("unknown_assertion_type", "7:9", "(did you mean 'file_present'?)"),
        ("missing_field", "7:9", "then[0] (file_present): missing field 'path'"),
        ("unknown_assertion_field", "9:9", "unknown field 'timeout' (allowed: path)"),
        ("flow_mapping_unknown_field", "7:45", "unknown field 'timout'"),
        ("unknown_scenario_field", "6:5", "scenario 'smoke': unknown field 'expect'"),
        ("artifact_contains_one_of", "7:9", "one of 'sections', 'fields' is required"),
        ("token_budget_one_of", "7:9", "one of 'max_total_tokens', 'max_input_tokens'"),
        ("model_used_both", "7:9", "exactly one of 'expected', 'not_expected' is required"),
        ("source_without_key", "7:9", "'source' and 'key' must be given together"),
        ("llm_call_count_min_above_max", "7:9", "min (5) is greater than max (2): no count"),
        ("state_file_both_paths", "7:9", "give either 'path' or 'state_path', not both"),
        ("duplicate_scenario_name", "9:5", "duplicate scenario name 'smoke'"),
        ("duplicate_name_not_first_key", "9:5", "duplicate scenario name 'smoke'"),
        ("unknown_template_variable", "8:15", "unknown template variable '{{tomorrow}}'"),
        ("unset_env_variable", "5:20", "environment variable 'CLAWSPEC_TEST_UNSET' is not set"),
        ("path_escapes_workspace", "8:15", "path '../../etc/passwd' climbs out of the workspace"),
        ("string_for_list", "8:9", "field 'vars': input should be a valid list"),
        ("tags_string_for_list", "5:5", "field 'tags': input should be a valid list"),
        ("abc_for_number", "9:9", "field 'timeout': input should be a valid number"),
        ("string_for_number_status", "9:9", "field 'expected_status': input should be a valid"),
        ("wrong_type_defaults_timeout", "4:3", "defaults: field 'timeout'"),
        ("mapping_for_string", "8:9", "field 'path': input should be a valid string, found dict"),
        ("empty_then", "6:5", "'then' needs at least one assertion"),
        ("missing_then", "4:5", "scenario 'smoke': missing field 'then'"),
        ("missing_assertion_type", "7:9", "then[0]: missing field 'type'"),
        ("assertion_not_mapping", "7:9", "found 'file_present'"),
        ("bad_target_type", "2:10", "target: field 'type': input should be 'skill' or 'agent'"),
        ("conversation_turns_and_when", "4:5", "'when' and 'turns' exclude each other"),
        ("conversation_empty_turns", "5:5", "'turns' needs at least one turn"),
        ("conversation_turn_without_say", "7:9", "turn 2: missing field 'say'"),
        ("conversation_blank_say", "6:14", "turn 1: 'say' is blank"),
        ("conversation_unknown_turn_field", "7:9", "turn 1: unknown field 'expect'"),
        ("conversation_reply_assertion_in_given", "6:16", "a reply assertion cannot be in"),
        ("conversation_bad_reply_pattern", "8:44", "'pattern' is not a regular expression"),
        ("conversation_without_assertions", "5:5", "a conversation needs at least one assertion"),
        ("stop_on_failure_one_message", "4:5", "'stop_on_failure' applies to conversations"),
    ],
)
def test_error_points_at_spec_position(
    case: str,
    position: str,
    fragment: str,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = _copy_case(case, workspace)
    code, _, err = _validate(capsys, name)
    first = err.splitlines()[0]
    assert code == 2
    assert first.startswith(f"error: {name}:{position}: ")
    assert fragment in first


def test_several_errors_in_one_file_are_all_reported_in_file_order(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _copy_case("several_errors_one_file", workspace)
    code, _, err = _validate(capsys, name)
    positions = re.findall(rf"^error: {name}:(\d+:\d+):", err, flags=re.MULTILINE)
    assert code == 2
    assert positions == ["8:15", "9:9", "11:5", "14:9", "16:9"]
    assert err.endswith("5 problem(s) found; nothing was run\n")


def test_a_null_key_is_named_with_the_files_other_problems(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`~:` (a null key) is a key as written: the schema names it and the file's other
    problems are still reported (it was one parse error that hid them)."""
    (workspace / "nulls.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\n~: oops\nscenarios:\n'
        "  - name: one\n    when: {invoke: /x}\n    then:\n      - type: file_present\n"
        "        null: 1\n",
        "utf-8",
    )
    code, _, err = _validate(capsys, "nulls.clawspec.yaml")
    assert code == 2
    assert err.splitlines() == [
        "error: nulls.clawspec.yaml:3:1: unknown field '~' (allowed: version, target, defaults, "
        "scenarios)",
        "error: nulls.clawspec.yaml:8:9: scenario 'one', then[0] (file_present): missing field "
        "'path'",
        "error: nulls.clawspec.yaml:9:9: scenario 'one', then[0] (file_present): unknown field "
        "'null' (allowed: path)",
        "3 problem(s) found; nothing was run",
    ], err


@pytest.mark.parametrize(
    ("case", "loc", "message"),
    [
        (
            "llm_call_count_min_above_max",
            "7:9",
            "min (5) is greater than max (2): no count can pass",
        ),
        ("state_file_both_paths", "7:9", "give either 'path' or 'state_path', not both"),
    ],
)
def test_impossible_assertion_fields_are_load_errors_of_the_real_loader(
    case: str, loc: str, message: str, tmp_path: Path
) -> None:
    from clawspec.contracts.loader import load_contracts
    from clawspec.errors import ContractError

    path = tmp_path / f"{case}.yaml"
    shutil.copy(INVALID / f"{case}.yaml", path)
    with pytest.raises(ContractError) as caught:
        load_contracts([path], tmp_path, {})
    [error] = caught.value.messages
    assert error.startswith(f"{path}:{loc}: scenario 'smoke', then[0] (")
    assert error.endswith(message)


def test_errors_at_one_position_come_in_the_same_order_whatever_the_hash_seed(
    workspace: Path,
) -> None:
    # Two positions with two messages each: a set's order depends on PYTHONHASHSEED (1 and 2
    # gave different orders before the loader kept the order the errors were found in).
    name = _copy_case("several_errors_one_position", workspace)
    runs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "clawspec", "validate", name],
            cwd=workspace,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 2
        runs.append(done.stderr)
    positions = re.findall(rf"^error: {name}:(\d+:\d+):", runs[0], flags=re.MULTILINE)
    assert positions == ["7:9", "7:9", "8:5", "8:5"]
    assert len(set(runs[0].splitlines())) == 5  # distinct messages at each position
    assert runs[0] == runs[1] == (INVALID / f"{name[:-5]}.expected").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "case",
    ["yaml_tab_indent", "duplicate_scenario_name", "missing_field", "llm_call_count_min_above_max"],
)
def test_validate_subprocess_exits_2_with_error_on_stderr(case: str, workspace: Path) -> None:
    name = _copy_case(case, workspace)
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "validate", name],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (INVALID / f"{case}.expected").read_text(encoding="utf-8")


def test_run_refuses_invalid_contract_and_runs_nothing(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _copy_case("missing_field", workspace)
    code = main(["run", name, "--gateway-base-url", "http://127.0.0.1:9"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.endswith("2 problem(s) found; nothing was run\n")
    assert not (workspace / "reports").exists()


def test_errors_of_every_file_are_collected_before_exit(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _copy_case("missing_version", workspace)
    second = _copy_case("unknown_assertion_field", workspace)
    (workspace / "good.yaml").write_text(VALID_CONTRACT, encoding="utf-8")
    code, _, err = _validate(capsys, first, "good.yaml", second)
    assert code == 2
    assert err.splitlines() == [
        f"error: {first}:1:1: missing field 'version'",
        f"error: {second}:9:9: scenario 'smoke', then[0] (file_present): "
        "unknown field 'timeout' (allowed: path)",
        "2 problem(s) found; nothing was run",
    ]


def test_valid_contract_passes_validate_with_exit_0(
    write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_contract(VALID_CONTRACT)
    code, out, err = _validate(capsys, str(path))
    assert (code, err) == (0, "")
    assert out == "1 contract(s), 1 scenario(s), 2 assertion(s): valid\n"


@pytest.mark.parametrize("case", sorted(p.name for p in VALID.glob("*.yaml")))
def test_valid_corpus_passes_validate(
    case: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(VALID / case, workspace / case)
    code, out, err = _validate(capsys, case)
    assert (code, err) == (0, "")
    assert out.endswith(": valid\n")


def test_state_file_path_escape_is_a_load_error(
    write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_contract(
        VALID_CONTRACT + "      - type: state_file\n        state_path: ../../etc/passwd\n"
    )
    code, _, err = _validate(capsys, path.name)
    assert code == 2
    assert "13:21: scenario 'smoke', then[1] (state_file): field 'state_path'" in err


# --- discovery ----------------------------------------------------------------------------


@pytest.fixture
def project(workspace: Path) -> Path:
    """A project tree with contracts where the default patterns find them, and decoys."""
    files = {
        "skills/newsletter/tests/scenarios.yaml": VALID_CONTRACT,
        "agents/marketing/brand/tests/scenarios.yaml": VALID_CONTRACT,
        "checks/smoke.clawspec.yaml": VALID_CONTRACT,
        "top.clawspec.yaml": VALID_CONTRACT,
        # Not contracts by the default patterns:
        "skills/newsletter/scenarios.yaml": "not: [a contract",
        "skills/newsletter/tests/other.yaml": "not: [a contract",
        # Pruned folders, even though the names match:
        "node_modules/pkg/x.clawspec.yaml": "not: [a contract",
        ".venv/lib/y.clawspec.yaml": "not: [a contract",
        "skills/z/node_modules/tests/scenarios.yaml": "not: [a contract",
    }
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return workspace


def test_discover_finds_default_patterns_and_skips_pruned_folders(project: Path) -> None:
    found = [p.relative_to(project).as_posix() for p in discover([project], DEFAULT_PATTERNS)]
    assert sorted(found) == [
        "agents/marketing/brand/tests/scenarios.yaml",
        "checks/smoke.clawspec.yaml",
        "skills/newsletter/tests/scenarios.yaml",
        "top.clawspec.yaml",
    ]


def test_validate_folder_loads_only_discovered_contracts(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _validate(capsys, ".")
    assert (code, err) == (0, "")
    assert out == "4 contract(s), 4 scenario(s), 8 assertion(s): valid\n"


def test_validate_subfolder_finds_its_scenarios_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _validate(capsys, "skills/newsletter")
    assert (code, err) == (0, "")
    assert out == "1 contract(s), 1 scenario(s), 2 assertion(s): valid\n"


def test_unreadable_contracts_are_load_errors_named_where_they_were_found(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to itself, a link to nothing and bytes that are not UTF-8: each that file's load
    error (named as found, at a line and column where there is one), never a crash."""
    (workspace / "loop.clawspec.yaml").symlink_to("loop.clawspec.yaml")
    (workspace / "dangling.clawspec.yaml").symlink_to("missing.yaml")
    (workspace / "latin1.clawspec.yaml").write_bytes(b'version: "1.0"\nname: caf\xe9\n')
    code, out, err = _validate(capsys, ".")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "error: dangling.clawspec.yaml: cannot read contract: No such file or directory",
        "error: latin1.clawspec.yaml:2:10: not UTF-8 text: byte 0xe9 cannot be read as UTF-8 "
        "(save the file as UTF-8)",
        "error: loop.clawspec.yaml: cannot read contract: Too many levels of symbolic links",
        "3 problem(s) found; nothing was run",
    ]


def test_validate_folder_without_contracts_is_usage_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "empty").mkdir()
    code, _, err = _validate(capsys, "empty")
    assert code == 2
    assert err.startswith("error: empty: no contract files found (patterns: skills/**/")


def test_a_config_file_in_another_folder_says_the_workspace_is_its_folder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--config ci/x.yaml` makes ci/ the workspace: the contracts' folder is outside it, so
    its files match by their path inside the folder given; the error says so and what to set."""
    (project / "ci").mkdir()
    (project / "ci" / "upgrade.yaml").write_text("report_dir: out\n", encoding="utf-8")
    code, _, err = _validate(capsys, "skills", "--config", "ci/upgrade.yaml")
    assert code == 2
    assert "skills is outside the workspace" in err and "ci (the config file's folder" in err
    assert "set `workspace:` in the config file (e.g. `workspace: ..`)" in err
    (project / "ci" / "upgrade.yaml").write_text("workspace: ..\n", encoding="utf-8")
    code, out, err = _validate(capsys, "skills", "--config", "ci/upgrade.yaml")
    assert (code, err) == (0, ""), err
    assert out.endswith(": valid\n")


def test_a_path_climbing_out_through_an_environment_value_is_a_load_error(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`{{env.UPDIR}}` is known before the run: a path that climbs out with its value is a load
    error at its place (the run sent the agent's message first, then the assertion erred), and
    the message never shows the value (an environment variable may be a secret)."""
    monkeypatch.setenv("UPDIR", "../../..")
    monkeypatch.setenv("INSIDE", "out")
    (workspace / "up.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\nscenarios:\n  - name: s\n'
        '    when: {invoke: "go"}\n    then:\n'
        '      - {type: artifact_exists, path: "{{env.UPDIR}}/etc/passwd"}\n'
        '      - {type: artifact_exists, path: "{{env.INSIDE}}/{{today}}.md"}\n',
        encoding="utf-8",
    )
    code, _, err = _validate(capsys, "up.clawspec.yaml")
    assert code == 2
    assert (
        "up.clawspec.yaml:7:39: scenario 's', then[0] (artifact_exists): field 'path': path "
        "'{{env.UPDIR}}/etc/passwd' climbs out of the workspace with the environment's values"
    ) in err, err
    assert "../../.." not in err and "then[1]" not in err


PATTERNS_NOW = (
    "(now: skills/**/tests/scenarios.yaml, agents/**/tests/scenarios.yaml, **/*.clawspec.yaml)"
)
# A contract saved under a name no default pattern matches, with a typo in an assertion type.
MISNAMED = VALID_CONTRACT.replace("artifact_exists", "artifact_exsts")


def test_validate_warns_of_a_contract_no_pattern_matches(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A YAML file with top-level `version` and `scenarios` that no pattern matches is named,
    with how to include it; YAML files that are not contracts are not."""
    (project / "skills/hello/tests").mkdir(parents=True)
    (project / "skills/hello/tests/greeting.yaml").write_text(MISNAMED, encoding="utf-8")
    (project / "skills/hello/settings.yaml").write_text("version: 2\nname: x\n", "utf-8")
    (project / "skills/hello/steps.yml").write_text("steps:\n  scenarios: []\n", "utf-8")
    code, out, err = _validate(capsys, "skills/")
    assert (code, out) == (0, "1 contract(s), 1 scenario(s), 2 assertion(s): valid\n")
    assert err == (
        "warning: skills/hello/tests/greeting.yaml looks like a contract (top-level version and "
        "scenarios) but matches no scenario pattern, so it was not loaded. To include it, name it "
        "*.clawspec.yaml, give the file to the command, or add a pattern to scenario_patterns in "
        f"clawspec.yaml {PATTERNS_NOW}\n"
    )
    # Given to the command, it is loaded (and its typo found), without the warning.
    code, _, err = _validate(capsys, "skills/", "skills/hello/tests/greeting.yaml")
    assert code == 2
    assert "unknown assertion type 'artifact_exsts'" in err and "warning" not in err
    # A pattern that matches it: loaded, no warning.
    config = "report_dir: reports\nscenario_patterns: ['skills/**/tests/*.yaml']\n"
    (project / "clawspec.yaml").write_text(config, encoding="utf-8")
    code, _, err = _validate(capsys, "skills/")
    assert code == 2
    assert "unknown assertion type 'artifact_exsts'" in err and "warning" not in err


def test_many_ignored_contracts_are_counted_and_the_first_ten_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project / "skills/newsletter/tests/cases"
    folder.mkdir()
    for n in range(12):
        (folder / f"case{n:02}.yml").write_text(MISNAMED, encoding="utf-8")
    code, _, err = _validate(capsys, ".")
    named = ", ".join(f"skills/newsletter/tests/cases/case{n:02}.yml" for n in range(10))
    assert code == 0
    assert err == (
        "warning: 12 files look like contracts (top-level version and scenarios) but match no "
        f"scenario pattern, so they were not loaded: {named}, and 2 more. To include them, name "
        "them *.clawspec.yaml, give the file to the command, or add a pattern to "
        f"scenario_patterns in clawspec.yaml {PATTERNS_NOW}\n"
    )


def test_a_folder_holding_only_ignored_contracts_is_a_usage_error_naming_them(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "checks").mkdir()
    (workspace / "checks/greeting.yaml").write_text(MISNAMED, encoding="utf-8")
    code, out, err = _validate(capsys, "checks")
    assert (code, out) == (2, "")
    assert err == (
        "error: checks: no contract files found; checks/greeting.yaml looks like a contract "
        "(top-level version and scenarios) but matches no scenario pattern, so it was not "
        "loaded. To include it, name it *.clawspec.yaml, give the file to the command, or add a "
        f"pattern to scenario_patterns in clawspec.yaml {PATTERNS_NOW}\n"
    )


def test_run_warns_of_an_ignored_contract_too(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "skills/newsletter/tests/greeting.yaml").write_text(MISNAMED, encoding="utf-8")
    assert main(["run", "skills", "--dry-run"]) == 0
    _, err = capsys.readouterr()
    assert err.startswith(
        "warning: skills/newsletter/tests/greeting.yaml looks like a contract (top-level "
    )


@pytest.mark.parametrize("command", [["validate"], ["run", "--dry-run"]])
def test_on_github_actions_an_ignored_contract_is_a_warning_annotation_on_the_file(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    (project / "skills/newsletter/tests/greeting.yaml").write_text(MISNAMED, encoding="utf-8")
    (project / "skills/newsletter/tests/other.yml").write_text(MISNAMED, encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project.parent))  # the repository's root
    assert main([*command, "skills"]) == 0
    out, err = capsys.readouterr()
    warnings = [line for line in out.splitlines() if line.startswith("::warning ")]
    folder = f"{project.name}/skills/newsletter/tests"
    # One per file, each at its path from the repository root, saying it of that file alone.
    assert warnings == [
        f"::warning file={folder}/greeting.yaml,title=ClawSpec%3A not loaded::"
        "skills/newsletter/tests/greeting.yaml looks like a contract (top-level version and "
        "scenarios) but matches no scenario pattern, so it was not loaded. To include it, name it "
        "*.clawspec.yaml, give the file to the command, or add a pattern to scenario_patterns in "
        f"clawspec.yaml {PATTERNS_NOW}",
        f"::warning file={folder}/other.yml,title=ClawSpec%3A not loaded::"
        "skills/newsletter/tests/other.yml looks like a contract (top-level version and "
        "scenarios) but matches no scenario pattern, so it was not loaded. To include it, name it "
        "*.clawspec.yaml, give the file to the command, or add a pattern to scenario_patterns in "
        f"clawspec.yaml {PATTERNS_NOW}",
    ]
    assert "looks like a contract" not in err  # said once, as the annotation
    # GitLab CI (and Jenkins) read the log: the plain warning line.
    monkeypatch.delenv("GITHUB_ACTIONS")
    monkeypatch.setenv("GITLAB_CI", "true")
    assert main([*command, "skills"]) == 0
    out, err = capsys.readouterr()
    assert "::warning" not in out
    assert err.startswith("warning: 2 files look like contracts (top-level version and scenarios)")


def test_the_run_reporter_annotates_an_ignored_contract_on_github_actions(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from clawspec.api import load
    from clawspec.reports.terminal import TerminalReporter

    (project / "skills/newsletter/tests/greeting.yaml").write_text(MISNAMED, encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project))
    stream = io.StringIO()
    load(["skills"], on_warning=TerminalReporter(stream, colour=False).on_warning)
    assert stream.getvalue().startswith(
        "::warning file=skills/newsletter/tests/greeting.yaml,title=ClawSpec%3A not loaded::"
        "skills/newsletter/tests/greeting.yaml looks like a contract"
    )
    assert capsys.readouterr().err == ""


def test_validate_missing_path_is_usage_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _validate(capsys, "nope.yaml")
    assert (code, err) == (2, "error: nope.yaml: no such file or folder\n")


# --- templates (through `clawspec run --dry-run`) -------------------------------------------

TEMPLATED = """\
version: "1.0"
target: {type: skill, path: skills/newsletter}
scenarios:
  - name: templated
    given:
      - type: file_absent
        path: out/{{today}}-{{run_id}}.md
    when: {invoke: "/send {{run_id}} for {{env.CLAWSPEC_T_AUDIENCE}}"}
    then:
      - type: log_entry
        path: logs/{{run_id}}.log
        pattern: "{{scenario}} {{target}}"
"""


def test_dry_run_renders_today_run_id_and_env_consistently(
    write_contract: Callable[..., Path],
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "clawspec.yaml").write_text("report_dir: reports\ntimezone: UTC\n")
    monkeypatch.setenv("CLAWSPEC_T_AUDIENCE", "sunday-service")
    path = write_contract(TEMPLATED)
    code = main(["run", "--dry-run", path.name])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    run_id = re.search(r"run id (\w+)\)", out).group(1)  # type: ignore[union-attr]
    today = datetime.now(UTC).date().isoformat()
    assert f"  given[0] file_absent: path='out/{today}-{run_id}.md'\n" in out
    assert re.search(rf"^  when  \w+: /send {run_id} for sunday-service$", out, re.MULTILINE)
    assert (
        f"  then[0] log_entry: path='logs/{run_id}.log', pattern='templated skills/newsletter'\n"
        in out
    )


def test_each_scenario_gets_its_own_run_id(
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLAWSPEC_T_AUDIENCE", "all")
    second = TEMPLATED.split("scenarios:\n", 1)[1].replace("templated", "second")
    path = write_contract(TEMPLATED + second)
    code = main(["run", "--dry-run", path.name])
    out = capsys.readouterr().out
    run_ids = re.findall(r"run id (\w+)\)", out)
    invoked = re.findall(r"when  \w+: /send (\w+) for all", out)
    assert code == 0
    assert len(run_ids) == 2
    assert run_ids[0] != run_ids[1]
    assert invoked == run_ids


def test_env_template_with_unset_variable_names_it(
    write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_contract(TEMPLATED)
    code, _, err = _validate(capsys, path.name)
    assert code == 2
    assert err.splitlines()[0] == (
        f"error: {path.name}:8:20: scenario 'templated': environment variable "
        "'CLAWSPEC_T_AUDIENCE' is not set ({{env.CLAWSPEC_T_AUDIENCE}})"
    )


def test_results_taken_in_any_order_load_in_file_order(tmp_path: Path) -> None:
    # Parsing ahead hands files over as they are ready (the child's from the front, the
    # parent's own from the back): contracts and errors still come in file order.
    from clawspec.contracts.loader import load_contracts
    from clawspec.contracts.reading import parsed_here
    from clawspec.errors import ContractError

    head = 'version: "1.0"\ntarget: {type: skill, path: skills/s}\nscenarios:\n'
    scenario = "  - {{name: s{i}, when: {{invoke: go}}, then: [{{type: tool_was_called{extra}}}]}}"
    scenario += "\n"
    files = []
    for i in range(4):
        extra = ", x: 1" if i in (1, 3) else ", tool: write"
        files.append(tmp_path / f"c{i}.clawspec.yaml")
        files[-1].write_text(head + scenario.format(i=i, extra=extra), encoding="utf-8")
    backwards = list(reversed(list(parsed_here(files))))
    with pytest.raises(ContractError) as caught:
        load_contracts(files, tmp_path, {}, backwards)
    where = [m.split(": scenario")[0] for m in caught.value.messages]
    assert where == [f"{files[n]}:4:{column}" for n in (1, 3) for column in (43, 67)]
    for broken in (1, 3):
        files[broken].write_text(head + scenario.format(i=broken, extra=", tool: w"), "utf-8")
    loaded = load_contracts(files, tmp_path, {}, reversed(list(parsed_here(files))))
    assert [c.contract.scenarios[0].name for c in loaded] == ["s0", "s1", "s2", "s3"]


def _regen() -> None:
    """Rewrite every invalid/<case>.expected from the current CLI output."""
    import os
    import tempfile
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    for name in list(os.environ):
        if name.startswith("CLAWSPEC_"):
            del os.environ[name]
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "clawspec.yaml").write_text("report_dir: reports\n", encoding="utf-8")
            _copy_case(case, root)
            cwd = Path.cwd()
            os.chdir(root)
            err = StringIO()
            try:
                with redirect_stdout(StringIO()), redirect_stderr(err):
                    code = main(["validate", f"{case}.yaml"])
            finally:
                os.chdir(cwd)
        if code != 2:
            print(f"{case}: exit {code}, not 2 — fix the case")
            continue
        (INVALID / f"{case}.expected").write_text(err.getvalue(), encoding="utf-8")
        print(f"{case}: {err.getvalue().splitlines()[0]}")


if __name__ == "__main__" and "--regen" in sys.argv:
    _regen()


def test_a_markdown_file_given_to_validate_is_said_to_be_no_contract(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\n# Hi\n", "utf-8")
    code, _, err = _validate(capsys, "SKILL.md")
    assert code == 2 and "such as a SKILL.md, is not a contract" in err


def test_every_duplicate_key_of_a_file_is_reported_at_once_with_its_other_problems(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run names each key given twice (and where it was first given) and the problems
    of the rest of the file, in file order: the user fixes them all in one go."""
    name = _copy_case("yaml_duplicate_keys_several", workspace)
    code, out, err = _validate(capsys, name)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {name}:6:5: duplicate key 'when' (first given at 5:5): "
        "remove or rename one of them",
        f"error: {name}:10:9: duplicate key 'path' (first given at 9:9): "
        "remove or rename one of them",
        f"error: {name}:12:5: duplicate key 'name' (first given at 11:5): "
        "remove or rename one of them",
        f"error: {name}:17:9: scenario 'other', then[0] (file_present): unknown field 'timout' "
        "(allowed: path)",
        "4 problem(s) found; nothing was run",
    ]


def test_a_duplicate_key_inside_a_value_given_twice_is_reported_too(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second value is not used, but a key given twice inside it is a mistake to fix."""
    (workspace / "case.clawspec.yaml").write_text(
        VALID_CONTRACT + "    when: {invoke: again, invoke: twice}\n", encoding="utf-8"
    )
    code, _, err = _validate(capsys, "case.clawspec.yaml")
    positions = re.findall(r"case\.clawspec\.yaml:(\d+:\d+): duplicate key '(\w+)'", err)
    assert code == 2
    assert positions == [("12:5", "when"), ("12:27", "invoke")]
    assert err.endswith("2 problem(s) found; nothing was run\n")

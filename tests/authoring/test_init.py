"""`clawspec init` on a workspace with two skills and two agents (no gateway; the e2e test runs
the generated contracts on a real one)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from clawspec.api import validate
from clawspec.authoring.workspace import discover_workspace, skill_trigger
from clawspec.cli import main
from tests.support.openclaw_workspace import make_workspace

EXPECTED = [
    "clawspec.yaml",
    ".clawspec/contract.schema.json",
    ".clawspec/config.schema.json",
    "skills/send-newsletter/tests/scenarios.yaml",
    "skills/weekly_report/tests/scenarios.yaml",
    "agents/brand/tests/scenarios.yaml",
    "agents/support/tests/scenarios.yaml",
    ".github/workflows/clawspec.yml",
    ".gitignore",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "deep" / "nested" / "ws")


def _contract(root: Path, key: str) -> dict:
    return yaml.safe_load((root / key / "tests" / "scenarios.yaml").read_text("utf-8"))


def test_init_writes_every_file(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(root)]) == 0
    out = capsys.readouterr().out
    for relative in EXPECTED:
        assert (root / relative).is_file()
        assert f"created  {relative}" in out
    assert "next: clawspec validate && clawspec run --bring-up" in out
    # ... and bless, whose guide section the hint names.
    assert "clawspec bless CONTRACT --scenario NAME" in out
    assert main(["docs", "writing-contracts-from-good-runs"]) == 0
    assert "proposes the `then` items that" in capsys.readouterr().out


def test_every_yaml_file_starts_with_a_schema_modeline_that_resolves(root: Path) -> None:
    main(["init", str(root)])
    for relative in (p for p in EXPECTED if p.endswith((".yaml", ".yml"))):
        first, second = (root / relative).read_text("utf-8").splitlines()[:2]
        assert first.startswith("# yaml-language-server: $schema="), relative
        target = first.split("$schema=", 1)[1]
        assert second == f"# $schema: {target}", relative  # JetBrains' form
        if not target.startswith("https://"):
            assert (root / relative).parent.joinpath(target).resolve().is_file(), relative


def test_generated_contracts_load_and_match_the_schema(root: Path) -> None:
    main(["init", str(root)])
    loaded = validate([root], environ={})
    assert len(loaded) == 4
    schema = json.loads((root / ".clawspec/contract.schema.json").read_text("utf-8"))
    for contract in loaded:
        jsonschema.Draft202012Validator(schema).validate(contract.doc.data)
        folder = contract.contract.target.path.split("/")[-1]
        assert [s.name for s in contract.contract.scenarios] == [
            f"{folder}-smoke",
            f"{folder}-negative",
        ]
        assert [s.tags for s in contract.contract.scenarios] == [["smoke"], ["negative"]]
    config = json.loads((root / ".clawspec/config.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(config).validate(
        yaml.safe_load((root / "clawspec.yaml").read_text("utf-8"))
    )


def test_agent_id_is_the_folder_name_and_no_absolute_path_is_written(root: Path) -> None:
    main(["init", str(root)])
    assert _contract(root, "agents/brand")["target"] == {
        "type": "agent",
        "path": "agents/brand",
        "agent_id": "brand",
    }
    for relative in EXPECTED:
        assert str(root) not in (root / relative).read_text("utf-8"), relative


def test_negative_scenario_log_assertions_name_the_log_and_the_run(root: Path) -> None:
    main(["init", str(root)])
    for key in ("skills/send-newsletter", "skills/weekly_report", "agents/brand", "agents/support"):
        contract = _contract(root, key)
        for scenario in contract["scenarios"]:
            for item in scenario["then"]:
                if item["type"] in ("tool_not_called", "tool_not_permitted"):
                    assert item["log_path"] == "{{gateway_log}}"
                    assert item["run_id"] == "{{run_id}}"
                if item["type"] == "log_entry":
                    assert (item["path"], item["run_id"]) == ("{{gateway_log}}", "{{run_id}}")
        negative = contract["scenarios"][1]["then"]
        assert [a["type"] for a in negative] == ["tool_not_called"]


def test_declared_tools_become_tool_not_permitted(root: Path) -> None:
    main(["init", str(root)])
    skill = _contract(root, "skills/send-newsletter")["scenarios"][0]["then"]
    assert {"type": "tool_not_permitted", "allowed_tools": ["read", "write"]}.items() <= (
        next(a for a in skill if a["type"] == "tool_not_permitted").items()
    )
    agent = _contract(root, "agents/brand")["scenarios"][0]["then"]
    assert next(a for a in agent if a["type"] == "tool_not_permitted")["allowed_tools"] == ["read"]
    undeclared = _contract(root, "agents/support")["scenarios"][0]["then"]
    assert "tool_not_permitted" not in [a["type"] for a in undeclared]


def test_skill_trigger_comes_from_frontmatter_or_folder(root: Path) -> None:
    main(["init", str(root)])
    assert _contract(root, "skills/send-newsletter")["target"]["trigger"] == "/send-newsletter"
    report = _contract(root, "skills/weekly_report")
    assert report["target"]["trigger"] == "/weekly_report"
    assert report["scenarios"][0]["when"]["invoke"].startswith("/weekly_report ")


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ({"command": "/draft"}, "/draft"),
        ({"command": "draft"}, "/draft"),
        ({"triggers": ["/one", "/two"]}, "/one"),
        ({"triggers": [{"command": "/from-list"}]}, "/from-list"),
        ({"triggers": "/single"}, "/single"),
        ({"name": "named-skill"}, "/named-skill"),
        ({}, "/folder"),
        ({"triggers": [{"description": "no command"}], "name": ""}, "/folder"),
    ],
)
def test_trigger_rules(front: dict, expected: str) -> None:
    assert skill_trigger(front, "folder") == expected


def test_openclaw_json_agents_without_a_folder_are_found(root: Path) -> None:
    (root / "openclaw.json").write_text(
        '// JSON5\n{agents: {entries: {main: {tools: {allow: ["message"]}}}, '
        'list: [{id: "legacy"}]}}',
        "utf-8",
    )
    found = {t.name: t for t in discover_workspace(root).agents}
    assert sorted(found) == ["brand", "legacy", "main", "support"]
    assert found["main"].source is None
    assert found["main"].tools == ("message",)
    main(["init", str(root)])
    contract = _contract(root, "agents/main")
    assert [a["type"] for a in contract["scenarios"][0]["given"]] == ["gateway_healthy"]
    # `message` is allowed for this agent, so the negative check uses another sending tool.
    assert contract["scenarios"][1]["then"][0]["tool"] == "sessions_send"


def test_init_twice_changes_nothing(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["init", str(root)])
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    stamps = {p: p.stat().st_mtime_ns for p in before}
    capsys.readouterr()
    assert main(["init", str(root)]) == 0
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert {p: p.stat().st_mtime_ns for p in before} == stamps
    out = capsys.readouterr().out
    assert out.count("unchanged  ") == len(EXPECTED)
    assert "created" not in out


def test_existing_files_give_a_dry_run_listing(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = "# my own config\nreport_dir: out\n"
    (root / "clawspec.yaml").write_text(mine, "utf-8")
    # Nothing written: a distinct exit code, so `clawspec init && git add .` stops here.
    assert main(["init", str(root)]) == 2
    out = capsys.readouterr().out
    assert "exists (kept)  clawspec.yaml" in out
    assert "would create  agents/brand/tests/scenarios.yaml" in out
    assert "1 file(s) already exist and differ; nothing was written" in out
    assert (root / "clawspec.yaml").read_text("utf-8") == mine
    assert not (root / "agents/brand/tests").exists()

    assert main(["init", str(root), "--skip-existing"]) == 0
    assert "kept (exists)  clawspec.yaml" in capsys.readouterr().out
    assert (root / "clawspec.yaml").read_text("utf-8") == mine
    assert (root / "agents/brand/tests/scenarios.yaml").is_file()

    assert main(["init", str(root), "--force"]) == 0
    assert "replaced  clawspec.yaml" in capsys.readouterr().out
    assert (root / "clawspec.yaml").read_text("utf-8") != mine


def test_the_report_folder_is_git_ignored_once(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Appended to an existing .gitignore (its last line unterminated), never twice."""
    (root / ".gitignore").write_text("node_modules/\n*.log", "utf-8")
    assert main(["init", str(root)]) == 0
    assert "appended to  .gitignore" in capsys.readouterr().out
    expected = "node_modules/\n*.log\n# ClawSpec's reports (clawspec run)\nclawspec-reports/\n"
    assert (root / ".gitignore").read_text("utf-8") == expected
    assert main(["init", str(root)]) == 0
    assert "unchanged  .gitignore" in capsys.readouterr().out
    assert (root / ".gitignore").read_text("utf-8") == expected


def test_a_gitignore_that_ignores_the_reports_already_is_left_alone(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / ".gitignore").write_text("/clawspec-reports\n", "utf-8")
    assert main(["init", str(root)]) == 0
    assert "unchanged  .gitignore" in capsys.readouterr().out
    assert (root / ".gitignore").read_text("utf-8") == "/clawspec-reports\n"


def test_a_new_gitignore_holds_only_the_report_folder(root: Path) -> None:
    assert main(["init", str(root)]) == 0
    text = (root / ".gitignore").read_text("utf-8")
    assert text == "# ClawSpec's reports (clawspec run)\nclawspec-reports/\n"
    assert yaml.safe_load((root / "clawspec.yaml").read_text("utf-8"))["report_dir"] == (
        "clawspec-reports"
    )


def test_dry_run_writes_nothing(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would create  clawspec.yaml" in out
    assert "would create  .gitignore" in out
    assert not (root / "clawspec.yaml").exists()
    assert not (root / ".gitignore").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["init", "nowhere"], "nowhere: no such folder"),
        (["init", ".", "--force", "--skip-existing"], "--force and --skip-existing exclude"),
        (["init", ".", "--openclaw-config", "x.json"], "--openclaw-config: no such file 'x.json'"),
    ],
)
def test_usage_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_broken_openclaw_json_is_a_note_not_a_crash(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "openclaw.json").write_text("{agents: ", "utf-8")
    assert main(["init", str(root)]) == 0
    assert "openclaw.json: cannot read OpenClaw config" in capsys.readouterr().out


def test_generated_workflow_passes_actionlint(root: Path) -> None:
    linter = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(linter).exists():
        pytest.skip("actionlint is not installed (scripts/test.sh installs it)")
    main(["init", str(root)])
    proc = subprocess.run(
        [linter, str(root / ".github/workflows/clawspec.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_generated_workflow_names_no_unpublished_action_and_explains_its_uses_line(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["init", str(root)])
    text = (root / ".github/workflows/clawspec.yml").read_text("utf-8")
    assert "clawspec/clawspec@v1" not in text
    step = yaml.safe_load(text)["jobs"]["clawspec"]["steps"][1]
    assert step["uses"] == "<owner>/clawspec@<commit-sha>"
    lines = text.splitlines()
    at = lines.index("        uses: <owner>/clawspec@<commit-sha>")
    comment = " ".join(line.strip().lstrip("# ") for line in lines[at - 5 : at])
    assert lines[at - 1].strip().startswith("#")
    assert "not published under a fixed action name" in comment
    assert "full commit SHA" in comment and "that you trust" in comment
    assert "uses: ./.github/actions/clawspec" in comment  # a vendored copy
    assert "uses: docker://<registry>/<image>:<tag>" in comment  # an image you built
    out = capsys.readouterr().out
    assert "note: .github/workflows/clawspec.yml: replace <owner>/clawspec@<commit-sha>" in out


def test_a_hostile_skill_name_still_makes_a_contract_that_validates(tmp_path: Path) -> None:
    """A SKILL.md `name` holding a line break (that would start a YAML key in the comment),
    an escape sequence, DEL and a line separator: init's contract is still one `validate`
    accepts, the name shown on one line."""
    skill = tmp_path / "ws" / "skills" / "odd"
    skill.mkdir(parents=True)
    name = "a\nfoo: bar \x1b]0;title\x07 \x7f\u2028 \u202eend"
    (skill / "SKILL.md").write_text(
        f"---\nname: {json.dumps(name)}\ndescription: odd one\n---\n# Odd\n", "utf-8"
    )
    assert main(["init", str(tmp_path / "ws")]) == 0
    text = (skill / "tests" / "scenarios.yaml").read_text("utf-8")
    assert "\nfoo: bar" not in text and "\x1b" not in text and "\x7f" not in text
    (contract,) = validate([tmp_path / "ws"], environ={})
    assert [s.name for s in contract.contract.scenarios] == [
        "a foo: bar ]0;title end-smoke",
        "a foo: bar ]0;title end-negative",
    ]


def test_in_a_folder_without_skills_the_next_step_is_a_contract_not_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`validate` would only say "no contract files found" there."""
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "next: clawspec validate" not in out
    assert "next: write a contract in skills/<name>/tests/scenarios.yaml" in out

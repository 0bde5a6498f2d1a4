"""`clawspec coverage` on a workspace with known gaps: exact numbers, nothing counted twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec.authoring.coverage import measure, parse_ratio
from clawspec.authoring.workspace import discover_workspace
from clawspec.cli import main
from clawspec.contracts.loader import load_contract
from tests.reports.factory import report, scenario
from tests.support.openclaw_workspace import make_workspace

NEWSLETTER = """version: "1.0"
target: {type: skill, path: skills/send-newsletter, trigger: /send-newsletter}
scenarios:
  - name: smoke
    when: {invoke: /send-newsletter}
    then:
      - {type: artifact_exists, path: out.md}
  - name: refuses
    tags: [negative]
    when: {invoke: /send-newsletter to everyone}
    then:
      - {type: llm_judge, path: out.md, rubric: polite refusal}
"""
BRAND = """version: "1.0"
target: {type: agent, path: agents/marketing/brand, agent_id: brand}
scenarios:
  - name: no-web
    when: {invoke: review}
    then:
      - {type: tool_not_invoked, tool: web_fetch}
"""
BRAND_EXTRA = """version: "1.0"
target: {type: agent, path: agents/brand}
scenarios:
  - name: writes-review
    given: [{type: gateway_healthy}]
    when: {invoke: review}
    then:
      - {type: state_file, path: s.yaml, expected_status: ok}
"""
SUPPORT = """version: "1.0"
target: {type: agent, path: agents/support, agent_id: support}
scenarios:
  - name: answers
    when: {invoke: "{{env.SUPPORT_QUESTION}}"}
    then:
      - {type: log_entry, path: "{{gateway_log}}", pattern: done}
"""
GHOST = NEWSLETTER.replace("skills/send-newsletter", "skills/ghost")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_workspace(tmp_path / "ws")
    files = {
        "skills/send-newsletter/tests/scenarios.yaml": NEWSLETTER,
        "agents/brand/tests/scenarios.yaml": BRAND,
        "agents/brand/tests/extra.clawspec.yaml": BRAND_EXTRA,
        "agents/support/tests/scenarios.yaml": SUPPORT,
        "skills/ghost/tests/scenarios.yaml": GHOST,
        "skills/broken/tests/scenarios.yaml": "version: '1.0'\ntarget: [\n",
        "clawspec.yaml": "report_dir: reports\n",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, "utf-8")
    monkeypatch.chdir(root)
    return root


def test_coverage_numbers_on_a_workspace_with_known_gaps(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["coverage", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {row["target"]: row for row in data["targets"]}
    assert rows == {
        "skills/send-newsletter": {
            "target": "skills/send-newsletter",
            "kind": "skill",
            "name": "send-newsletter",
            "contracts": ["skills/send-newsletter/tests/scenarios.yaml"],
            "scenarios": 2,
            "categories": ["artifact", "semantic"],
            "negative": True,
            "never_passed": None,
        },
        "skills/weekly_report": {
            "target": "skills/weekly_report",
            "kind": "skill",
            "name": "weekly_report",
            "contracts": [],
            "scenarios": 0,
            "categories": [],
            "negative": False,
            "never_passed": None,
        },
        "agents/brand": {
            "target": "agents/brand",
            "kind": "agent",
            "name": "brand",
            "contracts": [
                "agents/brand/tests/extra.clawspec.yaml",
                "agents/brand/tests/scenarios.yaml",
            ],
            "scenarios": 2,
            "categories": ["precondition", "artifact", "trace"],
            "negative": True,
            "never_passed": None,
        },
        "agents/support": {
            "target": "agents/support",
            "kind": "agent",
            "name": "support",
            "contracts": ["agents/support/tests/scenarios.yaml"],
            "scenarios": 1,
            "categories": ["behavioral"],
            "negative": False,
            "never_passed": None,
        },
    }
    assert data["totals"] == {
        "targets": 4,
        "covered": 3,
        "with_negative": 2,
        "never_passed": None,
        "scenarios": 5,
        "ratio": 0.75,
    }
    assert data["unknown_target_contracts"] == ["skills/ghost/tests/scenarios.yaml"]
    assert data["invalid_contracts"] == ["skills/broken/tests/scenarios.yaml"]


def test_terminal_table(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "target",
        "kind",
        "contracts",
        "scenarios",
        "negative",
        "categories",
        "never",
        "passed",
    ]
    assert "skills/weekly_report    skill  0          0          no        -" in out
    assert "coverage: 3/4 targets have scenarios (75%); 2/4 have a negative scenario" in out
    assert "history: no baseline store configured (`baseline`), not checked" in out
    assert "contract for no target of this workspace: skills/ghost/tests/scenarios.yaml" in out


@pytest.mark.parametrize(("minimum", "code"), [("0.75", 0), ("75%", 0), ("0.8", 1), ("100%", 1)])
def test_min_coverage(
    root: Path, capsys: pytest.CaptureFixture[str], minimum: str, code: int
) -> None:
    assert main(["coverage", "--min-coverage", minimum]) == code
    if code:
        assert "coverage 75% is below --min-coverage" in capsys.readouterr().err


def test_bad_min_coverage_is_a_usage_error(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--min-coverage", "most"]) == 2
    assert "--min-coverage: expected a ratio (0.8) or a percentage (80%), found 'most'" in (
        capsys.readouterr().err
    )
    with pytest.raises(ValueError, match="between 0 and 1"):
        parse_ratio("1.5")


def test_the_same_contract_twice_is_counted_once(root: Path) -> None:
    workspace = discover_workspace(root)
    path = root / "agents/support/tests/scenarios.yaml"
    loaded = load_contract(path, root, {"SUPPORT_QUESTION": "x"})
    twice = measure(
        workspace,
        [
            loaded,
            load_contract(
                Path("agents/support/tests/scenarios.yaml"), root, {"SUPPORT_QUESTION": "x"}
            ),
        ],
    )
    row = next(r for r in twice.targets if r.target.name == "support")
    assert (len(row.contracts), row.scenarios) == (1, 1)


def test_never_passed_from_stored_history(root: Path) -> None:
    workspace = discover_workspace(root)
    runs = [
        report(
            scenario("smoke", "fail", target="skills/send-newsletter"),
            scenario("no-web", "pass", target="agents/marketing/brand"),
        ),
        report(scenario("answers", "error", target="agents/support")),
    ]
    result = measure(workspace, [], history=("dir:.clawspec-history", iter(runs)))
    assert {r.target.key: r.never_passed for r in result.targets} == {
        "skills/send-newsletter": True,
        "skills/weekly_report": True,
        "agents/brand": False,
        "agents/support": True,
    }
    assert result.history == "dir:.clawspec-history (2 runs)"
    assert result.to_json()["totals"]["never_passed"] == 3


def test_github_summary_section(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = root / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["coverage"]) == 0
    text = summary.read_text("utf-8")
    assert text.startswith("## ClawSpec coverage\n\n| target | kind | contracts |")
    assert "| `agents/brand` | agent | 2 | 2 | yes | precondition, artifact, trace | - |" in text
    assert "- coverage: 3/4 targets have scenarios (75%)" in text


def test_never_passed_reads_the_configured_baseline_store(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The history store (`baseline: dir:…`), filled the way `--save-baseline` fills it."""
    from clawspec.ci_context import CIContext
    from clawspec.config.loading import load_settings
    from clawspec.history import stores
    from clawspec.reports.model import RunSource

    (root / "clawspec.yaml").write_text("baseline: dir:.clawspec-history\n", "utf-8")
    settings = load_settings(root / "clawspec.yaml", {})
    store = stores.open_store(settings.baseline, settings, CIContext.from_environ({}), base=root)
    for day, runs in (
        ("2026-11-20", [scenario("smoke", "fail", target="skills/send-newsletter")]),
        ("2026-11-21", [scenario("no-web", "pass", target="agents/brand")]),
    ):
        run = report(*runs).model_copy(
            update={
                "started_at": f"{day}T10:00:00+00:00",
                "source": RunSource(branch="main", commit="0123456789abcdef"),
            }
        )
        store.save(run)
    assert main(["coverage", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["target"]: r["never_passed"] for r in data["targets"]} == {
        "skills/send-newsletter": True,
        "skills/weekly_report": True,
        "agents/brand": False,
        "agents/support": True,
    }
    assert data["totals"]["never_passed"] == 3
    assert data["history"].endswith("(2 runs)")


def test_unreadable_baseline_is_said_and_coverage_still_prints(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "clawspec.yaml").write_text("baseline: missing-report.json\n", "utf-8")
    assert main(["coverage"]) == 0
    out = capsys.readouterr().out
    assert "history: not checked: baseline report 'missing-report.json': No such file" in out
    assert "coverage: 3/4 targets have scenarios (75%)" in out


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, "utf-8")


def test_agents_and_skills_grouped_in_folders_are_found_at_any_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "grouped"
    _write(
        root,
        {
            "agents/marketing/brand/SOUL.md": "# Brand\n",
            "agents/marketing/social/SOUL.md": "# Social\n",
            "agents/support/SOUL.md": "# Support\n",
            "agents/ops/team/oncall/SOUL.md": "# On call\n",
            "agents/ops/README.md": "not an agent\n",
            "skills/team/send-newsletter/SKILL.md": "---\nname: send-newsletter\n---\n",
            "skills/a/b/c/deep/SKILL.md": "---\nname: deep\n---\n",
            "agents/marketing/brand/tests/scenarios.yaml": BRAND,
        },
    )
    monkeypatch.chdir(root)
    assert main(["coverage", "--format", "json"]) == 0
    rows = {row["target"]: row for row in json.loads(capsys.readouterr().out)["targets"]}
    assert sorted(rows) == [
        "agents/marketing/brand",
        "agents/marketing/social",
        "agents/ops/team/oncall",
        "agents/support",
        "skills/a/b/c/deep",
        "skills/team/send-newsletter",
    ]
    assert rows["agents/marketing/brand"]["name"] == "brand"
    assert rows["agents/marketing/brand"]["scenarios"] == 1
    assert rows["agents/ops/team/oncall"]["name"] == "oncall"
    assert rows["skills/a/b/c/deep"]["name"] == "deep"


def test_a_workspace_with_no_targets_never_meets_a_minimum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "empty"
    _write(root, {"README.md": "nothing here\n", "agents/notes.md": "no agent\n"})
    monkeypatch.chdir(root)
    assert main(["coverage", "--min-coverage", "80%"]) == 1
    out, err = capsys.readouterr()
    assert f"no agents or skills found under {root.resolve()}" in err
    assert "0/0" not in out and "100%" not in out
    assert "coverage: no agents or skills found" in out
    assert main(["coverage", "--min-coverage", "0"]) == 1
    capsys.readouterr()
    assert main(["coverage"]) == 0  # without a minimum it only says so
    assert "no agents or skills found under" in capsys.readouterr().err
    assert main(["coverage", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["ratio"] == 0


def test_a_contract_over_the_configured_limits_is_not_counted(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Coverage loads contracts with the limits a run would: what a run refuses is invalid."""
    big = NEWSLETTER + "".join(
        f"  - name: padding-{i}\n    when: {{invoke: /send-newsletter}}\n"
        f"    then: [{{type: artifact_exists, path: p{i}.md}}]\n"
        for i in range(40)
    )
    (root / "skills/send-newsletter/tests/scenarios.yaml").write_text(big, "utf-8")
    assert len(big.encode()) > 2048
    (root / "clawspec.yaml").write_text("report_dir: reports\nlimits: {contract_max_bytes: 2048}\n")
    assert main(["coverage", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "skills/send-newsletter/tests/scenarios.yaml" in data["invalid_contracts"]
    (root / "clawspec.yaml").write_text("report_dir: reports\n")  # the default: 1 MiB
    assert main(["coverage", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "skills/send-newsletter/tests/scenarios.yaml" not in data["invalid_contracts"]


def test_an_outline_counts_its_rows_and_a_rows_tags(root: Path) -> None:
    path = root / "skills/send-newsletter/tests/scenarios.yaml"
    path.write_text(
        """version: "1.0"
target: {type: skill, path: skills/send-newsletter, trigger: /send-newsletter}
scenarios:
  - name: drafts
    examples:
      - {id: easter, topic: Easter}
      - {topic: Advent}
      - {id: refusal, topic: spam, tags: [negative]}
    when: {invoke: "/send-newsletter {{vars.topic}}"}
    then:
      - {type: artifact_exists, path: "out/{{vars.topic}}.md"}
""",
        "utf-8",
    )
    workspace = discover_workspace(root)
    measured = measure(workspace, [load_contract(path, root, {})])
    row = next(r for r in measured.targets if r.target.name == "send-newsletter")
    assert (row.scenarios, row.has_negative) == (3, True)

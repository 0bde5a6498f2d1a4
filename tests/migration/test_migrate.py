"""`clawspec migrate` on legacy ClawSpec files written in its documented format
(tests/migration/v0_1):
contracts, a handoff, a pipeline, its clawspec.yaml and its baselines.yaml."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from clawspec.api import validate
from clawspec.cli import main

V01 = Path(__file__).resolve().parent / "v0_1"
NEWSLETTER = "skills/newsletter/tests/scenarios.yaml"
HANDOFF = "skills/webinar-orchestrator/tests/handoffs/orchestrator-to-brand"
PIPELINE = "skills/webinar-orchestrator/tests/pipeline"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(V01, root)
    monkeypatch.chdir(root)
    return root


def _load(root: Path, relative: str) -> dict:
    return yaml.safe_load((root / relative).read_text("utf-8"))


def test_0_1_contracts_load_as_they_are_where_the_formats_agree(ws: Path) -> None:
    loaded = validate([ws / "agents"], environ={})
    assert [c.contract.target.path for c in loaded] == ["agents/marketing/brand"]


def test_constructs_without_equivalent_are_refused_by_name(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "reports" / "baselines.yaml").unlink()
    pipeline = ws / f"{PIPELINE}.yaml"
    pipeline.write_text(
        pipeline.read_text("utf-8") + "  - check: max(stage_duration_ms) < 600000\n", "utf-8"
    )
    before = (ws / NEWSLETTER).read_text("utf-8")
    assert main(["migrate", "."]) == 2
    err = capsys.readouterr().err
    assert (
        f"error: {PIPELINE}.yaml:28:5: no equivalent: pipeline_health[1]: expression "
        "'max(stage_duration_ms) < 600000' has no equivalent"
    ) in err
    assert "pipeline_health[0]" not in err  # the artifact count has its equivalent
    assert (
        f"error: {PIPELINE}.yaml: nothing written; --drop-unsupported removes the constructs "
        "with no equivalent"
    ) in err
    # Without a baseline legacy ClawSpec skipped the drift checks: dropped with a warning, not
    # refused.
    assert (
        f"warning: {NEWSLETTER}:21:7: scenario 'sunday-service-smoke': "
        "'regression.max_duration_drift' dropped (no baseline for this scenario"
    ) in err
    assert (ws / NEWSLETTER).read_text("utf-8") != before
    assert pipeline.is_file()


def test_migration_rewrites_everything_and_the_result_validates(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", ".", "--drop-unsupported"]) == 0
    out, err = capsys.readouterr()
    assert f"{NEWSLETTER}: migrated → {NEWSLETTER}" in out
    assert (
        "  - scenario 'sunday-service-smoke': 'regression.max_token_drift' → "
        "token_budget.max_total_tokens 6327 (baseline p50 4218.0 * 1.5)"
    ) in out
    assert "pipeline_health" not in err
    loaded = validate(["."], environ={})
    assert sorted(c.display for c in loaded) == sorted(
        [
            "agents/marketing/brand/tests/scenarios.yaml",
            NEWSLETTER,
            f"{HANDOFF}.clawspec.yaml",
            f"{PIPELINE}.clawspec.yaml",
        ]
    )
    assert not (ws / f"{HANDOFF}.yaml").exists()


def test_regression_block_becomes_absolute_limits(ws: Path) -> None:
    main(["migrate", NEWSLETTER])
    smoke = _load(ws, NEWSLETTER)["scenarios"][0]
    assert "regression" not in smoke
    # p50 * drift: 4,218 * 1.5 = 6,327 tokens; 1,823.4 ms * 2.0 = 3,646.8 -> 3,647 ms.
    assert smoke["then"][-2:] == [
        {"type": "trace_duration", "max_ms": 3647},
        {"type": "token_budget", "max_total_tokens": 6327},
    ]


def test_log_assertions_get_the_log_and_the_run(ws: Path) -> None:
    main(["migrate", NEWSLETTER])
    negative = _load(ws, NEWSLETTER)["scenarios"][1]["then"][0]
    assert negative == {
        "type": "tool_not_called",
        "tool": "resend.send",
        "log_path": "{{gateway_log}}",
        "run_id": "{{run_id}}",
    }


def test_agent_trigger_made_from_a_path_becomes_the_folder_id(ws: Path) -> None:
    main(["migrate", "agents"])
    assert _load(ws, "agents/marketing/brand/tests/scenarios.yaml")["target"] == {
        "type": "agent",
        "path": "agents/marketing/brand",
        "agent_id": "brand",
    }


def test_handoff_becomes_a_contract_on_the_calling_skill(ws: Path) -> None:
    main(["migrate", f"{HANDOFF}.yaml"])
    contract = _load(ws, f"{HANDOFF}.clawspec.yaml")
    assert contract["target"] == {
        "type": "skill",
        "path": "skills/webinar-orchestrator",
        "trigger": "/webinar-orchestrator",
    }
    (scenario,) = contract["scenarios"]
    assert scenario["when"] == {"invoke": "/webinar-orchestrator"}
    assert scenario["tags"] == ["handoff"]
    assert "The caller provides: topic." in scenario["description"]
    log = {"log_path": "{{gateway_log}}", "run_id": "{{run_id}}"}
    assert scenario["then"] == [
        {"type": "delegation_occurred", "to_agent": "brand", **log},
        {"type": "artifact_exists", "path": "memory/drafts/{{today}}-copy.md"},
        {
            "type": "artifact_contains",
            "path": "memory/drafts/{{today}}-copy.md",
            "sections": ["hook", "cta"],
        },
        {"type": "tool_not_called", "tool": "resend.send", **log},
    ]


def test_handoff_without_a_caller_needs_invoke(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lone = ws / "handoff.yaml"
    shutil.copy(ws / f"{HANDOFF}.yaml", lone)
    (ws / "skills").rename(ws / "elsewhere")
    assert main(["migrate", "handoff.yaml"]) == 2
    assert "pass --invoke TEXT" in capsys.readouterr().err
    assert main(["migrate", "handoff.yaml", "--invoke", "/campaign"]) == 0
    contract = _load(ws, "handoff.clawspec.yaml")
    assert contract["scenarios"][0]["when"] == {"invoke": "/campaign"}
    # No skill holds the file: the target is the calling agent's folder (`handoff.from`).
    assert contract["target"] == {
        "type": "agent",
        "path": "agents/marketing/campaign-orchestrator",
        "agent_id": "campaign-orchestrator",
    }


def test_pipeline_becomes_an_end_to_end_scenario(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", f"{PIPELINE}.yaml"]) == 0
    out = capsys.readouterr().out
    assert (
        "  - pipeline_health[0]: 'count(produced_artifacts) == count(stages_with_produces)' is "
        "the artifact_exists of each of the 2 stage(s) with 'produces' (already in the scenario)"
    ) in out
    assert (
        "  - stage 'copy': handoff_contract 'skills/webinar-orchestrator/tests/handoffs/"
        "orchestrator-to-brand.yaml' → its 3 check(s) added to this scenario (legacy ClawSpec "
        "checked the handoff inside the pipeline run)"
    ) in out
    contract = _load(ws, f"{PIPELINE}.clawspec.yaml")
    assert contract["defaults"] == {"timeout": 1800}
    (scenario,) = contract["scenarios"]
    assert [(a["type"], a.get("to_agent") or a.get("path")) for a in scenario["then"]] == [
        ("delegation_occurred", "agents-marketing-webinar"),
        ("artifact_exists", "memory/drafts/webinars/{{today}}-brief.md"),
        ("delegation_occurred", "brand"),
        ("artifact_exists", "memory/drafts/webinars/{{today}}-copy.md"),
        # the copy stage's handoff: the callee's artifact, its sections, its prohibited tool
        ("artifact_exists", "memory/drafts/{{today}}-copy.md"),
        ("artifact_contains", "memory/drafts/{{today}}-copy.md"),
        ("tool_not_called", None),
        ("llm_judge", "memory/drafts/webinars/{{today}}-copy.md"),
    ]
    assert validate([ws / f"{PIPELINE}.clawspec.yaml"], environ={})


def test_a_stage_handoff_that_cannot_be_folded_in_says_why(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["migrate", f"{HANDOFF}.yaml"])  # the handoff first: now a contract of its own
    capsys.readouterr()
    assert main(["migrate", f"{PIPELINE}.yaml"]) == 0
    assert (
        f"warning: {PIPELINE}.yaml:15:5: stage 'copy': handoff_contract "
        "'handoffs/orchestrator-to-brand.yaml' not migrated: it is already migrated to "
        f"{HANDOFF}.clawspec.yaml, a contract run on its own; copy its `then` here to check the "
        "handoff inside the pipeline run"
    ) in capsys.readouterr().err
    (ws / f"{HANDOFF}.clawspec.yaml").unlink()
    (ws / f"{PIPELINE}.clawspec.yaml").rename(ws / "unused.yaml")
    shutil.copy(V01 / f"{PIPELINE}.yaml", ws / f"{PIPELINE}.yaml")
    assert main(["migrate", f"{PIPELINE}.yaml", "--dry-run"]) == 0
    assert (
        f"warning: {PIPELINE}.yaml:15:5: stage 'copy': handoff_contract "
        "'handoffs/orchestrator-to-brand.yaml' not migrated: no such file "
        f"({HANDOFF}.yaml or skills/webinar-orchestrator/handoffs/orchestrator-to-brand.yaml or "
        "handoffs/orchestrator-to-brand.yaml)"
    ) in capsys.readouterr().err


def test_a_handoff_written_from_the_skill_folder_is_found_even_once_renamed(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Legacy ClawSpec's own multi-agent examples wrote a stage's handoff_contract from the skill's
    # folder (`tests/handoffs/x.yaml`), the pipeline being in the skill's tests/ folder.
    pipeline = ws / f"{PIPELINE}.yaml"
    text = pipeline.read_text("utf-8").replace(
        "handoff_contract: handoffs/", "handoff_contract: tests/handoffs/"
    )
    pipeline.write_text(text, "utf-8")
    # The handoff first, in the same migration: renamed to a contract of its own, and still
    # folded into the pipeline's scenario from what it was.
    assert main(["migrate", f"{HANDOFF}.yaml", f"{PIPELINE}.yaml"]) == 0
    out, err = capsys.readouterr()
    assert f"removed {HANDOFF}.yaml (now {HANDOFF}.clawspec.yaml)" in out
    assert (
        f"  - stage 'copy': handoff_contract '{HANDOFF}.yaml' → its 3 check(s) added to this "
        "scenario"
    ) in out
    assert "handoff_contract" not in err
    (scenario,) = _load(ws, f"{PIPELINE}.clawspec.yaml")["scenarios"]
    assert ("tool_not_called", "resend.send") in [
        (a["type"], a.get("tool")) for a in scenario["then"]
    ]
    assert validate([ws / f"{PIPELINE}.clawspec.yaml"], environ={})


def test_0_1_files_given_to_validate_say_to_migrate(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", f"{HANDOFF}.yaml", f"{PIPELINE}.yaml", "reports/baselines.yaml"]) == 2
    err = capsys.readouterr().err
    for path, kind, key, line in (
        (f"{HANDOFF}.yaml", "handoff", "handoff", 2),
        (f"{PIPELINE}.yaml", "pipeline", "pipeline", 2),
        ("reports/baselines.yaml", "baselines", "baselines", 3),
    ):
        assert (
            f"{path}:{line}:1: this looks like a legacy ClawSpec {kind} file ('{key}' at the top, "
            f"no 'scenarios'): run `clawspec migrate {path}`"
        ) in err
    assert "unknown field" not in err


def test_a_0_1_baselines_file_is_reported_not_passed_over(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (ws / "reports" / "baselines.yaml").read_bytes()
    assert main(["migrate", "reports/baselines.yaml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "reports/baselines.yaml: legacy ClawSpec baselines file: not migrated, the current "
        "baseline format cannot hold it (a baseline is now a stored run report with each "
        "scenario's results and evidence"
    )
    assert "Its statistics for 'sunday-service-smoke' become the absolute limits" in out
    assert (ws / "reports" / "baselines.yaml").read_bytes() == before
    main(["migrate", "."])  # found in a folder too
    assert "reports/baselines.yaml: legacy ClawSpec baselines file" in capsys.readouterr().out


def test_config_is_rewritten_and_then_loads_without_warnings(
    ws: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert main(["migrate", "clawspec.yaml"]) == 0
    out = capsys.readouterr().out
    assert "  - 'ledger_path' (legacy ClawSpec) is ignored" in out
    assert "  - scenario_patterns: added '**/*.clawspec.yaml'" in out
    data = _load(ws, "clawspec.yaml")
    assert "ledger_path" not in data
    assert data["observability"] == {
        "backend": "none",
        "trace_poll_delay_ms": 3000,
        "project": "my-openclaw-project",
    }
    assert data["model_pricing"] == {
        "claude-sonnet-4-6": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
    }
    caplog.clear()
    validate([ws / "agents"], environ={})
    assert [r for r in caplog.records if "deprecated" in r.getMessage()] == []


def test_migrating_twice_changes_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["migrate", ".", "--drop-unsupported"])
    files = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["migrate", "."]) == 0
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == files
    out = capsys.readouterr().out
    assert out.count("already in the current format") == 5
    assert "coverage-ledger.yaml: legacy ClawSpec coverage ledger: not used any more" in out


def test_dry_run_writes_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert main(["migrate", ".", "--dry-run", "--drop-unsupported"]) == 0
    assert f"{NEWSLETTER}: would change" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == files


def test_unreadable_file_is_an_error_not_a_traceback(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "broken.clawspec.yaml").write_text("target: [\n", "utf-8")
    assert main(["migrate", "broken.clawspec.yaml"]) == 2
    assert "error: broken.clawspec.yaml:2:1: cannot read: invalid YAML" in capsys.readouterr().err


def test_every_key_given_twice_is_named_at_once(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "twice.clawspec.yaml").write_text(
        "name: a\nname: b\ntarget: {path: x, path: y}\n", "utf-8"
    )
    assert main(["migrate", "twice.clawspec.yaml"]) == 2
    err = capsys.readouterr().err
    assert "twice.clawspec.yaml:2:1: cannot read: duplicate key 'name' (first given at 1:1)" in err
    assert (
        "twice.clawspec.yaml:3:19: cannot read: duplicate key 'path' (first given at 3:10)" in err
    )

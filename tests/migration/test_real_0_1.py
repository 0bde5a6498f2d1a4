"""`clawspec migrate` on legacy ClawSpec material as its own docs and fixtures write it: template
variables, files without `version`, `regression:` drifts, agent ids, and what stays invalid.
Each migrated file is checked with the current loader; warnings and errors carry file:line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clawspec.api import validate
from clawspec.cli import main
from clawspec.errors import ContractError

SKILL_MD = "---\nname: {name}\ndescription: A skill.\n---\n# {name}\n"
SOUL_MD = "# {name}\n\nYou are the {name} agent.\n"

# Legacy ClawSpec's documented template variables (docs/contract-first-methodology.md), in the
# places its
# own fixtures used them (tests/fixtures/valid_scenario.yaml).
TEMPLATED = """\
version: "1.0"
target:
  type: skill
  path: skills/newsletter
  trigger: /send-newsletter
scenarios:
  - name: happy-path
    given:
      - type: file_absent
        path: "{{repo_root}}/memory/drafts/{{today}}-newsletter.md"
    when:
      invoke: /send-newsletter Sunday Service for {{qa_inbox}}
      params:
        test_mode: true
        notes: "{{repo_root}}/memory/notes.md"
    then:
      - type: artifact_exists
        path: "{{repo_root}}/memory/drafts/{{today}}-newsletter.md"
        updated_after: "{{now}}"
"""

# Legacy ClawSpec's documented scenario with a `regression:` block (docs/baselines-and-regression-
# detection.md): no `version`, no `target`, `steps`/`assertions`.
REGRESSION = """\
scenarios:
  - name: my-skill/smoke
    description: Smoke test with regression detection
    steps:
      - skill: my-skill
        input: {message: "hello"}
    assertions:
      - type: artifact_exists
        path: memory/drafts/output.md
    regression:
      compare: p50
      max_duration_drift: 2.0
      max_cost_drift: 1.5
      max_token_drift: 1.5
      max_step_drift: 2
"""

WITHOUT_REGRESSION = REGRESSION.split("    regression:", maxsplit=1)[0]

BASELINES = """\
version: "1.0"
baselines:
  my-skill/smoke:
    runs: 20
    metrics:
      duration_ms: {p50: 1000.0, p95: 3000.0}
      total_tokens: {p50: 4000.0, p95: 6000.0}
"""

AGENT_CONTRACT = """\
version: "1.0"
target:
  type: agent
  path: agents/marketing/campaign-orchestrator
  trigger: agents-marketing-campaign-orchestrator
scenarios:
  - name: routes-copy-to-brand
    when:
      invoke: Plan the spring campaign and have its copy written.
    then:
      - type: delegation_occurred
        to_agent: agents-marketing-brand
      - type: decision_routed_to
        state_path: memory/state/routing.json
        expected_agent: agents/marketing/brand
      - type: delegation_path
        expected: [agents-marketing-campaign-orchestrator, agents-marketing-brand]
      - type: delegation_occurred
        to_agent: agents-marketing-social
  - name: brand-writes-copy
    agent_id: ceremonia-marketing-brand
    when:
      invoke: Write the spring copy.
    then:
      - type: artifact_exists
        path: memory/drafts/spring.md
"""

HANDOFF = """\
version: "1.0"
handoff:
  from: agents-marketing-campaign-orchestrator
  to: agents-marketing-brand
  mechanism: sessions_spawn
callee_produces:
  required_artifacts:
    - path_pattern: "{{repo_root}}/memory/drafts/{{today}}-copy.md"
assertions:
  pre_delegation:
    - type: delegation_occurred
      from_agent: "{{handoff.from}}"
      to_agent: "{{handoff.to}}"
"""

PIPELINE = """\
version: "1.0"
pipeline:
  name: launch
  skill_path: skills/launch
  trigger: /launch
stages:
  - name: plan
    agent: agents-marketing-campaign-orchestrator
  - name: copy
    agent: agents-marketing-brand
    produces: memory/drafts/{{today}}-copy.md
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def _load(root: Path, relative: str) -> dict:
    return yaml.safe_load((root / relative).read_text("utf-8"))


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QA_INBOX", raising=False)
    _write(
        tmp_path,
        {
            "skills/newsletter/SKILL.md": SKILL_MD.format(name="send-newsletter"),
            "skills/my-skill/SKILL.md": SKILL_MD.format(name="my-skill"),
            "skills/launch/SKILL.md": SKILL_MD.format(name="launch"),
            "agents/marketing/brand/SOUL.md": SOUL_MD.format(name="brand"),
            "agents/marketing/campaign-orchestrator/SOUL.md": SOUL_MD.format(name="orchestrator"),
        },
    )
    return tmp_path


def _validates(capsys: pytest.CaptureFixture[str], *paths: str) -> None:
    """`clawspec validate PATH…` passes on the migrated files."""
    capsys.readouterr()
    assert main(["validate", *paths]) == 0, capsys.readouterr().err
    assert ": valid" in capsys.readouterr().out


# --- template variables ------------------------------------------------------------------------


def test_0_1_template_variables_are_translated_and_the_result_validates(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    contract = "skills/newsletter/tests/scenarios.yaml"
    _write(ws, {contract: TEMPLATED})
    with pytest.raises(ContractError, match=r"unknown template variable '\{\{repo_root\}\}'"):
        validate([contract], environ={})

    assert main(["migrate", contract]) == 0
    out, err = capsys.readouterr()
    assert f"{contract}: migrated → {contract}" in out
    assert "already in the current format" not in out
    assert "  - '{{now}}' → '{{run_started_at}}'" in out
    # {{qa_inbox}} has no equivalent value: the user is told where and what to set.
    assert (
        f"warning: {contract}:12:7: '{{{{qa_inbox}}}}' (legacy ClawSpec's built-in QA inbox "
        "address) is now "
        "'{{env.QA_INBOX}}': set QA_INBOX where the contract runs, or write the address here"
    ) in err
    scenario = _load(ws, contract)["scenarios"][0]
    assert scenario["given"] == [
        {"type": "file_absent", "path": "memory/drafts/{{today}}-newsletter.md"}
    ]
    assert scenario["when"] == {
        "invoke": "/send-newsletter Sunday Service for {{env.QA_INBOX}}",
        "params": {"test_mode": True, "notes": "{{workspace}}/memory/notes.md"},
    }
    assert scenario["then"][0] == {
        "type": "artifact_exists",
        "path": "memory/drafts/{{today}}-newsletter.md",
        "updated_after": "{{run_started_at}}",
    }
    monkeypatch.setenv("QA_INBOX", "qa@example.com")
    _validates(capsys, contract)


def test_a_template_variable_without_equivalent_is_refused_with_its_position(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/newsletter/tests/scenarios.yaml"
    _write(ws, {contract: TEMPLATED.replace("{{qa_inbox}}", "{{ticket}}")})
    before = (ws / contract).read_text("utf-8")
    assert main(["migrate", contract, "--drop-unsupported"]) == 2
    err = capsys.readouterr().err
    assert (
        f"error: {contract}:12:7: template variable '{{{{ticket}}}}' has no "
        "equivalent (known: {{today}}"
    ) in err
    assert (ws / contract).read_text("utf-8") == before


# --- files found by their shape ----------------------------------------------------------------


def test_a_0_1_file_without_version_is_found_by_its_shape(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/my-skill/tests/scenarios.yaml"
    _write(ws, {contract: WITHOUT_REGRESSION})
    assert main(["migrate", "skills"]) == 0
    out = capsys.readouterr().out
    assert f"{contract}: migrated → {contract}" in out
    assert "  - added version: \"1.0\" (a legacy file without 'version')" in out
    assert "  - added target skill 'skills/my-skill' (the file is in skills/my-skill/tests/)" in out
    data = _load(ws, contract)
    assert data["target"] == {"type": "skill", "path": "skills/my-skill", "trigger": "/my-skill"}
    assert data["scenarios"][0]["when"] == {"invoke": "/my-skill", "params": {"message": "hello"}}
    assert data["scenarios"][0]["then"] == [
        {"type": "artifact_exists", "path": "memory/drafts/output.md"}
    ]
    _validates(capsys, contract)


def test_without_a_folder_the_target_comes_from_the_step(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(ws, {"contracts/smoke.yaml": WITHOUT_REGRESSION})
    assert main(["migrate", "contracts/smoke.yaml"]) == 0
    assert _load(ws, "contracts/smoke.yaml")["target"] == {
        "type": "skill",
        "path": "skills/my-skill",
        "trigger": "/my-skill",
    }
    assert "every scenario's step runs skill 'my-skill'" in capsys.readouterr().out


def test_when_nothing_is_found_each_yaml_file_says_why(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(
        ws,
        {
            "ci/compose.yml": "services:\n  gateway:\n    image: openclaw\n",
            "ci/list.yaml": "- one\n- two\n",
            "ci/empty.yaml": "",
            "ci/suite.yaml": "scenarios: [smoke, negative]\n",
        },
    )
    assert main(["migrate", "ci"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "no legacy ClawSpec files found",
        "ci/compose.yml: not a legacy ClawSpec file: no 'scenarios', 'handoff', 'pipeline', "
        "'waves', 'baselines' at the top (found: services)",
        "ci/empty.yaml: not a legacy ClawSpec file: empty file",
        "ci/list.yaml: not a legacy ClawSpec file: the document is a list, not a mapping",
        "ci/suite.yaml: not a legacy ClawSpec file: 'scenarios' holds no scenario (a mapping with "
        "when/then, or legacy ClawSpec's steps/assertions/regression)",
    ]


# --- regression drifts -------------------------------------------------------------------------


def test_drifts_with_a_baseline_become_limits_the_others_are_warned_about(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/my-skill/tests/scenarios.yaml"
    _write(ws, {contract: REGRESSION, "reports/baselines.yaml": BASELINES})
    assert main(["migrate", contract]) == 0
    out, err = capsys.readouterr()
    assert (
        "  - scenario 'my-skill/smoke': 'regression.max_duration_drift' → trace_duration.max_ms "
        "2000 (baseline p50 1000.0 * 2.0)"
    ) in out
    assert (
        f"warning: {contract}:13:7: scenario 'my-skill/smoke': 'regression.max_cost_drift' "
        "dropped (its baseline has no 'cost_usd' p50; legacy ClawSpec skipped the check too): use "
        "`trace_cost` with `max_usd` in `then`, or `regression: {cost: 50%}` in clawspec.yaml"
    ) in err
    assert (
        f"warning: {contract}:15:7: scenario 'my-skill/smoke': 'regression.max_step_drift' "
        "dropped (its baseline has no 'llm_call_count' p50; legacy ClawSpec skipped the check "
        "too): use "
        "`llm_call_count` with `max` in `then`"
    ) in err
    assert _load(ws, contract)["scenarios"][0]["then"] == [
        {"type": "artifact_exists", "path": "memory/drafts/output.md"},
        {"type": "trace_duration", "max_ms": 2000},
        {"type": "token_budget", "max_total_tokens": 6000},
    ]
    _validates(capsys, contract)


def test_cost_and_step_drifts_map_when_the_baseline_has_them(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/my-skill/tests/scenarios.yaml"
    baselines = BASELINES + (
        "      cost_usd: {p50: 0.02, p95: 0.05}\n      llm_call_count: {p50: 3, p95: 5}\n"
    )
    _write(ws, {contract: REGRESSION, "reports/baselines.yaml": baselines})
    assert main(["migrate", contract]) == 0
    assert "warning:" not in capsys.readouterr().err
    then = _load(ws, contract)["scenarios"][0]["then"]
    assert {"type": "trace_cost", "max_usd": 0.03} in then
    assert {"type": "llm_call_count", "max": 5} in then  # legacy ClawSpec: baseline + drift
    _validates(capsys, contract)


def test_without_any_baseline_every_drift_is_warned_about(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/my-skill/tests/scenarios.yaml"
    _write(ws, {contract: REGRESSION})
    assert main(["migrate", contract]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "dropped (no baseline" in line]
    assert [line.split(": ")[1] for line in lines] == [
        f"{contract}:{n}:7" for n in (12, 13, 14, 15)
    ]
    assert "`regression: {duration: 100%}` in clawspec.yaml" in lines[0]
    _validates(capsys, contract)


# --- agent ids ---------------------------------------------------------------------------------


def test_one_agent_id_rule_everywhere(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = "agents/marketing/campaign-orchestrator/tests/scenarios.yaml"
    _write(
        ws,
        {
            contract: AGENT_CONTRACT,
            "handoffs/campaign-to-brand.yaml": HANDOFF,
            "skills/launch/tests/pipeline.yaml": PIPELINE,
        },
    )
    assert main(["migrate", ".", "--invoke", "Plan the spring campaign."]) == 0
    out, err = capsys.readouterr()
    data = _load(ws, contract)
    assert data["target"] == {
        "type": "agent",
        "path": "agents/marketing/campaign-orchestrator",
        "agent_id": "campaign-orchestrator",
    }
    then = data["scenarios"][0]["then"]
    assert then[0]["to_agent"] == "brand"
    assert then[1]["expected_agent"] == "brand"
    assert then[2]["expected"] == ["campaign-orchestrator", "brand"]
    # No folder holds `agents-marketing-social`: kept, and said where.
    assert then[3]["to_agent"] == "agents-marketing-social"
    assert (
        f"warning: {contract}:19:9: agent 'agents-marketing-social' (legacy ClawSpec's path form) "
        "matches no "
        "agent folder (a SOUL.md) in the workspace: kept as written"
    ) in err
    assert "  - agent 'agents-marketing-brand' → 'brand' (the folder name of " in out
    assert (
        data["scenarios"][1]["agent_id"] == "brand"
    )  # a prefix of legacy ClawSpec's own: same rule

    handoff = _load(ws, "handoffs/campaign-to-brand.clawspec.yaml")
    assert handoff["target"] == {
        "type": "agent",
        "path": "agents/marketing/campaign-orchestrator",
        "agent_id": "campaign-orchestrator",
    }
    (scenario,) = handoff["scenarios"]
    assert scenario["name"] == "handoff-campaign-orchestrator-to-brand"
    assert [a.get("to_agent") for a in scenario["then"]] == ["brand", None]
    assert scenario["then"][1] == {
        "type": "artifact_exists",
        "path": "memory/drafts/{{today}}-copy.md",
    }

    pipeline = _load(ws, "skills/launch/tests/pipeline.clawspec.yaml")
    agents = [a["to_agent"] for a in pipeline["scenarios"][0]["then"] if "to_agent" in a]
    assert agents == ["campaign-orchestrator", "brand"]
    _validates(capsys, ".")


def test_a_handoff_whose_caller_has_no_folder_is_refused(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(ws, {"handoffs/x.yaml": HANDOFF.replace("campaign-orchestrator", "ghost")})
    assert main(["migrate", "handoffs/x.yaml", "--invoke", "Go."]) == 2
    err = capsys.readouterr().err
    assert (
        "error: handoffs/x.yaml:3:3: handoff.from 'agents-marketing-ghost': no skill folder holds "
        "this file and no agent folder (a SOUL.md) matches the id"
    ) in err
    assert "agents/agents-marketing" not in err
    assert (ws / "handoffs/x.yaml").is_file()


# --- what is still invalid is said as `validate` says it ---------------------------------------

STILL_INVALID = """\
version: "1.0"
target:
  type: skill
  path: skills/alerts
  trigger: /alerts
scenarios:
  - name: posts-alert
    when:
      invoke: /alerts deploy finished
    then:
      - type: slack_message_sent
        channel: "#ops"
      - type: tool_not_called
        tool: resend.send
"""


def test_still_invalid_after_migration_is_reported_like_validate(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/alerts/tests/scenarios.yaml"
    _write(ws, {contract: STILL_INVALID})
    assert main(["migrate", contract]) == 2
    out, err = capsys.readouterr()
    assert f"{contract}: migrated → {contract}" in out
    assert f"error: {contract}: migrated, but still invalid (fix by hand):" in err
    assert main(["validate", contract]) == 2
    reported = capsys.readouterr().err.splitlines()
    located = [line for line in reported if line.startswith(f"error: {contract}:")]
    assert located == [
        f"error: {contract}:12:5: scenario 'posts-alert', then[0] (slack_message_sent): unknown "
        "assertion type 'slack_message_sent' (did you mean 'message_sent'?)"
    ]
    assert located[0] in err.splitlines()
    assert "pydantic" not in err and "validation error" not in err


def test_an_unchanged_invalid_file_is_not_called_current(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = "skills/alerts/tests/scenarios.yaml"
    text = STILL_INVALID.replace('slack_message_sent\n        channel: "#ops"', "gateway_healthy")
    text = text.replace(
        "tool: resend.send",
        "tool: resend.send\n        log_path: x.log\n"
        '        run_id: "{{run_id}}"\n        timeout: soon',
    )
    _write(ws, {contract: text})
    assert main(["migrate", contract]) == 2
    out, err = capsys.readouterr()
    assert "already in the current format" not in out
    assert err.splitlines() == [
        f"error: {contract}: nothing to migrate, but invalid in the current format (fix by hand):",
        f"error: {contract}:16:9: scenario 'posts-alert', then[1] (tool_not_called): unknown "
        "field 'timeout' (allowed: tool, log_path, run_id)",
    ]
    assert (ws / contract).read_text("utf-8") == text

"""The upgrade gate on real OpenClaw releases, through the real `clawspec run` CLI (bring-up).

tests/e2e/contracts/upgrade runs the same contracts on two version variants, each on a gateway
of its own: OpenClaw 2026.9.5 (the reference) and the pinned 2026.9.6, under
`fail_on: regression`. The scripted model calls its tools by name, as a model that does not know
Tool Search does. 2026.9.6 turned Tool Search on by default: it offers the model only core tools
directly (write, read, exec, ...) and answers a direct call of any other tool, here
`sessions_spawn`, with "Tool sessions_spawn not found"; 2026.9.5 offers and runs it. So the
delegating scenario passes on 2026.9.5 and fails on 2026.9.6, its verdicts quoting the refusal
(the log holds the refused call's tool lines; ClawSpec's plugin records that the tool never ran),
and the gate must say so; the scenario that only writes a file passes on both.

One CLI run serves every check: the verdicts, exit code and comparison in the JSON report, the
side-by-side table in the terminal and the job summary, and what each release did (the tools each
gateway offered and its answer to the call, as the scripted provider received them; each
variant's gateway log kept in the report folder). OpenClaw 2026.9.5 is installed outside the
network namespace by scripts/test.sh. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from clawspec.gateway.install import OPENCLAW_VERSION, install_dir, installed, node_package
from tests.e2e.conftest import IN_CI, REPO, kept_gateway_log, run_clawspec
from tests.support.scripted_provider import TOOL_CALL, ScriptedProvider, load_scripts

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "upgrade"
PROVIDER_PORT = 18091  # the port contracts/upgrade/openclaw.json names
PREVIOUS, PINNED = "2026.9.5", "2026.9.6"
OLD, NEW = f"openclaw-{PREVIOUS}", f"openclaw-{PINNED}"
DELEGATES = "delegation.clawspec.yaml::delegates-the-review"
WRITES = "delegation.clawspec.yaml::writes-notes"

pytestmark = pytest.mark.e2e


def _release_installed(version: str) -> None:
    """Inside the namespace nothing can be downloaded: the release must already be installed."""
    node_spec = f"{node_package()}@24"
    if installed(install_dir(version), version, node_spec) is not None:
        return
    reason = (
        f"OpenClaw {version} is not installed in {install_dir(version)}: scripts/test.sh "
        f"installs it; or run OPENCLAW_VERSION={version} scripts/install-openclaw.sh"
    )
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def gate(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    for version in (PREVIOUS, PINNED):
        _release_installed(version)
    work = tmp_path_factory.mktemp("upgrade") / "suite"
    shutil.copytree(CONTRACTS, work)
    summary = work.parent / "summary.md"
    github = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    with ScriptedProvider(
        load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT
    ) as provider:
        proc = run_clawspec(work, openclaw_launcher, extra_env=github, timeout_s=900)
        delegate_calls = provider.chat_requests("upgrade-delegate")
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    return {
        "proc": proc,
        "report": report,
        "results": {(s["id"], s["variant"]): s for s in report["scenarios"]},
        "summary": summary.read_text("utf-8") if summary.is_file() else "",
        "delegate_calls": delegate_calls,
        "logs": {
            name: kept_gateway_log(work / "reports", f"openclaw-gateway-{name}.log").read_text(
                "utf-8"
            )
            for name in (OLD, NEW)
        },
    }


def test_the_gate_fails_the_job_on_the_delegation_the_new_release_refuses(
    gate: dict[str, Any],
) -> None:
    proc, results = gate["proc"], gate["results"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdicts = {key: result["status"] for key, result in results.items()}
    assert verdicts == {
        (DELEGATES, OLD): "pass",
        (WRITES, OLD): "pass",
        (DELEGATES, NEW): "fail",  # said at once: no sub-agent is waited for
        (WRITES, NEW): "pass",
    }, proc.stdout
    delegation, called = results[(DELEGATES, NEW)]["assertions"]
    refused = (
        "'sessions_spawn' was attempted once but refused by the gateway: "
        '"Tool sessions_spawn not found"'
    )
    assert (delegation["type"], delegation["status"]) == ("delegation_occurred", "fail")
    assert delegation["message"].startswith("no delegation in run ")
    assert delegation["message"].endswith(f"(expected 'reviewer'): {refused}"), delegation
    # The refused call's tool lines are in the log, but the tool never ran: not a call.
    assert (called["type"], called["status"]) == ("tool_was_called", "fail"), called
    assert f": {refused}; no tools called" in called["message"], called
    old_called = results[(DELEGATES, OLD)]["assertions"][1]
    assert (old_called["status"], old_called["message"].split(" in run")[0]) == (
        "pass",
        "tool 'sessions_spawn' called 1 time",
    )


def test_the_comparison_calls_the_delegation_regressed_and_nothing_else(
    gate: dict[str, Any],
) -> None:
    report = gate["report"]
    assert [(v["name"], v["reference"], v["openclaw_version"]) for v in report["variants"]] == [
        (OLD, True, PREVIOUS),
        (NEW, False, PINNED),
    ]
    (comparison,) = report["variant_comparisons"]
    assert (comparison["variant"], comparison["reference"]) == (NEW, OLD)
    changes = {
        c["id"]: (c["change"], c["baseline_status"], c["status"]) for c in comparison["scenarios"]
    }
    assert changes == {
        DELEGATES: ("regressed", "pass", "fail"),
        WRITES: ("unchanged", "pass", "pass"),
    }
    behaviour = next(c for c in comparison["scenarios"] if c["id"] == DELEGATES)["details"]
    assert behaviour["behaviour"]["delegations_removed"] == ["reviewer"]
    # The refused spawn is not among the new release's calls: the comparison says it is gone.
    assert "sessions_spawn" in behaviour["behaviour"]["tools_removed"], behaviour


def test_the_side_by_side_output_shows_the_regression(gate: dict[str, Any]) -> None:
    out = gate["proc"].stdout
    table = out[out.index("Variants side by side:") :]
    header, delegates, writes = table.splitlines()[1:4]
    assert f"{OLD} (reference)" in header and NEW in header
    assert delegates.split()[:4] == ["delegates-the-review", "pass", "FAIL", "↓"], table
    assert writes.split() == ["writes-notes", "pass", "pass"], table
    assert f"{NEW} against {OLD}: 1 regressed, 1 unchanged; fails the job" in out
    assert f"REGRESSED {DELEGATES} @ {NEW}: pass → fail (reference: {OLD})" in out
    summary = gate["summary"]
    assert OLD in summary and NEW in summary and "regressed" in summary, summary


def test_each_release_did_what_its_tool_search_default_says(gate: dict[str, Any]) -> None:
    """What the scripted model saw: the tools each gateway offered on the first call, and the
    gateway's answer to the direct `sessions_spawn` call on the next one."""
    first = [r for r in gate["delegate_calls"] if r.step == 0]
    offered = [{t["function"]["name"] for t in (r.body or {})["tools"]} for r in first]
    assert len(offered) == 2, offered
    old = next(tools for tools in offered if TOOL_CALL not in tools)  # 2026.9.5: every tool
    new = next(tools for tools in offered if TOOL_CALL in tools)  # 2026.9.6: Tool Search
    assert "sessions_spawn" in old and {"tool_search", "tool_describe"} <= new
    assert "sessions_spawn" not in new and {"write", "read", "exec"} <= new
    assert all(r.wrapped == () for r in first)  # the model called sessions_spawn by name

    answers = [
        _text((r.body or {})["messages"], "tool") for r in gate["delegate_calls"] if r.step == 1
    ]
    assert sorted(a.startswith("Tool sessions_spawn not found") for a in answers) == [False, True]
    accepted = next(a for a in answers if not a.startswith("Tool "))
    assert json.loads(accepted)["status"] == "accepted", accepted


def test_each_gateway_log_shows_its_release(gate: dict[str, Any]) -> None:
    """The new release logs its Tool Search catalogue and still logs the refused call's tool
    start and end, as for a real call (only the plugin's records tell it was refused); the old
    one runs the reviewer."""
    old, new = gate["logs"][OLD], gate["logs"][NEW]
    assert "tool-search: cataloged" in new and "tool-search: cataloged" not in old
    for log in (old, new):
        assert "tool=sessions_spawn" in log
    assert "agent:reviewer:subagent:" in old and "agent:reviewer:subagent:" not in new


def test_the_set_up_installs_the_release_the_contracts_compare_with() -> None:
    """scripts/test.sh installs the reference release outside the namespace, where it can."""
    config = yaml.safe_load((CONTRACTS / "clawspec.yaml").read_text("utf-8"))
    versions = [v["openclaw_version"] for v in config["variants"]]
    assert versions == [PREVIOUS, PINNED] and PINNED == OPENCLAW_VERSION
    assert f"OPENCLAW_VERSION={PREVIOUS} bash scripts/install-openclaw.sh" in (
        REPO / "scripts" / "test.sh"
    ).read_text("utf-8")


def _text(messages: list[dict[str, Any]], role: str) -> str:
    """The last message of `role` as text (a string or a list of text parts)."""
    content = next(m for m in reversed(messages) if m.get("role") == role).get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)

"""Variants through the real `clawspec run` CLI against the local hooks server (127.0.0.1,
OpenClaw's hooks wire format): each scenario runs once per variant, in scenario then variant
order, the hook request carrying the variant's model, thinking and agent; `--variant` and
CLAWSPEC_VARIANTS pick some; a target-mode variant runs against its own gateway with its own
token; bad definitions are usage errors (exit 2) before anything runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.gateway.bringup import BringUpOptions, build_config
from clawspec.reports.json_report import schema_path
from tests.support.hooks_api import HooksServer, serving_cli

TOKEN = "hook-token-variants-3f9e1d"
OTHER_TOKEN = "hook-token-other-gateway-8a7b6c"
CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: writes
    when: {invoke: "/send-newsletter [write:out/{{run_id}}.md]"}
    then:
      - type: artifact_exists
        path: "out/{{run_id}}.md"
  - name: second
    when: {invoke: "/send-newsletter again [write:out/{{run_id}}.md]"}
    then:
      - type: artifact_exists
        path: "out/{{run_id}}.md"
"""
VARIANTS = """\
report_dir: reports
concurrency: 3
variants:
  - name: sonnet
    model: anthropic/claude-sonnet-4-6
  - name: haiku
    model: anthropic/claude-haiku-4-5
    thinking: low
    required: false
  - name: reviewer
    agent_id: reviewer
"""


@pytest.fixture
def hooks(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with serving_cli(TOKEN, workspace, monkeypatch) as server:
        yield server


def _config(workspace: Path, text: str) -> None:
    (workspace / "clawspec.yaml").write_text(text, encoding="utf-8")


def _report(workspace: Path) -> dict[str, Any]:
    data = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


def _agent_bodies(server: HooksServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"].endswith("/agent")]


def test_every_scenario_runs_on_every_variant_with_its_hook_fields(
    workspace: Path, hooks: HooksServer, write_contract: Callable[..., Path]
) -> None:
    _config(workspace, VARIANTS)
    write_contract(CONTRACT)
    assert main(["run", "."]) == 0
    results = _report(workspace)["scenarios"]
    # scenario order, then variant order; each result keyed by (id, variant)
    assert [(r["name"], r["variant"]) for r in results] == [
        ("writes", "sonnet"),
        ("writes", "haiku"),
        ("writes", "reviewer"),
        ("second", "sonnet"),
        ("second", "haiku"),
        ("second", "reviewer"),
    ]
    assert {r["id"] for r in results} == {
        "case.clawspec.yaml::writes",
        "case.clawspec.yaml::second",
    }
    assert len({r["run_id"] for r in results}) == 6
    sent = {
        (b.get("model"), b.get("thinking"), b["agentId"])
        for b in _agent_bodies(hooks)
        if "/send-newsletter [write" in b["message"]
    }
    assert sent == {
        ("anthropic/claude-sonnet-4-6", None, "main"),
        ("anthropic/claude-haiku-4-5", "low", "main"),
        (None, None, "reviewer"),
    }


def test_variant_flag_and_environment_pick_variants(
    workspace: Path,
    hooks: HooksServer,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _config(workspace, VARIANTS)
    write_contract(CONTRACT)
    assert main(["run", ".", "--scenario", "writes", "--variant", "reviewer"]) == 0
    assert [(r["name"], r["variant"]) for r in _report(workspace)["scenarios"]] == [
        ("writes", "reviewer")
    ]
    # comma or line separated, as the action input may be written; config order is kept
    monkeypatch.setenv("CLAWSPEC_VARIANTS", "reviewer,\nsonnet")
    assert main(["run", ".", "--scenario", "writes"]) == 0
    assert [r["variant"] for r in _report(workspace)["scenarios"]] == ["sonnet", "reviewer"]


def test_without_variants_nothing_changes(
    workspace: Path, hooks: HooksServer, write_contract: Callable[..., Path]
) -> None:
    write_contract(CONTRACT)
    assert main(["run", "."]) == 0
    results = _report(workspace)["scenarios"]
    assert [(r["name"], r["variant"]) for r in results] == [("writes", None), ("second", None)]
    assert all("model" not in b and "thinking" not in b for b in _agent_bodies(hooks))


def test_a_target_mode_variant_runs_on_its_own_gateway_with_its_own_token(
    workspace: Path,
    hooks: HooksServer,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with HooksServer(OTHER_TOKEN, workspace) as other:
        monkeypatch.setenv("OTHER_HOOKS_TOKEN", OTHER_TOKEN)
        _config(
            workspace,
            "report_dir: reports\nvariants:\n  - name: current\n  - name: canary\n"
            f"    gateway_base_url: {other.base_url}\n    hooks_token_env: OTHER_HOOKS_TOKEN\n",
        )
        write_contract(CONTRACT)
        assert main(["run", ".", "--scenario", "writes"]) == 0
        assert [b["agentId"] for b in _agent_bodies(hooks)] == ["main"]
        assert [r["authorization"] for r in other.requests if r["path"].endswith("/agent")] == [
            f"Bearer {OTHER_TOKEN}"
        ]
    results = _report(workspace)["scenarios"]
    assert [(r["variant"], r["status"]) for r in results] == [
        ("current", "pass"),
        ("canary", "pass"),
    ]
    written = capsys.readouterr()
    report_text = (workspace / "reports" / "clawspec-report.json").read_text("utf-8")
    assert OTHER_TOKEN not in written.out + written.err + report_text


def test_an_advisory_variants_gateway_that_does_not_answer_stops_only_its_runs(
    workspace: Path,
    hooks: HooksServer,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An advisory variant never fails the job: its own gateway down skips its runs, with
    the reason; the reference's run on its live gateway and is judged. A required variant's
    gateway down is exit 3 naming the variant and the setting to correct."""
    down = "http://127.0.0.1:9"
    _config(
        workspace,
        "report_dir: reports\nvariants:\n  - name: current\n  - name: canary\n"
        f"    gateway_base_url: {down}\n    required: false\n",
    )
    write_contract(CONTRACT)
    assert main(["run", ".", "--scenario", "writes"]) == 0
    results = _report(workspace)["scenarios"]
    assert [(r["variant"], r["status"]) for r in results] == [
        ("current", "pass"),
        ("canary", "skip"),
    ]
    assert results[1]["message"].startswith(
        f"not run: the gateway of advisory variant canary could not be reached (nothing answers "
        f"at {down}"
    )
    capsys.readouterr()
    _config(
        workspace,
        "report_dir: reports\nvariants:\n  - name: current\n  - name: canary\n"
        f"    gateway_base_url: {down}\n",
    )
    assert main(["run", ".", "--scenario", "writes"]) == 3
    err = capsys.readouterr().err
    assert f"variant canary: nothing answers at {down}" in err
    assert "correct the gateway_base_url of variant canary" in err


def test_an_advisory_variants_unreachable_gateway_is_not_asked_for_its_chat_endpoint(
    workspace: Path,
    hooks: HooksServer,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its conversations are skipped with its other runs: asking its chat endpoint before
    the run would end the run with exit 3 after all."""
    monkeypatch.setenv("CLAWSPEC_GATEWAY_AUTH_TOKEN", "gw-token-variants-5d2e")
    _config(
        workspace,
        "report_dir: reports\nvariants:\n  - name: current\n  - name: canary\n"
        "    gateway_base_url: http://127.0.0.1:9\n    required: false\n",
    )
    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: skills/news}\nscenarios:\n'
        "  - name: talks\n    turns:\n      - say: hello\n"
        "        then: [{type: reply_contains, text: hello}]\n"
    )
    assert main(["run", ".", "--variant", "canary"]) == 0
    (result,) = _report(workspace)["scenarios"]
    assert result["status"] == "skip"
    assert result["message"].startswith("not run: the gateway of advisory variant canary")


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["run", ".", *argv]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            "variants:\n  - name: a\n  - name: a\n",
            "clawspec.yaml:1:1: variants: variant names must be unique; found twice: a",
        ),
        (
            "variants:\n  - {name: a, reference: true}\n  - {name: b, reference: true}\n",
            "at most one variant may be the reference; found ['a', 'b']",
        ),
        (
            "variants:\n  - name: a\n  - name: next\n    openclaw_version: '2026.9.7'\n",
            "clawspec.yaml:4:5: variant 'next': openclaw_version is not allowed in target mode",
        ),
        (
            "variants:\n  - name: a\n    openclaw_config: {tools: {toolSearch: false}}\n",
            "clawspec.yaml:3:5: variant 'a': openclaw_config is not allowed in target mode",
        ),
        (
            "gateway: {mode: bring_up}\nvariants:\n  - name: far\n"
            "    gateway_base_url: http://127.0.0.1:9\n",
            "clawspec.yaml:4:5: variant 'far': gateway_base_url is not allowed in bring-up mode",
        ),
        (
            "variants:\n  - name: 'has space'\n",
            "clawspec.yaml:2:5: variants.0.name: String should match pattern",
        ),
        (
            "variants:\n  - name: a\n    hooks_token_env: SOME_TOKEN\n",
            "variant 'a': hooks_token_env needs gateway_base_url",
        ),
    ],
)
def test_bad_variant_definitions_are_usage_errors(
    workspace: Path,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    config: str,
    expected: str,
) -> None:
    _config(workspace, config)
    write_contract(CONTRACT)
    err = _usage_error(capsys)
    assert expected in err
    assert "Traceback" not in err


def test_an_unknown_variant_lists_the_known_ones(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _config(workspace, VARIANTS)
    write_contract(CONTRACT)
    err = _usage_error(capsys, "--variant", "opus")
    assert (
        "variant opus (--variant, CLAWSPEC_VARIANTS): no such variant; the configuration "
        "defines sonnet, haiku, reviewer"
    ) in err
    _config(workspace, "report_dir: reports\n")
    assert "the configuration defines no variants" in _usage_error(capsys, "--variant", "opus")


def test_an_unset_hooks_token_variable_is_a_usage_error(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with HooksServer(OTHER_TOKEN, workspace) as other:
        _config(
            workspace,
            f"variants:\n  - name: canary\n    gateway_base_url: {other.base_url}\n"
            "    hooks_token_env: CANARY_HOOKS_TOKEN_UNSET\n",
        )
        write_contract(CONTRACT)
        err = _usage_error(capsys)
        assert other.requests == []
    assert "variant 'canary': hooks_token_env names CANARY_HOOKS_TOKEN_UNSET, which is not set" in (
        err
    )


def test_replay_of_a_variant_without_cassettes_is_an_error_naming_it(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _config(workspace, VARIANTS)
    write_contract(CONTRACT)
    recorded = workspace / ".clawspec" / "cassettes" / "case.clawspec" / "writes" / "sonnet"
    recorded.mkdir(parents=True)
    (recorded / "1.json").write_text("{}", encoding="utf-8")
    err = _usage_error(capsys, "--model-traffic", "replay", "--scenario", "writes")
    assert "model_traffic replay: variant 'haiku' has no cassettes" in err
    assert "--variant haiku" in err
    assert "also missing: reviewer" in err


def test_bring_up_makes_the_variants_models_usable(tmp_path: Path) -> None:
    user = tmp_path / "openclaw.json"
    user.write_text(
        json.dumps(
            {
                "agents": {"defaults": {"modelPolicy": {"allow": ["fake/fake-model"]}}},
                "models": {
                    "providers": {
                        "fake": {"models": [{"id": "fake-model", "name": "F", "maxTokens": 7}]}
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    options = BringUpOptions(
        user_config=user, models=("fake/fake-model-b", "fake/fake-model", "anthropic/x")
    )
    config = build_config(
        options,
        state_dir=tmp_path,
        port=1,
        gateway_token="g",
        hooks_token="h",
        plugin_output=tmp_path / "p.jsonl",
    )
    assert config["agents"]["defaults"]["modelPolicy"]["allow"] == [
        "fake/fake-model",
        "fake/fake-model-b",
        "anthropic/x",
    ]
    assert config["models"]["providers"]["fake"]["models"] == [
        {"id": "fake-model", "name": "F", "maxTokens": 7},
        {"id": "fake-model-b", "name": "fake-model-b", "maxTokens": 7},
    ]
    assert "anthropic" not in config["models"]["providers"]  # OpenClaw's own catalog


def test_runs_of_one_scenario_never_overlap_while_other_scenarios_fill_the_lanes(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, write_contract: Callable[..., Path]
) -> None:
    """A scenario's variants and attempts share the workspace: one run's `write` would cut the
    file another is checking, so they run one after another; other scenarios run meanwhile."""
    lock = threading.Lock()
    in_flight: dict[str, int] = {}
    most: dict[str, int] = {}
    both = threading.Event()  # a run of each scenario in flight at once

    def on_run(body: dict[str, Any], run_id: str) -> None:
        name = body["name"]
        with lock:
            in_flight[name] = in_flight.get(name, 0) + 1
            most[name] = max(most.get(name, 0), in_flight[name])
            if all(in_flight.get(n) for n in ("writes", "second")):
                both.set()
        # Hold the run until the other scenario has one in flight too (or give up): a
        # scheduler that let a scenario's own runs overlap would start them meanwhile.
        both.wait(20)
        with lock:
            in_flight[name] -= 1

    _config(workspace, VARIANTS.replace("concurrency: 3", "concurrency: 4\nrepeat: 2"))
    write_contract(CONTRACT)
    with HooksServer(TOKEN, workspace, on_run=on_run) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        assert main(["run", "."]) == 0
    assert both.is_set()  # the two scenarios did run side by side
    assert most == {"writes": 1, "second": 1}  # 6 runs each (3 variants x 2), never 2 at once
    assert len(_agent_bodies(server)) == 12

"""`clawspec bless` on a real OpenClaw gateway, through the real CLI (one gateway for the module).

The scripted provider varies its three runs (`runs` scripts): another tool order, an extra tool
in one run, a date in the written file's content that differs, other token counts. Bless runs
the scenario 3 times against the gateway (target mode), proposes only what held in all three
(the tools, the write's path as `{{today}}`, the file's sections, a reply sentence, the tool
union, a token budget) and lists the varying parts apart; `--write` appends them and the
contract still loads; a fresh run of the blessed contract passes, and an agent changed to skip a
tool call and use a new tool fails on exactly those two. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.bringup import BringUpOptions, GatewayProcess
from tests.e2e.conftest import provider_config
from tests.support.scripted_provider import ScriptedProvider

REPO = Path(__file__).resolve().parents[2]
TODAY = "2026-11-29"
NOTES = f"notes/{TODAY}.md"
USAGE = (
    {"prompt_tokens": 100, "completion_tokens": 10},
    {"prompt_tokens": 300, "completion_tokens": 40},
)


def _write(day: str, usage: dict[str, int]) -> dict[str, Any]:
    content = f"# Notes\n\n## Sources\n\nbrief.md, read on {day}\n"
    return {"tool": "write", "args": {"path": NOTES, "content": content}, "usage": usage}


READ = {"tool": "read", "args": {"path": "brief.md"}, "usage": USAGE[0]}
SAVED = "The notes are saved."
RUNS = [
    [
        READ,
        _write("2026-11-27", USAGE[0]),
        {"text": f"{SAVED} They cover the brief.", "usage": USAGE[0]},
    ],
    [
        _write("2026-11-28", USAGE[1]),
        READ,
        {
            "tool": "edit",
            "args": {"path": NOTES, "oldText": "brief.md", "newText": "brief.md (checked)"},
            "usage": USAGE[1],
        },
        {"text": f"{SAVED} I checked them twice.", "usage": USAGE[1]},
    ],
    [READ, _write("2026-11-26", USAGE[0]), {"text": f"All done. {SAVED}", "usage": USAGE[0]}],
]
CHANGED = [  # no `read`, and `exec`, which no blessed run used
    {"tool": "exec", "args": {"command": "echo hi"}},
    _write("2026-11-29", USAGE[0]),
    {"text": SAVED},
]
CONTRACT = """\
version: "1.0"
target: {type: agent, path: agents/main}
defaults: {timeout: 120}

scenarios:
  # Writes today's notes from the brief.
  - name: notes
    when:
      invoke: "Write today's notes [script:bless-notes] ({{run_id}})"
    then:
      - {type: artifact_exists, path: "notes/{{today}}.md"}   # by hand
"""

# A conversation: its first turn writes a memory file in one run of two; the second recalls.
TALK = """\
version: "1.0"
target: {type: agent, path: agents/main}
defaults: {timeout: 120}
scenarios:
  - name: talk
    turns:
      - say: "My name is Zed. [script:bless-talk-1] ({{run_id}})"
      - say: "What is my name? [script:bless-talk-2]"
        then:
          - {type: reply_contains, text: Zed}
"""
TALK_SCRIPTS: dict[str, Any] = {
    "bless-talk-1": {
        "runs": [
            [
                {"tool": "write", "args": {"path": "memory/name.md", "content": "Zed\n"}},
                {"text": "Nice to meet you, Zed."},
            ],
            [{"text": "Hello Zed, nice to meet you."}],
        ]
    },
    "bless-talk-2": [{"recall": r"My name is (\w+)", "template": "Your name is {}."}],
}

pytestmark = pytest.mark.e2e


def _cli(work: Path, gateway: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_HOOKS_TOKEN": gateway.hooks_token, "PYTHONPATH": str(REPO)})
    env["CLAWSPEC_GATEWAY_AUTH_TOKEN"] = gateway.gateway_token  # conversations
    return subprocess.run(
        [sys.executable, "-m", "clawspec", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=work,
    )


@pytest.fixture(scope="module")
def blessed(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Bless (3 runs) and write; then a fresh run, and a run of a changed agent."""
    root = tmp_path_factory.mktemp("bless")
    work = root / "work"
    (work / "agents" / "main" / "tests").mkdir(parents=True)
    contract = work / "agents" / "main" / "tests" / "notes.yaml"
    contract.write_text(CONTRACT, "utf-8")
    (work / "brief.md").write_text("# Brief\n\nSummarise the week.\n", "utf-8")
    done: dict[str, Any] = {"before": CONTRACT}
    talk = work / "agents" / "main" / "tests" / "talk.yaml"
    talk.write_text(TALK, "utf-8")
    with ScriptedProvider({"bless-notes": {"runs": RUNS}, **TALK_SCRIPTS}) as provider:
        options = BringUpOptions(
            command=[openclaw_launcher, "gateway", "run"],
            state_dir=root / "state",
            extra_config=provider_config(provider.base_url),
            default_workspace=work,
        )
        with GatewayProcess(options) as gateway:
            (work / "clawspec.yaml").write_text(
                f"gateway_base_url: {gateway.base_url}\n"
                f"hooks_path: {gateway.hooks_path}\n"
                f"gateway_log_pattern: {gateway.log_path}\n"
                f"plugin_output: {gateway.plugin_output_path}\n"
                f"openclaw_state_dir: {gateway.state_dir}\n"
                f"today: '{TODAY}'\n"
                "report_dir: reports\n",
                "utf-8",
            )
            bless = ["bless", str(contract), "--scenario", "notes", "--runs", "3"]
            done["bless"] = _cli(work, gateway, *bless, "--write")
            done["written"] = contract.read_text("utf-8")
            done["bless_report"] = json.loads(
                (work / "reports" / "clawspec-report.json").read_text()
            )
            done["fresh"] = _cli(work, gateway, "run", str(contract), "--no-color")
            done["fresh_report"] = json.loads(
                (work / "reports" / "clawspec-report.json").read_text()
            )
            talk_args = ["bless", str(talk), "--scenario", "talk", "--runs", "2", "--write"]
            done["talk"] = _cli(work, gateway, *talk_args)
            done["talk_written"] = talk.read_text("utf-8")
            provider.add_script("bless-notes", CHANGED)
            done["changed"] = _cli(work, gateway, "run", str(contract), "--no-color")
            done["changed_report"] = json.loads(
                (work / "reports" / "clawspec-report.json").read_text()
            )
    return done


def test_bless_proposes_only_what_held_in_every_run(blessed: dict[str, Any]) -> None:
    proc = blessed["bless"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "3 good runs of 3 (pass or warn)" in out, out
    proposed = [line for line in out.splitlines() if line.startswith("  - ")]
    wanted = [
        "{type: tool_was_called, tool: read}",
        "{type: tool_was_called, tool: write}",
        "{type: tool_called_with, tool: read, args: {path: brief.md}}",
        # The content's date varied: a pattern, never the literal of one run.
        "{type: tool_called_with, tool: write, args: {path: 'notes/{{today}}.md', content: "
        r'{matches: "^# Notes\\n\\n## Sources\\n\\nbrief\\.md, read on '
        r'\\d{4}-\\d{2}-\\d{2}\\n$"}}}',
        "{type: artifact_contains, path: 'notes/{{today}}.md', sections: [Notes, Sources]}",
        "{type: reply_contains, text: The notes are saved.}",
        "{type: run_completed}",
        "{type: tool_not_permitted, allowed_tools: [edit, read, write]}",
    ]
    for item in wanted:
        assert any(line.startswith(f"  - {item}") for line in proposed), (item, out)
    budget = next(line for line in proposed if "token_budget" in line)
    assert "# held in 3 of 3 runs; tokens " in budget and "\u2013" in budget, budget
    # What varied is listed apart, never proposed.
    unstable = out[out.index("# not held in every run") :]
    assert "{type: tool_was_called, tool: edit}  # held in 1 of 3 runs" in unstable
    assert "They cover the brief" not in "\n".join(proposed)
    assert "2026-11-2" not in "\n".join(proposed)  # no literal date: {{today}} or a pattern
    assert "tool: edit}" not in "\n".join(proposed)


def test_write_keeps_the_file_and_the_blessed_contract_passes_fresh_runs(
    blessed: dict[str, Any],
) -> None:
    before, written = blessed["before"], blessed["written"]
    assert written.startswith(before), written
    added = written[len(before) :].splitlines()
    assert added and all(line.startswith("      - {type: ") for line in added), added
    # The hand-written artifact_exists is there already: not added twice.
    assert not any("artifact_exists" in line for line in added)
    assert f"wrote {len(added)} item(s)" in blessed["bless"].stdout
    fresh = blessed["fresh"]
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    (scenario,) = blessed["fresh_report"]["scenarios"]
    assert scenario["status"] == "pass"
    assert len(scenario["assertions"]) == 1 + len(added)


def test_the_blessed_contract_fails_an_agent_that_changed(blessed: dict[str, Any]) -> None:
    changed = blessed["changed"]
    assert changed.returncode == 1, changed.stdout + changed.stderr
    (scenario,) = blessed["changed_report"]["scenarios"]
    failed = {(a["type"], a["status"]) for a in scenario["assertions"] if a["status"] != "pass"}
    assert ("tool_was_called", "fail") in failed  # read was left out
    assert ("tool_not_permitted", "fail") in failed  # exec is new
    messages = " ".join(a["message"] for a in scenario["assertions"])
    assert "exec" in messages and "read" in messages


def test_the_report_keeps_each_attempts_own_evidence(blessed: dict[str, Any]) -> None:
    (scenario,) = blessed["bless_report"]["scenarios"]
    assert len(scenario["contract_digest"]) == 64
    runs = scenario["attempts"]["runs"]
    assert len(runs) == 3
    orders = [[t["name"] for t in run["evidence"]["tools"]] for run in runs]
    assert orders == [["read", "write"], ["write", "read", "edit"], ["read", "write"]], orders
    write = next(t for t in runs[1]["evidence"]["tools"] if t["name"] == "write")
    assert write["args"]["content"].endswith("read on 2026-11-28\n")
    files = runs[0]["evidence"]["files"]
    assert files == [{"path": NOTES, "sections": ["Notes", "Sources"], "fields": None}]
    assert runs[0]["evidence"]["reply"] == f"{SAVED} They cover the brief."
    assert all(isinstance(run["evidence"]["tokens"], int) for run in runs), (
        [(r["tokens"], r["evidence"]["tokens"]) for r in runs],
        scenario["evidence"],
    )


def test_a_conversation_gets_a_proposal_per_turn_written_into_each_turn(
    blessed: dict[str, Any],
) -> None:
    proc = blessed["talk"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    turn1 = out[out.index("# turn 1's then:") : out.index("# turn 2's then:")]
    turn2 = out[out.index("# turn 2's then:") : out.index("# the scenario's then:")]
    whole = out[out.index("# the scenario's then:") :]
    # The write happened in one run of two: apart, never proposed.
    assert "#   - {type: tool_was_called, tool: write}  # held in 1 of 2 runs" in turn1
    assert "  - {type: reply_contains, text: Your name is Zed.}  # held in 2 of 2 runs" in turn2
    assert "  - {type: run_completed}  # held in 2 of 2 runs" in whole
    assert "{type: tool_not_permitted, allowed_tools: [write]}" in whole
    written = blessed["talk_written"]
    assert written.startswith(TALK[: TALK.index("        then:")])
    assert "          - {type: reply_contains, text: Your name is Zed.}" in written
    assert "\n    then:\n      - {type: run_completed}" in written

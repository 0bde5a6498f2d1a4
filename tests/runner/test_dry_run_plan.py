"""`clawspec run --dry-run` says what a run would do, and only what it can know: where a
brought-up gateway listens and logs is decided when it starts; each variant's model and the
reference; a cost limit that a model without a price would stop at its first run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec.cli import main

CONTRACT = (
    'version: "1.0"\ntarget: {type: skill, path: skills/news}\nscenarios:\n'
    '  - name: logged\n    when: {invoke: "go"}\n'
    "    then: [{type: tool_was_called, tool: write, log_path: '{{gateway_log}}'}]\n"
)


def _configure(workspace: Path, text: str) -> None:
    config = workspace / "clawspec.yaml"
    config.write_text(config.read_text("utf-8") + text, encoding="utf-8")


def test_bring_up_plans_a_free_port_and_a_private_log(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT)
    (workspace / "openclaw.json").write_text(
        '{agents: {defaults: {model: "acme/agent-1"}}}', encoding="utf-8"
    )
    _configure(workspace, "gateway: {mode: bring_up, config: openclaw.json}\n")
    assert main(["run", ".", "--dry-run", "--max-cost-usd", "0.01"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "plan: 1 scenario(s); gateway brought up for the run on a free 127.0.0.1 port, "
        "its log in its private state folder;"
    )
    assert "18789" not in out and "/tmp/openclaw" not in out
    assert 'log_path="<the brought-up gateway\'s log>"' in out or (
        "log_path='<the brought-up gateway's log>'" in out
    )
    lines = out.splitlines()
    assert lines[-2] == "budget: $0.01"
    assert lines[-1].startswith(
        "warning: no model_pricing for 'acme/agent-1': unless OpenClaw reports its cost, the "
        "first finished run of it has an unknown cost and stops the run"
    )


def test_variant_lines_name_each_model_and_the_reference(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT)
    _configure(
        workspace,
        "gateway_base_url: 'http://127.0.0.1:9'\n"
        "model_pricing: {acme/big: {input_per_mtok: 1, output_per_mtok: 2}}\n"
        "variants:\n"
        "  - {name: big, model: acme/big, reference: true}\n"
        "  - {name: mini, model: acme/mini, required: false, thinking: low}\n",
    )
    assert main(["run", ".", "--dry-run", "--max-cost-usd", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("plan: 2 scenario(s); gateway http://127.0.0.1:9 (target);")
    assert lines[1:3] == [
        "variant big (reference): model acme/big",
        "variant mini (advisory): model acme/mini, thinking low",
    ]
    # Only the model without a price is warned about; target mode: only the overrides known.
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1 and "'acme/mini'" in warnings[0]

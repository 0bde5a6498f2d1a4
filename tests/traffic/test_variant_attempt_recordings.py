"""A variant whose only recordings are a repeated scenario's attempts (`<scenario>/<variant>/
attempt-<n>/`, what `--model-traffic record` with `repeat` writes) has been recorded: replay
must not refuse it as if it had none."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec import api
from clawspec.errors import ConfigError
from clawspec.runner.traffic import require_variant_cassettes, scenario_folder

CONTRACT = """version: "1.0"
target: {type: skill, path: skills/x}
scenarios:
  - name: writes
    repeat: 2
    when: {invoke: "go"}
    then: [{type: artifact_exists, path: out/a.md}]
"""


def test_a_variant_recorded_only_in_attempt_folders_replays(
    workspace: Path, write_contract
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\nmodel_traffic: replay\nvariants:\n"
        "  - {name: plain, model: fake/a}\n  - {name: low, model: fake/a, thinking: low}\n",
        "utf-8",
    )
    write_contract(CONTRACT)
    loaded = api.load(["."])
    plans = api.plan(loaded)
    with pytest.raises(ConfigError, match="variant 'plain' has no cassettes"):
        require_variant_cassettes(plans, loaded.settings, loaded.workspace)
    for one in plans:
        for attempt in (1, 2):
            folder = scenario_folder(one, loaded.settings, loaded.workspace) / f"attempt-{attempt}"
            folder.mkdir(parents=True)
            (folder / "1.json").write_text("{}", "utf-8")
    require_variant_cassettes(plans, loaded.settings, loaded.workspace)  # no error

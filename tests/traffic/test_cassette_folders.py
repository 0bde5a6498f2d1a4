"""Cassette folders come from the scenario identity; folders recorded before it still count."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec.api import load
from clawspec.cli import main
from clawspec.identity import ScenarioIdentity
from clawspec.runner.scenario import ScenarioPlan
from clawspec.runner.traffic import replay_folder, scenario_folder
from clawspec.traffic.cassette import identity_dir, scenario_dir, write_dir
from tests.traffic.test_cassettes_cli import CONTRACT, cassette


def _plans(paths: list[str]) -> list[ScenarioPlan]:
    loaded = load(paths)
    return [
        ScenarioPlan(contract, index, scenario)
        for contract in loaded.contracts
        for index, scenario in enumerate(contract.contract.scenarios)
    ]


def test_from_a_sub_folder_a_replay_finds_the_folders_a_run_from_the_root_recorded(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT, "skills/x/tests/scenarios.yaml")
    root = workspace / ".clawspec" / "cassettes"
    for name in ("drafts", "sends"):  # laid out as every earlier version recorded them
        folder = root / "skills" / "x" / "tests" / "scenarios" / name
        write_dir(folder, [cassette(name, 1)])
    os.chdir(workspace / "skills")
    plans = _plans(["x/tests/scenarios.yaml"])
    loaded = load(["x/tests/scenarios.yaml"])
    assert [scenario_folder(p, loaded.settings, loaded.workspace) for p in plans] == [
        root / "skills/x/tests/scenarios/drafts",
        root / "skills/x/tests/scenarios/sends",
    ]
    assert main(["cassettes", "check", "x/tests/scenarios.yaml"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "ok"


def test_a_contract_outside_the_workspace_still_finds_its_old_folder(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Earlier versions named such a contract's folder after its path as given on the
    command line; the identity has its absolute path. A replay reads the old folder while
    only it exists, and a new recording goes to the identity's folder."""
    shared = tmp_path / "shared" / "x.clawspec.yaml"
    shared.parent.mkdir()
    shared.write_text(CONTRACT, encoding="utf-8")
    given = "../shared/x.clawspec.yaml"
    root = workspace / ".clawspec" / "cassettes"
    old = scenario_dir(root, given, "drafts")  # the old name: the path as shown
    assert old == root / "shared" / "x.clawspec" / "drafts"
    write_dir(old, [cassette("drafts", 1)])
    loaded = load([given])
    drafts, sends = _plans([given])
    new = identity_dir(root, drafts.identity)
    assert drafts.identity.contract == shared.resolve().as_posix()
    assert scenario_folder(drafts, loaded.settings, loaded.workspace) == new != old
    assert replay_folder(drafts, loaded.settings, loaded.workspace) == old
    assert replay_folder(sends, loaded.settings, loaded.workspace) == identity_dir(
        root, sends.identity
    )
    assert main(["cassettes", "check", given]) == 0  # drafts found; sends has none
    out = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("stale:") for line in out)
    assert [line for line in out if line.startswith("missing:")] == [
        f"missing: {sends.identity.id}: no recording (replay would be an error)"
    ]
    write_dir(new, [cassette("drafts", 1)])  # recorded again: the new folder wins
    assert replay_folder(drafts, loaded.settings, loaded.workspace) == new


def test_a_variant_records_into_a_folder_of_its_own() -> None:
    identity = ScenarioIdentity("skills/x/tests/scenarios.yaml", "drafts", "easter")
    root = Path("/cassettes")
    assert identity_dir(root, identity) == root / "skills/x/tests/scenarios/drafts_easter"
    assert identity_dir(root, identity.with_variant("haiku")) == (
        root / "skills/x/tests/scenarios/drafts_easter/haiku"
    )

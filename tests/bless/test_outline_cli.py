"""Bless an outline: each row's invariants printed, and what holds across the rows written, a
row's value written as its `{{vars.X}}`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from clawspec.bless.digest import scenario_digest
from clawspec.cli import main
from clawspec.contracts.loader import load_contract
from clawspec.reports.json_report import render_json
from clawspec.status import Status
from tests.bless.factory import call, evidence, report, result

OUTLINE = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: greets
    examples:
      - {id: en, city: Berlin}
      - {id: fr, city: Lyon}
    when: {invoke: "weather for {{vars.city}}"}
    then:
      - {type: file_absent, path: never.md}
"""


def _row(city: str, tokens: int) -> object:
    return evidence(
        [call("weather", city=city, units="metric"), call("read", path="style.md")],
        tokens=tokens,
        reply=f"The weather in {city} is fine. Have a good day.",
    )


def test_rows_are_printed_apart_and_written_together(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(OUTLINE)
    digest = scenario_digest(yaml.safe_load(OUTLINE), 0)
    results = [
        result(
            contract.name,
            "greets",
            digest,
            [(Status.PASS, _row(c, t)) for t in (100, 120)],
            example=row,
        )
        for row, c in (("en", "Berlin"), ("fr", "Lyon"))
    ]
    path = workspace / "r.json"
    path.write_text(render_json(report(*results)), encoding="utf-8")
    args = ["bless", str(contract), "--scenario", "greets", "--from-report", str(path), "--write"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "# row en: 2 good runs of 2" in out and "# row fr: 2 good runs of 2" in out
    across = out[out.index("# across every row and variant above") :]
    assert (
        "{type: tool_called_with, tool: weather, args: {city: '{{vars.city}}', units: metric}}"
        in across
    )
    assert "{type: reply_contains, text: Have a good day.}" in across
    written = contract.read_text("utf-8")
    assert written.startswith(OUTLINE)
    assert "'{{vars.city}}'" in written[len(OUTLINE) :]
    loaded = load_contract(contract, workspace, dict(os.environ))
    assert not isinstance(loaded, list), loaded
    # Each row's copy of the outline carries the written items, its own city in place.
    berlin = next(s for s in loaded.contract.scenarios if "Berlin" in str(s.when))
    called_with = next(a for a in berlin.then if a.type == "tool_called_with")
    assert called_with.args == {"city": "Berlin", "units": "metric"}


FILE_OUTLINE = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: greets
    examples: {file: cities.csv}
    when: {invoke: "weather for {{vars.city}}"}
    then:
      - {type: file_absent, path: never.md}
"""


def test_rows_read_from_a_data_file_are_written_as_their_variables(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(FILE_OUTLINE)
    (contract.parent / "cities.csv").write_text("id,city\nen,Berlin\nfr,Lyon\n", "utf-8")
    digest = scenario_digest(yaml.safe_load(FILE_OUTLINE), 0, contract.parent)
    results = [
        result(
            contract.name,
            "greets",
            digest,
            [(Status.PASS, _row(c, t)) for t in (100, 120)],
            example=row,
        )
        for row, c in (("en", "Berlin"), ("fr", "Lyon"))
    ]
    path = workspace / "r.json"
    path.write_text(render_json(report(*results)), encoding="utf-8")
    args = ["bless", str(contract), "--scenario", "greets", "--from-report", str(path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    across = out[out.index("# across every row and variant above") :]
    assert (
        "{type: tool_called_with, tool: weather, args: {city: '{{vars.city}}', units: metric}}"
        in across
    )

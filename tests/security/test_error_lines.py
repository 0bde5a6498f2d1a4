"""The problems that stop a command are printed one line each: a key, a type or a file name in
a contract or clawspec.yaml that holds a line break must not start a line of its own, where
GitHub's runner would read `::error::…` (or `::stop-commands::`) as a command."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main

CONTRACT = (
    'version: "1.0"\ntarget: {type: skill, path: skills/x}\nscenarios:\n'
    "  - name: a\n    when: {invoke: x}\n"
    '    then: [{type: gateway_healthy, "q\\n::error::F1": 1}]\n'
    '  - name: b\n    when: {invoke: x}\n    then: [{type: "z\\n::stop-commands::F2"}]\n'
)


def _no_command_lines(text: str) -> None:
    assert [line for line in text.splitlines() if line.lstrip().startswith("::")] == [], text


def test_contract_problems_keep_to_their_lines(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT)
    assert main(["validate", "."]) == 2
    err = capsys.readouterr().err
    _no_command_lines(err)
    assert "unknown field 'q ::error::F1'" in err
    assert "unknown assertion type 'z ::stop-commands::F2'" in err


def test_a_contract_file_named_with_a_line_break_keeps_to_its_line(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT, name="x\n::error file=a.py,line=1::F3\ny.clawspec.yaml")
    assert main(["validate", "."]) == 2
    err = capsys.readouterr().err
    _no_command_lines(err)
    assert "x ::error file=a.py,line=1::F3 y.clawspec.yaml:6:" in err


def test_config_problems_keep_to_their_lines(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT.replace("q\\n::error::F1", "q").replace("z\\n::stop", "z::stop"))
    (workspace / "clawspec.yaml").write_text(
        'report_dir: reports\n"k\\n::error::F4": 1\nconcurrency: "2\\n::error::F5"\n', "utf-8"
    )
    assert main(["validate", "."]) == 2
    err = capsys.readouterr().err
    _no_command_lines(err)
    assert "unknown option 'k ::error::F4'" in err and "::error::F5" in err

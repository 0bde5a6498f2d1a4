"""On GitHub Actions a run stopped by contract errors annotates them on their lines (the first
ten, as GitHub keeps): a pull request that breaks a contract shows where, in the Files tab."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main

BROKEN = """version: "1.0"
target: {type: skill, path: skills/a}
scenarios:
  - name: s
    when: {invoke: go}
    then:
      - {type: artifact_exist, path: out/a.md}
"""


def test_contract_errors_are_error_annotations_on_their_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "a.clawspec.yaml").write_text(BROKEN, "utf-8")
    many = "".join(f"  - name: n{i}\n    when: {{invoke: go}}\n" for i in range(12))
    head = BROKEN.partition("  - name")[0]
    (tmp_path / "tests" / "b.clawspec.yaml").write_text(head + many, "utf-8")
    assert main(["validate", "tests"]) == 2
    captured = capsys.readouterr()
    annotations = [line for line in captured.out.splitlines() if line.startswith("::error ")]
    assert annotations[0].startswith(
        "::error file=tests/a.clawspec.yaml,line=7,col=10,title=ClawSpec%3A contract error::"
    )
    assert "unknown assertion type 'artifact_exist'" in annotations[0]
    assert len(annotations) == 10  # GitHub keeps ten errors a step
    assert "error: tests/a.clawspec.yaml:7:" in captured.err  # the log keeps them all


def test_elsewhere_the_log_alone_has_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    (tmp_path / "a.clawspec.yaml").write_text(BROKEN, "utf-8")
    assert main(["validate", "a.clawspec.yaml"]) == 2
    assert "::error" not in capsys.readouterr().out

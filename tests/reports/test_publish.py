"""publish(): every configured output, each independent of the others' failures."""

from __future__ import annotations

import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.reports.publish import publish
from tests.reports.factory import mixed_report


def _github_env(tmp_path: Path) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


def test_outside_github_only_the_report_files_are_written(tmp_path: Path) -> None:
    settings = Settings(report_dir=str(tmp_path / "r"), junit=str(tmp_path / "r" / "j.xml"))
    out = io.StringIO()
    written = publish(mixed_report(), settings, {"GITHUB_STEP_SUMMARY": "x"}, stdout=out)
    assert written == [tmp_path / "r" / "clawspec-report.json", tmp_path / "r" / "j.xml"]
    ET.parse(written[1])
    assert json.loads(written[0].read_text())["totals"]["scenarios"] == 6
    assert out.getvalue() == ""


def test_without_junit_setting_no_junit_is_written(tmp_path: Path) -> None:
    written = publish(mixed_report(), Settings(report_dir=str(tmp_path)), {})
    assert [p.name for p in written] == ["clawspec-report.json"]


def test_on_github_summary_annotations_and_outputs_follow_the_masks(tmp_path: Path) -> None:
    settings = Settings(report_dir=str(tmp_path / "r"), hooks_token="hook-token-abc")
    out = io.StringIO()
    publish(mixed_report(), settings, _github_env(tmp_path), stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "::add-mask::hook-token-abc"
    assert [line.split(" ", 1)[0] for line in lines[1:]] == [
        "::error",
        "::error",
        "::notice",
        "::warning",
    ]
    assert "## ClawSpec results" in (tmp_path / "summary.md").read_text()
    assert "report_path=r/clawspec-report.json\n" in (tmp_path / "output").read_text()


def test_one_failing_output_is_a_warning_and_the_others_are_written(tmp_path: Path) -> None:
    blocked = tmp_path / "junit.xml"
    blocked.mkdir()  # a folder where the file should go: the JUnit write fails
    environ = {**_github_env(tmp_path), "GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "dir.md")}
    settings = Settings(report_dir=str(tmp_path / "r"), junit=str(blocked))
    err = io.StringIO()
    written = publish(mixed_report(), settings, environ, stdout=io.StringIO(), stderr=err)
    assert written == [tmp_path / "r" / "clawspec-report.json"]
    warnings = err.getvalue().splitlines()
    assert warnings[0].startswith("warning: JUnit XML not written: IsADirectoryError")
    assert warnings[1].startswith("warning: job summary not written: FileNotFoundError")
    output = (tmp_path / "output").read_text()
    assert "junit_path=\n" in output
    assert "total=6\n" in output


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_as_root_files_in_the_workspace_get_the_workspace_owner(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.chown(workspace, 1234, 1234)
    settings = Settings(report_dir=str(workspace / "r"), junit=str(workspace / "r" / "j.xml"))
    environ = {"GITHUB_WORKSPACE": str(workspace)}
    written = publish(mixed_report(), settings, environ)
    for path in [workspace / "r", *written]:
        assert (path.stat().st_uid, path.stat().st_gid) == (1234, 1234), path


def test_publish_takes_the_run_context_and_needs_one(tmp_path: Path) -> None:
    settings = Settings(report_dir=str(tmp_path / "r"), hooks_token="hook-token-abc")
    out = io.StringIO()
    context = CIContext.from_environ(_github_env(tmp_path))
    publish(mixed_report(), settings, context=context, stdout=out)
    assert out.getvalue().splitlines()[0] == "::add-mask::hook-token-abc"
    assert "## ClawSpec results" in (tmp_path / "summary.md").read_text()
    with pytest.raises(TypeError, match="CI context"):
        publish(mixed_report(), settings)


def test_an_unreadable_event_payload_is_named_when_the_pr_comment_is_skipped(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-event.json"
    environ = {**_github_env(tmp_path), "GITHUB_EVENT_PATH": str(missing)}
    settings = Settings(report_dir=str(tmp_path / "r"), pr_comment="always", check_run=False)
    err = io.StringIO()
    publish(mixed_report(), settings, environ, stdout=io.StringIO(), stderr=err)
    assert (
        "note: PR comment skipped: this run is not about a pull request (as far as can be "
        f"told: cannot read the event payload {missing}: No such file or directory)\n"
    ) in err.getvalue()


def test_finish_reads_the_context_once_or_takes_the_callers(tmp_path: Path) -> None:
    from clawspec.runner.finish import finish

    settings = Settings(report_dir=str(tmp_path / "r"))
    finish(mixed_report(), settings, _github_env(tmp_path))  # read from the environment
    assert "## ClawSpec results" in (tmp_path / "summary.md").read_text()
    (tmp_path / "summary.md").unlink()
    context = CIContext.from_environ(_github_env(tmp_path))
    finish(mixed_report(), settings, {}, context=context)  # the caller's, read already
    assert "## ClawSpec results" in (tmp_path / "summary.md").read_text()

"""Annotations: which results become which command, the per-step limits, repo-relative files."""

from __future__ import annotations

import io
from pathlib import Path

from clawspec import secrets as registry
from clawspec.ci_context import CIContext
from clawspec.reports.github.annotations import select_annotations, write_annotations
from clawspec.reports.github.commands import GitHubRunner
from tests.reports.factory import CONTRACT, assertion, mixed_report, report, scenario
from tests.reports.test_github_commands import parse_command


def test_each_failed_warned_and_skipped_result_gets_its_level_file_line_and_title() -> None:
    selection = select_annotations(mixed_report(), repo_root=None)
    got = [(a.level, a.file, a.line, a.title) for a in selection.annotations]
    assert got == [
        ("error", CONTRACT, 22, "ClawSpec FAIL: tool-check / tool_was_called"),
        ("error", CONTRACT, 30, "ClawSpec ERROR: broken"),
        ("notice", CONTRACT, 40, "ClawSpec SKIP: traces"),
        ("warning", CONTRACT, 52, "ClawSpec WARN: judged / trace_cost"),
    ]
    assert selection.annotations[0].message == (
        f"then[1] tool_was_called: tool 'send_email' was not called\n"
        f"scenario 'tool-check' ({CONTRACT}:17)"
    )
    assert selection.omitted == {}


def test_forty_failures_give_ten_errors_and_one_closing_notice() -> None:
    failing = [
        scenario(f"s{i}", "fail", assertion("fail", f"failure {i}", line=10 + i), line=9 + i)
        for i in range(40)
    ]
    stream = io.StringIO()
    with registry.scope() as active:  # a command's registry, holding one secret
        active.add("secret-token")
        runner = GitHubRunner(CIContext(), stream)
        write_annotations(runner, report(*failing))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "::add-mask::secret-token"
    commands = [parse_command(line) for line in lines[1:]]
    assert [name for name, _, _ in commands] == ["error"] * 10 + ["notice"]
    assert [props["line"] for _, props, _ in commands[:10]] == [str(10 + i) for i in range(10)]
    _, props, message = commands[-1]
    assert props == {"title": "ClawSpec: more results in the job summary"}
    assert message.startswith("30 more annotations not shown (30 errors)")


def test_notices_leave_room_for_the_closing_notice() -> None:
    skipped = [scenario(f"k{i}", "skip", message=f"reason {i}") for i in range(15)]
    selection = select_annotations(report(*skipped))
    levels = [a.level for a in selection.annotations]
    assert levels == ["notice"] * 10
    assert selection.annotations[-1].title == "ClawSpec: more results in the job summary"
    assert selection.omitted == {"notice": 6}


def test_file_is_relative_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    data = report(scenario("a", "fail", assertion("fail"), contract="tests/x.yaml"))
    selection = select_annotations(data, repo_root=repo, workspace=repo / "sub")
    assert selection.annotations[0].file == "sub/tests/x.yaml"
    absolute = report(scenario("a", "fail", assertion("fail"), contract=str(repo / "y.yaml")))
    assert select_annotations(absolute, repo_root=repo).annotations[0].file == "y.yaml"


def test_a_failing_turn_is_annotated_at_its_check_inside_the_turn() -> None:
    from tests.reports.conversation_report import (
        CONTRACT as TALK,
    )
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    stream = io.StringIO()
    data = conversation_report()  # the secret unmasked in it: the commands must mask it
    with secret_registered():
        write_annotations(GitHubRunner(CIContext.from_environ({}), stream), data)
    lines = [line for line in stream.getvalue().splitlines() if "add-mask" not in line]
    assert_inert("\n".join(lines))
    parsed = [parse_command(line) for line in lines]  # each reply's CR/LF/% escaped
    assert [(name, props["line"]) for name, props, _ in parsed] == [
        ("error", "14"),
        ("error", "34"),
    ]
    _, props, message = parsed[0]
    assert props == {
        "file": TALK,
        "line": "14",
        "title": "ClawSpec FAIL: remembers the name / reply_contains",
    }
    said, replied, where = message.split("\n")
    assert said == "turn 2, then[0] (reply_contains): the reply does not contain 'Zed'"
    assert replied.startswith("turn 2 replied: I don't know **x** <script>")
    assert "token *** second line" in replied and len(replied) <= len("turn 2 replied: ") + 300
    assert where == f"scenario 'remembers the name' ({TALK}:4)"
    # A turn without a reply: the scenario's message, at that turn's line.
    assert parsed[1][2].split("\n") == [
        "turn 2: the gateway closed the chat before a reply (HTTP 502)",
        "turn 2: no reply",
        f"scenario 'books a table' ({TALK}:27)",
    ]

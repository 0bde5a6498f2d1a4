"""A push whose contracts are invalid runs nothing (exit 2): the pull request's comment must not
keep showing the previous push's verdicts as if they were this one's. Through the CLI, against
the local GitHub REST server and a hook endpoint on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.support.github_api import GitHubApiServer, pull_request_job
from tests.support.hooks_api import HooksServer

TOKEN = "hooks-stopped-token-5678"
GITHUB_TOKEN = "ghs_stoppedRunToken77"
PR = 11
CONTRACT = """version: "1.0"
target: {type: skill, path: skills/x}
scenarios:
  - name: writes
    when: {invoke: "go [write:out/a.md]"}
    then: [{type: artifact_exists, path: out/a.md}]
"""
BROKEN = CONTRACT.replace("artifact_exists", "artifact_exist")


@pytest.fixture
def github(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[GitHubApiServer, HooksServer]]:
    with pull_request_job(
        monkeypatch, workspace, tmp_path,
        pr=PR, token=GITHUB_TOKEN, hooks_token=TOKEN, job="contracts", sha="f" * 40,
    ) as (server, hooks):  # fmt: skip
        yield server, hooks


def test_the_comment_of_a_push_that_ran_nothing_says_so_then_turns_back_to_results(
    workspace: Path,
    write_contract,
    github: tuple[GitHubApiServer, HooksServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, hooks = github
    write_contract(CONTRACT)
    assert main(["run", ".", "--pr-comment=always"]) == 0
    (first,) = server.comments(PR)
    assert "writes" in first["body"] and "nothing ran" not in first["body"]

    write_contract(BROKEN)
    assert main(["run", ".", "--pr-comment=always"]) == 2
    (stopped,) = server.comments(PR)  # the same comment, updated in place
    assert stopped["id"] == first["id"]
    body = stopped["body"]
    assert body.startswith("<!-- clawspec:CI:contracts -->\n### ClawSpec: nothing ran")
    assert "1 problem(s) in the contracts" in body
    assert "unknown assertion type 'artifact_exist'" in body and "case.clawspec.yaml:6" in body
    assert "clawspec-verdicts" not in body  # no verdicts: none were reached
    assert len(hooks.requests) == 1  # only the first run's
    assert "PR comment updated" in capsys.readouterr().err

    write_contract(CONTRACT)
    assert main(["run", ".", "--pr-comment=always"]) == 0
    (again,) = server.comments(PR)
    assert again["id"] == first["id"] and "nothing ran" not in again["body"]


def test_a_first_push_with_broken_contracts_gets_a_comment_unless_comments_are_off(
    workspace: Path, write_contract, github: tuple[GitHubApiServer, HooksServer]
) -> None:
    server, _ = github
    write_contract(BROKEN + "  - name: writes\n    when: {invoke: x}\n    then: []\n")
    assert main(["run", ".", "--pr-comment=off"]) == 2
    assert server.comments(PR) == []
    assert main(["run", ".", "--pr-comment=failures"]) == 2
    (comment,) = server.comments(PR)
    assert "3 problem(s) in the contracts" in comment["body"]
    assert GITHUB_TOKEN not in comment["body"]


def test_shard_auto_outside_a_sharded_job_says_it_and_a_shard_leaves_it_to_the_merge(
    workspace: Path, write_contract, github: tuple[GitHubApiServer, HooksServer]
) -> None:
    """`shard: auto` without a sharded job's variables runs (here: stops) the whole selection:
    its comment is the job's. A shard that does not publish its own leaves the comment of the
    whole to the merge job; one that does marks its own."""
    server, _ = github
    write_contract(BROKEN)
    assert main(["run", ".", "--pr-comment=always", "--shard", "1/2"]) == 2
    assert server.comments(PR) == []
    assert main(["run", ".", "--pr-comment=always", "--shard", "auto"]) == 2
    (whole,) = server.comments(PR)
    assert whole["body"].startswith("<!-- clawspec:CI:contracts -->\n### ClawSpec: nothing ran")
    (workspace / "clawspec.yaml").write_text("report_dir: reports\nshard_publish: true\n", "utf-8")
    assert main(["run", ".", "--pr-comment=always", "--shard", "2/2"]) == 2
    markers = sorted(c["body"].splitlines()[0] for c in server.comments(PR))
    assert markers == [
        "<!-- clawspec:CI:contracts -->",
        "<!-- clawspec:CI:contracts-shard-2 -->",
    ]


def test_a_merge_with_nothing_to_merge_says_so_and_leaves_no_earlier_merged_report(
    workspace: Path, write_contract, github: tuple[GitHubApiServer, HooksServer]
) -> None:
    """The shards of a broken push stop before writing a report; the merge job (run with
    `if: always()`) then finds nothing: its comment and outputs must not stay the last push's."""
    server, _ = github
    write_contract(CONTRACT + CONTRACT.split("scenarios:\n", 1)[1].replace("writes", "again"))
    merged = ["--pr-comment=always", "--junit", "merged/junit.xml", "--report-json",
              "merged/report.json"]  # fmt: skip
    for index in (1, 2):
        shard = ["--shard", f"{index}/2", "--report-json", f"shards/s{index}.json"]
        assert main(["run", ".", *shard]) == 0
    assert main(["merge", "shards/*.json", *merged]) == 0
    (green,) = server.comments(PR)
    assert "nothing ran" not in green["body"]

    write_contract(BROKEN)
    for index in (1, 2):
        shard = ["--shard", f"{index}/2", "--report-json", f"shards/s{index}.json"]
        assert main(["run", ".", *shard]) == 2
    assert not list((workspace / "shards").glob("*.json"))  # their own earlier ones, removed
    assert main(["merge", "shards/*.json", *merged]) == 2
    (stopped,) = server.comments(PR)
    assert stopped["id"] == green["id"]
    assert stopped["body"].startswith(
        "<!-- clawspec:CI:contracts -->\n### ClawSpec: nothing ran\n\nThe merge found no report"
    )
    assert "shards/*.json: matches no file" in stopped["body"]
    assert not (workspace / "merged" / "junit.xml").exists()
    assert not (workspace / "merged" / "report.json").exists()

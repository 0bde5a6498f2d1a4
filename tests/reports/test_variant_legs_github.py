"""A matrix of variant legs on GitHub (`--variant NAME`, one job each, one GITHUB_JOB): each leg
keeps its own PR comment and check run, against the local GitHub REST server (127.0.0.1) and
a hook endpoint on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.support.github_api import GitHubApiServer, pull_request_job

TOKEN = "hooks-legs-token-1234"
GITHUB_TOKEN = "ghs_variantLegsToken42"
PR = 7
CONTRACT = """version: "1.0"
target: {type: skill, path: skills/x}
scenarios:
  - name: writes
    when: {invoke: "go [write:out/a.md]"}
    then: [{type: artifact_exists, path: out/a.md}]
"""


@pytest.fixture
def github(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[GitHubApiServer]:
    with pull_request_job(
        monkeypatch, workspace, tmp_path,
        pr=PR, token=GITHUB_TOKEN, hooks_token=TOKEN, job="variant", sha="e" * 40,
    ) as (server, _):  # fmt: skip
        yield server


def test_each_variant_leg_keeps_its_own_comment_and_check_run(
    workspace: Path, write_contract, github: GitHubApiServer
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\nvariants:\n"
        "  - {name: alpha, model: fake/alpha}\n  - {name: beta, model: fake/beta}\n",
        encoding="utf-8",
    )
    write_contract(CONTRACT)
    for leg in ("alpha", "beta", "alpha"):  # a re-run of a leg updates its own
        assert main(["run", ".", "--variant", leg, "--pr-comment=always", "--check-run"]) == 0
    markers = sorted(c["body"].splitlines()[0] for c in github.comments(PR))
    assert markers == [
        "<!-- clawspec:CI:variant (alpha) -->",
        "<!-- clawspec:CI:variant (beta) -->",
    ]
    names = [run["name"] for run in github.check_runs()]
    assert names == [
        "ClawSpec: variant (alpha)",
        "ClawSpec: variant (beta)",
        "ClawSpec: variant (alpha)",
    ]
    # The whole matrix (every variant, as `merge` publishes it) keeps the job's own name.
    assert main(["run", ".", "--pr-comment=always", "--check-run"]) == 0
    assert "<!-- clawspec:CI:variant -->" in {
        c["body"].splitlines()[0] for c in github.comments(PR)
    }

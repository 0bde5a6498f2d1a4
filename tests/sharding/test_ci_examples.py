"""The sharded CI examples: GitHub (actionlint in tests/test_action.py), GitLab (GitLab's CI
JSON schema, vendored by check-jsonschema, offline) and Jenkins; every ClawSpec command and
action input in them must be one the CLI and the action accept."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

import entrypoint
from clawspec.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / ".github" / "workflows" / "sharded.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
JENKINS = ROOT / "examples" / "ci" / "Jenkinsfile"


def _tool(name: str) -> str | None:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def _parse(command: str) -> Any:
    words = shlex.split(command)
    assert words[0] == "clawspec", command
    return build_parser().parse_args(words[1:])  # SystemExit on an unknown flag


def _expressions_filled(value: str) -> str:
    return re.sub(r"\$\{\{[^}]*\}\}", "3", value)


def test_github_matrix_shards_upload_and_one_merge_job_publishes() -> None:
    workflow = yaml.safe_load(GITHUB.read_text())
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert shard["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert merge["needs"] == "shard"
    assert merge["if"] == "always()"
    uses = [step.get("uses", "") for step in shard["steps"]]
    assert "actions/upload-artifact@v4" in uses
    assert "actions/download-artifact@v4" in [s.get("uses", "") for s in merge["steps"]]
    commands = []
    for job in (shard, merge):
        (step,) = [s for s in job["steps"] if s.get("uses") == "./"]
        environ = {
            entrypoint.env_name(name): _expressions_filled(str(value))
            for name, value in step["with"].items()
        }
        assert set(step["with"]) <= {item.name for item in entrypoint.INPUTS}
        commands.append(build_parser().parse_args(entrypoint.from_inputs(environ, ROOT).argv))
    run, merged = commands
    assert (run.command, run.shard, run.durations) == ("run", "3/3", "clawspec-durations.json")
    assert (merged.command, merged.pr_comment) == ("merge", "always")
    assert merged.reports == ["clawspec-shards/**/shard-*.json"]


def test_gitlab_example_is_valid_against_gitlabs_ci_schema() -> None:
    binary = _tool("check-jsonschema")
    assert binary, "check-jsonschema is a test dependency (pyproject.toml [test])"
    done = subprocess.run(
        [binary, "--builtin-schema", "vendor.gitlab-ci", str(GITLAB)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The check can fail: a job with a wrong type is refused by the same schema.
    broken = GITLAB.parent / ".broken-gitlab-ci.yml"
    try:
        broken.write_text(GITLAB.read_text().replace("parallel: 4", "parallel: four"))
        refused = subprocess.run(
            [binary, "--builtin-schema", "vendor.gitlab-ci", str(broken)],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        broken.unlink()
    assert refused.returncode == 1, refused.stdout


def test_gitlab_parallel_jobs_and_a_merge_job_with_needs_and_junit() -> None:
    pipeline = yaml.safe_load(GITLAB.read_text())
    shards, merge = pipeline["clawspec"], pipeline["clawspec-merge"]
    assert shards["parallel"] == 4
    assert merge["needs"] == [{"job": "clawspec", "artifacts": True}]
    assert merge["artifacts"]["reports"]["junit"] == "clawspec-reports/junit.xml"
    quality = merge["artifacts"]["reports"]["codequality"]
    assert quality == "clawspec-reports/gl-code-quality.json"
    assert "reports" not in shards["artifacts"]  # one JUnit report per pipeline, not five
    run = _parse(shards["script"][0].replace("$CI_NODE_INDEX", "1"))
    assert (run.command, run.shard, run.fail_on) == ("run", "auto", "never")
    merged = _parse(merge["script"][0].split(" || ")[0])
    assert (merged.command, merged.reports, merged.junit) == (
        "merge",
        ["clawspec-shards"],
        "clawspec-reports/junit.xml",
    )
    assert merged.codequality == quality


def test_jenkins_parallel_stages_stash_unstash_merge_and_junit() -> None:
    text = JENKINS.read_text()
    for step in ("parallel branches", "stash name:", 'unstash "clawspec-shard-', "junit "):
        assert step in text, step
    run = re.search(r'sh "(clawspec run .*?)"\s*\+\s*"(.*?)"\s*\+\s*"(.*?)"', text, re.S)
    assert run
    command = "".join(run.groups()).replace("${index}", "2").replace("${SHARDS}", "4")
    parsed = _parse(command)
    assert (parsed.shard, parsed.fail_on) == ("2/4", "never")
    merge = re.search(r"sh '(clawspec merge [^']+)'", text)
    assert merge
    assert _parse(merge.group(1)).command == "merge"


def _blocks(text: str, opener: str) -> list[str]:
    """The bodies of every `opener {…}` block of a Groovy file (braces balanced)."""
    bodies = []
    for match in re.finditer(re.escape(opener) + r"\s*\{", text):
        start = match.end() - 1
        depth = 0
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                bodies.append(text[start + 1 : end])
                break
    return bodies


def test_jenkins_a_failed_shard_or_missing_report_still_reaches_the_merge() -> None:
    text = JENKINS.read_text()
    code = "\n".join(line.split("//")[0] for line in text.splitlines())  # comments out
    caught = _blocks(code, "catchError(buildResult: 'FAILURE', stageResult: 'FAILURE')")
    # Each shard's clawspec call is caught (exit 2 or 3 fails its branch, not the pipeline) ...
    assert any('sh "clawspec run' in body for body in caught)
    # ... and so is the parallel step itself, so the merge stage always runs.
    assert any(body.strip() == "parallel branches" for body in caught)
    assert re.search(r"(?m)^\s*parallel branches\s*$", code)
    assert code.count("parallel branches") == 1
    # A shard that wrote no report stashes nothing instead of failing.
    stash = re.search(r"\bstash name:[^\n]*(?:\n\s+[^\n]*)?", code)
    assert stash and "allowEmpty: true" in stash.group(0)
    # The merge stage unstashes every shard and tolerates a missing stash.
    merge = code[code.index("stage('ClawSpec merge')") :]
    (tried,) = _blocks(merge, "try")
    assert 'unstash "clawspec-shard-' in tried
    assert "catch (" in merge

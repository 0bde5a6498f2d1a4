"""GitLab Code Quality report: GitLab's documented format, stable fingerprints, clean texts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import entrypoint
from clawspec import secrets as registry
from clawspec.assertions.base import Status
from clawspec.ci_context import CIContext
from clawspec.cli import build_parser
from clawspec.commands.options import run_flags
from clawspec.config.settings import Settings
from clawspec.reports.codequality import (
    findings,
    render_codequality,
    repository_root,
    write_codequality,
)
from clawspec.reports.model import AttemptStats, Comparison, RunReport, ScenarioChange
from clawspec.reports.publish import publish
from tests.reports.factory import CONTRACT, assertion, mixed_report, report, scenario
from tests.reports.rich_report import rich_report

# GitLab's Code Quality report format (docs.gitlab.com, "Code Quality report format"): a JSON
# array of objects with these keys; severity one of these five; path relative to the repository.
GITLAB_CODE_QUALITY = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1, "pattern": "^(?![/.])"},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def _valid(data: bytes) -> list[dict[str, Any]]:
    """Parse the file as GitLab would, validate it, and check fingerprints are unique."""
    parsed = json.loads(data.decode("utf-8"))
    jsonschema.Draft202012Validator(GITLAB_CODE_QUALITY).validate(parsed)
    prints = [item["fingerprint"] for item in parsed]
    assert len(prints) == len(set(prints)), "fingerprints must be unique within a file"
    return parsed


def _by_check(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["check_name"]: item for item in items}


def test_one_finding_per_non_passing_assertion_with_severity_and_line() -> None:
    items = _valid(render_codequality(mixed_report()))
    assert [(i["check_name"], i["severity"], i["location"]["lines"]["begin"]) for i in items] == [
        ("clawspec/tool_was_called", "major", 22),
        ("clawspec/scenario", "critical", 30),  # errored without assertions: the invocation
        ("clawspec/trace_cost", "info", 52),  # a warning
    ]  # passes and the skipped scenario are no findings
    failed = items[0]
    assert failed["description"] == "tool-check: then[1] tool 'send_email' was not called"
    assert failed["location"]["path"] == CONTRACT
    assert items[1]["description"] == "broken: gateway unreachable: POST /hooks/agent"


def test_fingerprint_is_the_hash_of_path_scenario_phase_index_and_type() -> None:
    (item,) = findings(report(scenario("a", "fail", assertion("fail", index=3, type="x"))))
    key = json.dumps([CONTRACT, "a", "then", 3, "x"])
    assert item["fingerprint"] == hashlib.sha256(key.encode()).hexdigest()


def _run(run_id: str, message: str) -> RunReport:
    return report(
        scenario(
            "a",
            "fail",
            assertion("fail", f"duration {message} s > 30 s (run {run_id})", index=0),
            assertion("error", f"TimeoutError: run {run_id}", index=1, type="llm_judge"),
            run_id=run_id,
        ),
        scenario("b", "error", message=f"invocation failed: run {run_id}", run_id=run_id),
    ).model_copy(update={"run_id": run_id})


def test_fingerprints_are_stable_across_runs_with_other_run_ids_and_messages() -> None:
    first = _valid(render_codequality(_run("run-1", "41.2")))
    second = _valid(render_codequality(_run("run-2", "55.0")))
    assert [i["description"] for i in first] != [i["description"] for i in second]
    assert [i["fingerprint"] for i in first] == [i["fingerprint"] for i in second]


@pytest.mark.parametrize(
    "other",
    [
        {"index": 1},
        {"type": "tool_was_called"},
        {"phase": "given"},
        {"scenario": "other-name"},
        {"contract": "agents/router/tests/scenarios.yaml"},
    ],
)
def test_fingerprints_differ_for_different_assertions(other: dict[str, Any]) -> None:
    def one(index: int = 0, type: str = "artifact_exists", phase: str = "then", **kw: Any) -> str:
        name = kw.pop("scenario", "a")
        check = assertion("fail", index=index, type=type, phase=phase)
        (item,) = findings(report(scenario(name, "fail", check, **kw)))
        return item["fingerprint"]

    assert one() != one(**other)


def test_same_check_twice_still_gets_unique_fingerprints() -> None:
    twice = report(
        scenario("a", "fail", assertion("fail")), scenario("a", "fail", assertion("fail"))
    )
    items = _valid(render_codequality(twice))
    assert len(items) == 2
    assert items == _valid(render_codequality(twice))  # and stable


def test_paths_are_relative_to_the_repository_root(tmp_path: Path) -> None:
    inside = str(tmp_path / "sub" / "agents" / "x.yaml")
    data = report(
        scenario("rel", "fail", assertion("fail")),
        scenario("abs", "fail", assertion("fail"), contract=inside, id=f"{inside}::abs"),
    )
    items = _valid(render_codequality(data, repo_root=tmp_path, workspace=tmp_path / "sub"))
    assert [i["location"]["path"] for i in items] == [f"sub/{CONTRACT}", "sub/agents/x.yaml"]


def test_repository_root_from_gitlab_github_or_the_nearest_git_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert repository_root(CIContext.from_environ({"CI_PROJECT_DIR": "/builds/x"}), deep) == Path(
        "/builds/x"
    )
    assert repository_root(CIContext.from_environ({"GITHUB_WORKSPACE": "/gh/w"}), deep) == Path(
        "/gh/w"
    )
    assert repository_root(CIContext.from_environ({}), deep) == tmp_path


def _with_change(data: RunReport, change: str, compared: bool = True) -> RunReport:
    comparison = Comparison(
        scenarios=[ScenarioChange(id=s.id, change=change) for s in data.scenarios],  # type: ignore[arg-type]
        baseline_missing=None if compared else "no baseline",
    )
    return data.model_copy(update={"comparison": comparison})


def test_regressed_assertions_are_blockers_and_flaky_ones_minor() -> None:
    failing = report(
        scenario("a", "fail", assertion("fail"), assertion("warn", index=1, type="trace_cost"))
    )
    regressed = _valid(render_codequality(_with_change(failing, "regressed")))
    assert [i["severity"] for i in regressed] == ["blocker", "info"]
    assert regressed[0]["description"].endswith("[regressed against the baseline]")
    stats = AttemptStats(attempts=3, passes=2, pass_rate=0.667, ci_low=0.21, ci_high=0.94)
    flaky = report(scenario("f", "pass", assertion("error"), flaky=True, attempts=stats))
    (item,) = _valid(render_codequality(flaky))
    assert item["severity"] == "minor"
    assert item["description"].endswith("[flaky: 2/3 attempts passed (0.67, 95% CI 0.21-0.94)]")
    # uncompared and below min_pass_rate, a flaky scenario fails the run: its own severity
    below = report(scenario("f", "error", assertion("error"), flaky=True, attempts=stats))
    assert [i["severity"] for i in findings(below)] == ["critical"]
    assert [i["severity"] for i in findings(_with_change(below, "flaky"))] == ["minor"]


def test_flaky_scenario_without_a_failing_assertion_is_one_scenario_finding() -> None:
    flaky = report(scenario("f", "pass", assertion("pass"), flaky=True, message="", line=9))
    (item,) = _valid(render_codequality(flaky))
    assert (item["check_name"], item["severity"], item["location"]["lines"]["begin"]) == (
        "clawspec/scenario",
        "minor",
        9,
    )
    assert item["description"].startswith("f: some attempts failed")


def test_line_falls_back_to_the_scenario_then_to_one() -> None:
    data = report(
        scenario("a", "fail", assertion("fail", line=0), line=7),
        scenario("b", "error", line=0),
    )
    assert [i["location"]["lines"]["begin"] for i in findings(data)] == [7, 1]


def test_secrets_are_masked_before_the_description_is_cut() -> None:
    secret = "s3cr3t-token-value"
    long = "x" * 5000
    data = report(scenario("leak", "fail", assertion("fail", f"Authorization: {secret} {long}")))
    with registry.scope() as active:
        active.add(secret)
        text = render_codequality(data)
    assert secret.encode() not in text
    (item,) = _valid(text)
    assert item["description"].startswith("leak: then[0] Authorization: *** xxx")
    assert len(item["description"]) == 1000 and item["description"].endswith("…")


def test_hostile_text_still_gives_valid_json_in_utf8(tmp_path: Path) -> None:
    hostile = "\x00\x1b[31mred\x07 \ud800 lone \uffff end\r\nnext"
    data = report(scenario(f"s{hostile}", "fail", assertion("fail", hostile)))
    path = write_codequality(data, tmp_path / "gl-code-quality.json")
    raw = path.read_bytes()
    (item,) = _valid(raw)
    assert "\x00" not in item["description"] and "\x1b" not in item["description"]
    assert "\ud800" not in item["description"] and "\ufffd lone" in item["description"]
    assert "\n" not in item["description"]
    json.dumps(item).encode("utf-8")
    # the rich report with hostile text in every field as well
    _valid(render_codequality(rich_report(hostile)))


def test_the_rich_report_regressed_errored_and_skipped() -> None:
    items = _valid(render_codequality(rich_report()))
    checks = _by_check(items)
    assert checks["clawspec/artifact_matches_golden"]["severity"] == "blocker"  # regressed
    assert checks["clawspec/scenario"]["severity"] == "critical"  # provider-down errored
    assert checks["clawspec/merge"]["severity"] == "critical"  # its missing shard
    assert len(items) == 3  # the skipped and the warned-without-assertions scenario: none


def test_publish_writes_it_when_configured_also_for_an_interrupted_run(tmp_path: Path) -> None:
    settings = Settings(report_dir=str(tmp_path), codequality=str(tmp_path / "cq/gl.json"))
    interrupted = report(scenario("a", "error"), scenario("b", "skip"), interrupted=True)
    environ = {"CI_PROJECT_DIR": str(Path.cwd())}
    written = publish(interrupted, settings, environ)
    assert written == [tmp_path / "clawspec-report.json", tmp_path / "cq/gl.json"]
    (item,) = _valid(written[1].read_bytes())
    assert item["location"]["path"] == CONTRACT
    assert not list(tmp_path.rglob("*.partial"))
    assert publish(interrupted, Settings(report_dir=str(tmp_path)), {}) == [
        tmp_path / "clawspec-report.json"
    ]


def test_flag_config_and_action_input_set_the_codequality_setting(tmp_path: Path) -> None:
    parser = build_parser()
    args = parser.parse_args(["run", ".", "--codequality", "out/gl.json"])
    assert run_flags(args)["codequality"] == "out/gl.json"
    assert parser.parse_args(["merge", "a.json", "--codequality", "m.json"]).codequality == "m.json"
    assert Settings(codequality="q.json").codequality == "q.json"
    for command in ("run", "merge"):
        environ = {"INPUT_CODEQUALITY": "gl.json", "INPUT_COMMAND": command}
        if command == "merge":
            environ["INPUT_MERGE_REPORTS"] = "shards/"
        argv = entrypoint.from_inputs(environ, tmp_path).argv
        assert parser.parse_args(argv).codequality == "gl.json"
    assert "--codequality" not in entrypoint.from_inputs({"INPUT_CODEQUALITY": " "}, tmp_path).argv


def test_every_status_that_is_a_finding_has_a_gitlab_severity() -> None:
    data = report(*(scenario(s.value, s.value, assertion(s.value)) for s in Status))
    assert {i["severity"] for i in _valid(render_codequality(data))} == {
        "major",
        "critical",
        "info",
    }


def test_a_turns_check_is_found_at_its_line_and_its_fingerprint_holds_the_turn() -> None:
    from clawspec.reports.codequality import fingerprint
    from tests.reports.conversation_report import (
        CONTRACT as TALK,
    )
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    data = conversation_report()
    talk = data.scenarios[0]
    turns = list(talk.turns or [])
    # Turn 3's then[0] fails too: the same phase, index and type as turn 2's.
    failed = [a.model_copy(update={"status": Status.FAIL}) for a in turns[2].assertions]
    turns[2] = turns[2].model_copy(update={"status": Status.FAIL, "assertions": failed})
    both = RunReport.model_validate(
        data.model_copy(
            update={"scenarios": [talk.model_copy(update={"turns": turns}), *data.scenarios[1:]]}
        ).model_dump()
    )
    with secret_registered():
        rendered = render_codequality(both, "/repo", Path("/repo"))
    assert_inert(rendered.decode("utf-8"))
    items = _valid(rendered)  # GitLab's schema, fingerprints unique
    assert [(i["check_name"], i["location"]["lines"]["begin"]) for i in items] == [
        ("clawspec/reply_contains", 14),
        ("clawspec/reply_contains", 20),
        ("clawspec/scenario", 34),
    ]
    assert items[0]["description"] == (
        "remembers the name: turn 2, then[0] the reply does not contain 'Zed'"
    )
    assert items[1]["description"].startswith("remembers the name: turn 3, then[0] ")
    key = {"path": TALK, "scenario": "remembers the name", "phase": "then", "index": 0}
    assert items[0]["fingerprint"] == fingerprint(**key, kind="reply_contains", turn=1)
    assert items[1]["fingerprint"] == fingerprint(**key, kind="reply_contains", turn=2)
    # Without a turn the key is the one fingerprints always had.
    plain = hashlib.sha256(
        json.dumps([TALK, "remembers the name", "then", 0, "reply_contains"]).encode()
    ).hexdigest()
    assert fingerprint(**key, kind="reply_contains") == plain
    assert plain not in (items[0]["fingerprint"], items[1]["fingerprint"])

"""`clawspec cassettes check` and the hermetic-run options, through the real CLI parser."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec.cli import build_parser, main
from clawspec.commands.options import run_flags
from clawspec.config.loading import load_settings
from clawspec.errors import ConfigError
from clawspec.traffic.cassette import (
    Cassette,
    RecordedRequest,
    RecordedResponse,
    load_dir,
    scenario_dir,
    write_dir,
)

CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/x}
scenarios:
  - name: drafts
    when: {invoke: "draft it"}
    then: [{type: tool_was_called, tool: write}]
  - name: sends
    when: {invoke: "send it"}
    then: [{type: tool_was_called, tool: exec}]
"""


def cassette(scenario: str, index: int) -> Cassette:
    return Cassette(
        scenario=scenario,
        index=index,
        recorded_at="2026-11-23T09:00:00+00:00",
        request=RecordedRequest(path="/chat/completions", endpoint="chat/completions", body={}),
        response=RecordedResponse(status=200, body={"ok": True}),
    )


@pytest.fixture
def recorded(workspace: Path, write_contract: Callable[..., Path]) -> Path:
    write_contract(CONTRACT, "skills/x/tests/scenarios.yaml")
    root = workspace / ".clawspec" / "cassettes"
    drafts = scenario_dir(root, "skills/x/tests/scenarios.yaml", "drafts")
    write_dir(drafts, [cassette("d", 1), cassette("d", 2)])
    write_dir(scenario_dir(root, "skills/x/tests/scenarios.yaml", "gone"), [cassette("g", 1)])
    return root


def test_cassette_folders_are_named_after_contract_and_scenario(recorded: Path) -> None:
    assert (recorded / "skills/x/tests/scenarios/drafts/1.json").is_file()
    text = (recorded / "skills/x/tests/scenarios/drafts/1.json").read_text("utf-8")
    assert text.startswith('{\n  "clawspec_cassette": 2,')  # pretty-printed for PR diffs


def test_check_reports_stale_missing_and_sizes(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["cassettes", "check", "."])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0].startswith(f"cassettes in {recorded}: 3 file(s) in 2 scenario folder(s), ")
    assert any(
        line.startswith("stale: skills/x/tests/scenarios/gone (1 file(s), ")
        and line.endswith("): no such contract, scenario or variant any more")
        for line in out
    )
    assert (
        "missing: skills/x/tests/scenarios.yaml::sends: no recording (replay would be an error)"
        in out
    )
    assert any(line.startswith("size: ") and "drafts" in line for line in out)
    assert out[-1] == "1 problem(s) found; 1 scenario(s) without a recording"


def test_check_passes_with_recordings_missing_and_says_how_many(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Missing recordings are the next step (record them), not a fault: exit 0, yet counted.
    shutil.rmtree(recorded / "skills/x/tests/scenarios/gone")
    assert main(["cassettes", "check", "."]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "ok; 1 scenario(s) without a recording"


def test_check_reports_files_a_replay_did_not_use_and_invalid_files(
    recorded: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (recorded / "skills/x/tests/scenarios/gone").rename(recorded / "skills/x/tests/scenarios/sends")
    (recorded / "skills/x/tests/scenarios/sends/2.json").write_text("{not json", "utf-8")
    report = workspace / "report.json"
    traffic = {
        "mode": "replay",
        "cassette": ".clawspec/cassettes/skills/x/tests/scenarios/drafts",
        "calls": 1,
        "used": [1],
    }
    report.write_text(
        json.dumps({"scenarios": [{"status": "pass", "model_traffic": traffic}]}), "utf-8"
    )
    code = main(["cassettes", "check", ".", "--report", str(report)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert "unused: skills/x/tests/scenarios/drafts/2.json: the replay did not need it" in out
    assert any(
        line.startswith("invalid: skills/x/tests/scenarios/sends/2.json: not a") for line in out
    )
    assert not any(line.startswith(("stale:", "missing:")) for line in out)


def test_check_passes_when_every_scenario_has_its_recording(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(CONTRACT, "x.clawspec.yaml")
    for name in ("drafts", "sends"):
        write_dir(scenario_dir(workspace / "tapes", "x.clawspec.yaml", name), [cassette(name, 1)])
    assert main(["cassettes", "check", ".", "--cassette-dir", "tapes"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "ok"


def test_per_attempt_recordings_belong_to_their_scenario(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A repeated scenario records each attempt into `attempt-<n>/`: neither stale nor missing."""
    write_contract(CONTRACT, "x.clawspec.yaml")
    drafts = scenario_dir(workspace / "tapes", "x.clawspec.yaml", "drafts")
    for n in (1, 2):
        write_dir(drafts / f"attempt-{n}", [cassette("drafts", 1)])
    write_dir(scenario_dir(workspace / "tapes", "x.clawspec.yaml", "sends"), [cassette("s", 1)])
    assert main(["cassettes", "check", ".", "--cassette-dir", "tapes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("cassettes in ") and "3 file(s) in 3 scenario folder(s)" in out[0]
    assert out[-1] == "ok"


def test_hermetic_options_have_one_name_everywhere(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["run", "--model-traffic", "replay", "--cassette-dir", "tapes", "--today", "2026-01-31"]
    )
    flags = run_flags(args)
    assert (flags["model_traffic"], flags["cassette_dir"], flags["today"]) == (
        "replay",
        "tapes",
        "2026-01-31",
    )
    env = load_settings(
        None,
        {
            "CLAWSPEC_MODEL_TRAFFIC": "record",
            "CLAWSPEC_CASSETTE_DIR": "c",
            "CLAWSPEC_TODAY": "2026-02-01",
            "CLAWSPEC_VOLATILE_FIELDS": "id, created",
        },
    )
    # cassette_dir is read against the workspace root: the environment's is made absolute
    cassettes = str(Path.cwd() / "c")
    assert (env.model_traffic, env.cassette_dir, env.today) == ("record", cassettes, "2026-02-01")
    assert env.volatile_fields == ["id", "created"]
    config = tmp_path / "clawspec.yaml"
    config.write_text("model_traffic: replay\nvolatile_patterns: ['run-\\d+']\n", "utf-8")
    from_file = load_settings(config, {})
    assert load_settings(config, {"CLAWSPEC_TODAY": "2026-03-04"}).today == "2026-03-04"
    config.write_text("today: 2026-01-31\n", "utf-8")  # YAML reads this as a date
    assert load_settings(config, {}).today == "2026-01-31"
    config.write_text("model_traffic: replay\nvolatile_patterns: ['run-\\d+']\n", "utf-8")
    from_file = load_settings(config, {})
    assert from_file.model_traffic == "replay" and from_file.volatile_patterns == ["run-\\d+"]
    assert from_file.cassette_dir == ".clawspec/cassettes"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("today: '2026-13-01'\n", "today: month must be in 1..12"),
        ("today: tomorrow\n", "today: must be a date YYYY-MM-DD, found 'tomorrow'"),
        ("model_traffic: rewind\n", "model_traffic: Input should be 'off', 'record' or 'replay'"),
        ("volatile_patterns: ['(']\n", "volatile_patterns: not a regular expression '('"),
    ],
)
def test_bad_hermetic_options_name_the_file_and_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "clawspec.yaml"
    config.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, {})
    assert str(caught.value).startswith(f"{config}:1:1: {message}")


def test_tools_are_one_line_each_and_the_file_loads_back(tmp_path: Path) -> None:
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in ("read", "write")
    ]
    item = cassette("s", 1)
    item.request.body = {"model": "m", "tools": tools, "messages": [{"role": "user"}]}
    (path,) = write_dir(tmp_path / "s", [item])
    lines = path.read_text("utf-8").splitlines()
    read = '{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}},'
    assert [line.strip() for line in lines if '"name": "read"' in line] == [read]
    assert load_dir(tmp_path / "s").files[0].cassette.request.body["tools"] == tools


def test_a_replay_that_stopped_at_a_miss_judges_no_recording_unused(
    recorded: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The calls after a miss were never asked: the recording the miss was compared with,
    and the later ones, are what must be recorded again, not 'unused' files to delete."""
    (recorded / "skills/x/tests/scenarios/gone").rename(recorded / "skills/x/tests/scenarios/sends")
    traffic = {
        "mode": "replay",
        "cassette": ".clawspec/cassettes/skills/x/tests/scenarios/drafts",
        "calls": 2,
        "used": [1],
        "unmatched": 1,
    }
    report = workspace / "report.json"
    report.write_text(
        json.dumps({"scenarios": [{"status": "error", "model_traffic": traffic}]}), "utf-8"
    )
    assert main(["cassettes", "check", ".", "--report", str(report)]) == 0
    assert not any(line.startswith("unused:") for line in capsys.readouterr().out.splitlines())


def test_check_with_a_report_judges_the_recordings_a_replay_could_not_have_read(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A replay without repeats reads the scenario's own recording, never its attempts'; one
    with repeats reads the attempts', never the scenario's own: the others are unused."""
    write_contract(CONTRACT, "x.clawspec.yaml")
    drafts = scenario_dir(workspace / "tapes", "x.clawspec.yaml", "drafts")
    sends = scenario_dir(workspace / "tapes", "x.clawspec.yaml", "sends")
    for folder in (drafts, sends):
        write_dir(folder, [cassette("x", 1)])
        write_dir(folder / "attempt-1", [cassette("x", 1)])

    def replayed(folder: Path) -> dict:
        traffic = {"mode": "replay", "cassette": str(folder), "calls": 1, "used": [1]}
        return {"status": "pass", "model_traffic": traffic}

    report = workspace / "report.json"
    scenarios = [replayed(drafts), replayed(sends / "attempt-1")]
    report.write_text(json.dumps({"scenarios": scenarios}), "utf-8")
    assert (
        main(["cassettes", "check", ".", "--cassette-dir", "tapes", "--report", str(report)]) == 1
    )
    unused = sorted(
        line for line in capsys.readouterr().out.splitlines() if line.startswith("unused:")
    )
    assert unused == [
        "unused: x.clawspec/drafts/attempt-1/1.json: the replay did not need it",
        "unused: x.clawspec/sends/1.json: the replay did not need it",
    ]


def test_a_cassette_of_another_format_version_is_invalid_not_replayed(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded / "skills/x/tests/scenarios/drafts/2.json"
    path.write_text(
        path.read_text("utf-8").replace('"clawspec_cassette": 2', '"clawspec_cassette": 99')
    )
    assert [f.path.name for f in load_dir(path.parent).files] == ["1.json"]
    main(["cassettes", "check", "."])
    out = capsys.readouterr().out
    assert "invalid: skills/x/tests/scenarios/drafts/2.json: not a ClawSpec cassette: " in out
    assert (
        "format version 99, and this ClawSpec reads versions 1 to 2: record it again (clawspec "
        "run --model-traffic record) or upgrade ClawSpec" in out
    )


def _openclaw_package(folder: Path, version: str) -> Path:
    """An installed openclaw package of `version`; returns its launcher."""
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(
        json.dumps({"name": "openclaw", "version": version}), encoding="utf-8"
    )
    launcher = folder / "openclaw.mjs"
    launcher.write_text("// entry\n", encoding="utf-8")
    return launcher


def test_check_lists_recordings_made_on_another_openclaw_release(
    workspace: Path,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Listed, not a problem: a replay on the release a bring-up here runs is likely to miss.
    Recordings that name no release (format 1, a target gateway) are not judged."""
    write_contract(CONTRACT, "x.clawspec.yaml")
    old = cassette("drafts", 1).model_copy(update={"openclaw_version": "2026.9.5"})
    write_dir(scenario_dir(workspace / "tapes", "x.clawspec.yaml", "drafts"), [old])
    write_dir(scenario_dir(workspace / "tapes", "x.clawspec.yaml", "sends"), [cassette("s", 1)])
    launcher = _openclaw_package(workspace.parent / "node_modules" / "openclaw", "2026.9.6")
    monkeypatch.setenv("CLAWSPEC_OPENCLAW_BIN", str(launcher))
    assert main(["cassettes", "check", ".", "--cassette-dir", "tapes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("other release:")] == [
        "other release: x.clawspec/drafts: recorded on OpenClaw 2026.9.5, a bring-up here runs "
        "2026.9.6: a replay may miss; record it again"
    ]
    assert out[-1] == "ok"
    # A gateway command of your own runs a release that cannot be told: nothing is compared.
    (workspace / "clawspec.yaml").write_text(
        "gateway: {command: 'my-gateway --port 1'}\n", encoding="utf-8"
    )
    assert main(["cassettes", "check", ".", "--cassette-dir", "tapes"]) == 0
    assert "other release:" not in capsys.readouterr().out


def test_a_check_of_some_contracts_judges_only_their_recordings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled examples' recordings, checked for one folder or one file: the others'
    contracts were not loaded, so their recordings are neither stale nor counted."""
    work = tmp_path / "examples"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", work)
    monkeypatch.chdir(work)
    for scope in (["skills/newsletter"], ["skills/newsletter/tests/scenarios.yaml"], []):
        if not scope:
            monkeypatch.chdir(work / "skills")  # from a sub-folder: its contracts
        assert main(["cassettes", "check", *scope]) == 0, scope
        out = capsys.readouterr().out.splitlines()
        assert not any(line.startswith("stale:") for line in out), out
        assert " in 4 scenario folder(s), " in out[0], out
        assert out[-1] == "ok"
    monkeypatch.chdir(work)
    assert main(["cassettes", "check", "."]) == 0
    assert " in 7 scenario folder(s), " in capsys.readouterr().out

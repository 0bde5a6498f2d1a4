"""A recording names the OpenClaw release it was made on; a replay miss on another release
says so (its prompts change between releases), and recordings that name none still replay."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from clawspec.runner.traffic import traffic_problem
from clawspec.traffic.cassette import load_dir
from tests.support.scripted_provider import ScriptedProvider
from tests.traffic.conftest import post, session
from tests.traffic.test_proxy import HOOK, SCRIPT, chat_body, traceparent

RECORDED_ON = "2026.9.5"
REPLAYED_ON = "2026.9.6"


def _record(tmp_path: Path, openclaw_version: str | None) -> Path:
    folder = tmp_path / "cassettes" / "greet" / "greets"
    with (
        ScriptedProvider(SCRIPT) as provider,
        session("record", {"fake": provider.base_url}) as s,
        s.scenario("greet.yaml::greets", folder, HOOK, openclaw_version=openclaw_version),
    ):
        body = chat_body(str(uuid.uuid4()))
        status, _, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 200
    return folder


def _replay_changed(folder: Path, openclaw_version: str | None) -> str:
    """Replay a request whose hook message changed; return the scenario's error message."""
    hook = "Greet the whole team"
    with (
        session("replay") as s,
        s.scenario("g::greets", folder, hook, openclaw_version=openclaw_version) as t,
    ):
        body = chat_body(str(uuid.uuid4()), hook=hook)
        status, _, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 400
    return traffic_problem(t)


def test_a_recording_stores_the_openclaw_release_it_was_made_on(tmp_path: Path) -> None:
    folder = _record(tmp_path, RECORDED_ON)
    text = (folder / "1.json").read_text("utf-8")
    assert f'"openclaw_version": "{RECORDED_ON}"' in text
    assert json.loads(text)["clawspec_cassette"] == 2
    assert load_dir(folder).files[0].cassette.openclaw_version == RECORDED_ON


def test_a_miss_on_another_release_names_both_and_says_to_record_again(tmp_path: Path) -> None:
    folder = _record(tmp_path, RECORDED_ON)
    assert _replay_changed(folder, REPLAYED_ON) == (
        "model traffic replay: model call 1 differs from the closest recording 1.json "
        f"(recorded on OpenClaw {RECORDED_ON}, replayed on {REPLAYED_ON}: record again after an "
        "upgrade, --model-traffic record): messages[1] (user) changed: -Greet the team "
        "[script:greet]; the whole diff: model_traffic.diff in the JSON report"
    )


@pytest.mark.parametrize(
    ("recorded_on", "replayed_on"),
    [(REPLAYED_ON, REPLAYED_ON), (None, REPLAYED_ON), (RECORDED_ON, None)],
    ids=["same release", "recorded on an unknown release", "replayed on an unknown release"],
)
def test_a_miss_names_no_release_unless_both_are_known_and_differ(
    tmp_path: Path, recorded_on: str | None, replayed_on: str | None
) -> None:
    folder = _record(tmp_path, recorded_on)
    said = _replay_changed(folder, replayed_on)
    assert said.startswith(
        "model traffic replay: model call 1 differs from the closest recording 1.json: "
        "messages[1] (user) changed:"
    ), said
    assert "OpenClaw" not in said


def test_a_cassette_of_format_1_without_a_release_still_replays(tmp_path: Path) -> None:
    """Recordings made before the release was stored stay usable: no need to record again."""
    folder = _record(tmp_path, RECORDED_ON)
    path = folder / "1.json"
    data = json.loads(path.read_text("utf-8"))
    del data["openclaw_version"]
    data["clawspec_cassette"] = 1
    path.write_text(json.dumps(data, indent=2), "utf-8")  # as an earlier ClawSpec wrote it
    with session("replay") as s, s.scenario("g::greets", folder, HOOK) as t:
        body = chat_body(str(uuid.uuid4()))
        status, _, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 200 and t.used == [1] and t.problems == []

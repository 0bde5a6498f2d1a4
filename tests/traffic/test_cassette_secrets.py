"""Writing cassettes: a secret the model echoes in a streamed answer never reaches one (models
stream a few characters an event, so the secret is split over several events, none holding it
whole), and a recording that cannot be written leaves the one there was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec import secrets
from clawspec.traffic.cassette import (
    Cassette,
    RecordedRequest,
    RecordedResponse,
    SseEvent,
    load_dir,
    write_dir,
)

KEY = "sk-HUNT-provider-key-0001"


def _chunk(text: str) -> SseEvent:
    data = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0,
            "delta": {"content": text}}]}  # fmt: skip
    return SseEvent(lines=[f"data: {json.dumps(data)}"])


def _anthropic(text: str) -> SseEvent:
    data = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }
    return SseEvent(lines=["event: content_block_delta", f"data: {json.dumps(data)}"])


def _streamed(events: list[SseEvent]) -> Cassette:
    return Cassette(
        scenario="writes-note",
        index=1,
        recorded_at="2026-11-29T20:00:00Z",
        request=RecordedRequest(path="/v1/chat/completions", endpoint="chat", body={"x": 1}),
        response=RecordedResponse(status=200, content_type="text/event-stream", events=events),
    )


def test_a_secret_split_over_streamed_events_is_masked_in_the_cassette(tmp_path: Path) -> None:
    pieces = ["Wrote a.md with secret sk-HUNT-prov", "ider", "-key-0001 and more", " done."]
    split = ["Key: sk-HUNT", "-provider-key-0001."]
    with secrets.scope({}) as registry:
        registry.add(KEY)
        (path,) = write_dir(tmp_path / "openai", [_streamed([_chunk(p) for p in pieces])])
        (other,) = write_dir(tmp_path / "anthropic", [_streamed([_anthropic(p) for p in split])])
    for written, parts in ((path, pieces), (other, split)):
        text = written.read_text("utf-8")
        assert KEY not in text and "ider-key-0001" not in text and "sk-HUNT-prov" not in text
        (loaded,) = load_dir(written.parent).files  # still a cassette that replays
        deltas = []
        for event in loaded.cassette.response.events or []:
            payload = json.loads(event.lines[-1][len("data:") :])
            delta = payload["choices"][0]["delta"] if "choices" in payload else payload["delta"]
            deltas.append(delta.get("content", delta.get("text")))
        assert len(deltas) == len(parts)
        assert "".join(deltas) == "".join(parts).replace(KEY, secrets.MASK)


def test_an_answer_without_a_secret_is_written_as_it_came(tmp_path: Path) -> None:
    events = [_chunk("plain "), _chunk("text")]
    with secrets.scope({}) as registry:
        registry.add(KEY)
        (path,) = write_dir(tmp_path / "c", [_streamed(events)])
    (loaded,) = load_dir(path.parent).files
    assert [e.lines for e in loaded.cassette.response.events or []] == [e.lines for e in events]


def test_a_recording_that_cannot_be_written_leaves_the_one_there_was(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes" / "writes-note"
    write_dir(folder, [_streamed([_chunk("first take")])])
    before = (folder / "1.json").read_text("utf-8")

    class Unwritable(Cassette):
        def model_dump(self, **kwargs: object) -> dict:  # a failure half-way through writing
            raise OSError(28, "No space left on device")

    broken = Unwritable.model_validate(_streamed([_chunk("second take")]).model_dump())
    try:
        write_dir(folder, [_streamed([_chunk("second take")]), broken])
    except OSError:
        pass
    else:
        raise AssertionError("the write should have failed")
    assert (folder / "1.json").read_text("utf-8") == before
    assert sorted(p.name for p in folder.parent.iterdir()) == ["writes-note"]  # no leftovers


def test_recording_into_a_folder_that_cannot_be_written_is_said_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was an internal error after every scenario had run (and the model been paid)."""
    from clawspec.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "clawspec.yaml").write_text(
        "report_dir: reports\nmodel_upstreams: {fake: 'http://127.0.0.1:9'}\n", "utf-8"
    )
    (tmp_path / "a.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: skills/a}\nscenarios:\n  - name: s\n'
        "    when: {invoke: go}\n    then: [{type: artifact_exists, path: a.md}]\n",
        "utf-8",
    )
    (tmp_path / "taken").write_text("a file, not a folder", "utf-8")
    args = ["run", "a.clawspec.yaml", "--model-traffic", "record"]
    assert main([*args, "--cassette-dir", "taken/cassettes"]) == 2
    err = capsys.readouterr().err
    assert "cassette_dir: cannot write recordings to" in err and "taken/cassettes" in err
    assert not (tmp_path / "reports").exists()  # nothing ran

"""The proxy against local providers speaking the real wire formats: record, then replay."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path

import pytest

from clawspec.runner.traffic import traffic_problem
from clawspec.traffic.cassette import load_dir
from tests.support.model_wire import WireProvider
from tests.support.scripted_provider import ScriptedProvider
from tests.traffic.conftest import SECRET_KEY, WORKSPACE, cassette_texts, post, session

SCRIPT = {
    "greet": [
        {"tool": "write", "args": {"path": "hi.md", "content": "hi\n"}},
        {"text": "Wrote hi.md.", "usage": {"prompt_tokens": 321, "completion_tokens": 12}},
    ]
}
HOOK = "Greet the team [script:greet]"


def chat_body(job: str, tool_done: bool = False, hook: str = HOOK) -> dict:
    """A request shaped like the gateway's: volatile job id, time and workspace path."""
    user = (
        f"Job ID: {job} | Received: Monday, November 23rd, 2026 - 9:39 AM\n"
        f"Task: greet\n---\n{hook}\nRuntime: repo={WORKSPACE} | host=vm | os=Linux 6.1"
    )
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": user},
    ]
    if tool_done:
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call{uuid.uuid4().hex[:8]}",
                        "type": "function",
                        "function": {"name": "write", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "x", "content": "Successfully wrote 3 bytes"},
        ]
    return {
        "model": "fake-model",
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "write", "parameters": {}}}],
    }


def traceparent() -> dict[str, str]:
    return {"traceparent": f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"}


def record_greet(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """Record the two-step 'greet' conversation; return the folder and the streamed bytes."""
    folder = tmp_path / "cassettes" / "skills" / "greet" / "scenarios" / "greets"
    with ScriptedProvider(SCRIPT) as provider, session("record", {"fake": provider.base_url}) as s:
        auth = {"Authorization": f"Bearer {SECRET_KEY}", **traceparent()}
        with s.scenario("greet.yaml::greets", folder, HOOK):
            url = f"{s.base_url}/fake/chat/completions"
            first = post(url, chat_body(str(uuid.uuid4())), auth)
            second = post(url, chat_body(str(uuid.uuid4()), tool_done=True), auth)
        assert len(provider.chat_requests("greet")) == 2
        assert provider.requests[0].headers["Authorization"] == f"Bearer {SECRET_KEY}"
    assert first[0] == second[0] == 200
    assert first[2].startswith("text/event-stream")
    return folder, [first[1], second[1]]


def test_recorded_stream_replays_byte_for_byte_without_the_provider(tmp_path: Path) -> None:
    folder, recorded = record_greet(tmp_path)
    files = load_dir(folder).files
    assert [f.path.name for f in files] == ["1.json", "2.json"]
    events = files[1].cassette.response.events
    assert events is not None and events[-1].lines == ["data: [DONE]"]
    # The provider is gone; a later run has other job ids, trace ids and tool-call ids.
    with session("replay") as s, s.scenario("greet.yaml::greets", folder, HOOK) as traffic:
        url = f"{s.base_url}/fake/chat/completions"
        replayed = [
            post(url, chat_body(str(uuid.uuid4())), traceparent())[1],
            post(url, chat_body(str(uuid.uuid4()), tool_done=True), traceparent())[1],
        ]
    assert replayed == recorded  # every SSE event, every data line, byte-identical
    assert b'"prompt_tokens": 321' in replayed[1]
    assert traffic.calls == 2 and traffic.used == [1, 2] and traffic.unmatched == []


def test_no_credential_or_known_secret_is_written_to_a_cassette(tmp_path: Path) -> None:
    folder = tmp_path / "c" / "s"
    known = ("hooks-token-RECOGNISABLE-42",)
    with (
        ScriptedProvider(SCRIPT) as provider,
        session("record", {"fake": provider.base_url}, secrets=known) as s,
        s.scenario("a::s", folder, HOOK),
    ):
        body = chat_body("job")
        body["messages"][0]["content"] += f" key {SECRET_KEY} token hooks-token-RECOGNISABLE-42"
        headers = {"Authorization": f"Bearer {SECRET_KEY}", "x-api-key": SECRET_KEY}
        assert post(f"{s.base_url}/fake/chat/completions", body, headers)[0] == 200
    text = cassette_texts(tmp_path / "c")
    assert text, "nothing was recorded"
    assert SECRET_KEY not in text
    assert "hooks-token-RECOGNISABLE-42" not in text
    assert "RECOGNISABLE" not in text
    assert "authorization" not in text.lower() and "x-api-key" not in text.lower()
    assert "key *** token ***" in text


def test_workspace_path_is_stored_as_a_placeholder_and_restored_on_replay(tmp_path: Path) -> None:
    folder, _ = record_greet(tmp_path)
    text = cassette_texts(folder)
    assert WORKSPACE not in text and "<clawspec:workspace>" in text
    # Replaying in another checkout still matches (the path is not part of the key).
    other = "/home/runner/work/repo/repo"
    with session("replay", workspace=other) as s, s.scenario("g::greets", folder, HOOK) as t:
        body = chat_body(str(uuid.uuid4()))
        body["messages"][1]["content"] = body["messages"][1]["content"].replace(WORKSPACE, other)
        status, _, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 200 and t.used == [1]


def test_changed_prompt_in_replay_is_refused_with_a_diff_naming_the_message(
    tmp_path: Path,
) -> None:
    folder, _ = record_greet(tmp_path)
    with session("replay") as s, s.scenario("g::greets", folder, "Greet the whole team") as t:
        body = chat_body(str(uuid.uuid4()), hook="Greet the whole team")
        status, raw, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 400
    error = json.loads(raw)["error"]["message"]
    assert "messages[1] (user) changed" in error
    assert t.unmatched and t.unmatched[0][0] == (
        "model call 1 differs from the closest recording 1.json:"
    )
    assert "  -Greet the team [script:greet]" in t.unmatched[0]
    assert "  +Greet the whole team" in t.unmatched[0]
    assert traffic_problem(t) == (
        "model traffic replay: model call 1 differs from the closest recording 1.json: "
        "messages[1] (user) changed: -Greet the team [script:greet]; the whole diff: "
        "model_traffic.diff in the JSON report"
    )


def test_a_cassette_that_does_not_read_is_named_as_the_cause_of_a_miss(tmp_path: Path) -> None:
    """Not blamed on the prompt: the file, what is wrong with it, and what to do."""
    folder, _ = record_greet(tmp_path)
    (folder / "1.json").write_text('{"clawspec_cassette": 1, "scen', "utf-8")  # cut short
    with session("replay") as s, s.scenario("g::greets", folder, "Greet the team") as t:
        body = chat_body(str(uuid.uuid4()), hook="Greet the team")
        status, _, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 400
    assert traffic_problem(t) == (
        "model traffic replay: a cassette of this scenario cannot be read (1.json: not a "
        "ClawSpec cassette: Invalid JSON: EOF while parsing a string at line 1 column 30): "
        "record the scenario again (--model-traffic record) or fix the file"
    )


def test_replay_of_an_unrecorded_scenario_says_how_to_record_it(tmp_path: Path) -> None:
    with session("replay") as s, s.scenario("g::new", tmp_path / "none", HOOK) as t:
        status, _, _ = post(f"{s.base_url}/fake/chat/completions", chat_body("j"), traceparent())
    assert status == 400
    assert "nothing recorded for this scenario" in t.unmatched[0][0]
    assert "--model-traffic record" in t.unmatched[0][0]
    said = traffic_problem(t)  # no diff to point at, and no stray space
    assert said.endswith("(record it with --model-traffic record)") and " ;" not in said


def test_a_request_no_scenario_claims_is_refused_in_replay(tmp_path: Path) -> None:
    with session("replay") as s:
        status, raw, _ = post(f"{s.base_url}/fake/chat/completions", chat_body("j"), {})
    assert status == 400
    assert "cannot tell which scenario" in json.loads(raw)["error"]["message"]
    assert s.unattributed == 1


def test_anthropic_sdk_through_the_proxy_streams_and_replays(tmp_path: Path) -> None:
    anthropic = pytest.importorskip("anthropic")
    folder = tmp_path / "c" / "claude"
    hook = "Summarise the notes"

    def ask(base_url: str) -> tuple[str, str, int]:
        client = anthropic.Anthropic(base_url=f"{base_url}/anthropic", api_key=SECRET_KEY)
        plain = client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[{"role": "user", "content": hook}],
        )
        with client.messages.stream(
            model="claude-test",
            max_tokens=64,
            messages=[{"role": "user", "content": f"{hook}, streamed"}],
        ) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
        return plain.content[0].text, text, final.usage.output_tokens

    with WireProvider() as provider, session("record", {"anthropic": provider.base_url}) as s:
        with s.scenario("c::claude", folder, hook):
            recorded = ask(s.base_url)
        assert [seen.path for seen in provider.seen] == ["/v1/messages", "/v1/messages"]
        headers = {k.lower(): v for k, v in provider.seen[0].headers.items()}
        # forwarded upstream (this SDK version sends it as a bearer token), never stored
        assert SECRET_KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    assert recorded == ("echo: Summarise the notes", "echo: Summarise the notes, streamed", 15)
    assert SECRET_KEY not in cassette_texts(folder)
    with session("replay") as s, s.scenario("c::claude", folder, hook) as traffic:
        assert ask(s.base_url) == recorded
    assert traffic.used == [1, 2]
    events = load_dir(folder).files[1].cassette.response.events
    assert events is not None
    assert [e.lines[0] for e in events][:3] == [
        "event: message_start",
        "event: content_block_start",
        "event: ping",
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_responses_api_is_recorded_and_replayed(tmp_path: Path, stream: bool) -> None:
    folder = tmp_path / "c" / "resp"
    body = {"model": "gpt-test", "input": [{"role": "user", "content": "Plan the week"}]}
    body["stream"] = stream
    with WireProvider() as provider, session("record", {"oa": f"{provider.base_url}/v1"}) as s:
        with s.scenario("c::resp", folder, "Plan the week"):
            recorded = post(f"{s.base_url}/oa/responses", body, traceparent())
        assert provider.seen[0].path == "/v1/responses"
    with session("replay") as s, s.scenario("c::resp", folder, "Plan the week"):
        replayed = post(f"{s.base_url}/oa/responses", body, traceparent())
    assert replayed[0] == recorded[0] == 200
    if stream:
        assert replayed[1] == recorded[1]
        assert b"event: response.completed" in replayed[1]
    else:
        assert json.loads(replayed[1]) == json.loads(recorded[1])
        assert json.loads(replayed[1])["output"][0]["content"][0]["text"] == "echo: Plan the week"


def test_provider_errors_are_recorded_and_replayed(tmp_path: Path) -> None:
    folder = tmp_path / "c" / "down"
    body = chat_body("j", hook="x [script:down]")
    with (
        ScriptedProvider({"down": [{"status": 500}]}) as provider,
        session("record", {"fake": provider.base_url}) as s,
        s.scenario("c::down", folder, "x"),
    ):
        assert post(f"{s.base_url}/fake/chat/completions", body, traceparent())[0] == 500
    with session("replay") as s, s.scenario("c::down", folder, "x"):
        status, raw, _ = post(f"{s.base_url}/fake/chat/completions", body, traceparent())
    assert status == 500 and b"scripted failure 500" in raw


def test_unknown_provider_in_record_mode_is_a_bad_gateway_answer(tmp_path: Path) -> None:
    with session("record") as s, s.scenario("c::x", tmp_path / "x", HOOK):
        status, raw, _ = post(f"{s.base_url}/nope/chat/completions", chat_body("j"), {})
    assert status == 502
    assert "no upstream base URL for provider 'nope'" in raw.decode()


def test_repeated_attempts_each_replay_the_recording_and_record_keeps_the_first(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "c" / "again"
    with ScriptedProvider(SCRIPT) as provider, session("record", {"fake": provider.base_url}) as s:
        for attempt in range(2):  # attempt 2 makes one more call than attempt 1
            with s.scenario("c::again", folder, HOOK) as traffic:
                url = f"{s.base_url}/fake/chat/completions"
                for _ in range(attempt + 1):
                    assert post(url, chat_body(str(uuid.uuid4())), traceparent())[0] == 200
            assert traffic.calls == attempt + 1  # counted per attempt
    assert [f.path.name for f in load_dir(folder).files] == ["1.json"]
    with session("replay") as s:
        for _ in range(3):
            with s.scenario("c::again", folder, HOOK) as traffic:
                body = chat_body(str(uuid.uuid4()))
                assert post(f"{s.base_url}/fake/chat/completions", body, traceparent())[0] == 200
            assert (traffic.calls, traffic.used, traffic.unmatched) == (1, [1], [])


def test_a_call_under_way_when_the_run_ends_is_still_recorded(tmp_path: Path) -> None:
    # The gateway has been stopped, but the parent's run on a sub-agent's announced result was
    # still streaming from the provider: stopping the proxy waits for it, then writes it.
    folder = tmp_path / "cassettes" / "late"
    slow = {"greet": [{"text": "Late answer.", "slow": 1.5}]}
    answers: list[tuple[int, bytes, str]] = []
    with ScriptedProvider(slow) as provider:
        recording = session("record", {"fake": provider.base_url})
        s = recording.__enter__()  # stopped by hand below, while the call is under way
        with s.scenario("greet.yaml::late", folder, HOOK):
            pass  # the scenario's assertions are done before its late call
        url = f"{s.base_url}/fake/chat/completions"
        # the late call continues the scenario: it carries the hook message it was sent with
        call = threading.Thread(
            target=lambda: answers.append(post(url, chat_body("late-job"), traceparent()))
        )
        call.start()
        deadline = time.monotonic() + 10
        while not provider.chat_requests("greet") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert provider.chat_requests("greet"), "the late call never reached the provider"
        written = s.stop()  # while the provider is still answering
        call.join(10)
        recording.__exit__(None, None, None)  # stopping again does nothing
    assert answers and answers[0][0] == 200
    assert [p.name for p in written] == ["1.json"]
    recorded = load_dir(folder).files[0].cassette
    assert recorded.scenario == "greet.yaml::late"
    streamed = "".join(line for event in recorded.response.events for line in event.lines)
    assert "Late a" in streamed and streamed.endswith("data: [DONE]")


def test_recording_again_with_repeats_leaves_no_older_recording_a_replay_could_read(
    tmp_path: Path,
) -> None:
    """Recorded once without repeats, then with two: the scenario's own recording (which a
    replay without repeats reads) and a third attempt's of an earlier recording are older than
    this one, and go."""
    folder, _ = record_greet(tmp_path)
    (folder / "attempt-3").mkdir()
    (folder / "attempt-3" / "1.json").write_text("{}", "utf-8")
    with ScriptedProvider(SCRIPT) as provider, session("record", {"fake": provider.base_url}) as s:
        for attempt in (1, 2):
            with s.scenario("greet.yaml::greets", folder / f"attempt-{attempt}", HOOK):
                url = f"{s.base_url}/fake/chat/completions"
                assert post(url, chat_body(str(uuid.uuid4())), traceparent())[0] == 200
    assert sorted(p.name for p in folder.iterdir()) == ["attempt-1", "attempt-2"]
    assert [f.path.name for f in load_dir(folder / "attempt-2").files] == ["1.json"]

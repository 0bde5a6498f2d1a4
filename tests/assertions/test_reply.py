"""Reply assertions on the run records recorded on the real gateway (tests/gateway/data/trajectory).

Each context's run is a recorded hook run: its gateway log (two lines, made from a real log's
lines with the recorded run's ids: its `embedded run start` and its `gateway/hooks` completion)
names the session key the reply is looked up by, and `openclaw_state_dir` is the recorded state
folder (copied, so a test may change its store).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from pydantic import ValidationError

from clawspec.assertions import REGISTRY, patterns, reply
from clawspec.assertions.base import EvalContext, RunInfo, Status, Verdict
from clawspec.config.settings import Settings
from clawspec.evidence.store import Evidence
from clawspec.gateway.trajectory.layout import store_path
from tests.support.harness import evaluate_one, make_context

DATA = Path(__file__).parents[1] / "gateway" / "data" / "trajectory"
REAL_LOG = Path(__file__).parents[1] / "gateway" / "fixtures" / "openclaw-real.log"
VERSIONS = ("2026.9.5", "2026.9.6")
# The ids of the real log's lines that the recorded run's ids replace.
_LOG_HOOK_RUN = "d2817338-ee65-4634-a81a-ae6a811a050a"
_LOG_JOB = "302ed264-7ae2-4ce7-a4d7-253c5cd3721f"
_LOG_SESSION = "a180acca-8b16-4a9a-9ad5-a3ebe240f9e8"
_LOG_EMBEDDED = "186d41e3-3bb0-43b1-80fa-bf11d976c9f9"


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recorded logs and stores are complete: late evidence is waited for only briefly.
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 0.3)


def _hook_line(version: str, name: str) -> dict[str, str]:
    recorded = json.loads((DATA / version / "manifest.json").read_text("utf-8"))
    stores = recorded["stores"]["default"]
    run_id = stores["hooks"][name]["runId"]
    (line,) = [line for line in stores["hook_lines"] if line["runId"] == run_id]
    return dict(line)


def _write_log(path: Path, hook: dict[str, str], name: str) -> None:
    lines = REAL_LOG.read_text("utf-8").splitlines()
    start = next(line for line in lines if f"runId={_LOG_EMBEDDED}" in line)
    done = next(line for line in lines if '"gateway/hooks' in line and _LOG_HOOK_RUN in line)
    swaps = {
        _LOG_HOOK_RUN: hook["runId"],
        _LOG_JOB: hook["jobId"],
        _LOG_SESSION: hook["sessionId"],
        _LOG_EMBEDDED: "e0000000-0000-4000-8000-000000000001",
        "hook:clawspec:w1": f"hook:clawspec:{name}",
    }
    text = start + "\n" + done + "\n"
    for old, new in swaps.items():
        text = text.replace(old, new)
    path.write_text(text, "utf-8")


def context(
    tmp_path: Path,
    version: str = "2026.9.6",
    name: str = "tj-write",
    *,
    state: bool = True,
    **settings: Any,
) -> EvalContext:
    """A scenario context whose run is the recorded hook run `name` of `version`."""
    state_dir = tmp_path / "state"
    if not state_dir.exists():
        shutil.copytree(DATA / version / "default", state_dir)
    log = tmp_path / "openclaw.log"
    hook = _hook_line(version, name)
    _write_log(log, hook, name)
    if state:
        settings.setdefault("openclaw_state_dir", str(state_dir))
    info = RunInfo(
        "test",
        "testrun0000000001",
        datetime(2026, 11, 1, tzinfo=UTC),
        session_key=f"hook:clawspec:{name}",
        gateway_run_id=hook["runId"],
    )
    evidence = Evidence(requests.Session(), log, 0)
    return make_context(tmp_path, Settings(**settings), evidence=evidence, run=info)


def recorded_reply(version: str, name: str = "tj-write") -> str:
    """The reply as the recorded store holds it (the last of model.completed's assistantTexts)."""
    hook = _hook_line(version, name)
    db = sqlite3.connect(
        f"{store_path(DATA / version / 'default', 'main').as_uri()}?mode=ro", uri=True
    )
    try:
        rows = db.execute(
            "SELECT event_json FROM trajectory_runtime_events WHERE session_id = ? ORDER BY seq",
            (hook["sessionId"],),
        ).fetchall()
    finally:
        db.close()
    texts = [
        json.loads(row[0])["data"]["assistantTexts"]
        for row in rows
        if json.loads(row[0])["type"] == "model.completed"
    ]
    return str(texts[0][-1])


def check(ctx: EvalContext, assertion: str | dict[str, Any]) -> tuple[Status, str]:
    verdict = evaluate_one(assertion, ctx)
    return verdict.status, verdict.message


# --- the reply of a hook run, read from its record -----------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_the_reply_of_a_hook_run_is_its_final_text_not_the_commentary(
    version: str, tmp_path: Path
) -> None:
    from clawspec.evidence.reply import replies

    ctx = context(tmp_path, version)
    found = replies(ctx)
    assert isinstance(found, tuple)
    (reply,) = found
    assert reply.text == recorded_reply(version)
    assert reply.text and "Let me" not in reply.text  # the text beside the tool call is not it
    # The record is read once per run: every assertion on it shares it.
    records = ctx.evidence.built_records()
    assert records is not None and not isinstance(records, Verdict)
    assert replies(ctx)[0].text == reply.text
    assert ctx.evidence.built_records() is records


@pytest.mark.parametrize("version", VERSIONS)
def test_reply_assertions_on_a_recorded_reply(version: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, version)
    text = recorded_reply(version)
    word = text.split()[0]
    assert check(ctx, {"type": "reply_contains", "text": word.upper()})[0] is Status.PASS
    assert check(ctx, {"type": "reply_not_contains", "words": [word]})[0] is Status.FAIL
    assert check(ctx, {"type": "reply_matches", "pattern": "^" + word})[0] is Status.PASS
    status, message = check(ctx, {"type": "reply_contains", "text": "no such words here"})
    assert status is Status.FAIL
    assert message.startswith("the reply does not contain 'no such words here' (ignoring case)")


# --- semantics, on a reply of our own ------------------------------------------------------


def _with_reply(tmp_path: Path, text: str | None, **settings: Any) -> EvalContext:
    """The recorded tj-write run with its reply replaced by `text` (None: no final text)."""
    ctx = context(tmp_path, **settings)
    hook = _hook_line("2026.9.6", "tj-write")
    db = sqlite3.connect(store_path(tmp_path / "state", "main"), isolation_level=None)
    try:
        rows = db.execute(
            "SELECT seq, event_json FROM trajectory_runtime_events WHERE session_id = ?",
            (hook["sessionId"],),
        ).fetchall()
        for seq, raw in rows:
            event = json.loads(raw)
            if event["type"] == "model.completed":
                event["data"]["assistantTexts"] = [] if text is None else ["before", text]
                db.execute(
                    "UPDATE trajectory_runtime_events SET event_json = ? "
                    "WHERE session_id = ? AND seq = ?",
                    (json.dumps(event), hook["sessionId"], seq),
                )
    finally:
        db.close()
    return ctx


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        ({"type": "reply_contains", "text": "order  NUMBER\n42"}, Status.PASS),  # whitespace
        ({"type": "reply_contains", "text": "STRASSE"}, Status.PASS),  # case-folded: ß = ss
        ({"type": "reply_contains", "text": "Order", "case_sensitive": True}, Status.PASS),
        ({"type": "reply_contains", "text": "ORDER", "case_sensitive": True}, Status.FAIL),
        ({"type": "reply_contains", "any_of": ["nope", "number 42"]}, Status.PASS),
        ({"type": "reply_contains", "any_of": ["nope", "nada"]}, Status.FAIL),
        ({"type": "reply_contains", "all_of": ["order", "straße"]}, Status.PASS),
        ({"type": "reply_contains", "all_of": ["order", "nope"]}, Status.FAIL),
        ({"type": "reply_contains", "any_of": ["x"], "all_of": ["order"]}, Status.FAIL),
        ({"type": "reply_not_contains", "text": "ORDER number"}, Status.FAIL),
        ({"type": "reply_not_contains", "text": "refund"}, Status.PASS),
        ({"type": "reply_not_contains", "words": ["ord"]}, Status.PASS),  # whole words only
        ({"type": "reply_not_contains", "words": ["number 42"]}, Status.FAIL),
        ({"type": "reply_matches", "pattern": r"number\s+\d+"}, Status.PASS),
        ({"type": "reply_matches", "pattern": r"ORDER"}, Status.FAIL),  # no implicit flags
        ({"type": "reply_matches", "pattern": r"(?i)ORDER"}, Status.PASS),
        ({"type": "reply_matches", "pattern": r"^Lagerstraße"}, Status.FAIL),  # no MULTILINE
        ({"type": "reply_matches", "pattern": r"(?m)^Lagerstraße"}, Status.PASS),
    ],
)
def test_semantics(tmp_path: Path, assertion: dict[str, Any], status: Status) -> None:
    ctx = _with_reply(tmp_path, "Your Order number\t 42 is ready.\nLagerstraße 5")
    assert check(ctx, assertion)[0] is status


def test_words_from_a_source_list_as_artifact_absent_words(tmp_path: Path) -> None:
    ctx = _with_reply(tmp_path, "All good.\nThis is a Limited  Time offer.")
    (tmp_path / "words.yaml").write_text("brand:\n  banned: [urgent, limited time]\n", "utf-8")
    status, message = check(
        ctx, {"type": "reply_not_contains", "source": "words.yaml", "key": "brand.banned"}
    )
    assert status is Status.FAIL
    assert message.startswith("the reply contains 'limited time' (line 2)")
    status, message = check(
        ctx, {"type": "reply_not_contains", "source": "words.yaml", "key": "brand.none"}
    )
    assert (status, message) == (Status.ERROR, "word list 'words.yaml' has no key 'brand.none'")


def test_a_run_without_a_final_text_fails_every_reply_assertion(tmp_path: Path) -> None:
    ctx = _with_reply(tmp_path, None)
    for assertion in (
        {"type": "reply_contains", "text": "x"},
        {"type": "reply_not_contains", "text": "x"},
        {"type": "reply_matches", "pattern": "x"},
    ):
        status, message = check(ctx, assertion)
        assert status is Status.FAIL
        assert "ended without a final text" in message


def test_a_catastrophic_pattern_is_stopped_and_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(patterns, "PATTERN_SECONDS", 1.0)
    ctx = _with_reply(tmp_path, "a" * 64 + "!")
    status, message = check(ctx, {"type": "reply_matches", "pattern": "^(a+)+$"})
    assert status is Status.ERROR
    assert "did not finish on the reply (65 characters) within 1 s" in message


# --- what the reply cannot be read from: error, never pass, never skip ----------------------------


def test_target_mode_without_a_state_folder_is_an_error_naming_the_setting(
    tmp_path: Path,
) -> None:
    ctx = context(tmp_path, state=False)
    for assertion in (
        {"type": "reply_contains", "text": "x"},
        {"type": "reply_not_contains", "words": ["x"]},
        {"type": "reply_matches", "pattern": "x"},
        {"type": "llm_judge", "source": "reply", "rubric": "Score 1-5."},
    ):
        status, message = check(ctx, assertion)
        assert status is Status.ERROR, assertion
        assert "set openclaw_state_dir (environment CLAWSPEC_OPENCLAW_STATE_DIR" in message


def test_a_missing_store_is_an_error_with_the_readers_reason(tmp_path: Path) -> None:
    ctx = context(tmp_path, openclaw_state_dir=str(tmp_path / "elsewhere"))
    status, message = check(ctx, {"type": "reply_not_contains", "words": ["x"]})
    assert status is Status.ERROR  # at once: a folder that does not exist holds no store
    assert message.startswith(f"cannot read the run's record: {tmp_path / 'elsewhere'} does not")
    assert "openclaw_state_dir" in message or "OPENCLAW_STATE_DIR" in message


def test_an_unknown_record_version_is_an_error_naming_it(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    db = sqlite3.connect(store_path(tmp_path / "state", "main"), isolation_level=None)
    try:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = "
            "json_set(event_json, '$.schemaVersion', 7)"
        )
    finally:
        db.close()
    status, message = check(ctx, {"type": "reply_not_contains", "text": "x"})
    assert status is Status.ERROR
    assert "openclaw-trajectory" in message and "7" in message


def test_a_store_that_stays_locked_is_an_error(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    writer = sqlite3.connect(store_path(tmp_path / "state", "main"), isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        status, message = check(ctx, {"type": "reply_not_contains", "text": "x"})
    finally:
        writer.close()
    assert status is Status.ERROR
    assert "locked" in message


def test_a_stopped_scenario_ends_the_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 600.0)
    # A state folder with agent stores but not this agent's yet: its first store may come later.
    (tmp_path / "elsewhere" / "agents").mkdir(parents=True)
    ctx = context(tmp_path, openclaw_state_dir=str(tmp_path / "elsewhere"))
    threading.Timer(0.2, ctx.stop.set).start()
    status, message = check(ctx, {"type": "reply_contains", "text": "x"})
    assert (status, message) == (
        Status.ERROR,
        "the scenario was stopped before the run's record was read",
    )


# --- hostile text and secrets ---------------------------------------------------------------------


def test_hostile_text_in_a_reply_stays_text_in_the_message(tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script> **bold** [x](http://e.test) \x1b[31mred\x07 \ud800 end"
    ctx = _with_reply(tmp_path, hostile)
    status, message = check(ctx, {"type": "reply_contains", "text": "absent"})
    assert status is Status.FAIL
    assert "\x1b" not in message and "\x07" not in message
    assert "\ud800" not in message and "\ufffd" in message  # a lone surrogate, replaced
    assert "<script>alert(1)</script> **bold**" in message  # as text: the outputs escape it
    # The search itself sees the reply as written.
    pattern = r"[\ud800-\udfff] end$"  # escapes: a contract's YAML holds no lone surrogate
    assert check(ctx, {"type": "reply_matches", "pattern": pattern})[0] is Status.PASS


def test_a_secret_in_the_reply_is_masked_in_the_message(tmp_path: Path) -> None:
    from clawspec import secrets

    token = "hooks-secret-3b8e1f0c9d"
    ctx = _with_reply(tmp_path, f"Your token is {token}, keep it.")
    with secrets.scope({}):
        secrets.register(token)
        status, message = check(ctx, {"type": "reply_contains", "text": "absent"})
    assert status is Status.FAIL
    assert token not in message and "***" in message


def test_a_match_deep_in_a_long_reply_is_quoted_where_it_is(tmp_path: Path) -> None:
    """A failure quotes the reply around what matched, not its first characters."""
    reply = "Sentence number one. " * 800 + "Then THE-END-MARKER, and bye."
    ctx = _with_reply(tmp_path, reply)
    status, message = check(ctx, {"type": "reply_not_contains", "text": "the-end-marker"})
    assert status is Status.FAIL
    at = " ".join(reply.split()).casefold().find("the-end-marker") + 1
    assert message.startswith(
        f"the reply contains 'the-end-marker' at character {at:,} of {len(reply):,} "
        '(whitespace collapsed): "…'
    )
    assert message.endswith('number one. Then THE-END-MARKER, and bye."')


# OpenClaw records a reply after redacting the secrets it recognises: a live key becomes its
# first 6 and last 4 characters (`sk-liv…3210`), other forms `<redacted>`. What the agent said
# is not in the record, so nothing may pass or fail on what was hidden.
LEAKED = "Here is the key: sk-liv\u20263210 and more."


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        # the secret may be what was hidden: not decided either way
        ({"type": "reply_not_contains", "text": "sk-live-9f8e7d6c5b4a3210"}, Status.ERROR),
        ({"type": "reply_not_contains", "words": ["sk-live-9f8e7d6c5b4a3210"]}, Status.ERROR),
        ({"type": "reply_contains", "text": "sk-live-9f8e7d6c5b4a3210"}, Status.ERROR),
        ({"type": "reply_matches", "pattern": "sk-live-[0-9a-f]{16}"}, Status.ERROR),
        # found in OpenClaw's redaction, not in what the agent said
        ({"type": "reply_contains", "text": "sk-liv\u20263210"}, Status.ERROR),
        ({"type": "reply_matches", "pattern": "sk-liv.3210"}, Status.ERROR),
        ({"type": "reply_not_contains", "text": "sk-liv\u20263210"}, Status.ERROR),
        # what OpenClaw left as it was still decides
        ({"type": "reply_contains", "text": "Here is the key"}, Status.PASS),
        ({"type": "reply_not_contains", "text": "and more"}, Status.FAIL),
        ({"type": "reply_matches", "pattern": "key: sk-liv"}, Status.PASS),
    ],
)
def test_a_reply_openclaw_recorded_redacted_decides_only_what_it_left_visible(
    tmp_path: Path, assertion: dict[str, Any], status: Status
) -> None:
    ctx = _with_reply(tmp_path, LEAKED)
    found, message = check(ctx, assertion)
    assert found is status, message
    if status is Status.ERROR:
        assert message.startswith("OpenClaw recorded the reply of run ")
        assert "with a part it redacted (a secret it recognised): what it hid cannot be" in message


# --- load errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assertion", "error"),
    [
        ({"type": "reply_contains"}, "one of 'text', 'any_of', 'all_of' is required"),
        (
            {"type": "reply_contains", "text": "a", "all_of": ["b"]},
            "'text' cannot be combined with 'any_of' or 'all_of'",
        ),
        ({"type": "reply_contains", "any_of": ["a", " "]}, "entries must not be empty"),
        ({"type": "reply_contains", "text": " \n"}, "'text' must not be blank"),
        ({"type": "reply_not_contains", "text": "  "}, "'text' must not be blank"),
        ({"type": "reply_not_contains", "source": "w.yaml"}, "'source' and 'key' must be given"),
        (
            {"type": "reply_not_contains", "text": "a", "words": ["b"]},
            "'text' cannot be combined with 'words'",
        ),
        ({"type": "reply_matches", "pattern": "(ab"}, "not a regular expression: missing )"),
        ({"type": "llm_judge", "rubric": "r"}, "exactly one of 'path', 'source' is required"),
        (
            {"type": "llm_judge", "rubric": "r", "path": "a.md", "source": "reply"},
            "exactly one of 'path', 'source' is required",
        ),
    ],
)
def test_load_errors(assertion: dict[str, Any], error: str) -> None:
    with pytest.raises(ValidationError, match=error.replace("(", r"\(").replace(")", r"\)")):
        REGISTRY[assertion["type"]].model.model_validate(assertion)


def test_a_reply_assertion_in_given_is_a_load_error_at_its_place(tmp_path: Path) -> None:
    contract = tmp_path / "reply.clawspec.yaml"
    contract.write_text(
        'version: "1.0"\n'
        "target: {type: agent, path: .}\n"
        "scenarios:\n"
        "  - name: early\n"
        "    given:\n"
        "      - {type: file_present, path: a.md}\n"
        "      - {type: reply_contains, text: hi}\n"
        "      - {type: llm_judge, source: reply, rubric: r}\n"
        "    when: {invoke: hi}\n"
        "    then:\n"
        "      - {type: reply_contains, text: hi}\n",
        "utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "validate", str(contract)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert [e.split(": ", 2)[1] for e in errors] == [
        f"{contract.name}:7:16",
        f"{contract.name}:8:16",
    ]
    assert "a reply assertion cannot be in 'given'" in errors[0]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"OPENCLAW_STATE_DIR": "/srv/oc"}, "/srv/oc"),
        ({"OPENCLAW_STATE_DIR": "/srv/oc", "CLAWSPEC_OPENCLAW_STATE_DIR": "/srv/cs"}, "/srv/cs"),
        ({}, None),
    ],
)
def test_the_state_folder_setting_and_its_fallback(
    environ: dict[str, str], expected: str | None
) -> None:
    from clawspec.config.loading import load_settings

    assert load_settings(None, environ).openclaw_state_dir == expected


def test_the_configuration_files_state_folder_wins_over_openclaws_variable(
    tmp_path: Path,
) -> None:
    from clawspec.config.loading import load_settings

    config = tmp_path / "clawspec.yaml"
    config.write_text("openclaw_state_dir: /srv/file\n", "utf-8")
    settings = load_settings(config, {"OPENCLAW_STATE_DIR": "/srv/oc"})
    assert settings.openclaw_state_dir == "/srv/file"


# --- the registry's other readers know them ------------------------------------------------


def test_coverage_counts_the_reply_category_and_its_negative_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawspec.cli import main
    from tests.support.openclaw_workspace import make_workspace

    root = make_workspace(tmp_path / "ws")
    contract = root / "agents/support/tests/scenarios.yaml"
    contract.parent.mkdir(parents=True, exist_ok=True)
    contract.write_text(
        'version: "1.0"\n'
        "target: {type: agent, path: agents/support, agent_id: support}\n"
        "scenarios:\n"
        "  - name: answers\n"
        "    when: {invoke: hello}\n"
        "    then:\n"
        "      - {type: reply_contains, text: hello}\n"
        "      - {type: reply_not_contains, words: [sorry]}\n",
        "utf-8",
    )
    monkeypatch.chdir(root)
    assert main(["coverage", "--format", "json"]) == 0
    rows = {row["target"]: row for row in json.loads(capsys.readouterr().out)["targets"]}
    assert (rows["agents/support"]["categories"], rows["agents/support"]["negative"]) == (
        ["reply"],
        True,
    )


def test_the_editor_schema_knows_the_reply_types() -> None:
    import jsonschema

    schema = json.loads(
        (Path(reply.__file__).parents[1] / "schemas" / "contract.schema.json").read_text("utf-8")
    )

    def valid(assertion: dict[str, Any]) -> bool:
        contract = {
            "version": "1.0",
            "target": {"type": "agent", "path": "."},
            "scenarios": [{"name": "a", "when": {"invoke": "hi"}, "then": [assertion]}],
        }
        return jsonschema.Draft7Validator(schema).is_valid(contract)

    assert valid({"type": "reply_contains", "any_of": ["a"], "all_of": ["b"]})
    assert valid({"type": "reply_not_contains", "source": "w.yaml", "key": "k"})
    assert valid({"type": "reply_matches", "pattern": "a+"})
    assert valid({"type": "llm_judge", "source": "reply", "rubric": "r"})
    assert not valid({"type": "reply_contains", "text": "a", "any_of": ["b"]})
    assert not valid({"type": "reply_contains"})
    assert not valid({"type": "reply_not_contains", "source": "w.yaml"})
    assert not valid({"type": "reply_matches"})
    assert not valid({"type": "llm_judge", "rubric": "r", "path": "a.md", "source": "reply"})

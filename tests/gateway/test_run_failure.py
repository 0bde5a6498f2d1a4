"""The cause of a failed or timed-out hook run, read from the real gateway's log lines.

Fixtures (OpenClaw 2026.9.6, paths made neutral):
- openclaw-run-failures.log: the lines of four hook runs that failed, each whole trace: agent
  `nokey` (model openai/gpt-4o-mini, no key), `main` whose provider answered 401, `noprov`
  (model nosuch/some-model) and `anth` (anthropic model, no key).
- openclaw-run-timeout.log: a hook run (timeoutSeconds 10) whose model never answered, logged at
  trace level, until the gateway ended it at its timeout and a heartbeat ran after it.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from clawspec.gateway.logs.facts import HookOutcome, ModelFailure, ModelRetry, RunStep, outcome_of
from clawspec.gateway.run_failure import (
    CAUSE_CHARS,
    RunFailure,
    explain,
    read_run_failure,
    unreachable_provider,
)

FIXTURES = Path(__file__).parent / "fixtures"
FAILURES = FIXTURES / "openclaw-run-failures.log"
TIMEOUT = FIXTURES / "openclaw-run-timeout.log"
NOKEY_RUN = "0881615a-75fd-4e2d-9e5a-25c65872d8c1"
TIMEOUT_RUN = "9a5c2fd1-9974-4382-a3bf-3fda8e9418d9"
TIMEOUT_SESSION = "d6768174-5906-4c85-9364-01bf5ce4770b"
# The client gave up on the timeout run 3 s after sending it; the log as it was 3 s later.
GAVE_UP = datetime.fromisoformat("2026-11-25T13:44:47+00:00")


def _facts(path: Path) -> list[object]:
    return [fact for raw in path.read_bytes().splitlines(True) for fact in outcome_of(raw).facts]


def _copy(path: Path, tmp_path: Path, until: str | None = None) -> Path:
    """The fixture as the gateway's log, cut before the first line containing `until`."""
    target = tmp_path / "openclaw.log"
    if until is None:
        shutil.copy(path, target)
        return target
    lines = path.read_text("utf-8").splitlines(True)
    cut = next(i for i, line in enumerate(lines) if until in line)
    target.write_text("".join(lines[:cut]), "utf-8")
    return target


def test_outcome_facts_of_the_real_lines() -> None:
    facts = _facts(FAILURES)
    outcomes = {f.run_id: f for f in facts if isinstance(f, HookOutcome)}
    assert outcomes[NOKEY_RUN] == HookOutcome(
        NOKEY_RUN,
        "error",
        "No route-compatible authentication source is configured for openai.",
        "nokey",
        "hook:clawspec:failrun1",
        "60b153b3-c05c-4aaf-be56-75d837a4f54b",
        "gpt-5.4-mini",
    )
    assert len(outcomes) == 4
    failures = [f for f in facts if isinstance(f, ModelFailure)]
    assert (
        ModelFailure(
            "8e6d6b70-ff92-4e0a-84c7-d8efa5719605",
            "60b153b3-c05c-4aaf-be56-75d837a4f54b",
            "openai",
            "gpt-5.4-mini",
            "auth",
            401,
            "No route-compatible authentication source is configured for openai.",
        )
        in failures
    )
    assert {f.reason for f in failures} == {"auth", "model_not_found"}

    steps = [f for f in _facts(TIMEOUT) if isinstance(f, RunStep)]
    ours = [(s.kind, s.ms) for s in steps if s.session_id == TIMEOUT_SESSION]
    assert ours == [
        ("queued", None),
        ("startup", 24),
        ("start", None),
        ("prep", 1498),
        ("prompt", None),
        ("timeout", 10000),
    ]
    assert (
        steps[0].key
        == f"agent:main:cron:41a90244-6495-4537-8787-c049c53d534f:run:{TIMEOUT_SESSION}"
    )


@pytest.mark.parametrize(
    ("run_id", "key", "cause", "fix"),
    [
        (
            NOKEY_RUN,
            "hook:clawspec:failrun1",
            ": No route-compatible authentication source is configured for openai. — fix: ",
            "configure a model provider and its API key for agent 'nokey' (provider 'openai' "
            "has none: `openclaw models auth paste-api-key --provider openai --agent nokey`)",
        ),
        (
            "4123a58a-da78-44ee-a74b-4aa2a2c98379",
            "hook:clawspec:e401",
            ": ⚠️ fake/fake-model request failed (authentication failed, HTTP 401). "
            "Re-authenticate the provider and try again. — fix: ",
            "provider 'fake' refused the API key of agent 'main': check the key (OpenClaw "
            "pauses a refused key for about a minute)",
        ),
        (
            "fc2f904f-d2ae-4769-b132-2e8767a690c0",
            "hook:clawspec:noprov",
            ": Unknown model: nosuch/some-model. Run `openclaw models list --refresh",
            "configure a model provider and its API key for agent 'noprov': no configured "
            "provider offers 'nosuch/some-model' (`openclaw models list`)",
        ),
        (
            "68ffa825-a393-464b-8264-ef99153fb976",
            "hook:clawspec:anth",
            ': No API key found for provider "anthropic". Auth store: ',
            "configure a model provider and its API key for agent 'anth' (provider "
            "'anthropic' has none: `openclaw models auth paste-api-key --provider anthropic "
            "--agent anth`)",
        ),
    ],
)
def test_each_failed_run_gets_the_cause_of_its_own_lines_and_the_fix(
    tmp_path: Path, run_id: str, key: str, cause: str, fix: str
) -> None:
    log = _copy(FAILURES, tmp_path)
    message = f"run {run_id} completed with status 'error'"
    for ids, keys in (((run_id,), ()), ((), (key,))):  # by the hook run id, or the session key
        failure = read_run_failure(log, 0, run_ids=("c1a5", *ids), session_keys=keys, wait_s=0)
        assert failure is not None and failure.status == "error"
        told = explain(
            message=message, http_status=None, timed_out=False, failure=failure, agent_id="main"
        )
        assert cause in told
        assert told.endswith(f" — fix: {fix}")
        assert "gateway log:" not in told  # how long it took matters only for a timeout


def test_the_cause_is_cut_and_said_once(tmp_path: Path) -> None:
    log = _copy(FAILURES, tmp_path)
    failure = read_run_failure(
        log, 0, run_ids=("68ffa825-a393-464b-8264-ef99153fb976",), session_keys=(), wait_s=0
    )
    assert failure is not None and len(failure.cause or "") > CAUSE_CHARS
    told = explain(
        message="run x completed", http_status=None, timed_out=False, failure=failure, agent_id="a"
    )
    cause = told.split(" — fix: ")[0].removeprefix(": ")
    assert len(cause) == CAUSE_CHARS and cause.endswith("…")
    # a gateway that did put the cause in its answer: not repeated
    nokey = read_run_failure(log, 0, run_ids=(NOKEY_RUN,), session_keys=(), wait_s=0)
    assert nokey is not None and nokey.cause
    told = explain(
        message=f"run x completed with status 'error': {nokey.cause}",
        http_status=None,
        timed_out=False,
        failure=nokey,
        agent_id="nokey",
    )
    assert told.startswith(" — fix: configure a model provider")


def test_a_run_not_in_the_log_has_no_cause(tmp_path: Path) -> None:
    log = _copy(FAILURES, tmp_path)
    assert read_run_failure(log, 0, run_ids=("nope",), session_keys=("hook:x",), wait_s=0) is None
    assert read_run_failure(tmp_path / "missing.log", 0, run_ids=("x",), session_keys=()) is None
    # the run's lines start after the scenario's offset: an earlier run is not this one
    offset = log.stat().st_size
    assert read_run_failure(log, offset, run_ids=(NOKEY_RUN,), session_keys=(), wait_s=0) is None


def test_a_run_the_gateway_ended_at_its_timeout_tells_how_long_it_was_prepared_and_ran(
    tmp_path: Path,
) -> None:
    log = _copy(TIMEOUT, tmp_path)
    failure = read_run_failure(
        log, 0, run_ids=(TIMEOUT_RUN,), session_keys=("hook:clawspec:clientto",), wait_s=0
    )
    assert failure is not None and failure.timing is not None
    assert failure.timing.prep_ms == 24 + 1498 and failure.timing.timeout_ms == 10000
    told = explain(
        message=f"run {TIMEOUT_RUN} completed with status 'error'",
        http_status=None,
        timed_out=False,
        failure=failure,
        agent_id="main",
    )
    assert told == (
        ": Request timed out before a response was generated. Please try again, or increase "
        "`agents.defaults.timeoutSeconds` in your config. (gateway log: prepared for 1.5 s, "
        "then the model ran into the run's 10 s timeout) — fix: raise the scenario's `timeout` "
        "(ClawSpec sends it as the run's timeoutSeconds)"
    )


def test_an_unfinished_run_is_found_by_elimination_and_told_how_far_it_got(
    tmp_path: Path,
) -> None:
    # No line names ClawSpec's ids before the gateway ends the run.
    log = _copy(TIMEOUT, tmp_path, until="embedded run timeout")
    args = {"run_ids": ("c1a5",), "session_keys": ("hook:clawspec:c1a5",), "unfinished": True}
    failure = read_run_failure(log, 0, agent_id="main", **args)
    assert failure is not None and failure.timing is not None
    told = explain(
        message="no completion within 8 s (POST http://127.0.0.1:9/hooks/agent)",
        http_status=None,
        timed_out=True,
        failure=failure,
        agent_id="main",
        now=GAVE_UP,
    )
    assert told == (
        " (gateway log: prepared for 1.5 s, the model had been running for 4.1 s) — fix: raise "
        "the scenario's `timeout`"
    )
    # another agent's run is not this scenario's
    assert read_run_failure(log, 0, agent_id="other", **args) is None
    # nor is anything when two hook runs of the agent are in flight
    text = log.read_text("utf-8")
    twin = text.replace(TIMEOUT_SESSION, "0d2c1b2a-5906-4c85-9364-01bf5ce4770b").replace(
        "e98a505e97dd98040164a574fc0f7557", "f00dfeed97dd98040164a574fc0f7557"
    )
    log.write_text(text + twin, "utf-8")
    assert read_run_failure(log, 0, agent_id="main", **args) is None


# OpenClaw's line when it retries a failing model call (real, from a provider answering 500);
# it names only its trace, here set to the unfinished run's.
RETRY_LINE = (
    '{"0":"{\\"subsystem\\":\\"agent/embedded\\"}","1":"transient same-model retry 3/8 for '
    'fake/fake-model reason=server_error: delayMs=4096","time":"2026-11-25T13:44:40.100+00:00",'
    '"message":"transient same-model retry 3/8 for fake/fake-model reason=server_error: '
    'delayMs=4096","traceId":"e98a505e97dd98040164a574fc0f7557","spanId":"cb84a6bd611e5fb0"}\n'
)


def test_a_run_out_of_time_while_the_provider_kept_failing_says_so_not_raise_the_timeout(
    tmp_path: Path,
) -> None:
    assert outcome_of(RETRY_LINE.encode()).facts == (
        ModelRetry(3, 8, "fake/fake-model", "server_error"),
    )
    log = _copy(TIMEOUT, tmp_path, until="embedded run timeout")
    log.write_text(log.read_text("utf-8") + RETRY_LINE, "utf-8")
    args = {"run_ids": ("c1a5",), "session_keys": ("hook:clawspec:c1a5",), "unfinished": True}
    failure = read_run_failure(log, 0, agent_id="main", **args)
    assert failure is not None and failure.retry == ModelRetry(
        3, 8, "fake/fake-model", "server_error"
    )
    told = explain(
        message="no completion within 8 s (POST http://127.0.0.1:9/hooks/agent)",
        http_status=None,
        timed_out=True,
        failure=failure,
        agent_id="main",
        now=GAVE_UP,
    )
    assert told.endswith(
        " — fix: the model provider kept failing (fake/fake-model: server_error; OpenClaw was at "
        "retry 3/8): fix the provider, a longer `timeout` ends in the same error"
    ), told
    # a retry in another trace is another run's
    log.write_text(log.read_text("utf-8").replace(RETRY_LINE, RETRY_LINE.replace("e98a", "0000")))
    assert read_run_failure(log, 0, agent_id="main", **args).retry is None


def test_a_slow_preparation_suggests_lowering_concurrency(tmp_path: Path) -> None:
    """On a busy machine OpenClaw writes the same `prep stages` line at warn level (≥ 10 s)."""
    log = _copy(TIMEOUT, tmp_path, until="embedded run timeout")
    text = log.read_text("utf-8").replace("totalMs=1498 ", "totalMs=52310 ")
    log.write_text(text, "utf-8")
    args = {"run_ids": (), "session_keys": (), "agent_id": "main", "unfinished": True}
    told = explain(
        message="no completion within 60 s",
        http_status=None,
        timed_out=True,
        failure=read_run_failure(log, 0, **args),
        agent_id="main",
        now=GAVE_UP,
    )
    slow = "fix: the gateway is slow to prepare runs (a busy machine): raise `timeout`, or lower "
    assert told == (
        " (gateway log: prepared for 52.3 s, the model had been running for 4.1 s) — "
        f"{slow}`concurrency`"
    )
    # still in the preparation: how long it has been at it so far
    _copy(TIMEOUT, tmp_path, until="[trace:embedded-run] prep stages")
    told = explain(
        message="no completion within 60 s",
        http_status=None,
        timed_out=True,
        failure=read_run_failure(log, 0, **args),
        agent_id="main",
        now=datetime.fromisoformat("2026-11-25T13:45:42+00:00"),
    )
    assert told == f" (gateway log: still preparing the run after 60.6 s) — {slow}`concurrency`"


@pytest.mark.parametrize(
    ("status", "text", "fix"),
    [
        (
            503,
            '{"ok":false,"error":"hook agent run did not start before admission timeout"}',
            "the gateway was too busy to start the run within its 15 s admission timeout, "
            "retried while `timeout` allowed: lower `concurrency`, or raise `timeout`",
        ),
        (
            409,
            '{"ok":false,"error":"hook configuration changed; retry request"}',
            "the gateway reloaded its hooks configuration during the request: do not change "
            "its config while a suite runs",
        ),
        (
            409,
            '{"ok":false,"error":"hook agent run was rejected because the target session changed"}',
            "another run changed this run's session while it started: do not send one "
            "session key from concurrent runs",
        ),
        (
            502,
            '{"ok":false,"error":"hook agent run failed before entering the agent runner"}',
            "the gateway was not ready for runs yet: wait for its /readyz, or raise `timeout`",
        ),
        (400, '{"ok":false,"error":"unknown agentId \\"other\\""}', "add agent 'other'"),
        (
            401,
            "Unauthorized",
            "set CLAWSPEC_HOOKS_TOKEN (for a variant with its own gateway: the variable its "
            "hooks_token_env names) to the gateway's hooks.token",
        ),
    ],
)
def test_a_refused_request_says_the_likely_fix(status: int, text: str, fix: str) -> None:
    message = f"POST http://127.0.0.1:9/hooks/agent → {status}: {text}"
    told = explain(
        message=message, http_status=status, timed_out=False, failure=None, agent_id="other"
    )
    assert told.startswith(f" — fix: {fix}")


def test_nothing_to_add_without_a_cause_or_a_known_fix() -> None:
    told = explain(
        message="POST x → 500: boom", http_status=500, timed_out=False, failure=None, agent_id="a"
    )
    assert told == ""


def test_a_model_override_on_an_unreachable_local_provider_names_it_and_the_log(
    tmp_path: Path,
) -> None:
    # openclaw-preflight-failed.log (OpenClaw 2026.9.6): a hook run with model override down/m1,
    # whose baseUrl http://127.0.0.1:9/v1 does not answer; OpenClaw skips the run.
    log = _copy(FIXTURES / "openclaw-preflight-failed.log", tmp_path)
    failure = read_run_failure(
        log, 0, run_ids=(), session_keys=("hook:clawspec:68ff589ea0d240bc",), wait_s=0
    )
    down = unreachable_provider(failure, None)
    assert down is not None
    assert (down.provider, down.host) == ("down", "127.0.0.1:9")
    assert down.cause == "local provider preflight failed: bad port"
    told = explain(
        message="run x completed with status 'skipped'",
        http_status=None,
        timed_out=False,
        failure=failure,
        agent_id="main",
        unreachable=down,
        log=tmp_path / "kept.log",
    )
    # OpenClaw's long sentence is left out: the fix says the same in fewer words.
    assert told == (
        " — fix: model provider 'down' unreachable at 127.0.0.1:9 (local provider preflight "
        f"failed: bad port; log: {tmp_path / 'kept.log'}): check network, proxy, DNS and its "
        "baseUrl; its other runs are skipped"
    )
    assert down.skip_reason("a.yaml::one") == (
        "not run: model provider 'down' unreachable at 127.0.0.1:9 in a.yaml::one (local "
        "provider preflight failed: bad port); see that scenario's error"
    )


@pytest.mark.parametrize(
    ("config", "host"),
    [
        ({}, "api.openai.com"),  # OpenClaw's own endpoint for the provider
        ({"models": {"providers": {"openai": {"baseUrl": "https://proxy.example:8443/v1"}}}},
         "proxy.example:8443"),
    ],
)  # fmt: skip
def test_the_host_of_an_unreachable_provider(config: dict[str, object], host: str) -> None:
    failure = RunFailure(
        cause="LLM request failed: DNS lookup for the provider endpoint failed.",
        retry=ModelRetry(8, 8, "openai/gpt-6-astra", "timeout"),
    )
    down = unreachable_provider(failure, config)
    assert down is not None
    assert (down.provider, down.host) == ("openai", host)
    assert down.cause == "DNS lookup for the provider endpoint failed"
    assert "OpenClaw retried it 8/8 times" in down.fix(None)
    # Other failures are not about reaching the provider.
    assert unreachable_provider(RunFailure(cause="Unknown model: openai/x."), config) is None

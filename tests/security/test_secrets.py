"""Secrets echoed by every server ClawSpec talks to never reach an output, whole or in part.

Each server here echoes every secret of the run in an error body of several KB, with the
secrets at a different offset in each answer, so that some cut (a message, a table cell, an
annotation, an excerpt of a body) falls inside each of them: the gateway's hook endpoint (4xx,
5xx and a 200 whose completion failed), a judge speaking the Anthropic Messages API (the real
`anthropic` SDK), a Bedrock runtime (the real SDK signing with botocore: it echoes the SigV4
`Authorization` header, `Credential=AKIA…` included), an Opik trace backend, and the GitHub
REST API the PR comment and the check run go to. The real CLI runs in a fresh interpreter, as
on GitHub Actions (summary, outputs, annotations), with and without `--debug`; then every file
it wrote, both streams and every body sent to GitHub are searched for every 8-character run of
every secret.
"""

from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import cycle
from pathlib import Path
from secrets import choice, token_urlsafe
from typing import Any

import pytest

from clawspec import secrets as registry
from clawspec.text import one_line
from tests.support.anthropic_api import AnthropicApi, _Handler
from tests.support.bedrock_api import BedrockApi
from tests.support.github_api import GitHubApiServer
from tests.support.hooks_api import HooksServer

ROOT = Path(__file__).resolve().parents[2]
WINDOW = 8  # no run of this many characters of a secret may appear anywhere


def _upper(n: int) -> str:
    return "".join(choice(string.ascii_uppercase + string.digits) for _ in range(n))


# Fresh values for every test session: nothing can pass because a value was seen before.
HOOK_TOKEN = "hk_" + token_urlsafe(24)
ANTHROPIC_KEY = "sk-ant-" + token_urlsafe(30)
GITHUB_TOKEN = "ghs_" + token_urlsafe(27)
AWS_KEY_ID = "AKIA" + _upper(16)
AWS_SECRET = token_urlsafe(30)
AWS_SESSION = token_urlsafe(48)
OPIK_KEY = "opik_" + token_urlsafe(20)
SERVICE_KEY = "svc_" + token_urlsafe(20)  # a contract's {{env.MY_SERVICE_API_KEY}}
CONFIG_SECRET = "cfg_" + token_urlsafe(20)  # clawspec.yaml: gateway_auth_token: ${...}
LISTED_SECRET = "lst_" + token_urlsafe(20)  # named by `secret_env` in clawspec.yaml
SECRETS = {
    "hook token": HOOK_TOKEN,
    "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    "GITHUB_TOKEN": GITHUB_TOKEN,
    "AWS access key id": AWS_KEY_ID,
    "AWS secret key": AWS_SECRET,
    "AWS session token": AWS_SESSION,
    "OPIK_API_KEY": OPIK_KEY,
    "MY_SERVICE_API_KEY": SERVICE_KEY,
    "config ${VAR}": CONFIG_SECRET,
    "secret_env": LISTED_SECRET,
}
# Offsets of the echoed secrets: around every cut ClawSpec makes (120, 160, 200, 300, 500…).
PADS = (0, 37, 88, 109, 117, 131, 152, 158, 171, 183, 190, 196, 233, 281, 296, 347, 455, 493)


def echo(pad: int) -> str:
    """An error text of several KB that repeats every secret, starting `pad` characters in."""
    credential = f"Credential={AWS_KEY_ID}/20261125/us-east-1/bedrock/aws4_request"
    said = " ".join(f"{name}={value}" for name, value in SECRETS.items())
    return "e" * pad + f"{said} {credential} " + "z" * 4000 + f" again: {said}"


def leaks(text: str, secrets: dict[str, str] = SECRETS) -> list[str]:
    """Every secret of which `text` holds a run of WINDOW characters or more."""
    found = []
    for name, secret in secrets.items():
        runs = {secret[i : i + WINDOW] for i in range(len(secret) - WINDOW + 1)}
        if any(run in text for run in runs):
            found.append(name)
    return found


# -- unit checks ---------------------------------------------------------------------------------
def test_leak_check_sees_a_cut_secret() -> None:
    assert leaks(f"… {HOOK_TOKEN[5:14]}…") == ["hook token"]
    assert leaks(f"… {HOOK_TOKEN[: WINDOW - 1]}…") == []


@pytest.mark.parametrize("limit", [120, 160, 200, 300, 500])
def test_a_cut_never_ends_inside_a_registered_secret(limit: int) -> None:
    with registry.scope({"ANTHROPIC_API_KEY": ANTHROPIC_KEY}):
        for start in range(limit - len(ANTHROPIC_KEY) - 2, limit + 2):
            cut = one_line("x" * start + ANTHROPIC_KEY + " tail" * 100, limit)
            assert len(cut) <= limit
            assert leaks(cut) == [], (start, cut[-60:])


def test_patterns_are_masked_without_registration() -> None:
    text = (
        f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/20261125/us-east-1/bedrock/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={'ab' * 32}; id {AWS_KEY_ID[:4]}" + "Q" * 16
    )
    masked = registry.mask(text)
    assert masked == (
        "AWS4-HMAC-SHA256 Credential=***, SignedHeaders=host;x-amz-date, Signature=***; id ***"
    )


def test_short_values_are_never_registered() -> None:
    with registry.scope() as active:
        active.add("abc", "", None, "  ab  ")
        assert active.values() == ()
        assert registry.mask("abc abcd") == "abc abcd"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("MY_SERVICE_API_KEY", True),
        ("DEPLOY_TOKEN", True),
        ("db_password", True),
        ("GCP_CREDENTIALS", True),
        ("WEBHOOK_SECRET", True),
        ("TOKEN", True),
        ("KEYBOARD_LAYOUT", False),
        ("MY_SERVICE_URL", False),
        ("TOKENIZER", False),
    ],
)
def test_the_name_rule(name: str, secret: bool) -> None:
    assert registry.is_secret_name(name) is secret


def test_a_contract_reference_to_a_secret_name_registers_its_value() -> None:
    from clawspec.contracts import templates

    environ = {"MY_SERVICE_API_KEY": SERVICE_KEY, "MY_SERVICE_URL": "https://svc.example.com"}
    with registry.scope():
        templates.check_variables("{{env.MY_SERVICE_URL}}/x?k={{env.MY_SERVICE_API_KEY}}", environ)
        assert SERVICE_KEY in registry.registered()
        assert "https://svc.example.com" not in registry.registered()
    assert registry.active() is None  # a scope opened here ends here


def test_values_are_masked_as_json_and_url_spell_them() -> None:
    secret = 'pa"ss/w rd\\1234'
    with registry.scope() as active:
        active.add(secret)
        for spelling in (json.dumps(secret)[1:-1], "pa%22ss%2Fw%20rd%5C1234", secret):
            assert registry.mask(f"<{spelling}>") == "<***>"


def test_values_are_masked_as_every_common_url_encoder_spells_them() -> None:
    """Python's `quote` keeps `/`, JavaScript's encodeURIComponent (what Node-based OpenClaw
    tools use) keeps `'()*!~`, and hex digits may be lower case: each spelling is masked."""
    secret = "pw<&\"'>+/=42SeedXY"
    with registry.scope() as active:
        active.add(secret)
        for spelling in (
            "pw%3C%26%22'%3E%2B%2F%3D42SeedXY",  # encodeURIComponent
            "pw%3C%26%22%27%3E%2B/%3D42SeedXY",  # urllib.parse.quote
            "pw%3c%26%22%27%3e%2b%2f%3d42SeedXY",  # lower-case hex
            "pw%3C%26%22%27%3E%2B%2F%3D42SeedXY",
        ):
            assert registry.mask(f"s={spelling}&t=1") == "s=***&t=1", spelling


def test_kept_gateway_log_is_masked(tmp_path: Path) -> None:
    from clawspec.gateway.managed import _keep_log

    source, target = tmp_path / "gateway.log", tmp_path / "kept.log"
    source.write_text(f'{{"msg": "{echo(10)}"}}\n', encoding="utf-8")
    with registry.scope(environ_for_registry()) as active:
        active.add(HOOK_TOKEN, CONFIG_SECRET, SERVICE_KEY, LISTED_SECRET)
        _keep_log(source, target)
    assert leaks(target.read_text(encoding="utf-8")) == []


def test_report_model_masks_text_as_it_enters() -> None:
    from clawspec.reports.model import AssertionResult, ScenarioResult

    with registry.scope(environ_for_registry()) as active:
        active.add(HOOK_TOKEN, SERVICE_KEY, CONFIG_SECRET, LISTED_SECRET)
        result = AssertionResult(
            phase="then",
            index=0,
            type="llm_judge",
            line=3,
            status="error",
            message=echo(5),
            value={"body": echo(9)},
            details=[echo(1)],
        )
        scenario = ScenarioResult.model_validate_json(
            json.dumps(
                {
                    "id": "a::b",
                    "contract": "a",
                    "line": 1,
                    "name": "b",
                    "target": "t",
                    "status": "error",
                    "message": echo(40),
                    "run_id": None,
                    "duration_ms": 1,
                }
            )
        )
    assert leaks(result.model_dump_json()) == []
    assert leaks(scenario.model_dump_json()) == []
    assert result.message.startswith("eeeee" + "hook token=*** ")


def environ_for_registry() -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AWS_SESSION_TOKEN": AWS_SESSION,
        "OPIK_API_KEY": OPIK_KEY,
    }


# -- servers that echo ---------------------------------------------------------------------------
class EchoingAnthropic(AnthropicApi):
    """The Messages API answering every request with a 400 that echoes the secrets."""

    def __init__(self) -> None:
        super().__init__([{"status": 400, "message": echo(pad)} for pad in PADS])

    def route(self, handler: _Handler) -> str | None:
        return "from-body"


class EchoingBedrock(BedrockApi):
    """Bedrock refusing every request with a 403 whose message echoes the request's SigV4
    `Authorization` header and security token (what AWS services do for a bad signature)."""

    def __init__(self, region: str) -> None:
        super().__init__(region=region)
        self.pads = cycle(PADS)  # the first answer shows the header from its start

    def route(self, handler: _Handler) -> str | None:
        said = (
            f"signature mismatch for {handler.headers.get('authorization', '')} "
            f"token {handler.headers.get('x-amz-security-token', '')}"
        )
        pad = next(self.pads)
        message = "b" * (pad % 100) + said + " " + echo(pad)
        handler.send_json(
            403, self.error_body(403, message), {"x-amzn-ErrorType": "AccessDeniedException"}
        )
        return None


class EchoingOpik:
    """An Opik server failing every request with a 500 that echoes the secrets."""

    def __init__(self) -> None:
        self.served = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._echo()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._echo()

            def _echo(self) -> None:
                pad = PADS[owner.served % len(PADS)]
                owner.served += 1
                data = json.dumps({"errors": [echo(pad)]}).encode()
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> EchoingOpik:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _hook_answer(body: dict[str, Any], run_id: str) -> Any:
    """`[echo:<status>:<pad>]` in the hook message: that status with the secrets echoed (a 200
    is a completed run whose completion failed); else the HooksServer's own markers."""
    found = re.search(r"\[echo:(\d+):(\d+)\]", str(body.get("message", "")))
    if found is None:
        return None
    status, pad = int(found.group(1)), int(found.group(2))
    if status == 200:
        return {"ok": True, "runId": run_id, "completion": {"status": "error", "error": echo(pad)}}
    return status, {"ok": False, "error": echo(pad)}


# -- the run ---------------------------------------------------------------------------------------
CONTRACT_HEAD = """version: "1.0"
target: {type: skill, path: skills/echo}
defaults: {timeout: 30, poll_interval: 0.05}
scenarios:
"""
SERVICE_SCENARIO = """  - name: service-url
    when: {invoke: "call the service [write:out/service.md]"}
    then:
      - type: log_entry
        path: service.log
        pattern: "https://svc.example.com/v1/hook?api_key={{env.MY_SERVICE_API_KEY}}&x=1"
"""


def _contract(judge_scenarios: int, trace: bool) -> str:
    statuses = (400, 401, 403, 404, 500, 200)
    parts = [CONTRACT_HEAD]
    for index, pad in enumerate(PADS):
        status = statuses[index % len(statuses)]
        parts.append(
            f"  - name: gateway-{status}-{pad}\n"
            f'    when: {{invoke: "go [echo:{status}:{pad}]"}}\n'
            "    then: [{type: artifact_exists, path: out/never.md}]\n"
        )
    for index in range(judge_scenarios):
        parts.append(
            f"  - name: judge-{index}\n"
            f'    when: {{invoke: "go [write:out/j{index}.md]"}}\n'
            f"    then: [{{type: llm_judge, path: out/j{index}.md, rubric: Is it clear?}}]\n"
        )
    if trace:
        for index in range(3):
            parts.append(
                f"  - name: trace-{index}\n"
                f'    when: {{invoke: "go [write:out/t{index}.md]"}}\n'
                "    then: [{type: llm_call_count, min: 1}]\n"
            )
    parts.append(SERVICE_SCENARIO)
    return "".join(parts)


@dataclass
class Servers:
    hooks: HooksServer
    github: GitHubApiServer
    judge_url: str
    opik: EchoingOpik | None = None


@dataclass
class Run:
    stdout: str
    stderr: str
    code: int
    files: dict[str, str]


def _github_env(tmp: Path, github: GitHubApiServer) -> dict[str, str]:
    event = tmp / "event.json"
    event.write_text(json.dumps({"action": "opened", "pull_request": {"number": 5}}))
    return {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(tmp / "step_summary.md"),
        "GITHUB_OUTPUT": str(tmp / "github_output"),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": "octo/repo",
        "GITHUB_WORKFLOW": "secrets",
        "GITHUB_JOB": "clawspec",
        "GITHUB_SHA": "0" * 40,
    }


def _run_cli(workspace: Path, env: dict[str, str], debug: bool) -> Run:
    outputs = workspace / "outputs"
    args = [
        sys.executable,
        "-m",
        "clawspec",
        *(["--debug"] if debug else []),
        "run",
        ".",
        "--concurrency",
        "4",
        "--junit",
        str(outputs / "junit.xml"),
        "--report-json",
        str(outputs / "report.json"),
        "--report-html",
        str(outputs / "report.html"),
        "--codequality",
        str(outputs / "codequality.json"),
        "--pr-comment=always",
        "--check-run",
    ]
    done = subprocess.run(
        args, cwd=workspace, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    files = {  # everything in the test's folder: reports, GitHub files, the gateway's files
        str(path.relative_to(workspace.parent)): path.read_bytes().decode("utf-8", "replace")
        for path in sorted(workspace.parent.rglob("*"))
        if path.is_file()
    }
    return Run(done.stdout, done.stderr, done.returncode, files)


def _workspace(tmp_path: Path, config: str, contract: str) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "out").mkdir(parents=True)
    (workspace / "clawspec.yaml").write_text(config, encoding="utf-8")
    (workspace / "echo.clawspec.yaml").write_text(contract, encoding="utf-8")
    (workspace / "service.log").write_text("started\nnothing called yet\n", encoding="utf-8")
    return workspace


def _base_env(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
        "CLAWSPEC_HOOKS_TOKEN": HOOK_TOKEN,
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "MY_SERVICE_API_KEY": SERVICE_KEY,
        "MY_GATEWAY_SECRET": CONFIG_SECRET,
        "ACME_LISTED": LISTED_SECRET,
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "aws-credentials"),
        "AWS_CONFIG_FILE": str(home / "aws-config"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def _check(run: Run, servers: Servers) -> None:
    """No run of WINDOW characters of any secret in any file, stream or body sent out."""
    assert run.code == 1, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    masks = [line for line in lines if line.startswith("::add-mask::")]
    # Every value is announced, before any other line ClawSpec prints.
    assert lines[: len(masks)] == masks, lines[: len(masks) + 2]
    announced = {line.removeprefix("::add-mask::") for line in masks}
    assert {HOOK_TOKEN, ANTHROPIC_KEY, GITHUB_TOKEN, SERVICE_KEY, CONFIG_SECRET} <= announced
    assert {LISTED_SECRET, AWS_KEY_ID, AWS_SECRET, AWS_SESSION} <= announced
    shown = {
        "stdout": "\n".join(line for line in lines if not line.startswith("::add-mask::")),
        "stderr": run.stderr,
        **run.files,
        **{f"PR comment {c['id']}": c["body"] for c in servers.github.comments(5)},
        **{f"check run {c['id']}": json.dumps(c) for c in servers.github.check_runs()},
    }
    assert servers.github.comments(5), "no PR comment was sent"
    for where in ("ws/outputs/report.json", "ws/outputs/junit.xml", "ws/outputs/report.html"):
        assert where in shown, sorted(shown)
    for where in ("step_summary.md", "github_output", "ws/outputs/codequality.json"):
        assert where in shown, sorted(shown)
    found = {where: leaks(text) for where, text in shown.items()}
    assert {where: names for where, names in found.items() if names} == {}


def _evidence_of_echoes(run: Run, *needles: str) -> None:
    """The echoes did reach the outputs (masked): the test would prove nothing otherwise."""
    report = json.loads(run.files["ws/outputs/report.json"])
    messages = " ".join(s["message"] for s in report["scenarios"])
    for needle in needles:
        assert needle in messages, (needle, messages[:2000])
    assert "***" in messages


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    with (
        HooksServer(HOOK_TOKEN, tmp_path / "ws", on_run=_hook_answer) as hooks,
        GitHubApiServer(GITHUB_TOKEN) as github,
        EchoingAnthropic() as judge,
        EchoingOpik() as opik,
    ):
        yield Servers(hooks, github, judge.base_url, opik)


CONFIG = """report_dir: reports
gateway_auth_token: ${{MY_GATEWAY_SECRET}}
secret_env: [ACME_*]
observability:
  backend: opik
  url: {opik}/api/
  project: echo
  trace_timeout_ms: 1500
  trace_poll_delay_ms: 100
judge:
  base_url: {judge}
  timeout: 20
"""


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_echoed_secrets_reach_no_output(tmp_path: Path, servers: Servers, debug: bool) -> None:
    assert servers.opik is not None
    config = CONFIG.format(opik=servers.opik.url, judge=servers.judge_url)
    workspace = _workspace(tmp_path, config, _contract(judge_scenarios=4, trace=True))
    env = {
        **_base_env(tmp_path),
        **_github_env(tmp_path, servers.github),
        "CLAWSPEC_GATEWAY_BASE_URL": servers.hooks.base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "OPIK_API_KEY": OPIK_KEY,
        "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AWS_SESSION_TOKEN": AWS_SESSION,
    }
    run = _run_cli(workspace, env, debug)
    _check(run, servers)
    _evidence_of_echoes(run, "→ 401", "→ 500", "status 'error'", "judge request rejected")
    report = json.loads(run.files["ws/outputs/report.json"])
    reasons = [a["message"] for s in report["scenarios"] for a in s["assertions"]]
    assert any("trace backend 'opik'" in reason and "***" in reason for reason in reasons)
    assert any("svc.example.com/v1/hook?api_key=***" in reason for reason in reasons), reasons
    assert servers.opik.served > 0
    if debug:
        assert "DEBUG " in run.stderr  # the debug log was on, and masked


BEDROCK_CONFIG = """report_dir: reports
gateway_auth_token: ${{MY_GATEWAY_SECRET}}
secret_env: [ACME_*]
judge:
  provider: bedrock
  region: us-east-1
  base_url: {judge}
  timeout: 20
"""


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_bedrock_echo_of_the_sigv4_credential_reaches_no_output(
    tmp_path: Path, debug: bool
) -> None:
    with (
        HooksServer(HOOK_TOKEN, tmp_path / "ws", on_run=_hook_answer) as hooks,
        GitHubApiServer(GITHUB_TOKEN) as github,
        EchoingBedrock(region="us-east-1") as bedrock,
    ):
        servers = Servers(hooks, github, bedrock.base_url)
        config = BEDROCK_CONFIG.format(judge=bedrock.base_url)
        contract = _contract(judge_scenarios=4, trace=False)
        workspace = _workspace(tmp_path, config, contract)
        env = {
            **_base_env(tmp_path),
            **_github_env(tmp_path, github),
            "CLAWSPEC_GATEWAY_BASE_URL": hooks.base_url,
            "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "AWS_SESSION_TOKEN": AWS_SESSION,
            "MY_GATEWAY_SECRET": CONFIG_SECRET,
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "OPIK_API_KEY": OPIK_KEY,
        }
        run = _run_cli(workspace, env, debug)
        _check(run, servers)
        report = json.loads(run.files["ws/outputs/report.json"])
        reasons = [a["message"] for s in report["scenarios"] for a in s["assertions"]]
        judged = [r for r in reasons if "AccessDeniedException" in r]
        assert judged, reasons
        assert any("Credential=***" in r for r in judged), judged


def test_dry_run_shows_no_secret_a_contract_renders(tmp_path: Path) -> None:
    """`run --dry-run` prints every rendered field: a secret-named `{{env.NAME}}` is masked."""
    contract = CONTRACT_HEAD + SERVICE_SCENARIO.replace(
        "call the service", "call https://svc.example.com/?key={{env.MY_SERVICE_API_KEY}}"
    )
    workspace = _workspace(tmp_path, "report_dir: reports\n", contract)
    env = {**_base_env(tmp_path), "CLAWSPEC_GATEWAY_BASE_URL": "http://127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "--debug", "run", ".", "--dry-run"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "svc.example.com/?key=***" in done.stdout
    assert "api_key=***&x=1" in done.stdout
    assert leaks(done.stdout + done.stderr) == []


S3_CONFIG = """report_dir: reports
gateway_auth_token: ${{MY_GATEWAY_SECRET}}
secret_env: [ACME_*]
baseline: s3://clawspec-history/runs
save_baseline: true
history:
  s3_endpoint_url: {s3}
"""


def test_an_s3_history_store_echoing_the_credentials_reaches_no_output(tmp_path: Path) -> None:
    """The baseline store answers every request (list, get, put) with an S3 error that repeats
    the AWS keys and every other secret: the notes that say the baseline could not be read or
    saved reach the terminal, the summary and the PR comment masked."""
    from tests.support.slow_server import Answer, SlowServer

    body = (
        "<?xml version='1.0' encoding='UTF-8'?>\n<Error><Code>AccessDenied</Code>"
        f"<Message>{echo(117)}</Message><RequestId>r1</RequestId></Error>"
    ).encode()
    with (
        HooksServer(HOOK_TOKEN, tmp_path / "ws", on_run=_hook_answer) as hooks,
        GitHubApiServer(GITHUB_TOKEN) as github,
        SlowServer(Answer(status=403, body=body, content_type="application/xml")) as s3,
    ):
        servers = Servers(hooks, github, "")
        workspace = _workspace(
            tmp_path, S3_CONFIG.format(s3=s3.url), _contract(judge_scenarios=0, trace=False)
        )
        env = {
            **_base_env(tmp_path),
            **_github_env(tmp_path, github),
            "CLAWSPEC_GATEWAY_BASE_URL": hooks.base_url,
            "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "AWS_SESSION_TOKEN": AWS_SESSION,
            "AWS_DEFAULT_REGION": "us-east-1",
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "OPIK_API_KEY": OPIK_KEY,
            # a pull request's branches: the store is asked for the base's runs and saves this one
            "GITHUB_HEAD_REF": "feature",
            "GITHUB_BASE_REF": "main",
            "GITHUB_REF_NAME": "5/merge",
        }
        run = _run_cli(workspace, env, debug=True)
        assert s3.seen, "the S3 store was never asked"
        _check(run, servers)
    assert "AccessDenied" in run.stderr  # the store's answer did reach the output, masked


# -- a secret an agent wrote, quoted in a message cut to its length limit -------------------------
def _state_answer(body: dict[str, Any], run_id: str) -> Any:
    """`[state:<n>]` in the hook message: the agent writes `out/state-<n>.json` whose status is
    n times "x" followed by the hook token, then the run completes as usual."""
    found = re.search(r"\[state:(\d+)\]", str(body.get("message", "")))
    if found is not None:
        count = int(found.group(1))
        path = STATE_WORKSPACE[0] / "out" / f"state-{count}.json"
        path.write_text(json.dumps({"status": "x" * count + HOOK_TOKEN}), encoding="utf-8")
    return _hook_answer(body, run_id)


STATE_WORKSPACE: list[Path] = []
# 50 is the reported case: the quoted value `"xx…x<token>"` was cut at 80 characters, inside the
# token (28 of its characters kept); the others put that cut at other places in it, the last
# right after its 8th character.
STATE_COUNTS = (50, 60, 66, 70)


def _state_contract() -> str:
    parts = [CONTRACT_HEAD]
    for count in STATE_COUNTS:
        parts.append(
            f"  - name: state-{count}\n"
            f'    when: {{invoke: "go [state:{count}]"}}\n'
            "    then:\n"
            f"      - {{type: state_file, path: out/state-{count}.json, expected_status: done}}\n"
            f"      - {{type: state_file, path: out/state-{count}.json, "
            "expected_fields: {status: done}}\n"
        )
    return "".join(parts) + SERVICE_SCENARIO  # it registers MY_SERVICE_API_KEY, as `_check` asks


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_a_secret_cut_by_a_message_limit_reaches_no_output(tmp_path: Path, debug: bool) -> None:
    """The state file holds 50 times "x" and the hook token: the failure message quotes the
    value cut to its limit, through the token. No output shows any 8 characters of it."""
    STATE_WORKSPACE[:] = [tmp_path / "ws"]
    with (
        HooksServer(HOOK_TOKEN, tmp_path / "ws", on_run=_state_answer) as hooks,
        GitHubApiServer(GITHUB_TOKEN) as github,
    ):
        servers = Servers(hooks, github, "")
        config = "report_dir: reports\ngateway_auth_token: ${MY_GATEWAY_SECRET}\n"
        workspace = _workspace(tmp_path, config + "secret_env: [ACME_*]\n", _state_contract())
        env = {
            **_base_env(tmp_path),
            **_github_env(tmp_path, github),
            "CLAWSPEC_GATEWAY_BASE_URL": hooks.base_url,
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "AWS_SESSION_TOKEN": AWS_SESSION,
        }
        run = _run_cli(workspace, env, debug)
        written = [name for name in run.files if name.startswith("ws/out/state-")]
        assert len(written) == len(STATE_COUNTS), sorted(run.files)
        for name in written:  # the agent's own files hold the token: every output must not
            del run.files[name]
        _check(run, servers)
    report = json.loads(run.files["ws/outputs/report.json"])
    reasons = [a["message"] for s in report["scenarios"] for a in s["assertions"]]
    # The value did reach every message, the token masked before the message was cut.
    for count in STATE_COUNTS:
        quoted = [r for r in reasons if f"state-{count}.json" in r]
        assert len(quoted) == 2 and all(f'found "{"x" * count}***"' in r for r in quoted), quoted
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::")]
    assert any("x" * 50 + "***" in line for line in annotations), annotations

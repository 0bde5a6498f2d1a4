"""Secrets travel one way: the registry. A value only the resolved settings know (a `${VAR}` of
clawspec.yaml, a variable `secret_env` names) is masked in every output ClawSpec writes, though
no writer is handed it: resolving the settings registered it, and every writer masks through the
registry.

The real CLI runs in a fresh interpreter, as on GitHub Actions, against a hook endpoint on
127.0.0.1 that echoes those two values in its error bodies, at offsets around ClawSpec's cuts.
Each output must show that an echo reached it (masked, `***`) and hold no run of 8 characters of
either value: the JSON, JUnit, HTML and Code Quality reports, the job summary, the annotations,
the step outputs, the terminal, the PR comment and check run sent to a GitHub API on 127.0.0.1,
and the run stored as a baseline in a `dir:` history store.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from secrets import token_urlsafe
from typing import Any

from tests.security.test_secrets import (
    CONFIG_SECRET,
    CONTRACT_HEAD,
    GITHUB_TOKEN,
    HOOK_TOKEN,
    LISTED_SECRET,
    PADS,
    SECRETS,
    WINDOW,
    _base_env,
    _github_env,
    _run_cli,
    _workspace,
    leaks,
)
from tests.support.github_api import GitHubApiServer
from tests.support.hooks_api import HooksServer

# The values only settings resolution learns: clawspec.yaml reads the first as
# `gateway_auth_token: ${MY_GATEWAY_SECRET}`; `secret_env: [ACME_*]` names the second.
SETTINGS_ONLY = {"config ${VAR}": CONFIG_SECRET, "secret_env": LISTED_SECRET}

CONFIG = """report_dir: reports
gateway_auth_token: ${MY_GATEWAY_SECRET}
secret_env: [ACME_*]
baseline: dir:history
save_baseline: true
"""


def _echo(pad: int) -> str:
    said = f"gateway auth {CONFIG_SECRET} listed {LISTED_SECRET}"
    return "e" * pad + f"{said} " + "z" * 3000 + f" again: {said}"


def _hook_answer(body: dict[str, Any], run_id: str) -> Any:
    """`[echo:<status>:<pad>]` in the hook message: that status, the settings' secrets echoed."""
    found = re.search(r"\[echo:(\d+):(\d+)\]", str(body.get("message", "")))
    if found is None:
        return None
    status, pad = int(found.group(1)), int(found.group(2))
    if status == 200:  # a completed run whose completion failed
        return {"ok": True, "runId": run_id, "completion": {"status": "error", "error": _echo(pad)}}
    return status, {"ok": False, "error": _echo(pad)}


def _contract() -> str:
    statuses = (401, 500, 200)
    return CONTRACT_HEAD + "".join(
        f"  - name: echo-{statuses[i % 3]}-{pad}\n"
        f'    when: {{invoke: "go [echo:{statuses[i % 3]}:{pad}]"}}\n'
        "    then: [{type: artifact_exists, path: out/never.md}]\n"
        for i, pad in enumerate(PADS)
    )


def _masked(text: str) -> bool:
    """True when an echo reached the text masked (Markdown escapes `***` as `\\*\\*\\*`)."""
    return "***" in text or "\\*\\*\\*" in text


def test_a_secret_only_the_settings_know_is_masked_in_every_output(tmp_path: Path) -> None:
    with (
        HooksServer(HOOK_TOKEN, tmp_path / "ws", on_run=_hook_answer) as hooks,
        GitHubApiServer(GITHUB_TOKEN) as github,
    ):
        workspace = _workspace(tmp_path, CONFIG, _contract())
        env = {
            **_base_env(tmp_path),
            **_github_env(tmp_path, github),
            "GITHUB_HEAD_REF": "feature/echo",  # the branch the history store keeps the run under
            "GITHUB_BASE_REF": "main",
            "CLAWSPEC_GATEWAY_BASE_URL": hooks.base_url,
        }
        run = _run_cli(workspace, env, debug=False)
        comments = github.comments(5)
        check_runs = github.check_runs()
    assert run.code == 1, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert lines[: len(masks)] == masks  # announced before anything else
    assert {CONFIG_SECRET, LISTED_SECRET} <= {line.removeprefix("::add-mask::") for line in masks}
    stored = [name for name in run.files if name.startswith("ws/history/")]
    stored_reports = [name for name in stored if name.endswith("clawspec-report.json")]
    assert len(stored_reports) == 1, stored
    assert len(comments) == 1 and len(check_runs) == 1
    rest = [line for line in lines if not line.startswith("::add-mask::")]
    outputs = {
        "JSON report": run.files["ws/outputs/report.json"],
        "JUnit XML": run.files["ws/outputs/junit.xml"],
        "HTML report": run.files["ws/outputs/report.html"],
        "Code Quality": run.files["ws/outputs/codequality.json"],
        "job summary": run.files["step_summary.md"],
        "annotations": "\n".join(line for line in rest if line.startswith("::error")),
        "terminal": "\n".join(line for line in rest if not line.startswith("::")),
        "PR comment": comments[0]["body"],
        "check run": json.dumps(check_runs[0], ensure_ascii=False),
        "history store": run.files[stored_reports[0]],
    }
    for where, text in outputs.items():
        assert _masked(text), f"no echo reached the {where}: the check would prove nothing"
    # Every file of the test's folder and both streams (the masks aside): no run of 8 characters
    # of either value (nor of the run's other secrets, the hook and GitHub tokens).
    everything = {**outputs, **run.files, "stdout": "\n".join(rest), "stderr": run.stderr}
    found = {where: leaks(text) for where, text in everything.items()}
    assert {where: names for where, names in found.items() if names} == {}
    assert all(name in SECRETS for name in SETTINGS_ONLY)  # `leaks` looks for both


def test_publish_called_from_python_masks_the_settings_secrets_without_a_scope(
    tmp_path: Path,
) -> None:
    """A Python caller holds no registry: `publish` opens one from the settings it is given."""
    from clawspec import secrets as registry
    from clawspec.config.settings import Settings
    from clawspec.reports.publish import publish
    from tests.reports.factory import assertion, report, scenario

    token = "hk_" + token_urlsafe(24)
    settings = Settings(
        report_dir=str(tmp_path),
        hooks_token=token,
        junit=str(tmp_path / "junit.xml"),
        report_html=str(tmp_path / "report.html"),
        codequality=str(tmp_path / "codequality.json"),
        summary=str(tmp_path / "summary.md"),
    )
    assert registry.active() is None
    data = report(scenario("leak", "fail", assertion("fail", f"the gateway echoed {token} back")))
    written = publish(data, settings, {})
    assert registry.active() is None  # the registry it opened is gone with the call
    assert len(written) == 5
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert token[:WINDOW] not in text and _masked(text), path.name


URL_PASSWORD = "pw_" + token_urlsafe(20)


def test_a_password_in_the_gateway_url_is_masked_in_every_output(tmp_path: Path) -> None:
    """A gateway reached through a URL with a login (`http://user:password@host`): the URL is
    in the report and in every error naming the request; its password is masked there, as
    given in the settings (clawspec.yaml) or in the environment, and in the action's echo of
    its command line."""
    with (
        HooksServer(HOOK_TOKEN, tmp_path / "ws", on_run=_hook_answer) as hooks,
        GitHubApiServer(GITHUB_TOKEN) as github,
    ):
        url = hooks.base_url.replace("http://", f"http://gate:{URL_PASSWORD}@")
        workspace = _workspace(tmp_path, f"report_dir: reports\ngateway_base_url: {url}\n", (
            CONTRACT_HEAD + '  - name: refused\n    when: {invoke: "go [echo:500:0]"}\n'
            "    then: [{type: artifact_exists, path: out/never.md}]\n"
        ))  # fmt: skip
        env = {**_base_env(tmp_path), **_github_env(tmp_path, github)}
        run = _run_cli(workspace, env, debug=True)
    report = json.loads(run.files["ws/outputs/report.json"])
    assert report["source"]["gateway_url"] == hooks.base_url.replace("http://", "http://gate:***@")
    assert "***@127.0.0.1" in run.files["ws/outputs/junit.xml"] + run.stderr + run.stdout
    assert f"::add-mask::{URL_PASSWORD}" in run.stdout.splitlines()
    rest = "\n".join(line for line in run.stdout.splitlines() if "::add-mask::" not in line)
    everything = {**run.files, "stdout": rest, "stderr": run.stderr}
    del everything["ws/clawspec.yaml"]  # where the user wrote it
    found = {where: leaks(text, {"URL": URL_PASSWORD}) for where, text in everything.items()}
    assert {where: names for where, names in found.items() if names} == {}


def test_the_action_echoes_its_command_line_without_a_url_password(
    tmp_path: Path, capsys: Any
) -> None:
    import entrypoint

    url = f"http://gate:{URL_PASSWORD}@127.0.0.1:9"
    environ = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_GATEWAY_BASE_URL": url}
    code = entrypoint._run_action(environ, lambda argv: 0, lambda text: text)
    out = capsys.readouterr().out
    assert code == 0 and "gate:***@127.0.0.1:9" in out and URL_PASSWORD not in out

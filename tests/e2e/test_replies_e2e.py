"""Reply assertions on the real OpenClaw gateway, through the real `clawspec run` CLI.

tests/e2e/contracts/replies: two hook scenarios whose agent, driven by the scripted provider,
remarks beside a `write` call and then answers with a text holding a secret (the value of a
variable named in `secret_env`). The reply comes from OpenClaw's run record in the brought-up
gateway's state folder: `answers` passes reply_contains / reply_matches (and the remark is not
the reply), `no-apology` fails reply_not_contains. The JSON report and the terminal show the
verdicts with the secret masked. Runs inside the loopback-only namespace, with a proxy in the
environment as on many company machines (`http_proxy`, nothing answering there): neither
ClawSpec's calls to the gateway nor the gateway's model calls to the provider on loopback go
through it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import run_clawspec
from tests.support.scripted_provider import ScriptedProvider, load_scripts

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "replies"
PROVIDER_PORT = 18095  # the port contracts/replies/openclaw.json names
SECRET = "svc-token-7f3a9c1e5d2b"  # in the scripted reply: REPLY_SVC_TOKEN's value
PROXY = "http://127.0.0.1:9"  # a company proxy that could not reach this machine's loopback

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def reply_run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("replies") / "suite"
    shutil.copytree(CONTRACTS, work)
    with ScriptedProvider(load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT):
        # A secret of the user's, named for masking (secret_env) as the guide says.
        secret = {"REPLY_SVC_TOKEN": SECRET, "CLAWSPEC_SECRET_ENV": "REPLY_SVC_TOKEN"}
        proxy = {name: PROXY for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY")}
        proc = run_clawspec(
            work, openclaw_launcher, extra_env={**secret, **proxy}, unset=("no_proxy", "NO_PROXY")
        )
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    text = report_path.read_text("utf-8")
    report = json.loads(text)
    return {
        "proc": proc,
        "text": text,
        "scenarios": {s["name"]: s for s in report["scenarios"]},
    }


def test_the_reply_read_from_the_run_record_passes_and_fails_as_written(
    reply_run: dict[str, Any],
) -> None:
    proc, scenarios = reply_run["proc"], reply_run["scenarios"]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one scenario fails
    answers, apology = scenarios["answers"], scenarios["no-apology"]
    assert [(a["type"], a["status"]) for a in answers["assertions"]] == [
        ("reply_contains", "pass"),
        ("reply_matches", "pass"),
        ("reply_not_contains", "pass"),  # the remark beside the tool call is not the reply
    ], answers["assertions"]
    assert answers["status"] == "pass"
    (verdict,) = apology["assertions"]
    assert (verdict["type"], verdict["status"]) == ("reply_not_contains", "fail")
    assert verdict["message"].startswith("the reply contains 'sorry' (line 1): \"Sorry for the")
    assert apology["status"] == "fail"


def test_the_terminal_names_the_failed_reply_and_the_secret_stays_masked(
    reply_run: dict[str, Any],
) -> None:
    proc = reply_run["proc"]
    assert "2 scenarios: 1 passed, 1 failed" in proc.stdout
    assert "the reply contains 'sorry'" in proc.stdout
    assert "Traceback" not in proc.stderr
    for output in (proc.stdout, proc.stderr, reply_run["text"]):
        assert SECRET not in output
    assert "Reference: ***" in reply_run["scenarios"]["no-apology"]["assertions"][0]["message"]

"""The action input `gateway_token`: through the real entrypoint and CLI, a conversation runs
against a local server speaking OpenClaw's chat wire format (127.0.0.1) with the token, which
reaches ClawSpec only as CLAWSPEC_GATEWAY_AUTH_TOKEN and is masked (`::add-mask::` first)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import entrypoint
from tests.support.chat_api import ChatServer

TOKEN = "gw-token-action-input-62b0e4"
CONVERSATION = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5}
scenarios:
  - name: talks
    turns:
      - say: "hello"
        then:
          - {type: reply_contains, text: "echo: hello"}
"""


def test_the_gateway_token_input_authorises_conversations_and_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "case.clawspec.yaml").write_text(CONVERSATION, encoding="utf-8")
    (tmp_path / "clawspec.yaml").write_text("report_dir: reports\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the action changes to working_directory; restored afterwards
    # The entrypoint sets the token variables in the process environment: restored afterwards.
    for name in (
        "CLAWSPEC_GATEWAY_AUTH_TOKEN",
        "CLAWSPEC_HOOKS_TOKEN",
        "CLAWSPEC_GATEWAY_BASE_URL",
    ):
        monkeypatch.setenv(name, "")
    monkeypatch.delenv("OPENCLAW_GATEWAY_TOKEN", raising=False)
    with ChatServer(TOKEN) as server:
        inputs = {
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(tmp_path),
            "INPUT_GATEWAY_BASE_URL": server.base_url,
            "INPUT_HOOKS_TOKEN": "hooks-token-action-1",
            "INPUT_GATEWAY_TOKEN": TOKEN,
            "INPUT_CHECK_RUN": "false",
        }
        for name, value in inputs.items():
            monkeypatch.setenv(name, value)
        code = entrypoint.main([], os.environ)
        # Not inherited as an input by a gateway ClawSpec would start; passed under its name.
        assert "INPUT_GATEWAY_TOKEN" not in os.environ
        assert os.environ["CLAWSPEC_GATEWAY_AUTH_TOKEN"] == TOKEN
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert f"::add-mask::{TOKEN}" in out.splitlines()[:3]
    used = [r for r in server.requests if r.path.startswith("/v1/")]
    assert [r.path for r in used] == ["/v1/models", "/v1/chat/completions"]
    assert {r.headers["Authorization"] for r in used} == {f"Bearer {TOKEN}"}
    unmasked = "\n".join(line for line in out.splitlines() if not line.startswith("::add-mask::"))
    assert TOKEN not in unmasked + err

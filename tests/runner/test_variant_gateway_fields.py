"""A variant's fields for the gateway at its own URL (`gateway_token_env`, `openclaw_state_dir`):
allowed only with gateway_base_url in target mode, the state folder resolved as the run's is, the
token read and masked; and in bring-up mode the gateway of its own that a variant's thinking
level gets for its conversations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec import secrets
from clawspec.api import load
from clawspec.config.loading import load_settings
from clawspec.config.variants import thinking_for_conversation
from clawspec.errors import ConfigError
from clawspec.gateway.bringup import build_config
from clawspec.gateway.managed import GatewayVariant, bring_up_options
from clawspec.runner.gateways import _overlay, _target, own_gateways
from clawspec.runner.plans import plan

CONVERSATION = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: talks
    turns:
      - say: "hello"
        then:
          - {type: reply_contains, text: "hello"}
"""
ONE_MESSAGE = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: writes
    when: {invoke: "/send-newsletter"}
    then:
      - {type: artifact_exists, path: out.md}
"""


def _settings(workspace: Path, text: str, environ: dict[str, str] | None = None):
    (workspace / "clawspec.yaml").write_text(text, encoding="utf-8")
    return load_settings(workspace / "clawspec.yaml", environ or {})


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            "variants:\n  - name: a\n    gateway_token_env: A_TOKEN\n",
            "clawspec.yaml:3:5: variant 'a': gateway_token_env needs gateway_base_url (the "
            "gateway whose token it is)",
        ),
        (
            "variants:\n  - name: a\n    openclaw_state_dir: state\n",
            "clawspec.yaml:3:5: variant 'a': openclaw_state_dir needs gateway_base_url (the "
            "gateway whose state folder it is)",
        ),
        (
            "gateway: {mode: bring_up}\nvariants:\n  - name: a\n    gateway_token_env: A_TOKEN\n",
            "clawspec.yaml:4:5: variant 'a': gateway_token_env is not allowed in bring-up mode",
        ),
        (
            "gateway: {mode: bring_up}\nvariants:\n  - name: a\n    openclaw_state_dir: s\n",
            "clawspec.yaml:4:5: variant 'a': openclaw_state_dir is not allowed in bring-up mode",
        ),
        (
            "variants:\n  - name: a\n    gateway_base_url: http://127.0.0.1:9\n"
            "    gateway_token_env: 'not a name'\n",
            "variants.0.gateway_token_env: String should match pattern",
        ),
    ],
)
def test_misplaced_gateway_fields_are_config_errors(
    workspace: Path, config: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _settings(workspace, config)
    assert expected in str(caught.value)


def test_a_variant_state_folder_is_relative_to_the_workspace_root(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(
        workspace,
        "variants:\n  - name: far\n    gateway_base_url: http://127.0.0.1:9/\n"
        "    openclaw_state_dir: gateways/far-state\n"
        f"  - name: abs\n    gateway_base_url: http://127.0.0.1:8\n"
        f"    openclaw_state_dir: {tmp_path / 'elsewhere'}\n",
    )
    far, absolute = settings.variants
    assert far.openclaw_state_dir == str(workspace / "gateways" / "far-state")
    assert absolute.openclaw_state_dir == str(tmp_path / "elsewhere")
    # The same from another folder: the path does not depend on where ClawSpec runs.
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    again = load_settings(workspace / "clawspec.yaml", {})
    assert again.variants[0].openclaw_state_dir == far.openclaw_state_dir


def test_a_target_variant_gets_its_token_and_state_folder_never_the_default_ones(
    workspace: Path,
) -> None:
    token = "gw-token-variant-own-31f0aa"
    environ = {
        "CLAWSPEC_GATEWAY_AUTH_TOKEN": "gw-token-run-default-7e7e7e",
        "CLAWSPEC_OPENCLAW_STATE_DIR": str(workspace / "default-state"),
        "FAR_TOKEN": token,
    }
    settings = _settings(
        workspace,
        "variants:\n  - name: far\n    gateway_base_url: http://127.0.0.1:9\n"
        "    gateway_token_env: FAR_TOKEN\n    openclaw_state_dir: far-state\n"
        "  - name: near\n    gateway_base_url: http://127.0.0.1:8\n",
        environ,
    )
    far, near = settings.variants
    with secrets.scope():
        mine = _target(settings, far, environ).settings
        assert mine.gateway_base_url == "http://127.0.0.1:9"
        assert mine.gateway_auth_token is not None
        assert mine.gateway_auth_token.get_secret_value() == token
        assert mine.openclaw_state_dir == str(workspace / "far-state")
        assert token not in secrets.mask(f"said {token}")  # masked from now on
        other = _target(settings, near, environ).settings
    # No token variable: the run's token; no state folder: none (the default one is not its).
    assert other.gateway_auth_token == settings.gateway_auth_token
    assert other.openclaw_state_dir is None
    assert settings.openclaw_state_dir == str(workspace / "default-state")


def _plans(workspace: Path, write_contract: Callable[..., Path], config: str, *contracts: str):
    (workspace / "clawspec.yaml").write_text("gateway: {mode: bring_up}\n" + config, "utf-8")
    for index, text in enumerate(contracts):
        write_contract(text, f"c{index}.clawspec.yaml")
    loaded = load(["."], environ={})
    return loaded.settings, plan(loaded)


def test_bring_up_gives_a_thinking_variant_with_conversations_its_own_gateway(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    variants = (
        "variants:\n  - name: plain\n  - name: deep\n    thinking: high\n"
        "  - name: tuned\n    thinking: low\n    openclaw_config: {tools: {toolSearch: false}}\n"
    )
    settings, plans = _plans(workspace, write_contract, variants, CONVERSATION, ONE_MESSAGE)
    own = own_gateways(plans, bring_up=True)
    assert list(own) == ["deep", "tuned"]
    deep = [p for p in plans if p.variant is not None and p.variant.name == "deep"]
    high = {"thinkingDefault": "high"}
    assert _overlay(own["deep"], deep, settings) == {
        "agents": {"defaults": high, "entries": {"main": high}}
    }
    tuned = [p for p in plans if p.variant is not None and p.variant.name == "tuned"]
    low = {"thinkingDefault": "low"}
    assert _overlay(own["tuned"], tuned, settings) == {
        "tools": {"toolSearch": False},
        "agents": {"defaults": low, "entries": {"main": low}},
    }
    # Its generated gateway config carries the level, also over an agent's own default in the
    # user's openclaw.json.
    (workspace / "openclaw.json").write_text(
        '{agents: {entries: {main: {name: "main", thinkingDefault: "minimal"}}}}', "utf-8"
    )
    settings = settings.model_copy(
        update={"gateway": settings.gateway.model_copy(update={"config": "openclaw.json"})}
    )
    options = bring_up_options(
        settings,
        workspace,
        ["main"],
        variant=GatewayVariant("deep", overlay=_overlay(own["deep"], deep, settings)),
    )
    config = build_config(
        options,
        state_dir=workspace / "state",
        port=18999,
        gateway_token="gw",
        hooks_token="hk",
        plugin_output=workspace / "plugin.jsonl",
    )
    assert config["agents"]["defaults"]["thinkingDefault"] == "high"
    assert config["agents"]["entries"]["main"] == {"name": "main", "thinkingDefault": "high"}
    # Target mode decides nothing here: it refuses such a variant's conversations instead.
    assert list(own_gateways(plans, bring_up=False)) == ["tuned"]


def test_without_conversations_a_thinking_variant_shares_the_gateway(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    _, plans = _plans(
        workspace, write_contract, "variants:\n  - name: deep\n    thinking: high\n", ONE_MESSAGE
    )
    assert own_gateways(plans, bring_up=True) == {}
    assert thinking_for_conversation(plans[0].variant) == "gateway"
    assert thinking_for_conversation(None) is None

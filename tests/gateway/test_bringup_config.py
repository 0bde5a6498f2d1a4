"""Bring-up success path and the generated config, with a fake gateway that reports ready."""

from __future__ import annotations

import json
import shutil
import stat
import sys
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from clawspec.errors import GatewayError
from clawspec.gateway import json5
from clawspec.gateway.bringup import PLUGIN_DIR, BringUpOptions, GatewayProcess, _proc_stats

# A stand-in gateway: serves /readyz with ready:true on the configured port, dumps its env.
READY_SERVER = r"""
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
cfg = json.load(open(os.environ["OPENCLAW_CONFIG_PATH"]))
keys = ["HOME", "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH", "CI", "OPENCLAW_NO_AUTO_UPDATE",
        "OPENCLAW_DISABLE_BONJOUR", "DO_NOT_TRACK", "CLAWSPEC_PLUGIN_OUTPUT", "EXTRA_VAR",
        "no_proxy", "NO_PROXY"]
json.dump({k: os.environ.get(k) for k in keys}, open("env.json", "w"))
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"ready":true}' if self.path == "/readyz" else b"{}"
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
HTTPServer(("127.0.0.1", cfg["gateway"]["port"]), H).serve_forever()
"""

USER_CONFIG = """// the user's own openclaw.json (JSON5)
{
  gateway: { mode: 'remote', port: 1, auth: { mode: "password" }, },
  agents: {
    defaults: { model: { primary: 'anthropic/claude' }, },
    entries: { main: { name: 'Their Main' }, helper: { name: "Helper" } },
  },
  plugins: { allow: ['their-plugin'], load: { paths: ['/their/plugin'] } },
  /* kept as is */
  channels: { telegram: { enabled: false } },
}
"""


def test_bring_up_with_user_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    user = tmp_path / "openclaw.json"
    user.write_text(USER_CONFIG, encoding="utf-8")
    opts = BringUpOptions(
        command=[sys.executable, "-c", READY_SERVER],
        user_config=user,
        ready_timeout_s=15,
        stop_grace_s=2,
        agent_ids=["main", "ops"],
        env={"EXTRA_VAR": "x"},
        extra_config={"agents": {"defaults": {"workspace": str(tmp_path / "ws")}}},
    )
    gw = GatewayProcess(opts)
    with gw as running:
        with urllib.request.urlopen(f"{running.base_url}/readyz", timeout=5) as resp:
            assert json.loads(resp.read()) == {"ready": True}
        state = running.state_dir
        # A private temporary folder, as a run gets (the run's cleanup removes it; here the
        # test does).
        request.addfinalizer(lambda: shutil.rmtree(state, ignore_errors=True))
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        config_path = state / "openclaw.json"
        assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
        config = json.loads(config_path.read_text())
        env = json.loads((state / "env.json").read_text())
        pid = running.pid
    assert pid not in _proc_stats()

    assert running.base_url == f"http://127.0.0.1:{config['gateway']['port']}"
    assert running.hooks_token != running.gateway_token
    assert len(running.hooks_token) >= 32
    assert "token" not in repr(running).lower().replace("hooks_path", "")
    gateway = config["gateway"]
    assert (gateway["mode"], gateway["bind"]) == ("local", "loopback")
    assert gateway["auth"] == {"mode": "token", "token": running.gateway_token}
    hooks = config["hooks"]
    assert hooks["token"] == running.hooks_token and hooks["path"] == running.hooks_path == "/hooks"
    assert hooks["allowedAgentIds"] == ["main", "ops"] and hooks["allowRequestSessionKey"] is True
    assert config["logging"] == {"level": "debug", "file": str(running.log_path)}
    assert config["diagnostics"] == {"enabled": True}
    assert config["update"] == {"checkOnStart": False}
    assert config["discovery"] == {"mdns": {"mode": "off"}}
    # The user's settings survive where we do not override them; lists of plugins are extended.
    assert config["channels"] == {"telegram": {"enabled": False}}
    assert config["agents"]["defaults"]["model"] == {"primary": "anthropic/claude"}
    assert config["agents"]["entries"]["main"] == {"name": "Their Main"}
    assert config["agents"]["entries"]["ops"] == {"name": "ops"}
    assert config["plugins"]["allow"] == ["their-plugin", "clawspec"]
    assert config["plugins"]["load"]["paths"] == ["/their/plugin", str(PLUGIN_DIR)]
    entry = config["plugins"]["entries"]["clawspec"]
    assert entry == {"enabled": True, "config": {"outputPath": str(running.plugin_output_path)}}
    # extra_config wins, and the workspace in effect is reported.
    assert running.workspace == tmp_path / "ws" and running.workspace.is_dir()

    assert env == {
        "HOME": str(state),
        "OPENCLAW_STATE_DIR": str(state),
        "OPENCLAW_CONFIG_PATH": str(config_path),
        "CI": "1",
        "OPENCLAW_NO_AUTO_UPDATE": "1",
        "OPENCLAW_DISABLE_BONJOUR": "1",
        "DO_NOT_TRACK": "1",
        "CLAWSPEC_PLUGIN_OUTPUT": str(running.plugin_output_path),
        "EXTRA_VAR": "x",
        "no_proxy": "127.0.0.1,localhost,::1",
        "NO_PROXY": "127.0.0.1,localhost,::1",
    }


def _stand_in(state_dir: Path) -> BringUpOptions:
    """Bring up the stand-in gateway (READY_SERVER) with a state folder of the test's."""
    return BringUpOptions(
        command=[sys.executable, "-c", READY_SERVER],
        state_dir=state_dir,
        ready_timeout_s=15,
        stop_grace_s=2,
    )


def test_a_proxy_in_the_environment_never_takes_the_gateways_loopback_traffic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A company proxy (here one nothing answers for) and the user's own NO_PROXY entries: the
    readiness probes reach the gateway directly, and the gateway is told to leave loopback
    unproxied (its model calls to the traffic proxy or a local provider), the user's entries
    kept."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("no_proxy", "corp.example .internal")
    monkeypatch.delenv("NO_PROXY", raising=False)
    with GatewayProcess(_stand_in(tmp_path / "st")) as running:
        env = json.loads((running.state_dir / "env.json").read_text())
    expected = "corp.example,.internal,127.0.0.1,localhost,::1"
    assert (env["no_proxy"], env["NO_PROXY"]) == (expected, expected)


def test_the_gateway_names_the_openclaw_release_its_launcher_belongs_to(tmp_path: Path) -> None:
    """Read from the openclaw package the launcher is in (what its recordings store); a
    command outside one (a wrapper, another program) has no release that can be told."""
    package = tmp_path / "lib" / "node_modules" / "openclaw"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "openclaw", "version": "2026.9.5", "bin": {"openclaw": "gw.py"}}),
        encoding="utf-8",
    )
    launcher = package / "gw.py"
    launcher.write_text(f"#!{sys.executable}\n{READY_SERVER}", encoding="utf-8")
    launcher.chmod(0o755)
    bin_link = tmp_path / "bin" / "openclaw"  # as npm links it
    bin_link.parent.mkdir()
    bin_link.symlink_to(launcher)
    own = _stand_in(tmp_path / "own")
    with GatewayProcess(replace(own, command=[str(bin_link), "gateway", "run"])) as running:
        assert running.openclaw_version == "2026.9.5"
    with GatewayProcess(_stand_in(tmp_path / "other")) as running:
        assert running.openclaw_version is None


def test_default_workspace_and_plugin_allow(tmp_path: Path) -> None:
    with GatewayProcess(_stand_in(tmp_path / "st")) as running:
        config = json.loads((running.state_dir / "openclaw.json").read_text())
    assert running.workspace == tmp_path / "st" / "workspace"
    assert config["agents"]["entries"] == {"main": {"name": "main"}}
    assert config["plugins"]["allow"] == ["clawspec"]


def test_bad_user_config_is_a_gateway_error(tmp_path: Path) -> None:
    user = tmp_path / "openclaw.json"
    user.write_text("{ gateway: { port: } }", encoding="utf-8")
    gw = GatewayProcess(BringUpOptions(command=["true"], user_config=user, state_dir=tmp_path))
    with pytest.raises(GatewayError, match=r"cannot read OpenClaw config .*line 1, column 20"):
        gw.__enter__()
    assert gw.pid is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{a: 1, b: [1, 2,], }", {"a": 1, "b": [1, 2]}),
        ("// c\n{'k': 'it\\'s', \"q\": \"x\"} /* end */", {"k": "it's", "q": "x"}),
        (
            "{hex: 0x1F, f: .5, g: +2, big: 1e3, neg: -3}",
            {"hex": 31, "f": 0.5, "g": 2, "big": 1000.0, "neg": -3},
        ),
        (
            "{s: 'line\\\ncontinued', t: true, n: null}",
            {"s": "linecontinued", "t": True, "n": None},
        ),
        ('{"plain": "json"}', {"plain": "json"}),
    ],
)
def test_json5_subset(text: str, expected: object) -> None:
    assert json5.loads(text) == expected


@pytest.mark.parametrize(
    "text", ["{a: }", "{a: 1", "{'a': 'b}", "{a: 1} x", "/* open", "{a: ", "{a: 1,", "["]
)
def test_json5_errors(text: str) -> None:
    with pytest.raises(json5.JSON5Error, match="line 1"):
        json5.loads(text)

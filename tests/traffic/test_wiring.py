"""How a run sets the proxy up: bring-up routing, target mode, warnings."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from clawspec.config.loading import load_settings
from clawspec.errors import ConfigError, GatewayError
from clawspec.gateway.bringup import BringUpOptions, GatewayProcess
from clawspec.runner.traffic import traffic_for_run, traffic_warnings
from clawspec.traffic.routing import route_providers
from tests.traffic.conftest import SECRET_KEY, session


def _config() -> dict:
    return {
        "models": {
            "providers": {
                "fake": {
                    "baseUrl": "http://127.0.0.1:18080/v1",
                    "apiKey": SECRET_KEY,
                    "models": [{"id": "fake-model"}],
                },
                "builtin": {"api": "anthropic-messages"},
            }
        }
    }


def test_providers_with_a_base_url_are_routed_through_the_proxy() -> None:
    config = _config()
    routes = route_providers(config, "http://127.0.0.1:4000/")
    assert config["models"]["providers"]["fake"]["baseUrl"] == "http://127.0.0.1:4000/fake"
    assert "baseUrl" not in config["models"]["providers"]["builtin"]
    assert routes.upstreams == {"fake": "http://127.0.0.1:18080/v1"}
    assert routes.models == {"fake": ["fake-model"]}
    assert routes.keys == [SECRET_KEY]
    assert routes.unrouted == ["builtin"]


def test_bring_up_writes_the_routed_config_and_tells_the_proxy_the_upstreams(
    tmp_path: Path,
) -> None:
    with session("record") as traffic:
        options = BringUpOptions(
            command=["false"],
            state_dir=tmp_path / "state",
            ready_timeout_s=2,
            stop_grace_s=1,
            extra_config=_config(),
            model_proxy=traffic,
        )
        with pytest.raises(GatewayError), GatewayProcess(options):
            pass
        written = json.loads((tmp_path / "state" / "openclaw.json").read_text("utf-8"))
        provider = written["models"]["providers"]["fake"]
        assert provider["baseUrl"] == f"{traffic.base_url}/fake"
        assert traffic.upstream("fake") == "http://127.0.0.1:18080/v1"
        assert traffic.models("fake")["data"][0]["id"] == "fake-model"
        (warning,) = traffic_warnings(traffic, invoked=False)
    assert warning == (
        "model_traffic is record but provider(s) builtin have no baseUrl in the OpenClaw "
        "config, so their calls bypass the proxy (give each its real baseUrl to record and "
        "replay it)"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_target_mode_listens_on_the_configured_port_and_says_where(tmp_path: Path) -> None:
    port = _free_port()
    settings = load_settings(
        None, {"CLAWSPEC_MODEL_TRAFFIC": "replay", "CLAWSPEC_MODEL_PROXY_PORT": str(port)}
    )
    said: list[str] = []
    with traffic_for_run(settings, tmp_path, said.append) as traffic:
        assert traffic is not None and traffic.base_url == f"http://127.0.0.1:{port}"
        warnings = traffic_warnings(traffic, invoked=True)
    assert said == [
        f"model traffic proxy (replay) on http://127.0.0.1:{port}: your gateway's providers "
        f"need baseUrl http://127.0.0.1:{port}/<provider id>"
    ]
    assert len(warnings) == 1
    assert warnings[0].startswith(
        f"model_traffic is replay but no model call reached the proxy at http://127.0.0.1:{port}"
    )
    assert warnings[0].endswith("these results came from the real model, not the cassettes")


def test_off_starts_nothing_and_record_in_target_mode_needs_upstreams(tmp_path: Path) -> None:
    with traffic_for_run(load_settings(None, {}), tmp_path, print) as traffic:
        assert traffic is None
    settings = load_settings(None, {"CLAWSPEC_MODEL_TRAFFIC": "record"})
    with (
        pytest.raises(ConfigError, match="needs model_upstreams"),
        traffic_for_run(settings, tmp_path, print),
    ):
        pass


def test_a_taken_proxy_port_is_a_config_error_naming_the_option(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        settings = load_settings(
            None, {"CLAWSPEC_MODEL_TRAFFIC": "replay", "CLAWSPEC_MODEL_PROXY_PORT": str(port)}
        )
        with (
            pytest.raises(ConfigError, match=f"model_proxy_port: .* 127.0.0.1:{port}"),
            traffic_for_run(settings, tmp_path, print),
        ):
            pass

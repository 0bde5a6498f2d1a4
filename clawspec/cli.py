"""The `clawspec` command: parse, dispatch, map errors to exit codes; no traceback for users."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from clawspec import __version__
from clawspec.authoring import commands as authoring
from clawspec.errors import ClawSpecError, ContractError, ExitCode, UsageError
from clawspec.speed import pydantic_plugins

# Start-up cost is paid on every call (CI steps, hooks, editors): this module imports only what
# parsing needs. Each command's handler imports its own modules (the API, pydantic, requests,
# SDKs) when it runs; tests/test_startup.py checks that `--version` and every `--help` stay light.
if TYPE_CHECKING:
    import threading


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="contract files or folders (default: the current folder)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="clawspec.yaml to use (default: found by walking up from PATH)",
    )
    parser.add_argument(
        "--workspace", metavar="DIR", help="root that relative contract paths resolve against"
    )


def _comment_mode(value: str) -> str:
    """Check a `--pr-comment` MODE (true/false are aliases of always/off)."""
    mode = {"true": "always", "false": "off"}.get(value.strip().lower(), value.strip().lower())
    if mode not in ("always", "changes", "failures", "off"):
        # nargs="?" takes the next word: a path written after the flag lands here.
        raise argparse.ArgumentTypeError(
            f"expected always, changes, failures or off, found '{value}' (put paths before "
            "--pr-comment, or write --pr-comment=MODE)"
        )
    return mode


def _outputs(parser: argparse.ArgumentParser) -> None:
    """The report and exit-policy options `run` and `merge` share."""
    parser.add_argument(
        "--baseline",
        metavar="SOURCE",
        help="compare with an earlier run: a report file, dir:PATH, s3://bucket/prefix or github",
    )
    parser.add_argument(
        "--save-baseline",
        action="store_true",
        default=None,
        help="store this run's report in the --baseline store (default dir:.clawspec-history)",
    )
    parser.add_argument(
        "--report-json",
        metavar="FILE",
        help="JSON report path (default: <report_dir>/clawspec-report.json)",
    )
    parser.add_argument("--report-dir", metavar="DIR", help="folder for reports")
    parser.add_argument(
        "--max-skipped",
        metavar="N|RATIO",
        help="exit 1 when more scenarios than this are skipped (3, 0.2 or 20%%)",
    )
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    parser.add_argument(
        "--report-html", metavar="FILE", help="write the self-contained HTML report here"
    )
    parser.add_argument(
        "--codequality",
        metavar="FILE",
        help="write a GitLab Code Quality report here (findings in merge requests)",
    )
    parser.add_argument(
        "--pr-comment",
        nargs="?",
        const="always",
        type=_comment_mode,
        metavar="MODE",
        help="pull-request comment (GitHub): always (the default MODE), changes (a new comment "
        "only when the verdicts changed), failures (only when something failed) or off",
    )
    parser.add_argument(
        "--check-run",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write a GitHub check run with an annotation for every non-passing assertion "
        "(default: when the token may write checks)",
    )
    parser.add_argument(
        "--check-name", metavar="NAME", help="name of the check run (default: 'ClawSpec: <job>')"
    )
    parser.add_argument(
        "--fail-on",
        choices=["fail", "error", "never", "regression"],
        help="what makes the exit code 1 (default: fail = failed or errored; regression = "
        "only regressions against the baseline)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clawspec",
        description="Run scenario contracts against OpenClaw agents and skills.",
    )
    parser.add_argument("--version", action="version", version=f"clawspec {__version__}")
    parser.add_argument("--debug", action="store_true", help="log internals to stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    validate = commands.add_parser("validate", help="load and validate contracts; run nothing")
    _common(validate)

    run = commands.add_parser("run", help="run scenarios and write reports")
    _common(run)
    run.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this scenario (repeatable)",
    )
    run.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="run only scenarios with this tag (repeatable: any of them)",
    )
    run.add_argument(
        "--exclude-tag",
        action="append",
        default=[],
        metavar="TAG",
        help="skip scenarios with this tag (repeatable)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="load and render the plan and print it; invoke nothing",
    )
    run.add_argument("--gateway-base-url", metavar="URL", help="gateway to target")
    run.add_argument("--timezone", metavar="ZONE", help="gateway time zone for {{today}}")
    _outputs(run)
    run.add_argument("--concurrency", type=int, metavar="N", help="agent runs at once")
    run.add_argument(
        "--shard",
        metavar="I/N|auto",
        help="run only part I of N of the selection (1-based), balanced; 'auto' reads GitLab's "
        "CI_NODE_INDEX/CI_NODE_TOTAL",
    )
    run.add_argument(
        "--durations",
        metavar="REPORT",
        help="earlier JSON report(s) (file, glob or folder) whose durations balance the shards",
    )
    run.add_argument(
        "--shard-publish",
        action="store_true",
        default=None,
        help="a shard writes its own job summary, annotations and PR comment too",
    )
    run.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="run each scenario N times; the pass rate decides (see min_pass_rate)",
    )
    run.add_argument(
        "--bring-up",
        action="store_true",
        default=None,
        help="start an OpenClaw gateway for this run and stop it afterwards",
    )
    run.add_argument(
        "--gateway-command", metavar="CMD", help="command that runs the gateway in bring-up mode"
    )
    run.add_argument(
        "--openclaw-config",
        metavar="FILE",
        help="your openclaw.json, merged with ClawSpec's settings in bring-up mode",
    )
    run.add_argument(
        "--observability-backend",
        choices=["none", "local", "opik", "phoenix", "langfuse"],
        help="where trace assertions read spans from",
    )
    run.add_argument(
        "--model-traffic",
        choices=["off", "record", "replay"],
        help="record the agent's model calls into cassettes, or replay them (hermetic runs)",
    )
    run.add_argument("--cassette-dir", metavar="DIR", help="where cassettes are kept")
    run.add_argument("--today", metavar="YYYY-MM-DD", help="fixed value of {{today}}")
    run.add_argument("--no-color", action="store_true", help="plain terminal output")

    merge = commands.add_parser(
        "merge",
        help="join the shard reports of one matrix into one report and write every output",
    )
    merge.add_argument(
        "reports",
        nargs="+",
        metavar="REPORT",
        help="shard JSON reports: files, globs or folders (every *.json below)",
    )
    merge.add_argument(
        "--config",
        metavar="FILE",
        help="clawspec.yaml to use (default: found by walking up from the current folder)",
    )
    _outputs(merge)
    merge.add_argument("--no-color", action="store_true", help="plain terminal output")
    authoring.add_commands(commands)
    history = commands.add_parser("history", help="list the stored runs of a branch")
    history.add_argument("--config", metavar="FILE", help="clawspec.yaml to use")
    history.add_argument(
        "--baseline",
        metavar="SOURCE",
        help="the store to list: dir:PATH, s3://bucket/prefix or github "
        "(default: config baseline, else dir:.clawspec-history)",
    )
    history.add_argument("--branch", metavar="NAME", help="branch to list (default: this one)")
    history.add_argument(
        "--limit", type=int, default=20, metavar="N", help="newest N runs (default 20)"
    )
    history.add_argument("--json", action="store_true", help="print the runs as JSON")
    cassettes = commands.add_parser("cassettes", help="inspect recorded model traffic")
    cassette_commands = cassettes.add_subparsers(dest="cassettes_command", metavar="COMMAND")
    check = cassette_commands.add_parser(
        "check", help="report stale, unused, invalid and missing cassettes and their size"
    )
    _common(check)
    check.add_argument("--cassette-dir", metavar="DIR", help="where cassettes are kept")
    check.add_argument(
        "--report",
        metavar="FILE",
        help="JSON report of a replay run: cassette files it did not use are reported",
    )
    return parser


def _flags(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


# The report and exit-policy flags `run` and `merge` share, as setting names.
OUTPUT_FLAGS = (
    "report_json",
    "report_dir",
    "max_skipped",
    "junit",
    "report_html",
    "codequality",
    "pr_comment",
    "check_run",
    "check_name",
    "fail_on",
    "baseline",
    "save_baseline",
)


def run_flags(args: argparse.Namespace) -> dict[str, Any]:
    """Map `run` flags onto settings (flags win over environment and file)."""
    names = [
        "workspace",
        *OUTPUT_FLAGS,
        "concurrency",
        "gateway_base_url",
        "timezone",
        "repeat",
        "shard",
        "durations",
        "shard_publish",
        "model_traffic",
        "cassette_dir",
        "today",
    ]
    flags = _flags(args, names)
    gateway = {
        "mode": "bring_up" if args.bring_up else None,
        "command": args.gateway_command,
        "config": args.openclaw_config,
    }
    gateway = {key: value for key, value in gateway.items() if value is not None}
    if gateway:
        flags["gateway"] = gateway
    if args.observability_backend:
        flags["observability"] = {"backend": args.observability_backend}
    return flags


def cmd_validate(args: argparse.Namespace) -> ExitCode:
    from clawspec.speed.collector import collector_paused

    # Importing builds ~50 pydantic models, loading builds the contracts: objects that live on,
    # which the garbage collector would only scan again and again (~3 % of the start-up).
    with collector_paused():
        from clawspec.api import load

        loaded = load(
            args.paths,
            config=args.config,
            flags=_flags(args, ["workspace"]),
            parse_ahead=True,
        )
    scenarios = sum(len(c.contract.scenarios) for c in loaded.contracts)
    assertions = sum(
        len(s.given) + len(s.then) for c in loaded.contracts for s in c.contract.scenarios
    )
    print(
        f"{len(loaded.contracts)} contract(s), {scenarios} scenario(s), "
        f"{assertions} assertion(s): valid"
    )
    return ExitCode.OK


def cmd_run(args: argparse.Namespace) -> ExitCode:
    import threading

    from clawspec.speed.collector import collector_paused

    with collector_paused():  # modules that live on (see cmd_validate)
        from clawspec import api
        from clawspec.reports.terminal import TerminalReporter

    flags = run_flags(args)
    if args.dry_run:
        from clawspec.runner.dry_run import print_plan

        loaded = api.load(args.paths, config=args.config, flags=flags)
        selection = api.plan(loaded, args.scenario, args.tag, args.exclude_tag)
        plans, shard = api.shard_plans(selection, loaded.settings, os.environ, _warn)
        if shard:
            print(_shard_line(shard))
        print_plan(loaded, plans)
        return ExitCode.OK
    stop, abandon = threading.Event(), threading.Event()
    reporter = TerminalReporter(colour=False if args.no_color else None)
    restore = _install_signal_handlers(stop, abandon)
    try:
        result = api.run(
            args.paths,
            config=args.config,
            flags=flags,
            scenarios=args.scenario,
            tags=args.tag,
            exclude_tags=args.exclude_tag,
            listener=reporter,
            stop=stop,
            abandon=abandon,
            parse_ahead=True,
        )
    finally:
        restore()
    reporter.summary(result.report)
    if result.report.shard:
        print(_shard_line(result.report.shard))
    for path in result.written:
        print(f"report: {path}")
    return result.exit_code


def _warn(message: str) -> None:
    from clawspec.secrets import mask

    print(mask(f"warning: {message}"), file=sys.stderr)


def _shard_line(shard: Any) -> str:
    return (
        f"shard {shard.index}/{shard.total}: {len(shard.positions)} of the {shard.selected} "
        f"selected scenarios (balanced by {shard.balanced_by}); join the shards with "
        "`clawspec merge`"
    )


def cmd_merge(args: argparse.Namespace) -> ExitCode:
    from clawspec.reports.terminal import TerminalReporter
    from clawspec.sharding.merge import run_merge

    result = run_merge(args.reports, config=args.config, flags=_flags(args, OUTPUT_FLAGS))
    TerminalReporter(colour=False if args.no_color else None).summary(result.report)
    merged = result.report.merged
    if merged:
        print(f"merged {len(merged.present)} of {merged.total} shard report(s)")
    for path in result.written:
        print(f"report: {path}")
    return result.exit_code


def cmd_history(args: argparse.Namespace) -> ExitCode:
    import os
    from pathlib import Path

    from clawspec.config import load_settings, locate_config
    from clawspec.errors import UsageError
    from clawspec.history.command import history

    if args.limit < 1:
        raise UsageError(f"--limit: expected a positive number, found {args.limit}")
    config = locate_config(args.config, Path.cwd())
    settings = load_settings(config, os.environ, _flags(args, ["baseline"]))
    return history(settings, os.environ, branch=args.branch, limit=args.limit, as_json=args.json)


def _install_signal_handlers(stop: threading.Event, abandon: threading.Event) -> Callable[[], None]:
    """First SIGINT/SIGTERM: start no more scenarios; second: abandon the running ones."""
    import signal

    def handle(signum: int, _frame: Any) -> None:
        if stop.is_set():
            abandon.set()
            return
        stop.set()
        print(
            f"\n{signal.Signals(signum).name}: starting no more scenarios; waiting for the "
            "running ones (send again to abandon them); reports will still be written",
            file=sys.stderr,
            flush=True,
        )

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    return lambda: [signal.signal(sig, old) for sig, old in previous.items()] and None


def cmd_cassettes(args: argparse.Namespace) -> ExitCode:
    from pathlib import Path

    from clawspec.api import load
    from clawspec.runner.scenario import ScenarioPlan
    from clawspec.runner.traffic import cassette_root, scenario_folder
    from clawspec.traffic.check import check, render

    if args.cassettes_command != "check":
        raise UsageError("usage: clawspec cassettes check [PATH ...] [--report FILE]")
    loaded = load(args.paths, config=args.config, flags=_flags(args, ["workspace", "cassette_dir"]))
    root = cassette_root(loaded.settings, loaded.workspace)
    report = Path(args.report) if args.report else None
    expected = {  # the cassette folder of every scenario of the loaded contracts -> its id
        scenario_folder(plan, loaded.settings, loaded.workspace): plan.id
        for contract in loaded.contracts
        for index, scenario in enumerate(contract.contract.scenarios)
        for plan in [ScenarioPlan(contract, index, scenario)]
    }
    result = check(root, expected, report, loaded.workspace)
    for line in render(result):
        print(line)
    return ExitCode.OK if result.ok else ExitCode.FAILED


COMMANDS: dict[str, Callable[[argparse.Namespace], ExitCode]] = {
    "validate": cmd_validate,
    "run": cmd_run,
    "merge": cmd_merge,
    **authoring.COMMANDS,
    "history": cmd_history,
    "cassettes": cmd_cassettes,
}


def main(argv: Sequence[str] | None = None) -> int:
    # pydantic looks for plugins in every installed package's entry points the first time it
    # builds a model (tens of milliseconds on each call); ClawSpec uses none. A user who sets
    # the variable keeps their choice. While they are off, pydantic need not even import the
    # entry-point machinery (see pydantic_plugins).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    pydantic_plugins.install()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return ExitCode.USAGE
    import logging

    from clawspec import secrets

    # The secrets registry comes first: on GitHub every known credential is announced with
    # `::add-mask::` before any other line, and the debug log masks every record.
    with secrets.scope(os.environ) as registry:
        if os.environ.get("GITHUB_ACTIONS") == "true":
            from clawspec.reports.github.commands import add_mask_commands

            registry.announce(sys.stdout, add_mask_commands)
        handler = logging.StreamHandler()
        handler.setFormatter(secrets.masking_formatter("%(levelname)s %(name)s: %(message)s"))
        logging.basicConfig(
            level=logging.DEBUG if args.debug else logging.WARNING, handlers=[handler]
        )
        return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    """Run the command; map errors to one masked line on stderr and an exit code."""
    import logging

    from clawspec.secrets import mask

    try:
        return int(COMMANDS[args.command](args))
    except ContractError as exc:
        for message in exc.messages:
            print(mask(f"error: {message}"), file=sys.stderr)
        print(f"{len(exc.messages)} problem(s) found; nothing was run", file=sys.stderr)
        return int(exc.exit_code)
    except ClawSpecError as exc:
        print(mask(f"error: {exc}"), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug: one line, the traceback only with --debug
        logging.getLogger("clawspec").debug("unexpected error", exc_info=True)
        print(
            mask(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)"),
            file=sys.stderr,
        )
        return int(ExitCode.FAILED)


def entry() -> NoReturn:
    """The `clawspec` command (console script, `python -m clawspec`): `main`, then a quick exit."""
    from clawspec.speed.process_exit import leave

    leave(main())


if __name__ == "__main__":
    entry()

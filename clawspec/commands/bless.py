"""`clawspec bless`: propose the `then` items that held in every one of K good runs."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from clawspec.errors import ExitCode

if TYPE_CHECKING:
    from pathlib import Path

    from clawspec.bless.session import Target
    from clawspec.contracts.loader import LoadedContract

NAME = "bless"
DEFAULT_RUNS = 5
# The largest --tolerance: a limit 100 times the highest seen already checks nothing.
MAX_TOLERANCE = 99.0


def add_parser(commands: argparse._SubParsersAction) -> None:
    bless = commands.add_parser(
        NAME, help="propose the assertions that held in every one of K good runs of a scenario"
    )
    bless.add_argument("contract", metavar="CONTRACT", help="the contract file")
    bless.add_argument("--scenario", required=True, metavar="NAME", help="the scenario's name")
    bless.add_argument(
        "--runs",
        type=int,
        metavar="K",
        help=f"run the scenario K times and propose from them (default {DEFAULT_RUNS})",
    )
    bless.add_argument(
        "--from-report",
        nargs="+",
        metavar="FILE",
        help="read the attempts from these JSON reports (a run with repeat) instead of running",
    )
    bless.add_argument(
        "--tolerance",
        type=float,
        default=0.5,
        metavar="RATIO",
        help="headroom of the proposed limits over the highest seen (default 0.5: +50%%)",
    )
    bless.add_argument(
        "--write",
        action="store_true",
        help="append the proposed items not already present to the scenario's (or turn's) then",
    )
    from clawspec.commands.options import add_config

    add_config(bless, "found by walking up from CONTRACT")
    bless.add_argument("--workspace", metavar="DIR", help="the workspace root")
    # The run's own gateway flags (as `clawspec run` takes them), for --runs.
    bless.add_argument("--gateway-base-url", metavar="URL", help="gateway to target")
    bless.add_argument("--bring-up", action="store_true", default=None, help="start a gateway")
    bless.add_argument("--gateway-command", metavar="CMD", help="gateway command (bring-up)")
    bless.add_argument("--openclaw-config", metavar="FILE", help="your openclaw.json (bring-up)")
    bless.add_argument("--openclaw-state-dir", metavar="DIR", help="your gateway's state folder")
    bless.add_argument("--model-traffic", choices=["off", "record", "replay"], help="hermetic runs")
    bless.add_argument("--cassette-dir", metavar="DIR", help="where cassettes are kept")
    bless.add_argument("--report-dir", metavar="DIR", help="folder for the runs' reports")
    bless.add_argument("--max-cost-usd", metavar="USD", help="run budget: cost")
    bless.add_argument("--max-tokens", metavar="N", help="run budget: tokens")
    bless.add_argument("--max-duration", metavar="TIME", help="run budget: wall clock")
    bless.add_argument("--today", metavar="YYYY-MM-DD", help="fixed value of {{today}}")


def run(args: argparse.Namespace) -> ExitCode:
    from pathlib import Path

    from clawspec import api
    from clawspec.bless import session
    from clawspec.bless.invariants import Settings
    from clawspec.commands.options import given
    from clawspec.errors import UsageError

    if args.from_report and args.runs is not None:
        raise UsageError("give --runs or --from-report, not both")
    runs = DEFAULT_RUNS if args.runs is None else args.runs
    if not args.from_report and runs < session.MIN_RUNS:
        raise UsageError(f"--runs {runs}: " + session.TOO_FEW)
    if not args.from_report and runs > (most := _most_runs()):
        raise UsageError(f"--runs {runs}: at most {most} runs (the limit of `repeat`)")
    if not 0 <= args.tolerance <= MAX_TOLERANCE:  # NaN compares false too
        raise UsageError(
            f"--tolerance {args.tolerance:g}: must be a number from 0 to {MAX_TOLERANCE:g} "
            "(0.5: limits 50% over the highest seen)"
        )
    path = Path(args.contract)
    try:
        original = path.read_bytes()  # --write refuses when the file no longer holds these
    except OSError as exc:
        raise UsageError(f"{args.contract}: {exc.strerror or exc}") from None
    loaded = api.load([path], config=args.config, flags=given(args, ["workspace"]))
    target = _target(path, original, loaded.contracts, args.scenario, loaded.workspace)
    settings = Settings(
        tolerance=args.tolerance,
        trace_backend=_trace_backend(loaded.settings),
        workspace=str(loaded.workspace),
    )
    reports, sources = _attempts(args, loaded.contracts, runs)
    groups = session.collect(target, reports)
    attempts = sum(len(g.runs) for g in groups)
    if attempts < session.MIN_RUNS:
        raise UsageError(f"{sources}: {attempts} attempt(s); " + session.TOO_FEW)
    done = session.proposals_of(groups, settings)
    # A row or variant without 2 good runs: the others' proposals are printed, nothing holds
    # across all of them, nothing is written.
    short = session.too_few(done, args.write)
    ready = [(g, p) for g, p in done if p is not None]
    pool = len(done) > 1 and short is None
    write_set = session.pooled([g for g, _ in ready], settings) if pool else None
    contract = next(c for c in loaded.contracts if c.path.resolve() == path.resolve())
    existing = _existing(contract, target.scenario)
    for line in session.render(target, done, write_set, sources, existing):
        print(line)
    if short is not None:
        raise short
    if not args.write:
        return ExitCode.OK
    proposals = write_set if write_set is not None else ready[0][1]
    inserts = session.inserts(proposals, existing)
    count = sum(len(i.lines) for i in inserts)
    if not count:
        if not any(p.items for p in proposals):
            print(f"nothing to write: nothing was proposed for {target.display}")
        else:
            print(f"nothing to write: every proposed item is already in {target.display}")
        return ExitCode.OK
    _write(target, inserts, loaded.workspace)
    print(f"wrote {count} item(s) to {target.display}")
    return ExitCode.OK


def _attempts(
    args: argparse.Namespace, contracts: list[LoadedContract], runs: int
) -> tuple[list[Any], str]:
    """The reports holding the attempts (read, or written by running the scenario `runs`
    times) and how to name where they came from."""
    from pathlib import Path

    from clawspec.bless import session

    if args.from_report:
        reports = session.read_reports(args.from_report)
        return reports, ", ".join(name for name, _ in reports)  # each file read once
    own = _own_repeat(contract_data(contracts, Path(args.contract)), args.scenario)
    if own is not None and own != runs:
        session.say(
            f"note: the scenario's own `repeat: {own}` decides its attempts, not --runs {runs}"
        )
    name, ran = _run(args, runs)
    return [(name, ran)], f"{runs} runs ({name})"


def _write(target: Target, inserts: list[Any], workspace: Any) -> None:
    """Insert the items and replace the contract, when the result loads."""
    import os

    from clawspec.bless import write
    from clawspec.contracts.loader import load_contract

    new_text = write.insert_items(target.original.decode("utf-8"), target.scenario, inserts)

    def validate(candidate: Path) -> list[str]:
        found = load_contract(candidate, workspace, dict(os.environ))
        return [problem.text for problem in found] if isinstance(found, list) else []

    write.write_contract(target.path, target.original, new_text, validate)


def _target(
    path: Any, original: bytes, contracts: list[LoadedContract], name: str, workspace: Path
) -> Target:
    from clawspec.bless.session import Target, digest_of
    from clawspec.errors import UsageError

    found = [c for c in contracts if c.path.resolve() == path.resolve()]
    if not found:
        raise UsageError(f"{path} is not a contract (it matches no scenario pattern)")
    contract = found[0]
    data = contract.doc.data
    written = data.get("scenarios", []) if isinstance(data, dict) else []
    index = next(
        (i for i, s in enumerate(written) if isinstance(s, dict) and s.get("name") == name), None
    )
    if index is None:
        names = [s.get("name") for s in written if isinstance(s, dict)]
        raise UsageError(
            f"{contract.display} has no scenario '{name}' (it has: "
            + ", ".join(f"'{n}'" for n in names)
            + ")"
        )
    raw = written[index]
    turns = raw.get("turns")
    return Target(
        path=path,
        display=contract.display,
        identity_path=contract.identity_path,
        original=original,
        scenario=name,
        digest=digest_of(data, index, contract.path.parent),
        conversation=isinstance(turns, list),
        turns=len(turns) if isinstance(turns, list) else 0,
        row_vars=_row_vars(contract, index, workspace),
    )


def contract_data(contracts: list[LoadedContract], path: Any) -> Any:
    found = [c for c in contracts if c.path.resolve() == path.resolve()]
    return found[0].doc.data if found else None


def _most_runs() -> int:
    """The most runs: the limit of the `repeat` setting the runs are made with."""
    from annotated_types import Le

    from clawspec.config.settings import Settings

    return next(int(m.le) for m in Settings.model_fields["repeat"].metadata if isinstance(m, Le))


def _own_repeat(data: Any, name: str) -> int | None:
    """The scenario's own `repeat:`, which wins over the run's (and so over --runs)."""
    written = data.get("scenarios", []) if isinstance(data, dict) else []
    scenario = next((s for s in written if isinstance(s, dict) and s.get("name") == name), {})
    repeat = scenario.get("repeat")
    return repeat if isinstance(repeat, int) else None


def _row_vars(contract: LoadedContract, index: int, workspace: Path) -> dict[str, dict[str, str]]:
    """An outline's rows, inline or read from its data file: row id -> its values (what
    `{{vars.X}}` gives), read as the loader reads them."""
    from clawspec.contracts.outlines import read_rows
    from clawspec.inputs.limits import DEFAULT_LIMITS

    written = contract.doc.data["scenarios"][index]
    if not isinstance(written, dict) or "examples" not in written:
        return {}
    loc = ("scenarios", index, "examples")
    rows = read_rows(
        written["examples"],
        contract.doc,
        loc,
        contract.display,
        contract.path,
        workspace,
        DEFAULT_LIMITS.max_bytes,
    )
    return {
        row.id: {
            str(key): str(value)
            for key, value in row.values.items()
            if isinstance(value, str | int | float) and not isinstance(value, bool)
        }
        for row in rows.rows
    }


def _existing(contract: LoadedContract, name: str) -> Any:
    """The `then` items already written for the scenario (`None`) or a turn (its index)."""
    data = contract.doc.data
    written = [
        s for s in data.get("scenarios", []) if isinstance(s, dict) and s.get("name") == name
    ]
    scenario = written[0] if written else {}

    def existing(turn: int | None) -> list[dict[str, Any]]:
        owner: Any = scenario
        if turn is not None:
            turns = scenario.get("turns") or []
            owner = turns[turn] if turn < len(turns) else {}
        items = owner.get("then") if isinstance(owner, dict) else None
        return [i for i in items or [] if isinstance(i, dict)]

    return existing


def _trace_backend(settings: Any) -> bool:
    observability = getattr(settings, "observability", None)
    backend = getattr(observability, "backend", None)
    return bool(backend) and backend != "none"


def _run(args: argparse.Namespace, runs: int) -> Any:
    """Run the scenario `runs` times with the run's configuration and these flags."""
    from clawspec import api
    from clawspec.bless.session import say
    from clawspec.commands import signals
    from clawspec.commands.options import gateway_and_budget, given
    from clawspec.errors import GatewayError, RunInterrupted

    flags = given(
        args,
        [
            "workspace",
            "gateway_base_url",
            "model_traffic",
            "cassette_dir",
            "openclaw_state_dir",
            "report_dir",
            "today",
        ],
    )
    flags["repeat"] = runs
    flags.update(gateway_and_budget(args))
    say(f"bless: running '{args.scenario}' {runs} times")
    import sys
    import threading

    from clawspec.reports.terminal import TerminalReporter

    # Progress on stderr: stdout carries only the proposal (it may be piped into a file).
    reporter = TerminalReporter(stream=sys.stderr)
    # Interrupts as for `clawspec run`: the runs stop, a gateway brought up is stopped, the
    # report is written; then nothing is proposed.
    stop, abandon = threading.Event(), threading.Event()
    restore = signals.install(stop, abandon, reporter.scenarios_running)
    try:
        result = api.run(
            [args.contract],
            config=args.config,
            flags=flags,
            scenarios=[args.scenario],
            listener=reporter,
            stop=stop,
            abandon=abandon,
        )
    finally:
        restore()
    if result.exit_code == ExitCode.GATEWAY:
        raise GatewayError("the gateway could not be reached: no run to propose from")
    from clawspec.contracts.discovery import display_path

    for path in result.written:
        say(f"report: {display_path(path)}")
    # Attempts are named after the JSON report that keeps them (bless can read it again).
    json_reports = [display_path(p) for p in result.written if p.suffix == ".json"]
    if result.report.interrupted:
        raise RunInterrupted(
            "interrupted: nothing is proposed from runs that did not all finish"
            + (f" (what ran is in {json_reports[0]})" if json_reports else "")
        )
    return (json_reports[0] if json_reports else "this run"), result.report

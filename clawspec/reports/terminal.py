"""Terminal output: a line per scenario as it finishes, then failures and totals."""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from clawspec.reports.turns import check_label, failing_turn, shown, turn_label
from clawspec.status import Status
from clawspec.text import clean, flat, fmt_duration_ms, fmt_number, one_line, pluralize, redact

if TYPE_CHECKING:
    # Not imported with this module: `clawspec run` builds its reporter before the first hook
    # request, and the report models are imported while the agents run.
    from clawspec.reports.model import AssertionResult, RunReport, ScenarioResult
    from clawspec.reports.outcome import RunOutcome

COLOURS = {
    Status.PASS: "32",
    Status.FAIL: "31",
    Status.ERROR: "31;1",
    Status.SKIP: "33",
    Status.WARN: "33",
}


# Progress lines of scenarios that never ran, shown per reason; the summary counts the rest.
NOT_RUN_SHOWN = 10


class TerminalReporter:
    """Prints progress and the final summary; secrets are masked in everything printed."""

    def __init__(
        self,
        stream: TextIO | None = None,
        colour: bool | None = None,
        total: int = 0,
    ) -> None:
        self.stream = stream or sys.stdout
        self.colour = colour if colour is not None else _is_tty(self.stream)
        self.total = total
        self.finished = 0
        self._started = False  # on_run_start was called: scenarios are being started
        self._lock = threading.Lock()
        # Scenarios that never ran, by reason: a spend limit or an interrupt can leave thousands.
        self._not_run: dict[str, int] = {}

    def _print(self, text: str = "", stream: TextIO | None = None) -> None:
        # The colours are ours: only the secrets (the active registry's) are masked.
        text = clean(text) if not self.colour else redact(text)
        if "##" in text:
            text = _inert(text)
        print(text, file=stream or self.stream, flush=True)

    def _label(self, status: Status) -> str:
        label = f"{status.value.upper():<5}"
        return f"\x1b[{COLOURS[status]}m{label}\x1b[0m" if self.colour else label

    def on_run_start(self, total: int) -> None:
        self.total = total
        self._started = True
        # Progress, like the install and gateway lines before it: on stderr, so the first
        # verdict is not the first sign of life and stdout stays the verdicts and the summary.
        print(f"clawspec: running {pluralize(total, 'scenario')}", file=sys.stderr, flush=True)
        from clawspec.ci_context import CIContext, ci_system

        if ci_system(os.environ) == "github":
            # Register the secrets (bring-up tokens included) before the first scenario line;
            # masks go to the stream, so no other CI value is needed.
            from clawspec.reports.github.commands import GitHubRunner

            runner = GitHubRunner(CIContext(system="github"), self.stream)
            runner.mask_secrets()

    def scenarios_running(self) -> bool | None:
        """None before the first scenario starts, False once every one has finished, else True
        (some may not have started yet): what an interrupt meets."""
        if not self._started:
            return None
        return self.finished < self.total

    def on_scenario_done(self, result: ScenarioResult) -> None:
        with self._lock:
            self.finished += 1
            progress = f"[{self.finished}/{self.total}] " if self.total > 1 else ""
            if result.status == Status.SKIP and result.run_id is None:
                seen = self._not_run[result.message] = self._not_run.get(result.message, 0) + 1
                if seen == NOT_RUN_SHOWN + 1:  # the line stands for all the rest: no count
                    self._print(
                        "      … the other scenarios not run for the same reason are counted "
                        "in the summary"
                    )
                if seen > NOT_RUN_SHOWN:
                    return
            line = (
                f"{progress}{self._label(result.status)} {flat(result.identity.label)} "
                f"({fmt_duration_ms(result.duration_ms)})"
            )
            if result.attempts is not None:
                line += (" FLAKY " if result.flaky else " ") + result.attempts.describe()
            if result.status != Status.PASS and result.tags:
                # e.g. a tag saying the scenario is meant to fail, or whose it is
                line += f" [tags: {', '.join(result.tags)}]"
            if result.status != Status.PASS and result.message:
                line += f"\n      {flat(result.message)}"
            if held := _skipped_attempts(result):
                line += f"\n      {held}"
            self._print(line)

    def on_warning(self, message: str) -> None:
        from clawspec.reports.github.annotations import warn_on_github

        if not warn_on_github(message, self.stream):
            self._print(f"warning: {flat(message)}", sys.stderr)

    def summary(self, report: RunReport, outcome: RunOutcome | None = None) -> None:
        """The run's end: changes, failures, folded skips, variants, totals, spend, and last
        the verdict (`outcome`; without one, the default exit policy's)."""
        from clawspec.reports.outcome import Policy, decide

        self._changes(report)
        problems = [line for scenario in report.scenarios for line in self._problems(scenario)]
        if problems:
            self._print("\nFailures:")
            for line in problems:
                self._print(line)
        skipped = [s for s in report.scenarios if s.status == Status.SKIP]
        for reason, count in _folded(s.message for s in skipped):
            self._print(f"  SKIP  {pluralize(count, 'scenario')}: {reason}")
        # Skipped assertions of scenarios that ran (a trace backend or judge down while the
        # file assertions passed): their scenarios pass, the outage must not go unsaid.
        from clawspec.reports.model import skipped_in_ran

        for reason, count, scenarios in skipped_in_ran(report.scenarios):
            self._print(
                f"  SKIP  {pluralize(count, 'assertion')} in {pluralize(scenarios, 'scenario')} "
                f"that ran: {reason}"
            )
        self._variants(report)
        t = report.totals
        self._print(
            f"\n{pluralize(t.scenarios, 'scenario')}: {t.passed} passed, {t.failed} failed, "
            f"{t.errored} errored, {t.skipped} skipped, {t.warned} warned "
            f"in {fmt_duration_ms(report.duration_ms)}"
            + (" (interrupted)" if report.interrupted else "")
        )
        if report.selection is not None:  # --changed-since: how many ran, and since when
            self._print(report.selection.describe())
        from clawspec.reports.spend import spend_line, spend_of, token_disagreements, worth_saying

        spend = spend_of(report)
        if worth_saying(spend):
            self._print(spend_line(spend))
        if differ := token_disagreements(report.scenarios):
            self._print(differ)
        if spend.stopped:
            self._print(f"stopped: {spend.stopped}")
        outcome = outcome or decide(report, Policy())
        reasons = "; ".join(outcome.reasons)
        self._print(outcome.verdict.upper() + (f": {reasons}" if reasons else ""))

    def _variants(self, report: RunReport) -> None:
        """The variants side by side, then each one against the reference variant."""
        from clawspec.reports.variants import gate_text, text_table, variant_table

        table = variant_table(report)
        if table is None:
            return
        self._print("\nVariants side by side:")
        for line in text_table(table):
            self._print(line)
        for column, regressions in table.gate_lines():
            self._print(gate_text(column))
            for line in regressions:
                self._print(f"  REGRESSED {line}")

    def _problems(self, scenario: ScenarioResult) -> list[str]:
        """The lines of one scenario that did not pass: its cause, then its assertions that did
        not pass (a flaky pass is listed as flaky, above; skips are folded, below).

        Every such scenario is listed, under its own status: one that errored before any check
        ran (the gateway, a precondition) is an ERROR, whatever its `given` check answered. Its
        other checks keep their own verdicts: which of them the agent failed is the news.
        """
        status = scenario.status
        if status in (Status.PASS, Status.SKIP):
            return []
        # Every verdict, a conversation's turns' included, in the order they ran.
        checks = [a for a in scenario.checks() if a.status in _NOT_PASSING]
        lines = []
        restated = any(restates(scenario, a) for a in checks)
        if not checks or (scenario.message and not restated):
            # The scenario's own cause (an invocation failure, a replay miss), or nothing else
            # to show it by.
            cause = " ".join(scenario.message.split())  # one line per item in this list
            message = f": {cause}" if cause else ""
            lines.append(
                f"  {self._label(status)} {flat(scenario.contract)}:{scenario.line} "
                f"{flat(scenario.identity.name_label)}{message}"
            )
        for a in checks:
            precondition = status == Status.ERROR and a.phase == "given"
            label = self._label(Status.ERROR if precondition else a.status)
            lines.append(
                f"  {label} {flat(scenario.contract)}:{a.line} "
                f"{flat(scenario.identity.name_label)} > {check_label(a)} {a.type}: "
                f"{flat(a.message)}"
            )
        turn = failing_turn(scenario)
        if turn is not None:  # what was said and replied, on one line each, short
            said = one_line(shown(turn.say), _SAID_CHARS)
            replied = (
                "(no reply)" if turn.reply is None else one_line(shown(turn.reply), _SAID_CHARS)
            )
            lines.append(f"      {turn_label(turn.index)} said: {said}")
            lines.append(f"      {turn_label(turn.index)} replied: {replied}")
        return lines

    def _changes(self, report: RunReport) -> None:
        """Lead with change: regressions since the baseline, fixed, flaky, behaviour."""
        from clawspec.reports.changes import (
            change_counts,
            change_headline,
            change_sections,
            no_baseline_judgement,
            total_changes,
        )

        headline = change_headline(report)
        if headline and report.comparison and report.comparison.baseline_missing is not None:
            headline += f"; {no_baseline_judgement(report)}"
        if headline:
            self._print(f"\n{headline}")
        for section in change_sections(report):
            if section.key != "regressed":
                self._print(f"{section.title}:")
            for item in section.items:
                said = f"{item.label}: {item.text}" if item.label else item.text  # a total
                self._print(f"  {section.key.upper():<9} {said}".rstrip())
        if counts := change_counts(report):
            self._print(counts)
            for label, d in total_changes(report):
                ratio = "" if d["ratio"] is None else f" ({d['ratio']:+.0%})"
                self._print(
                    f"  {label}: {fmt_number(d['baseline'])} → {fmt_number(d['current'])}"
                    f"{ratio}" + (f", over {d['tolerance']:.0%}" if d["over"] else "")
                )


_NOT_PASSING = (Status.FAIL, Status.ERROR, Status.WARN)
# A failing turn's message and reply in the list of failures: enough to recognise them (the
# HTML and JSON reports hold more).
_SAID_CHARS = 300


def restates(scenario: ScenarioResult, check: AssertionResult) -> bool:
    """True when the scenario's message is the one the runner made from this check
    (`ScenarioResult.restates`): said with the check, the reports do not say it twice. A
    report written before the runner recorded it says it twice at worst."""
    return scenario.restates is not None and scenario.restates.of(check)


def _skipped_attempts(result: ScenarioResult) -> str:
    """How many of a repeated scenario's attempts were skipped, and why (the first one's
    reason), when others ran: its pass rate counts only those, e.g. "2/2 attempts passed"
    of a `repeat: 3` whose third a spend limit held back. Empty otherwise."""
    runs = result.attempts.runs if result.attempts is not None else []
    skipped = [run for run in runs if run.status == Status.SKIP]
    if not skipped or result.status == Status.SKIP:  # all skipped: its message says why
        return ""
    return f"{len(skipped)} of {len(runs)} attempts skipped: {flat(skipped[0].message)}"


def _folded(reasons: Iterable[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


def _is_tty(stream: TextIO) -> bool:
    return hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("NO_COLOR")


# CI runners read a command anywhere in a line, not only at its start: GitHub's legacy
# `##[error]…` / `##[stop-commands]…`, Azure Pipelines' `##vso[…]`. Text ClawSpec prints (an
# agent's reply, a file's line) must not be one: a space after `##` keeps it readable and inert.
_COMMAND_MARK = re.compile(r"##(?=\[|vso\[)", re.IGNORECASE)


def _inert(text: str) -> str:
    return _COMMAND_MARK.sub("## ", text)

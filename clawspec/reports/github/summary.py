"""The job summary: Markdown for `$GITHUB_STEP_SUMMARY` (and the PR comment), size-bounded.

GitHub drops the whole summary of a step above 1 MiB, so `render_summary` reduces its *input*
until the text fits, and says what it cut: every scenario → only the ones that did not pass →
the first N of those → totals only. The report itself never changes.

Every text from outside (names, paths, messages, model names, what a state file holds) goes
through `markdown`: it shows as data, never as a link, image, mention, reference or HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clawspec.reports.changes import (
    change_counts,
    change_headline,
    change_sections,
    total_changes,
)
from clawspec.reports.github.commands import GitHubRunner
from clawspec.reports.github.markdown import code_span, inline, link, link_target, table_cell
from clawspec.reports.github.trends import trend_table
from clawspec.reports.model import RunReport, ScenarioResult, skipped_in_ran
from clawspec.reports.outcome import Policy, RunOutcome, decide
from clawspec.reports.spend import spend_line, spend_of, token_disagreements, worth_saying
from clawspec.reports.terminal import restates
from clawspec.reports.turns import check_label, failing_turn, shown, turn_label
from clawspec.status import PASSING, Status
from clawspec.text import clean, fmt_duration_ms, fmt_number, one_line, pluralize

# GitHub's limit is 1 MiB per step; keep a margin for what other tools append in the same step.
STEP_SUMMARY_LIMIT = 1024 * 1024
DEFAULT_MAX_BYTES = 1_000_000

ICON = {
    Status.PASS: "✅",
    Status.FAIL: "❌",
    Status.ERROR: "💥",
    Status.WARN: "⚠️",
    Status.SKIP: "⏭️",
}
_NOT_PASSING = (Status.FAIL, Status.ERROR, Status.WARN, Status.SKIP)
_MESSAGE_LIMIT = 500
_SAID_LIMIT = 300  # a failing turn's message and reply: enough to recognise them


@dataclass(frozen=True)
class _View:
    """What one rendering shows: the scenarios in the table and the note about what was cut."""

    scenarios: Sequence[ScenarioResult]
    cut_note: str = ""
    show_table: bool = True
    change_limit: int | None = None  # items per change section (None: all)
    check_limit: int | None = None  # failing checks listed per scenario (None: all)


ICONS = {"passed": "✅", "failed": "❌", "errored": "💥", "warned": "⚠️", "skipped": "⏭️"}


VERDICT_ICONS = {"passed": "✅", "failed": "❌", "interrupted": "⏹️", "error": "💥"}


def verdict_line(outcome: RunOutcome) -> str:
    """e.g. '❌ **Failed**: shard 2/3 missing: the merged report is incomplete'."""
    verdict = f"{VERDICT_ICONS[outcome.verdict]} **{outcome.verdict.capitalize()}**"
    if not outcome.reasons:
        return verdict
    return f"{verdict}: {inline('; '.join(outcome.reasons), _MESSAGE_LIMIT)}"


def headline(report: RunReport, outcome: RunOutcome) -> str:
    """Return the summary's headline: the run's verdict (and why), then the scenarios, the
    duration and the count of each status."""
    t = report.totals
    parts = [f"{ICONS[word]} {word} {n:,}" for word, n in t.counts()]
    return (
        f"{verdict_line(outcome)}\n\n"
        f"**{pluralize(t.scenarios, 'scenario')}** in {fmt_duration_ms(report.duration_ms)}: "
        + (", ".join(parts) if parts else "nothing ran")
    )


def _totals_table(report: RunReport) -> list[str]:
    t = report.totals
    return [
        "| Scenarios | Passed | Failed | Errored | Warned | Skipped | Duration |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {t.scenarios:,} | {t.passed:,} | {t.failed:,} | {t.errored:,} | {t.warned:,} "
        f"| {t.skipped:,} | {fmt_duration_ms(report.duration_ms)} |",
    ]


def _scenario_table(scenarios: Sequence[ScenarioResult], traced: bool = True) -> list[str]:
    repeated = any(s.attempts is not None for s in scenarios)
    lines = [
        "| Status | Scenario | Contract | Duration | Trace |"
        + (" Pass rate |" if repeated else ""),
        "| --- | --- | --- | ---: | --- |" + (" ---: |" if repeated else ""),
    ]
    for s in scenarios:
        trace = _trace_cell(s, traced)
        rate = ""
        if repeated and s.attempts is not None:
            rate = f" {s.attempts.passes}/{s.attempts.attempts}{' 🎲 flaky' if s.flaky else ''} |"
        elif repeated:
            rate = " |"
        name = table_cell(s.identity.name_label, 200)
        lines.append(
            f"| {ICON[s.status]} {s.status.upper()} | {name} "
            f"| {_where(s.contract, s.line, table=True)} "
            f"| {fmt_duration_ms(s.duration_ms)} | {trace} |" + rate
        )
    return lines


def _trace_cell(s: ScenarioResult, traced: bool = True) -> str:
    """The Trace cell: a link to the backend's UI where there is one; else the id, as code (it
    copies as it is, and GitHub does not take it for a commit), with where its spans are (a
    local trace's only in this run's reports: the HTML report's section of the scenario, as
    it shows them); for a scenario that did not pass and has none, "—" and why."""
    trace = s.trace
    if trace is not None:
        if trace.url and link_target(trace.url):
            return link(trace.backend, trace.url, 40, table=True)
        where = "local: HTML report" if trace.backend == "local" else trace.backend
        backend = table_cell(where, 40)
        return f"{code_span(trace.id, 60, table=True)} ({backend})"
    if s.status not in (Status.FAIL, Status.ERROR):
        return ""
    # A trace is looked up only once the agent ran: a failure's checks ran on its run; an
    # error may have come before it (a refused hook, a gateway that is down).
    ran = s.status == Status.FAIL or s.gateway_run_id is not None or s.evidence is not None
    if not ran:
        return "— no agent run"
    return "— no trace found" if traced else "— no trace backend configured"


def _where(contract: str, line: int, *, table: bool = False) -> str:
    """`contract:line` as code (the path masked before it is cut: a cut could split a secret)."""
    path = one_line(clean(contract), 200)
    return code_span(f"{path}:{line}", table=table)


SECTION_ICON = {"regressed": "🔻", "fixed": "✅", "flaky": "🎲", "behaviour": "🔀"}


def _change_block(report: RunReport, limit: int | None) -> list[str]:
    """The change since the baseline, first: regressions, fixed, flaky, behaviour."""
    lines: list[str] = []
    headline = change_headline(report)
    comparison = report.comparison
    if headline and comparison is not None and comparison.baseline_missing is not None:
        note = inline(headline, _MESSAGE_LIMIT)
        policy = (
            "against the reference variant"
            if report.variant_comparisons
            else "by the normal exit policy"
        )
        lines += ["> [!NOTE]", f"> {note}; judged {policy}.", ""]
    elif headline:
        lines += [f"### {inline(headline, _MESSAGE_LIMIT)}", ""]
    for section in change_sections(report):
        if section.key != "regressed":
            lines += [f"### {section.title} ({len(section.items):,})", ""]
        shown = section.items if limit is None else section.items[:limit]
        for item in shown:
            where = ""
            if item.scenario is not None:
                s = item.scenario
                name = inline(s.identity.name_label, 200)
                where = f"**{name}** ({_where(s.contract, s.line)}): "
            elif item.label:
                where = f"**{inline(item.label, 200)}**: "
            text = inline(item.text, _MESSAGE_LIMIT)
            lines.append(f"- {SECTION_ICON[section.key]} {where}{text}")
        if len(shown) < len(section.items):
            lines.append(f"- … and {len(section.items) - len(shown):,} more (JSON report)")
        lines.append("")
    if comparison is not None and comparison.baseline_missing is None:
        lines += _comparison_totals(report)
    return lines


def _comparison_totals(report: RunReport) -> list[str]:
    lines = [change_counts(report) or "", ""]
    rows = total_changes(report)
    if rows:
        lines += ["| Total | Baseline | Now | Change |", "| --- | ---: | ---: | ---: |"]
        for label, d in rows:
            ratio = "" if d["ratio"] is None else f" ({d['ratio']:+.0%})"
            flag = f" ⚠️ over {d['tolerance']:.0%}" if d["over"] else ""
            lines.append(
                f"| {label} | {fmt_number(d['baseline'])} | {fmt_number(d['current'])} "
                f"| {fmt_number(d['delta'])}{ratio}{flag} |"
            )
        lines.append("")
    return lines


def _details(scenarios: Iterable[ScenarioResult], check_limit: int | None = None) -> list[str]:
    scenarios = list(scenarios)
    # Skips for one reason (a spend limit that stopped the run, a missing judge) are folded
    # into one line, as the terminal does: the same message seven times says nothing more.
    reasons: dict[str, int] = {}
    for s in scenarios:
        if s.status == Status.SKIP and s.message:
            reasons[s.message] = reasons.get(s.message, 0) + 1
    folded = [reason for reason, n in reasons.items() if n > 1]  # in order of first use
    lines: list[str] = []
    for s in scenarios:
        if s.status not in _NOT_PASSING:
            continue
        if s.status == Status.SKIP and s.message in folded:
            continue
        checks = [a for a in s.checks() if a.status != Status.PASS]  # turns' included
        # A message the runner made from a check is said once, on the check's line below.
        said_below = any(restates(s, a) for a in checks)
        message = "" if said_below else inline(s.message, _MESSAGE_LIMIT)
        lines.append(
            f"- {ICON[s.status]} **{inline(s.identity.name_label, 200)}** "
            f"({_where(s.contract, s.line)})" + (f": {message}" if message else "")
        )
        for a in checks[:check_limit]:
            lines.append(
                f"  - **{a.status.upper()}** {code_span(check_label(a))} "
                f"{inline(a.type, 100)}: "
                f"{inline(a.message, _MESSAGE_LIMIT)} "
                f"({_where(s.contract, a.line)})"
            )
        if check_limit is not None and len(checks) > check_limit:
            lines.append(f"  - … and {len(checks) - check_limit:,} more not passing checks")
        lines += _turn_said(s)
    for reason in folded:
        said = inline(reason, _MESSAGE_LIMIT)
        lines.append(f"- {ICON[Status.SKIP]} **{reasons[reason]:,} scenarios**: {said}")
    for reason, count, ran in skipped_in_ran(scenarios):
        lines.append(
            f"- {ICON[Status.SKIP]} **{pluralize(count, 'assertion')}** in "
            f"{pluralize(ran, 'scenario')} that ran: {inline(reason, _MESSAGE_LIMIT)}"
        )
    return lines


def _turn_said(s: ScenarioResult) -> list[str]:
    """A failing conversation's failing turn: what the user said and what the agent replied,
    short and shown as data (a reply's Markdown and HTML are text here)."""
    turn = failing_turn(s)
    if turn is None:
        return []
    said = inline(shown(turn.say), _SAID_LIMIT) or "*nothing*"
    replied = "*no reply*" if turn.reply is None else inline(shown(turn.reply), _SAID_LIMIT)
    where = _where(s.contract, turn.line)
    label = turn_label(turn.index)
    return [f"  - 💬 **{label}** ({where}): said {said} / replied {replied or '*nothing*'}"]


def usage_totals(report: RunReport) -> dict[str, dict[str, float]]:
    """Sum the judge usage of every assertion that carries one, per model."""
    by_model: dict[str, dict[str, float]] = {}
    for s in report.scenarios:
        for a in s.checks():
            if not a.usage:
                continue
            row = by_model.setdefault(
                str(a.usage.get("model") or "unknown"),
                {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
                | {"priced": 0, "unpriced": 0},
            )
            for key in row:
                value = a.usage.get(key)
                if isinstance(value, int | float):
                    row[key] += value
            # An assertion without a cost (no model_pricing for its model) is not a $0 one.
            row["priced" if isinstance(a.usage.get("cost_usd"), int | float) else "unpriced"] += 1
    return by_model


def _usage_table(report: RunReport) -> list[str]:
    by_model = usage_totals(report)
    if not by_model:
        return []
    lines = [
        "### LLM judge usage",
        "",
        "| Model | Calls | Input tokens | Output tokens | Cost (USD) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for model, row in sorted(by_model.items()):
        lines.append(
            f"| {table_cell(model, 100)} | {fmt_number(row['calls'])} "
            f"| {fmt_number(row['input_tokens'])}"
            f" | {fmt_number(row['output_tokens'])} | {_judge_cost(row)} |"
        )
    if len(by_model) > 1:
        total = {k: sum(r[k] for r in by_model.values()) for k in next(iter(by_model.values()))}
        lines.append(
            f"| **total** | {fmt_number(total['calls'])} | {fmt_number(total['input_tokens'])}"
            f" | {fmt_number(total['output_tokens'])} | {_judge_cost(total)} |"
        )
    return [*lines, ""]


def _judge_cost(row: dict[str, float]) -> str:
    """'0.0123', or 'unknown' / 'at least 0.0123' when some calls had no price."""
    if not row["unpriced"]:
        return f"{row['cost_usd']:.4f}"
    if not row["priced"]:
        return "unknown"
    return f"at least {row['cost_usd']:.4f}"


def _render(report: RunReport, outcome: RunOutcome, view: _View, title: str) -> str:
    lines = [f"## {title}", "", headline(report, outcome), ""]
    if report.interrupted:
        lines += ["> [!WARNING]", "> The run was interrupted: results are incomplete.", ""]
    lines += _parts_note(report)
    if report.selection is not None:  # --changed-since: how many ran, and since when
        said = inline(report.selection.describe(), _MESSAGE_LIMIT)
        lines += ["> [!NOTE]", f"> {said[:1].upper()}{said[1:]}.", ""]
    lines += _change_block(report, view.change_limit)
    lines += [*_totals_table(report), ""]
    lines += _spend_block(report)
    lines += _variant_block(report, view)
    if view.cut_note:
        lines += [f"> [!NOTE]\n> {view.cut_note}", ""]
    if view.show_table and view.scenarios:
        traced = report.source is None or report.source.trace_backend != "none"
        lines += [*_scenario_table(view.scenarios, traced), ""]
    details = _details(view.scenarios, view.check_limit) if view.show_table else []
    if details:
        lines += ["### Not passing", "", *details, ""]
    lines += _usage_table(report)
    lines += trend_table(report, view.change_limit)
    version = inline(report.version, 40)
    lines.append(f"<sub>ClawSpec {version} · run {code_span(report.run_id, 80)}</sub>")
    return "\n".join(lines) + "\n"


def _variant_block(report: RunReport, view: _View) -> list[str]:
    """The variants side by side (rows: scenarios, columns: variants), each variant's totals,
    then each one against the reference variant. A cut view lists fewer rows, as it lists
    fewer scenarios: those not passing on some variant, then the first N of those."""
    from clawspec.reports.variants import (
        column_title,
        gate_text,
        totals_rows,
        variant_table,
    )

    table = variant_table(report)
    if table is None:
        return []
    rows = list(table.rows)
    if view.cut_note:
        rows = [r for r in rows if any(c is None or c.status not in PASSING for c in r.cells)]
    if not view.show_table:
        rows = []
    elif view.change_limit is not None:
        rows = rows[: view.change_limit]
    titles = [table_cell(column_title(c), 80) for c in table.columns]
    lines = ["### Variants side by side", ""]
    lines += [f"| Scenario | {' | '.join(titles)} |", "| --- |" + " --- |" * len(titles)]
    for row in rows:
        name = table_cell(row.identity.name, 200)
        cells = [_variant_cell(cell) for cell in row.cells]
        where = _where(row.identity.contract, row.line, table=True)
        lines.append(f"| {name} {where} | {' | '.join(cells)} |")
    if len(rows) < len(table.rows):
        left = len(table.rows) - len(rows)
        lines.append(f"| … {left:,} more (JSON report) |" + " |" * len(titles))
    for label, values in totals_rows(table):
        shown = [table_cell(v, 200) for v in values]
        lines.append(f"| **{label}** | {' | '.join(shown)} |")
    lines.append("")
    for column, regressions in table.gate_lines():
        # A Markdown list item is its own bullet: only a failing gate gets a mark.
        icon = "🔻 " if regressions and column.gate and column.gate.required else ""
        lines.append(f"- {icon}{inline(gate_text(column), _MESSAGE_LIMIT)}")
        limit = len(regressions) if view.change_limit is None else view.change_limit
        for line in regressions[:limit]:
            lines.append(f"  - {inline(line, _MESSAGE_LIMIT)}")
        if len(regressions) > limit:
            lines.append(f"  - … and {len(regressions) - limit:,} more (JSON report)")
    return [*lines, ""] if table.gate_lines() else lines


def _variant_cell(cell: object) -> str:
    from clawspec.reports.variants import Cell

    if not isinstance(cell, Cell):
        return "—"
    mark = {"regressed": " 🔻 regressed", "fixed": " ✅ fixed"}.get(cell.change or "", "")
    flaky = " 🎲 flaky" if cell.flaky else ""
    return f"{ICON[cell.status]} {cell.verdict}{flaky}{mark}"


def _spend_block(report: RunReport) -> list[str]:
    """What the agent runs spent, next to the budget; why a spend limit stopped the run."""
    spend = spend_of(report)
    lines: list[str] = []
    if spend.stopped:
        stopped = inline(spend.stopped, _MESSAGE_LIMIT)
        lines += [
            "> [!CAUTION]",
            f"> Stopped: {stopped}. The run fails: a partly checked suite is not green.",
            "",
        ]
    if worth_saying(spend):
        lines += [inline(spend_line(spend), _MESSAGE_LIMIT), ""]
    if differ := token_disagreements(report.scenarios):
        lines += [inline(differ, _MESSAGE_LIMIT), ""]
    return lines


def _parts_note(report: RunReport) -> list[str]:
    """Say when the report is one shard, or a merge of shards (and which are missing)."""
    if report.shard is not None:
        shard = report.shard
        return [
            "> [!NOTE]",
            f"> Shard {shard.index}/{shard.total}: {len(report.scenarios):,} of the "
            f"{shard.selected:,} selected scenarios. `clawspec merge` joins the shards.",
            "",
        ]
    merged = report.merged
    if merged is None:
        return []
    if merged.missing:
        return [
            "> [!CAUTION]",
            f"> Incomplete: {inline(merged.missing_message())}. "
            "The run fails until every shard reports.",
            "",
        ]
    return [f"Merged from {pluralize(merged.total, 'shard')}.", ""]


def _views(report: RunReport, limit_name: str) -> _Views:
    """The views of the report to try, largest first: all, not passing; then the first N of
    those not passing, for the largest N that fits; then the first one with few checks, and
    the totals."""
    everything = report.scenarios
    failing = [s for s in everything if s.status in _NOT_PASSING]
    cut = len(everything) - len(failing)
    reason = f"to stay within {limit_name}. All results are in the JSON and JUnit reports."
    larger = [_View(everything)]
    if cut and failing:
        larger.append(
            _View(
                failing,
                f"Only the scenarios that did not pass are listed ({len(failing):,}); "
                f"{pluralize(cut, 'passing scenario')} left out {reason}",
            )
        )

    def first(shown: int) -> _View:
        return _View(
            failing[:shown],
            f"Only the first {shown:,} of the {len(failing):,} scenarios that did not pass are "
            f"listed; {len(everything) - shown:,} left out {reason}",
            change_limit=shown,
        )

    smaller = []
    # One scenario with thousands of failing checks: its first checks still fit.
    for checks in (100, 20, 5) if failing else ():
        smaller.append(
            _View(
                failing[:1],
                f"Only the first scenario that did not pass is listed, with at most {checks} "
                f"of its checks; {len(everything) - 1:,} scenarios left out {reason}",
                change_limit=1,
                check_limit=checks,
            )
        )
    smaller.append(
        _View((), f"Only the totals are shown; every scenario was left out {reason}", False, 10)
    )
    return _Views(larger, first, len(failing) - 1, smaller)


@dataclass(frozen=True)
class _Views:
    larger: list[_View]
    first: Callable[[int], _View]  # the first N not passing
    most: int  # the largest N worth trying (fewer than all of them)
    smaller: list[_View]


def render_summary(
    report: RunReport,
    max_bytes: int = DEFAULT_MAX_BYTES,
    title: str = "ClawSpec results",
    limit_name: str = "GitHub's 1 MiB job summary limit",
    *,
    outcome: RunOutcome | None = None,
) -> str:
    """Render the Markdown summary, at most `max_bytes` UTF-8 bytes after cleaning.

    `outcome` is the run's verdict (reports/outcome.py); without one, the default exit
    policy's.

    The text is cleaned (ANSI, control characters, secrets) before it is measured, so what is
    written is what was measured.
    """
    outcome = outcome or decide(report, Policy())
    views = _views(report, limit_name)

    def rendered(view: _View) -> str:
        return clean(_render(report, outcome, view, title))

    def fits(text: str) -> bool:
        return len(text.encode("utf-8")) <= max_bytes

    for view in views.larger:
        if fits(text := rendered(view)):
            return text
    # The most scenarios that fit, found by halving the range (each try renders the summary):
    # the room is used before anything is cut.
    low, high, best = 1, views.most, None
    while low <= high:
        middle = (low + high) // 2
        if fits(text := rendered(views.first(middle))):
            best, low = text, middle + 1
        else:
            high = middle - 1
    if best is not None:
        return best
    for view in views.smaller:
        if fits(text := rendered(view)):
            return text
    # Even the totals do not fit (a tiny budget): cut hard at a line boundary.
    data = text.encode("utf-8")[:max_bytes]
    return data.decode("utf-8", "ignore").rsplit("\n", 1)[0] + "\n"


def write_summary(
    runner: GitHubRunner,
    report: RunReport,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    outcome: RunOutcome | None = None,
) -> Path | None:
    """Append the summary to `$GITHUB_STEP_SUMMARY` through the runner; return the path.
    GitHub drops a step's whole summary past 1 MiB: what the step already wrote there (an
    earlier command of a `run:` step, a second ClawSpec run) takes from the budget."""
    room = STEP_SUMMARY_LIMIT - STEP_SUMMARY_LIMIT // 20 - runner.summary_bytes()
    text = render_summary(report, max(0, min(max_bytes, room)), outcome=outcome)
    return runner.append_summary(text)

"""JUnit XML: one testsuite per contract file, one testcase per scenario.

The document is the Surefire/Jenkins JUnit shape that GitLab, Jenkins and the GitHub reporters
read, written as text by `_xml` (an element tree built and walked again took seconds for
10,000 scenarios). It is not written through `junit-xml`: that package cannot express what the
consumers need here (per-testcase properties, `flakyFailure`/`rerunFailure`, the run's wall time
on `testsuites`), writes `time="155.39999999999998"` (a float sum) that Jenkins' xUnit plugin
rejects, and its re-parse fails on a U+FFFF or a lone surrogate. Here every text and attribute
is cleaned before it is escaped (ANSI codes and control characters stripped, secrets masked,
any other character XML 1.0 forbids replaced by U+FFFD), so the file is well-formed for any
input.

Identity (`clawspec.identity`): `classname` is the identity's contract path (relative to the
workspace root) without `.yaml`/`.yml`, and `name` is the identity name (`name`, `name[row]`;
with variants `name @ variant`: one testcase per scenario and variant), so two contracts of
one target with a scenario of the same name stay two tests (GitLab keeps one test per
classname + name), and the same suite run from any folder gives the same tests;
the target and the variant are properties. `file` is repository-relative, as annotations and
the Code Quality report give it. GitLab shows the *body* of failure/error/skipped and Jenkins
the `message`, so both carry the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from clawspec.reports._xml import XmlText
from clawspec.reports.atomic import write_atomic
from clawspec.reports.github.annotations import repo_relative
from clawspec.reports.model import AssertionResult, AttemptRun, RunReport, ScenarioResult
from clawspec.reports.spend import spend_line, spend_of, worth_saying
from clawspec.reports.turns import REPLY_CHARS, check_label, failing_turn, shown, turn_label
from clawspec.status import PASSING, Status
from clawspec.text import cleaner, one_line

_MESSAGE_LIMIT = 1000
_OUTCOME = {  # element, its type attribute, and the statuses its body lists
    Status.FAIL: ("failure", "clawspec.fail", (Status.FAIL, Status.ERROR)),
    Status.ERROR: ("error", "clawspec.error", (Status.ERROR, Status.FAIL)),
    Status.SKIP: ("skipped", "skipped", (Status.SKIP,)),
}
_SUITE, _CASE = 1, 2  # indentation levels
_YAML_SUFFIXES = (".yaml", ".yml")


def seconds(ms: int) -> str:
    """A duration in milliseconds as JUnit seconds with three decimals ("155.400"): exact, and
    within the three decimals Surefire's schema (and Jenkins' xUnit plugin) accept."""
    whole, rest = divmod(max(int(ms), 0), 1000)
    return f"{whole}.{rest:03d}"


def _assertion_line(scenario: ScenarioResult, a: AssertionResult) -> str:
    return (
        f"{a.status.upper()} {check_label(a)} {a.type} "
        f"({scenario.contract}:{a.line}): {one_line(a.message, _MESSAGE_LIMIT)}"
    )


def _reason(scenario: ScenarioResult) -> str:
    """One line: the scenario's own message (a conversation's names its turn), else its first
    non-passing check, else the turn that stopped the conversation."""
    if scenario.message:
        return one_line(scenario.message, _MESSAGE_LIMIT)
    for a in scenario.checks():
        if a.status == scenario.status:
            return one_line(f"{check_label(a)} {a.type}: {a.message}", _MESSAGE_LIMIT)
    turn = failing_turn(scenario)
    if turn is not None and turn.message:
        return one_line(f"{turn_label(turn.index)}: {turn.message}", _MESSAGE_LIMIT)
    return scenario.status.upper()


# Checks listed in one testcase's body: a scenario with thousands of failing checks made a
# file past what CI systems read (GitLab: 30 MB); the JSON report keeps every one.
MAX_BODY_CHECKS = 100


def _body(scenario: ScenarioResult, statuses: tuple[Status, ...], reply_chars: int) -> str:
    lines = [_reason(scenario)]
    checks = [a for a in scenario.checks() if a.status in statuses]
    lines += [_assertion_line(scenario, a) for a in checks[:MAX_BODY_CHECKS]]
    if len(checks) > MAX_BODY_CHECKS:
        more = len(checks) - MAX_BODY_CHECKS
        lines.append(f"... and {more:,} more (every check is in the JSON report)")
    lines += _turn_said(scenario, reply_chars)
    return "\n".join(dict.fromkeys(lines))  # drop a repeated first line, keep order


def _turn_said(scenario: ScenarioResult, reply_chars: int) -> list[str]:
    """A failing conversation's failing turn: what was said and replied (GitLab shows the
    body), each on one line and cut."""
    turn = failing_turn(scenario)
    if turn is None:
        return []
    label = turn_label(turn.index)
    said = one_line(shown(turn.say, reply_chars), reply_chars)
    replied = (
        "(no reply)"
        if turn.reply is None
        else one_line(shown(turn.reply, reply_chars), reply_chars)
    )
    return [f"{label} said: {said}", f"{label} replied: {replied}"]


def _stdout(scenario: ScenarioResult, reply_chars: int, in_body: tuple[Status, ...] = ()) -> str:
    """The scenario's checks and what it said, but for the checks the failure's body lists
    (`in_body`: their statuses): GitLab shows the body and then this, one after the other."""
    lines = []
    checks = [a for a in scenario.checks() if a.status not in in_body]  # turns' checks too
    warned = [a for a in checks if a.status == Status.WARN]
    lines += [f"warning: {_assertion_line(scenario, a)}" for a in warned]
    lines += [_assertion_line(scenario, a) for a in checks if a not in warned]
    if scenario.trace is not None and scenario.trace.url:
        lines.append(f"trace: {scenario.trace.url}")
    if scenario.turns and scenario.status not in PASSING:
        # A conversation that did not pass: what was said and replied, turn by turn.
        for turn in scenario.turns:
            label = turn_label(turn.index)
            said = one_line(shown(turn.say, reply_chars), reply_chars)
            lines.append(f"{label} said: {said}")
            if turn.reply is not None:
                replied = one_line(shown(turn.reply, reply_chars), reply_chars)
                lines.append(f"{label} replied: {replied}")
    return "\n".join(lines)


def _properties(xml: XmlText, level: int, pairs: Iterable[tuple[str, object]]) -> list[str]:
    """A properties element (as a list of none or one) with a property per pair."""
    present = [
        xml.element("property", {"name": name, "value": str(value)}, level + 1)
        for name, value in pairs
    ]
    return [xml.element("properties", {}, level, present)] if present else []


def _regression_properties(
    scenario: ScenarioResult, change: str | None
) -> list[tuple[str, str | None]]:
    """Repeats and comparison: pass rate, attempts, flaky, change since the baseline."""
    stats = scenario.attempts
    return [
        ("pass_rate", f"{stats.pass_rate:.4f}" if stats else None),
        ("attempts", f"{stats.passes}/{stats.attempts}" if stats else None),
        ("flaky", "true" if scenario.flaky else ("false" if stats else None)),
        ("change", change),
    ]


def _outcome(xml: XmlText, tag: str, kind: str, message: str, body: str) -> list[str]:
    """failure/error only with a message or body; skipped always."""
    if tag != "skipped" and not (message or body):
        return []
    attrs = {"type": kind, "message": message} if message else {"type": kind}
    return [xml.element(tag, attrs, _CASE + 1, text=body or None)]


def _attempts(xml: XmlText, scenario: ScenarioResult) -> dict[str, list[str]]:
    """Repeated scenarios, as Surefire writes reruns: a passing testcase gets a `flakyFailure`
    (`flakyError`) per failed (errored) attempt; a failing one is its first failing attempt
    (the failure/error element) and gets a `rerunFailure` (`rerunError`) per other one."""
    stats = scenario.attempts
    if stats is None or scenario.status == Status.SKIP:
        return {}
    failing = [
        (number, run)
        for number, run in enumerate(stats.runs, 1)
        if run.status in (Status.FAIL, Status.ERROR)
    ]
    prefix = "flaky" if scenario.status in PASSING else "rerun"
    if prefix == "rerun":
        failing = failing[1:]
    elements: dict[str, list[str]] = {}
    for number, run in failing:
        word = "Failure" if run.status == Status.FAIL else "Error"
        element = _attempt(xml, prefix + word, run, number, len(stats.runs))
        elements.setdefault(prefix + word, []).append(element)
    return elements


def _attempt(xml: XmlText, tag: str, run: AttemptRun, number: int, total: int) -> str:
    message = one_line(
        f"attempt {number} of {total}: {run.message or run.status.upper()}", _MESSAGE_LIMIT
    )
    # Surefire's schema asks for a stackTrace: here, what identifies the attempt
    lines = [message, f"duration: {seconds(run.duration_ms)} s"]
    ids = (("run_id", run.run_id), ("gateway_run_id", run.gateway_run_id))
    lines += [f"{key}: {value}" for key, value in ids if value]
    trace = xml.element("stackTrace", {}, _CASE + 2, text="\n".join(lines))
    return xml.element(
        tag, {"message": message, "type": f"clawspec.{run.status.value}"}, _CASE + 1, [trace]
    )


# The order of a testcase's children: Surefire's (its schema is a sequence), after the
# properties (first, as pytest writes them).
_CHILD_ORDER = (
    "properties",
    "failure",
    "rerunFailure",
    "flakyFailure",
    "skipped",
    "error",
    "rerunError",
    "flakyError",
    "system-out",
)


def _testcase(
    xml: XmlText,
    scenario: ScenarioResult,
    classname: str,
    file: str,
    change: str | None,
    strict: bool = False,
    reply_chars: int = REPLY_CHARS,
    role: str | None = None,
) -> tuple[str, str]:
    """The testcase element and the tag of its outcome ("" when it passed). `strict`: nothing
    the Jenkins xUnit plugin's schema lacks (file, line, properties). `role`: its variant's
    (reference, required or advisory: an advisory one's failures never fail the job)."""
    identity = scenario.identity
    # With variants, `name @ variant`: one test per scenario and variant, distinct for every
    # consumer (GitLab and Jenkins key a test on classname + name).
    attrs = {
        "name": identity.name_label,
        "classname": classname,
        "time": seconds(scenario.duration_ms),
    }
    if file and not strict:
        attrs["file"] = file
    if scenario.line and not strict:
        attrs["line"] = str(scenario.line)
    trace = scenario.trace
    pairs = [
        ("target", scenario.target),
        ("variant", identity.variant),
        ("variant_role", role),
        ("run_id", scenario.run_id),
        ("gateway_run_id", scenario.gateway_run_id),
        ("trace_url", trace.url if trace else None),
        ("trace_id", trace.id if trace else None),
        *_regression_properties(scenario, change),
    ]
    children = _attempts(xml, scenario)
    if not strict:
        children["properties"] = _properties(
            xml, _CASE + 1, [(name, value) for name, value in pairs if value]
        )
    outcome = ""
    in_body: tuple[Status, ...] = ()
    if scenario.status in _OUTCOME:
        tag, kind, statuses = _OUTCOME[scenario.status]
        element = _outcome(
            xml, tag, kind, _reason(scenario), _body(scenario, statuses, reply_chars)
        )
        outcome = tag if element else ""
        children[tag] = element
        in_body = statuses if element else ()
    stdout = _stdout(scenario, reply_chars, in_body)
    if stdout:
        children["system-out"] = [xml.element("system-out", {}, _CASE + 1, text=stdout)]
    ordered = [element for tag in _CHILD_ORDER for element in children.get(tag, [])]
    return xml.element("testcase", attrs, _CASE, ordered), outcome


def _suite(
    xml: XmlText,
    name: str,
    cases: list[tuple[str, str]],
    ms: int,
    extra: dict[str, str],
    head: list[str],
) -> tuple[str, dict[str, str]]:
    """A testsuite and its attributes: a failure/error counts when it has a message or body,
    every skipped element counts; `time` is the suite's summed scenario time."""
    outcomes = [outcome for _, outcome in cases]
    attrs = {
        "name": name,
        "tests": str(len(cases)),
        "failures": str(outcomes.count("failure")),
        "errors": str(outcomes.count("error")),
        "skipped": str(outcomes.count("skipped")),
        "time": seconds(ms),
        **extra,
    }
    children = [*head, *(case for case, _ in cases)]
    return xml.element("testsuite", attrs, _SUITE, children), attrs


def _suites(report: RunReport) -> list[tuple[str, list[ScenarioResult]]]:
    by_contract: dict[str, list[ScenarioResult]] = {}
    for scenario in report.scenarios:
        by_contract.setdefault(scenario.identity.contract, []).append(scenario)
    return list(by_contract.items())


def classnames(paths: Iterable[str]) -> dict[str, str]:
    """Each contract path's testcase classname: the path without `.yaml`/`.yml` (Jenkins splits
    a classname at its last dot), or the whole path where two would meet (`x.yaml` beside
    `x.yml`). Distinct paths always get distinct classnames."""
    chosen = {}
    for path in dict.fromkeys(paths):
        suffix = next((s for s in _YAML_SUFFIXES if path.endswith(s)), "")
        chosen[path] = path[: -len(suffix)] if suffix and path != suffix else path
    while True:
        counts = Counter(chosen.values())
        clashing = [p for p, name in chosen.items() if counts[name] > 1 and name != p]
        if not clashing:
            return chosen
        for path in clashing:
            chosen[path] = path


def render_junit(
    report: RunReport,
    repo_root: str | Path | None = None,
    workspace: Path | None = None,
    strict: bool = False,
    reply_chars: int = REPLY_CHARS,
) -> bytes:
    """Render the report as JUnit XML (UTF-8 bytes with an XML declaration).

    `repo_root`: the repository root (`codequality.repository_root`); `file` attributes are
    relative to it, as annotations give them (None: as the report has them). `workspace`: the
    workspace root the report's contract paths are relative to (None: the current folder).
    `strict` (`junit_strict`): only what the Jenkins xUnit plugin's schema allows.
    `reply_chars` (`limits.reply_chars`): a conversation's messages and replies are cut to it.
    """
    xml = XmlText(cleaner())
    comparison = report.comparison
    changes = {c.key: c.change for c in comparison.scenarios} if comparison else {}
    # a suite's properties: both, even when empty
    pairs: list[tuple[str, object]] = [
        ("run_id", report.run_id),
        ("clawspec_version", report.version),
    ]
    spend = spend_of(report)
    if worth_saying(spend):  # what the agent runs spent, next to the budget
        pairs.append(("spend", spend_line(spend)))
    if report.selection is not None:  # --changed-since: how many ran, and since when
        pairs.append(("selection", report.selection.describe()))
    if report.interrupted:  # the skipped and errored cases are the signal's, not the agent's
        pairs.append(("interrupted", "true"))
    roles = {v.name: v.role for v in report.variants}
    head = _properties(xml, _SUITE + 1, pairs)
    extra = {"timestamp": report.started_at} if report.started_at else {}
    grouped = _suites(report)
    names = classnames(contract for contract, _ in grouped)
    suites: list[tuple[str, dict[str, str]]] = []
    for contract, scenarios in grouped:
        path = repo_relative(contract, repo_root, workspace)
        name = names[contract]
        cases = [
            _testcase(
                xml,
                s,
                name,
                path,
                changes.get(s.identity.key),
                strict,
                reply_chars,
                roles.get(s.identity.variant or ""),
            )
            for s in scenarios
        ]
        ms = sum(s.duration_ms for s in scenarios)
        suites.append(_suite(xml, contract, cases, ms, {**extra, "file": path}, head))
    if report.merged is not None and report.merged.missing:
        suites.append(_missing_shards(xml, report))
    if spend.stopped:
        suites.append(_budget_stop(xml, spend.stopped))
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for _, attrs in suites:
        for key in totals:
            totals[key] += int(attrs[key])
    # the run's wall time: scenarios run concurrently, so their sum says little about the run
    root = {
        "name": "clawspec",
        **{k: str(v) for k, v in totals.items() if not (strict and k == "skipped")},
        "time": seconds(report.duration_ms),
    }
    return xml.document(xml.element("testsuites", root, 0, [suite for suite, _ in suites]))


def _budget_stop(xml: XmlText, reason: str) -> tuple[str, dict[str, str]]:
    """One errored test case for a run a spend limit stopped: the skipped scenarios alone
    would read as a smaller pass in CI test views."""
    message = f"{reason}: the scenarios not run are skipped; the run fails"
    attrs = {"name": "run budget", "classname": "clawspec.budget", "time": seconds(0)}
    error = _outcome(xml, "error", "error", message, message)
    return _suite(
        xml, "clawspec budget", [(xml.element("testcase", attrs, _CASE, error), "error")], 0, {}, []
    )


def _missing_shards(xml: XmlText, report: RunReport) -> tuple[str, dict[str, str]]:
    """One errored test case per missing shard: CI test views show the gap, not a smaller pass."""
    assert report.merged is not None
    message = f"{report.merged.missing_message()}: the merged report is incomplete"
    cases = []
    for index in report.merged.missing:
        attrs = {
            "name": f"shard {index}/{report.merged.total}",
            "classname": "clawspec.merge",
            "time": seconds(0),
        }
        error = _outcome(xml, "error", "error", message, message)
        cases.append((xml.element("testcase", attrs, _CASE, error), "error"))
    return _suite(xml, "clawspec merge", cases, 0, {}, [])


def write_junit(
    report: RunReport,
    path: Path,
    repo_root: str | Path | None = None,
    strict: bool = False,
    workspace: Path | None = None,
    reply_chars: int = REPLY_CHARS,
) -> Path:
    """Write the JUnit file atomically; return its path."""
    rendered = render_junit(report, repo_root, workspace, strict=strict, reply_chars=reply_chars)
    return write_atomic(path, rendered)

"""The runner protocol: escaping as the toolkit does, masks first, outputs file format."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from clawspec import secrets as registry
from clawspec.ci_context import CIContext
from clawspec.reports.github.commands import (
    Annotation,
    GitHubRunner,
    escape_data,
    escape_property,
    format_command,
    format_output,
    mask_values,
)
from clawspec.reports.github.outputs import OUTPUT_NAMES, write_outputs
from tests.reports.factory import mixed_report

# The runner's inverse of the toolkit's escaping (actions/runner ActionCommand.cs).
_UNESCAPE_DATA = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_UNESCAPE_PROPERTY = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))


def unescape(text: str, table: tuple[tuple[str, str], ...]) -> str:
    for escaped, plain in table:
        text = text.replace(escaped, plain)
    return text


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Parse `::name k=v,k=v::message` the way the runner does."""
    match = re.fullmatch(r"::([a-z-]+)(?: ([^:]*))?::(.*)", line)
    assert match, line
    props = {}
    if match.group(2):
        for pair in match.group(2).split(","):
            key, _, value = pair.partition("=")
            props[key] = unescape(value, _UNESCAPE_PROPERTY)
    return match.group(1), props, unescape(match.group(3), _UNESCAPE_DATA)


@pytest.mark.parametrize(
    ("message", "file", "title"),
    [
        ("100% done", "a.yaml", "t"),
        ("line one\nline two\r\nthree", "dir/x, y.yaml", "scenario: a, b"),
        ("%0A literal %25 and %3A", "100%:weird,name.yaml", "50%, a:b\nc"),
        ("::error::inject", "f::g", "::t::"),
    ],
)
def test_commands_round_trip_through_the_runners_unescaping(
    message: str, file: str, title: str
) -> None:
    line = format_command("error", message, {"file": file, "line": 7, "title": title})
    assert "\n" not in line
    assert "\r" not in line
    name, props, parsed = parse_command(line)
    assert (name, parsed) == ("error", message)
    assert props == {"file": file, "line": "7", "title": title}


def test_escape_rules_match_the_toolkit() -> None:
    assert escape_data("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad:e,f"
    assert escape_property("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad%3Ae%2Cf"


def test_add_mask_lines_come_before_any_other_output() -> None:
    stream = io.StringIO()
    with registry.scope() as active:  # the command's registry: its values are announced
        active.add("tok-12345", "multi\nline-secret")
        runner = GitHubRunner(CIContext(), stream)
        runner.annotate(Annotation("error", "leaked tok-12345 here", "title", "a.yaml", 3))
        runner.mask_secrets()  # idempotent
    lines = stream.getvalue().splitlines()
    assert lines[:4] == [
        "::add-mask::tok-12345",
        "::add-mask::multi%0Aline-secret",
        "::add-mask::multi",
        "::add-mask::line-secret",
    ]
    # then the registry's JSON and URL spellings of the multi-line value, then the rest
    assert lines[4:-1] == [
        "::add-mask::multi\\nline-secret",
        "::add-mask::multi%250Aline-secret",
        "::add-mask::multi%250aline-secret",  # percent-encoded with lower-case hex
    ]
    assert lines[-1] == "::error file=a.yaml,line=3,title=title::leaked *** here"


def test_mask_values_skip_empty_and_blank_secrets() -> None:
    assert mask_values(["", "   ", "abc"]) == ["abc"]


def test_summary_is_appended_and_cleaned(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    with registry.scope() as active:
        active.add("tok-12345")
        runner = GitHubRunner(
            CIContext.from_environ({"GITHUB_STEP_SUMMARY": str(summary)}), io.StringIO()
        )
        assert runner.append_summary("# x \x1b[31mred\x1b[0m tok-12345\n") == summary
    assert summary.read_text(encoding="utf-8") == "earlier step\n# x red ***\n"


def test_outputs_single_and_multi_line_values(tmp_path: Path) -> None:
    out = tmp_path / "output"
    runner = GitHubRunner(CIContext.from_environ({"GITHUB_OUTPUT": str(out)}), io.StringIO())
    delimiters = iter(["EOF_A", "EOF_B"])
    runner.set_outputs({"one": "1", "text": "a\nb EOF_A\nc"}, lambda: next(delimiters))
    # The first delimiter occurs in the value, so a fresh one is drawn.
    assert out.read_text(encoding="utf-8") == "one=1\ntext<<EOF_B\na\nb EOF_A\nc\nEOF_B\n"


def test_default_delimiter_is_random() -> None:
    first = format_output("x", "a\nb").splitlines()[0]
    second = format_output("x", "a\nb").splitlines()[0]
    assert first.startswith("x<<ghadelimiter_")
    assert first != second


def test_without_the_files_nothing_is_written() -> None:
    runner = GitHubRunner(CIContext(), io.StringIO())
    assert runner.append_summary("x") is None
    assert runner.set_outputs({"a": "b"}) is None


def parse_outputs(text: str) -> dict[str, str]:
    """Read a GITHUB_OUTPUT file the way the runner does."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            values[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            values[name] = value
    return values


def test_write_outputs_gives_every_output_with_workspace_relative_paths(tmp_path: Path) -> None:
    out = tmp_path / "output"
    environ = {"GITHUB_OUTPUT": str(out), "GITHUB_WORKSPACE": str(tmp_path)}
    runner = GitHubRunner(CIContext.from_environ(environ), io.StringIO())
    write_outputs(runner, mixed_report(), tmp_path / "r" / "report.json", None)
    values = parse_outputs(out.read_text(encoding="utf-8"))
    assert tuple(values) == OUTPUT_NAMES
    assert values == {
        "total": "6",
        "passed": "2",
        "failed": "1",
        "errored": "1",
        "skipped": "1",
        "warned": "1",
        "report_path": "r/report.json",
        "junit_path": "",
        "summary": "6 scenarios: 2 passed, 1 failed, 1 errored, 1 warned, 1 skipped; failed",
        "regressed": "",
        "regressions": "",
        "fixed": "",
        "flaky": "0",
        # No budget: the judge calls' usage is spend, summed as the budget counts it; the
        # agents recorded none, so the cost is unknown (never a $0).
        "spent": "Spent: cost unknown (6 runs unpriced), at least 1,500 tokens (6 runs without "
        "usage); 6 of 6 agent runs",
        "cost_usd": "unknown",
        "budget_stopped": "",
    }

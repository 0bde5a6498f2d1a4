"""The job summary: content, judge usage, and the 1 MiB budget met by reducing the input."""

from __future__ import annotations

import io
import time
from pathlib import Path

from clawspec import secrets as registry
from clawspec.ci_context import CIContext
from clawspec.reports.github.commands import GitHubRunner
from clawspec.reports.github.summary import render_summary, write_summary
from clawspec.reports.model import CheckRef, TraceRef
from tests.reports.factory import CONTRACT, assertion, mixed_report, report, scenario

MIB = 1024 * 1024


def test_summary_shows_totals_table_failures_and_trace_links() -> None:
    text = render_summary(mixed_report())
    assert "**6 scenarios** in 9 s: ✅ passed 2, ❌ failed 1, 💥 errored 1" in text
    assert "| 6 | 2 | 1 | 1 | 1 | 1 | 9 s |" in text
    assert (
        f"| ✅ PASS | smoke | `{CONTRACT}:5` | 1.5 s | "
        "[phoenix](http://127.0.0.1:6006/trace/t-1) |" in text
    )
    assert (
        f"  - **FAIL** `then[1]` tool_was_called: tool 'send_email' was not called "
        f"(`{CONTRACT}:22`)" in text
    )
    assert "> [!NOTE]" not in text


def test_summary_shows_judge_usage_totals() -> None:
    text = render_summary(mixed_report())
    assert "### LLM judge usage" in text
    assert "| claude-sonnet-4-5 | 3 | 1,200 | 300 | 0.0081 |" in text
    assert "LLM judge usage" not in render_summary(report(scenario("a", "pass")))


def test_summary_escapes_markdown_and_masks_secrets() -> None:
    data = report(scenario("a|b", "fail", assertion("fail", "x | <b>y</b> `z` tok-9999\nnext")))
    with registry.scope() as active:
        active.add("tok-9999")
        text = render_summary(data)
    assert "| a\\|b |" in text  # a pipe is escaped in a table cell only
    assert "- ❌ **a|b** (" in text
    assert "x | &lt;b&gt;y&lt;/b&gt; \\`z\\` \\*\\*\\* next" in text  # *** shows as ***
    assert "tok-9999" not in text


def test_secrets_are_masked_before_escaping_could_split_them() -> None:
    hex_token, odd_token = "a1b2c3d4e5f6a7b8c9d0", "tok_*[x]~9"
    data = report(
        scenario(
            "s",
            "fail",
            assertion("fail", f"sent {hex_token} and {odd_token}"),
            trace=TraceRef(backend="phoenix", id=hex_token, url=f"http://127.0.0.1/t/{hex_token}"),
        )
    )
    with registry.scope() as active:
        active.add(hex_token, odd_token)
        text = render_summary(data)
    assert "sent \\*\\*\\* and \\*\\*\\*" in text
    assert "[phoenix](http://127.0.0.1/t/***)" in text
    for part in ("a1b2c3", "tok", "9999"):
        assert part not in text


def test_five_thousand_scenarios_fit_under_one_mib_with_totals_and_first_failures() -> None:
    long = "the agent wrote the wrong thing " * 12
    scenarios = [
        scenario(
            f"scenario-{i:04d}",
            "fail" if i % 2 else "pass",
            *[
                assertion("fail" if i % 2 else "pass", f"{long} #{i}.{k}", index=k)
                for k in range(3)
            ],
            line=i,
        )
        for i in range(5000)
    ]
    data = report(*scenarios)
    started = time.thread_time()  # CPU time: other processes' load does not stretch it
    text = render_summary(data)
    assert time.thread_time() - started < 10
    assert len(text.encode()) < MIB
    assert "| 5,000 | 2,500 | 2,500 | 0 | 0 | 0 |" in text
    assert "**scenario-0001**" in text  # the first failure
    assert "scenario-0000" not in text  # passing ones were cut first
    assert "> [!NOTE]" in text
    assert "left out to stay within GitHub's 1 MiB job summary limit" in text


def test_failures_only_view_comes_before_cutting_failures() -> None:
    scenarios = [scenario(f"p{i}", "pass", assertion("pass")) for i in range(200)]
    scenarios.append(scenario("the-failure", "fail", assertion("fail", "broken")))
    text = render_summary(report(*scenarios), max_bytes=5_000)
    assert (
        "Only the scenarios that did not pass are listed (1); 200 passing scenarios left out "
        "to stay within GitHub's 1 MiB job summary limit." in text
    )
    assert "**the-failure**" in text


def test_the_room_is_used_before_failures_are_cut() -> None:
    """As many failing scenarios as fit are listed: one more would not fit (halving the list
    until it fitted wasted up to half of the room)."""
    import re

    scenarios = [scenario(f"f{i:03}", "fail", assertion("fail", "x" * 150)) for i in range(300)]
    whole = len(render_summary(report(*scenarios)).encode())
    budget = whole * 7 // 10
    text = render_summary(report(*scenarios), max_bytes=budget)
    assert len(text.encode()) <= budget
    found = re.search(r"Only the first ([\d,]+) of the 300 scenarios that did not pass", text)
    assert found is not None
    shown = int(found.group(1))
    assert shown > 150 and f"**f{shown - 1:03}**" in text and f"**f{shown:03}**" not in text
    more = render_summary(report(*scenarios), max_bytes=budget + 5_000)
    assert f"**f{shown:03}**" in more  # one more fits in a little more room


def test_a_tiny_budget_keeps_only_the_totals() -> None:
    scenarios = [scenario(f"f{i}", "fail", assertion("fail", "x" * 200)) for i in range(50)]
    text = render_summary(report(*scenarios), max_bytes=900)
    assert len(text.encode()) <= 900
    assert "Only the totals are shown" in text
    assert "| 50 | 0 | 50 |" in text


def test_interrupted_run_says_so() -> None:
    assert "The run was interrupted" in render_summary(
        report(scenario("a", "pass"), interrupted=True)
    )


def test_write_summary_appends_to_the_step_summary(tmp_path: Path) -> None:
    path = tmp_path / "step_summary.md"
    runner = GitHubRunner(CIContext.from_environ({"GITHUB_STEP_SUMMARY": str(path)}), io.StringIO())
    write_summary(runner, mixed_report())
    write_summary(runner, mixed_report())
    assert path.read_text(encoding="utf-8").count("## ClawSpec results") == 2


def test_what_the_step_already_wrote_to_its_summary_counts_against_the_1_mib(
    tmp_path: Path,
) -> None:
    """GitHub drops a step's whole summary past 1 MiB: 700 kB written earlier in the step
    (a `run:` step's other commands) leaves ClawSpec the rest, and the file stays under it."""
    path = tmp_path / "step_summary.md"
    path.write_text(("x" * 99 + "\n") * 7_000, encoding="utf-8")  # 700 kB
    runner = GitHubRunner(CIContext.from_environ({"GITHUB_STEP_SUMMARY": str(path)}), io.StringIO())
    big = report(
        *[scenario(f"s{i:03d} " + "y" * 300, "fail", assertion("fail")) for i in range(900)]
    )
    assert len(render_summary(big).encode()) > 400_000  # on its own it would not fit
    write_summary(runner, big)
    assert path.stat().st_size <= 1024 * 1024
    assert "## ClawSpec results" in path.read_text(encoding="utf-8")[700_000:]


def test_ids_are_code_a_failure_is_said_once_and_a_failure_shows_its_trace() -> None:
    """A run id and a URL in a message, and a trace id, are code spans (no hidden characters to
    copy); the message the runner made from a check is said on the check's line only."""
    trace = TraceRef(backend="local", id="bc51bde4d0a1f2e3c4b5a69788776655")
    text = render_summary(
        report(
            scenario(
                "writes",
                "fail",
                assertion("fail", "no file 'out.md'", index=1, line=12),
                message="then[1] (artifact_exists): no file 'out.md'",
                restates=CheckRef(phase="then", index=1),
                trace=trace,
            ),
            scenario(
                "down",
                "error",
                message="run bc51bde4d0a1 completed with status 'error' "
                "(POST http://127.0.0.1:18789/hooks/agent)",
                line=20,
            ),
            scenario("refused", "error", message="gateway refused", gateway_run_id=None, line=30),
        )
    )
    assert "&#8203;" not in text
    # A local trace has no UI to link to: its id, and where its spans are.
    assert (
        f"| ❌ FAIL | writes | `{CONTRACT}:5` | 1.5 s | `{trace.id}` (local: HTML report) |" in text
    )
    # An errored run without a trace: a dash and why (the agent ran, or never did).
    assert f"| 💥 ERROR | down | `{CONTRACT}:20` | 1.5 s | — no trace found |" in text
    assert f"| 💥 ERROR | refused | `{CONTRACT}:30` | 1.5 s | — no agent run |" in text
    assert text.count("no file 'out.md'") == 1
    assert f"- ❌ **writes** (`{CONTRACT}:5`)\n" in text
    assert f"  - **FAIL** `then[1]` artifact_exists: no file 'out.md' (`{CONTRACT}:12`)\n" in text
    assert (
        f"- 💥 **down** (`{CONTRACT}:20`): run `bc51bde4d0a1` completed with status 'error' "
        "(POST `http://127.0.0.1:18789/hooks/agent`)\n" in text
    )


def test_a_failing_conversation_shows_its_failing_turn_with_the_reply_inert() -> None:
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    data = conversation_report()
    with secret_registered():
        text = render_summary(data)
    assert_inert(text)
    details = text.split("### Not passing", 1)[1]
    where = "agents/concierge/tests/conversation.yaml"
    # The check names its turn; the restated message is said once, on the check's line.
    assert (
        f"  - **FAIL** `turn 2, then[0]` reply_contains: the reply does not contain 'Zed' "
        f"(`{where}:14`)" in details
    )
    assert details.count("does not contain") == 1
    turn = next(line for line in details.splitlines() if line.startswith("  - 💬 **turn 2**"))
    assert turn.startswith(
        f"  - 💬 **turn 2** (`{where}:12`): said What is my name? \\*\\*bold\\*\\* "
        "&lt;b&gt;tag&lt;/b&gt; / replied I don't know \\*\\*x\\*\\* "
        "&lt;script&gt;alert(1)&lt;/script&gt;"
    )
    # Nothing in the reply is markup, a mention or a reference; it stays on its line.
    assert "<script>" not in text and "**x**" not in text
    assert "@&#8203;octocat" in turn and "#&#8203;12" in turn and "token \\*\\*\\*" in turn
    assert "`tick`" not in turn
    assert "replied *no reply*" in details  # the conversation stopped by a turn
    assert "b THE END" not in text  # turn 3 passed: its long reply is not shown


def test_a_conversation_reply_in_the_summary_is_cut_short() -> None:
    from clawspec.reports.model import RunReport
    from tests.reports.conversation_report import LONG_REPLY, conversation_report

    data = conversation_report()
    talk = data.scenarios[0]
    turns = list(talk.turns or [])
    turns[1] = turns[1].model_copy(update={"reply": LONG_REPLY})
    long = data.model_copy(update={"scenarios": [talk.model_copy(update={"turns": turns})]})
    text = render_summary(RunReport.model_validate(long.model_dump()))
    turn = next(line for line in text.splitlines() if "💬 **turn 2**" in line)
    assert "replied aaaa" in turn and turn.endswith("…") and len(turn) < 700


def test_one_scenario_with_thousands_of_failing_checks_is_still_named_in_a_small_budget() -> None:
    """A PR comment (65,536 characters) of one scenario with 3,000 failing checks kept only
    the totals: the scenario and its first checks fit, with how many were left out."""
    checks = [assertion("fail", f"check {i}: " + "m" * 400, index=i) for i in range(3000)]
    data = report(scenario("huge", "fail", *checks), scenario("fine", "pass"))
    text = render_summary(data, max_bytes=65_536)
    assert len(text.encode()) <= 65_536
    assert "**huge**" in text and "check 0: " in text
    cut = "Only the first scenario that did not pass is listed, with at most 100 of its checks"
    assert cut in text
    assert "… and 2,900 more not passing checks" in text


def test_without_a_trace_backend_the_trace_cell_says_so_not_that_none_was_found() -> None:
    from clawspec.reports.model import RunSource

    failing = report(scenario("broken", "fail", assertion("fail", "nope")))
    none = failing.model_copy(update={"source": RunSource(trace_backend="none")})
    assert "— no trace backend configured" in render_summary(none)
    assert "no trace found" not in render_summary(none)
    phoenix = failing.model_copy(update={"source": RunSource(trace_backend="phoenix")})
    assert "— no trace found" in render_summary(phoenix)

"""The HTML report at scale: 5,000 scenarios with evidence, rendered and opened.

Run: .venv/bin/python benchmarks/bench_html.py [scenarios]
Prints the render time, the file size and, in headless Chromium when installed, the time until
the page is interactive (its script has rendered every row). Targets: < 2 s, < 25 MB, < 3 s.
Asserts nothing.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clawspec.assertions.base import Status
from clawspec.reports.html import render_html
from clawspec.reports.model import RunReport, Totals
from tests.reports.factory import assertion, scenario
from tests.reports.rich_report import evidence


def build(count: int) -> RunReport:
    """Scenarios like the bundled examples': 3 assertions, 3 tool calls, 6 spans, tokens."""
    shared = evidence()
    statuses = ["pass"] * 8 + ["fail", "error"]
    scenarios = [
        scenario(
            f"scenario-{i:05d}",
            statuses[i % 10],
            assertion("pass", "file present", type="file_present", phase="given"),
            assertion("pass", "tool 'write' was called", type="tool_was_called", index=0),
            assertion(
                statuses[i % 10] if statuses[i % 10] != "error" else "fail",
                "total tokens 2,840 ≤ 12,000 (2 model calls)",
                type="token_budget",
                index=1,
            ),
            contract=f"skills/skill-{i // 20:04d}/tests/scenarios.yaml",
            tags=[f"team-{i % 7}", "nightly"] if i % 2 else ["smoke"],
            evidence=shared,
        )
        for i in range(count)
    ]
    return RunReport(
        version="0.1.0", run_id="bench", started_at="2026-11-22T03:00:00+00:00",
        duration_ms=3_600_000, totals=Totals.of(scenarios), scenarios=scenarios,
    )  # fmt: skip


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    report = build(count)
    assert report.totals.failed and Status.PASS
    render_html(report)  # warm the asset cache, as a run's first output does
    timings = []
    for _ in range(3):  # best of three: the machine may be busy
        start = time.perf_counter()
        page = render_html(report)
        timings.append(time.perf_counter() - start)
    elapsed = min(timings)
    tracemalloc.start()  # a separate pass: tracing slows Python down several times
    render_html(report)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    size = len(page.encode("utf-8"))
    print(f"render {count} scenarios: {elapsed:.2f} s (target < 2 s), "
          f"{elapsed / count * 1e6:.0f} µs/scenario")  # fmt: skip
    print(f"file size: {size / 1e6:.1f} MB (target < 25 MB); peak Python memory while "
          f"rendering {peak / 1e6:.0f} MB")  # fmt: skip
    try:
        from tests.support.browser import chromium, chromium_paths, open_report
    except ImportError:
        chromium_paths = None  # type: ignore[assignment]
    if chromium_paths is None or chromium_paths() is None:
        print("Chromium part skipped: chromium + chromium-driver (and selenium) not installed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        path.write_text(page, encoding="utf-8")
        with chromium(Path(tmp) / "profile") as driver:
            wall = open_report(driver, path, timeout_s=60)
            ready = driver.execute_script("return document.documentElement.dataset.readyMs")
            rows = driver.execute_script(
                "return document.querySelectorAll('#scenario-list > li').length"
            )
            start = time.perf_counter()
            driver.find_element("css selector", "[data-filter-status='pass']").click()
            shown = driver.find_element("id", "shown").text
            filter_s = time.perf_counter() - start
    print(f"Chromium: interactive after {int(ready) / 1000:.2f} s by the page's clock, "
          f"{wall:.2f} s from navigation (target < 3 s); {rows} rows")  # fmt: skip
    print(f"Chromium: one status filter click {filter_s * 1000:.0f} ms ({shown})")


if __name__ == "__main__":
    main()

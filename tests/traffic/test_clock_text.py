"""Whatever the clock puts into OpenClaw's prompts never makes a replay differ.

OpenClaw's own formatters (the pinned release's, run in its Node) format many instants, in many
time zones, both hour cycles: every format must normalise to one text, whatever the day, hour or
zone. A recording made on a Wednesday in UTC then replays on a Sunday night in Kolkata.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from clawspec.gateway.install import installed_runtime, script_dest, script_version
from clawspec.traffic.normalize import PLACEHOLDER, Normalizer

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("openclaw_clock_text.mjs")
IN_CI = bool(os.environ.get("CI"))  # read at import: an autouse fixture clears CI per test
ZONES = (
    "UTC",
    "Etc/UTC",
    "Europe/Berlin",
    "America/New_York",
    "America/Argentina/Buenos_Aires",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
)


def _openclaw() -> tuple[str, str]:
    """(node, openclaw's dist folder) of the pinned install, installed first if need be.

    The installer says where it put them (`installed_runtime`): its launcher is a shell script
    whose quoting is not a format to parse.
    """
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "install-openclaw.sh")],
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    version = script_version()
    runtime = installed_runtime(script_dest(version), version) if proc.returncode == 0 else None
    if runtime is None:
        reason = "OpenClaw is not installed: run scripts/install-openclaw.sh first"
        if IN_CI:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return str(runtime.node), str(runtime.entry.parent / "dist")


def _instants() -> list[datetime]:
    """Every weekday, both halves of the day, around midnight and DST changes, years apart."""
    start = datetime(2026, 11, 25, 13, 58, 5, tzinfo=UTC)  # when the examples were recorded
    steps = [timedelta(days=d, hours=h, minutes=m) for d, h, m in ((1, 0, 0), (0, 11, 7))]
    out = [start]
    for index in range(30):
        out.append(out[-1] + steps[index % 2] + timedelta(minutes=index * 13))
    out += [
        datetime(2027, 3, 14, 23, 59, 30, tzinfo=UTC),
        datetime(2027, 3, 28, 1, 0, tzinfo=UTC),  # Berlin's clocks go forward
        datetime(2030, 1, 1, 0, 0, 1, tzinfo=UTC),
        datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC),
    ]
    return out


def test_openclaw_clock_text_normalises_to_one_text_on_any_day_hour_and_zone() -> None:
    node, dist = _openclaw()
    cases = [
        {"ms": int(when.timestamp() * 1000), "tz": ZONES[index % len(ZONES)]}
        for index, when in enumerate(_instants())
    ]
    proc = subprocess.run(
        [node, str(PROBE), dist],
        input=json.dumps(cases),
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    probed = json.loads(proc.stdout)
    assert probed["missing"] == []  # every formatter of the pinned release was found
    normalizer = Normalizer.build()
    columns = list(zip(*probed["texts"], strict=True))
    assert len(columns) == 13
    for column in columns:
        raw = set(column)
        assert len(raw) > 1, column  # the clock really moved: the raw texts differ
        normalised = {normalizer.text(text) for text in column}
        assert len(normalised) == 1, sorted(normalised)
        assert PLACEHOLDER in normalised.pop()
    # and the weekday really varied across the cases, so the weekday is what was masked
    assert {text.split(",")[0] for text in columns[0]} >= {"Monday", "Wednesday", "Sunday"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[Wed 2026-11-25 13:58 UTC] [Subagent Context] go", "[<volatile>] [Subagent Context] go"),
        ("Received: Sat 2026-11-28T00:01:02Z", "Received: <volatile>"),
        ("Time zone: America/Argentina/Buenos_Aires\n", "Time zone: <volatile>\n"),
        ("updated 3h ago, just now", "updated <volatile>, <volatile>"),
        ("[Web al +5m Sun 2027-03-14 23:59:30 GMT+5:30] hi", "[Web al <volatile> <volatile>] hi"),
    ],
)
def test_clock_text_in_any_format_is_volatile(text: str, expected: str) -> None:
    assert Normalizer.build().text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "/send-newsletter Sunday Service [script:newsletter-draft]",
        "Write the Monday plan for 3 people",
        "May the draft be short; see section 2.5",
    ],
)
def test_words_that_only_look_like_dates_stay(text: str) -> None:
    assert Normalizer.build().text(text) == text


def test_clock_text_applies_with_a_users_own_volatile_patterns() -> None:
    """A user who replaces `volatile_patterns` keeps the clock handling: it is not a setting."""
    normalizer = Normalizer.build(patterns=[r"ticket-\d+"])
    assert normalizer.text("[Fri 2026-11-27 09:40 UTC] ticket-12") == "[<volatile>] <volatile>"

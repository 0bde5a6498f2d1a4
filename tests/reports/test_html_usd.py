"""The HTML report says an amount of dollars as every other output does: its `usd` (in the
page's script) and `reports.spend.usd` agree, run side by side on the same amounts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from clawspec.reports.spend import usd

SCRIPT = Path(__file__).resolve().parents[2] / "clawspec" / "reports" / "html" / "report.js"
AMOUNTS = [0.01, 0.0100, 5.0, 5.03, 0.0712, 0.000123, 1234.5, 0.1 + 0.2, 0.0]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the page's script")
def test_the_pages_dollars_match_the_other_reports() -> None:
    found = re.search(r"\n  function usd\(n\) \{\n.*?\n  \}\n", SCRIPT.read_text(), re.S)
    assert found is not None, "report.js has no usd() function"
    program = f"{found.group(0)}\nconsole.log(JSON.stringify({json.dumps(AMOUNTS)}.map(usd)));"
    out = subprocess.run(
        ["node", "-e", program], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert json.loads(out) == [usd(amount) for amount in AMOUNTS]
    assert usd(0.01) == "$0.01"  # a budget limit of one cent, not '$0.0100'

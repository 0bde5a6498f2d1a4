"""The spelling of option values that the settings check on load and other packages read
again: durations (the budget), skip budgets (the exit decision), shards (the split).

They live here, below those packages, because `Settings` refuses a malformed value when the
configuration is loaded, long before the package that uses the value runs.
"""

from __future__ import annotations

import re
from typing import Any


def parse_duration(value: Any) -> float:
    """Seconds from 90, "90", "90s", "30m", "1h30m" or "1.5h"; ValueError otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms]?)", text)
    if not text or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        raise ValueError(f"expected a duration such as 90s, 30m or 1h30m, found '{value}'")
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}
    return sum(float(n) * scale[u] for n, u in parts)


def parse_skip_budget(value: str) -> tuple[str, float]:
    """Parse `--max-skipped`: an integer count ('3') or a ratio ('0.2', '20%')."""
    text = str(value).strip()
    try:
        if text.endswith("%"):
            ratio = float(text[:-1]) / 100
        elif re.fullmatch(r"\d+", text):
            return "count", float(text)
        else:
            ratio = float(text)
    except ValueError:
        raise ValueError(f"expected a count (3) or a ratio (0.2 or 20%), found '{value}'") from None
    if not 0 <= ratio <= 1:
        raise ValueError(f"a ratio must be between 0 and 1, found '{value}'")
    return "ratio", ratio


def parse_shard(value: str) -> tuple[int, int]:
    """Parse `--shard i/n` (1-based, as CI systems count) into (index, total)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if not match:
        raise ValueError(f"expected 'i/n' such as '2/4', or 'auto', found '{value}'")
    index, total = int(match.group(1)), int(match.group(2))
    if total < 1 or not 1 <= index <= total:
        raise ValueError(f"index must be between 1 and {max(total, 1)}, found '{value}'")
    return index, total

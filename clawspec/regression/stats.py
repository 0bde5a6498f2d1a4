"""The statistics behind repeats and comparisons, exact and dependency-free.

Pass rates carry a Wilson score interval (95 %): unlike the plain "p ± 1.96·SE" interval it stays
inside [0, 1] and is still meaningful at 0/n and n/n, which is where agent scenarios live. A drop
in pass rate is judged with Fisher's exact test, one-sided: the exact hypergeometric probability
of seeing this few passes now (or fewer) if both runs shared one pass rate. It is exact for the
small counts repeats produce (3, 5, 10 attempts), where a chi-square approximation is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The two-sided 95 % quantile of the standard normal distribution.
Z_95 = 1.959963984540054


def wilson_interval(passes: int, attempts: int, z: float = Z_95) -> tuple[float, float]:
    """Return the Wilson score interval (low, high) of `passes` out of `attempts`.

    With no attempts nothing is known: (0.0, 1.0).
    """
    if attempts <= 0:
        return 0.0, 1.0
    p = passes / attempts
    z2 = z * z
    centre = (p + z2 / (2 * attempts)) / (1 + z2 / attempts)
    spread = z * math.sqrt(p * (1 - p) / attempts + z2 / (4 * attempts * attempts))
    spread /= 1 + z2 / attempts
    return max(0.0, centre - spread), min(1.0, centre + spread)


def fisher_drop_p_value(
    baseline_passes: int, baseline_attempts: int, passes: int, attempts: int
) -> float:
    """Return the one-sided p-value of Fisher's exact test for "the pass rate dropped".

    The 2x2 table is (passes, failures) by (baseline, now). With the margins fixed, the number of
    passes now follows a hypergeometric distribution; the p-value is P(X ≤ passes now), summed
    exactly with `math.comb` (integers, so no overflow or rounding until the final division).
    """
    total = baseline_attempts + attempts
    total_passes = baseline_passes + passes
    if attempts == 0 or baseline_attempts == 0:
        return 1.0
    total_fails = total - total_passes
    lowest = max(0, attempts - total_fails)
    numerator = sum(
        math.comb(total_passes, k) * math.comb(total_fails, attempts - k)
        for k in range(lowest, passes + 1)
    )
    return min(1.0, numerator / math.comb(total, attempts))


def median(values: Sequence[float]) -> float | None:
    """Return the median, or None for no values."""
    return percentile(values, 50)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Return the q-th percentile with linear interpolation between closest ranks (as numpy)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

"""Wilson intervals, Fisher's exact test and percentiles against independently known values."""

from __future__ import annotations

import pytest

from clawspec.regression.stats import fisher_drop_p_value, percentile, wilson_interval


@pytest.mark.parametrize(
    ("passes", "attempts", "low", "high"),
    [
        (2, 3, 0.2077, 0.9385),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
        (5, 10, 0.2366, 0.7634),
        (0, 0, 0.0, 1.0),
    ],
)
def test_wilson_interval_matches_published_values(
    passes: int, attempts: int, low: float, high: float
) -> None:
    got = wilson_interval(passes, attempts)
    assert got == pytest.approx((low, high), abs=5e-5)


# The hypergeometric tail P(X <= passes now) of the 2x2 table baseline/now by pass/fail, worked
# by hand: 10/10 -> 9/10 is C(19,9)·C(1,1)/C(20,10) = 0.5; 10/10 -> 3/10 is C(13,3)/C(20,10).
@pytest.mark.parametrize(
    ("baseline", "now", "p_value"),
    [
        ((10, 10), (9, 10), 0.5),
        ((10, 10), (3, 10), 0.0015480),
        ((10, 10), (7, 10), 0.1052632),
        ((10, 10), (6, 10), 0.0433437),
        ((3, 3), (0, 3), 0.05),
        ((1, 1), (0, 1), 0.5),
        ((5, 10), (5, 10), 0.6718591),
        ((3, 10), (10, 10), 1.0),
        ((4, 5), (0, 0), 1.0),
    ],
)
def test_fisher_one_sided_p_value(
    baseline: tuple[int, int], now: tuple[int, int], p_value: float
) -> None:
    assert fisher_drop_p_value(*baseline, *now) == pytest.approx(p_value, abs=1e-6)


def test_fisher_stays_exact_for_large_counts() -> None:
    # 1000/1000 -> 990/1000: binomial coefficients with hundreds of digits, no overflow.
    assert fisher_drop_p_value(1000, 1000, 990, 1000) == pytest.approx(0.000954733, rel=1e-5)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([], 50, None), ([7], 90, 7), ([1, 2, 3, 4], 50, 2.5), ([10, 20, 30], 90, 28.0)],
)
def test_percentile_interpolates_like_numpy(values: list[float], q: float, expected) -> None:
    assert percentile(values, q) == expected

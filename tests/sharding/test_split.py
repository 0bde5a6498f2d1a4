"""The split itself: disjoint, complete, deterministic, balanced (LPT), and `--shard auto`."""

from __future__ import annotations

import random

import pytest

from clawspec.ci_context import CIContext
from clawspec.config.values import parse_shard
from clawspec.errors import UsageError
from clawspec.identity import Key
from clawspec.sharding.split import (
    Shard,
    assign,
    fingerprint,
    resolve_shard,
    split_selection,
    weights,
)


def _ids(n: int) -> list[Key]:
    return [(f"skills/s{i % 7}/tests/scenarios.yaml::case-{i:03d}", None) for i in range(n)]


def _skewed(ids: list[Key], seed: int = 9) -> dict[Key, int]:
    """Durations like real suites: most short, a long tail (Pareto), a few very slow."""
    rng = random.Random(seed)
    durations = {i: int(2_000 * rng.paretovariate(1.3)) for i in ids}
    for slow in rng.sample(ids, 3):
        durations[slow] = 180_000
    return durations


@pytest.mark.parametrize("seed", [1, 9, 42])
def test_200_skewed_scenarios_split_into_4_shards_within_10_percent_or_one_scenario(
    seed: int,
) -> None:
    ids = _ids(200)
    durations = _skewed(ids, seed)
    parts = [split_selection(ids, Shard(i, 4), durations) for i in range(1, 5)]
    sums = [sum(durations[ids[p]] for p in part.positions) for part in parts]
    spread = max(sums) - min(sums)
    assert spread <= 0.10 * max(sums), sums
    assert spread <= max(durations.values()), sums
    assert all(part.info.balanced_by == "duration" for part in parts)
    # A naive split by count (every 4th scenario) is far worse on the same durations: the
    # test data is skewed enough for the balancing to matter.
    naive = [sum(durations[ids[p]] for p in range(i, 200, 4)) for i in range(4)]
    assert max(naive) - min(naive) > spread


def test_parts_are_disjoint_complete_in_contract_order_and_deterministic() -> None:
    ids = _ids(101)
    durations = _skewed(ids)
    parts = [split_selection(ids, Shard(i, 3), durations) for i in range(1, 4)]
    positions = [p for part in parts for p in part.positions]
    assert sorted(positions) == list(range(101))
    assert len(set(positions)) == 101
    assert all(part.positions == sorted(part.positions) for part in parts)
    again = [split_selection(list(ids), Shard(i, 3), dict(durations)) for i in range(1, 4)]
    assert [p.positions for p in again] == [p.positions for p in parts]
    assert len({part.info.split for part in parts}) == 1
    assert len({part.info.fingerprint for part in parts}) == 1
    assert parts[0].info.selected == 101


def test_without_durations_the_shards_differ_by_at_most_one_scenario() -> None:
    ids = _ids(23)
    sizes = [len(split_selection(ids, Shard(i, 4), {}).positions) for i in range(1, 5)]
    assert sorted(sizes) == [5, 6, 6, 6]
    assert split_selection(ids, Shard(1, 4), {}).info.balanced_by == "count"


def test_more_shards_than_scenarios_leaves_some_shards_empty() -> None:
    ids = _ids(2)
    sizes = [len(split_selection(ids, Shard(i, 5), {}).positions) for i in range(1, 6)]
    assert sizes == [1, 1, 0, 0, 0]


def test_unknown_scenarios_weigh_the_median_and_zero_durations_spread_by_count() -> None:
    ids: list[Key] = [("a::1", None), ("a::2", None), ("a::3", None), ("a::new", None)]
    costs, basis = weights(ids, {ids[0]: 100, ids[1]: 300, ids[2]: 900})
    assert (costs, basis) == ([100, 300, 900, 300], "duration")
    assert assign([0] * 8, 4) == [0, 1, 2, 3, 0, 1, 2, 3]


def test_split_changes_with_durations_and_fingerprint_only_with_the_selection() -> None:
    ids = _ids(40)
    by_count = split_selection(ids, Shard(1, 4), {})
    by_time = split_selection(ids, Shard(1, 4), _skewed(ids))
    assert by_count.info.split != by_time.info.split
    assert by_count.info.fingerprint == by_time.info.fingerprint == fingerprint(reversed(ids))
    assert fingerprint(ids[:-1]) != by_count.info.fingerprint


def test_shard_values_are_validated() -> None:
    assert parse_shard("2/4") == (2, 4)
    assert parse_shard(" 1 / 1 ") == (1, 1)
    for bad in ("0/4", "5/4", "2", "a/b", "1/0", "-1/3"):
        with pytest.raises(ValueError, match=r"index must|expected"):
            parse_shard(bad)


def test_auto_reads_gitlab_parallel_variables() -> None:
    env = CIContext.from_environ({"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4"})
    assert resolve_shard("auto", env) == Shard(3, 4)
    # not a parallel job: the whole selection
    assert resolve_shard("auto", CIContext.from_environ({})) is None
    assert resolve_shard(None, env) is None
    assert resolve_shard("1/2", env) == Shard(1, 2)  # explicit wins
    with pytest.raises(UsageError, match="CI_NODE_INDEX and CI_NODE_TOTAL must both be set"):
        resolve_shard("auto", CIContext.from_environ({"CI_NODE_TOTAL": "4"}))
    with pytest.raises(UsageError, match=r"--shard auto .*between 1 and 4"):
        resolve_shard("auto", CIContext.from_environ({"CI_NODE_INDEX": "5", "CI_NODE_TOTAL": "4"}))
    assert resolve_shard(
        "auto", CIContext.from_environ({"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4"})
    ) == Shard(3, 4)


def test_shard_plans_reads_a_raw_environment_once() -> None:
    """The public `shard_plans` (`clawspec.api`) still accepts the raw environment."""
    from types import SimpleNamespace

    from clawspec.config.settings import Settings
    from clawspec.selection.steps import shard_plans

    plans = [SimpleNamespace(identity=SimpleNamespace(key=key)) for key in _ids(8)]
    environ = {"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4"}
    settings = Settings(shard="auto")
    warnings: list[str] = []
    chosen, info = shard_plans(plans, settings, environ, warnings.append)  # type: ignore[arg-type]
    assert info is not None and (info.index, info.total) == (3, 4)
    context = CIContext.from_environ(environ)
    expected = shard_plans(plans, settings, context, warnings.append)  # type: ignore[arg-type]
    assert (chosen, info) == expected
    assert warnings == []

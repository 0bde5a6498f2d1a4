"""`--shard i/n`: split the selection into n disjoint, balanced, deterministic parts.

Every shard computes the same split from the same inputs (the selection in contract order and
the durations of an earlier report), so no coordination between machines is needed. The parts
are balanced by duration with the LPT rule (longest first, each to the shard with the least
work so far); with no durations known they are balanced by count.
"""

from __future__ import annotations

import hashlib
import heapq
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from clawspec.ci_context import CIContext
from clawspec.config.values import parse_shard
from clawspec.errors import UsageError
from clawspec.identity import Key
from clawspec.reports.model import ShardInfo

AUTO = "auto"
# GitLab's `parallel: N` sets these on every job of the set (1-based, like --shard).
GITLAB_INDEX, GITLAB_TOTAL = "CI_NODE_INDEX", "CI_NODE_TOTAL"


@dataclass(frozen=True)
class Shard:
    """Which part to run: `index` of `total`, 1-based."""

    index: int
    total: int


def resolve_shard(value: str | None, context: CIContext) -> Shard | None:
    """Turn the `shard` setting into a Shard; None runs the whole selection.

    `auto` reads GitLab's `CI_NODE_INDEX`/`CI_NODE_TOTAL` (in the run's CI context); where
    they are not set (a job without `parallel:`, a laptop, another CI) it means the whole
    selection, so one config file serves sharded and unsharded jobs alike.
    """
    if value is None or not value.strip():
        return None
    if value.strip() != AUTO:
        return Shard(*parse_shard(value))
    gitlab = context.gitlab
    index, total = gitlab.node_index or "", gitlab.node_total or ""
    if not index and not total:
        return None
    if not index or not total:
        raise UsageError(
            f"--shard auto: {GITLAB_INDEX} and {GITLAB_TOTAL} must both be set, found "
            f"{GITLAB_INDEX}='{index}' and {GITLAB_TOTAL}='{total}'"
        )
    try:
        return Shard(*parse_shard(f"{index}/{total}"))
    except ValueError as exc:
        raise UsageError(f"--shard auto ({GITLAB_INDEX}/{GITLAB_TOTAL}): {exc}") from None


def fingerprint(keys: Iterable[Key]) -> str:
    """Hash of the whole selection, sorted: equal on every shard of one matrix. A scenario
    without a variant hashes as its id alone, as before variants existed."""
    digest = hashlib.sha256()
    for scenario_id, variant in sorted(keys, key=lambda k: (k[0], k[1] or "")):
        text = scenario_id if variant is None else f"{scenario_id}\0{variant}"
        digest.update(text.encode("utf-8") + b"\n")
    return "sha256:" + digest.hexdigest()


def weights(ids: Sequence[Key], durations: Mapping[Key, int]) -> tuple[list[int], str]:
    """Each scenario's expected cost, and what it is based on ('duration' or 'count').

    A scenario the earlier report does not know (new, renamed) gets the median of the known
    durations: a typical scenario, neither free nor the slowest.
    """
    known = [durations[i] for i in ids if i in durations]
    if not known:
        return [1] * len(ids), "count"
    median = int(statistics.median_low(known))
    return [max(0, int(durations.get(i, median))) for i in ids], "duration"


def assign(costs: Sequence[int], total: int) -> list[int]:
    """LPT: the 0-based shard of each item, longest first, each to the least-loaded shard.

    Ties are broken by position (items) and by (load, count, index) (shards), so the result
    depends only on the inputs. Integer costs keep the sums exact on every machine. Greedy
    assignment to the least-loaded shard bounds the spread between any two shards by the
    largest single cost.
    """
    order = sorted(range(len(costs)), key=lambda i: (-costs[i], i))
    heap = [(0, 0, shard) for shard in range(total)]
    shard_of = [0] * len(costs)
    for item in order:
        load, count, shard = heapq.heappop(heap)
        shard_of[item] = shard
        heapq.heappush(heap, (load + costs[item], count + 1, shard))
    return shard_of


def split_hash(shard_of: Sequence[int], total: int) -> str:
    """Hash of the whole assignment: shards of one split agree on it."""
    text = f"{total}:" + ",".join(map(str, shard_of))
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class ShardPart:
    """This shard's part: positions in the selection (contract order) and its report block."""

    positions: list[int]
    info: ShardInfo


def split_selection(ids: Sequence[Key], shard: Shard, durations: Mapping[Key, int]) -> ShardPart:
    """Compute the whole split of the selection's (scenario id, variant) keys, in contract
    order, and return the part of `shard`."""
    costs, basis = weights(ids, durations)
    shard_of = assign(costs, shard.total)
    positions = [pos for pos, part in enumerate(shard_of) if part == shard.index - 1]
    info = ShardInfo(
        index=shard.index,
        total=shard.total,
        fingerprint=fingerprint(ids),
        selected=len(ids),
        split=split_hash(shard_of, shard.total),
        balanced_by=basis,  # type: ignore[arg-type]
        positions=positions,
    )
    return ShardPart(positions, info)

"""Finished results kept compact during a run come back equal, and every report byte stays the
same (memory of 10,000 scenarios).

Every test keeps more results than `COMPACT_FROM`, the size at which a run starts keeping them
compact: the code path a large run takes, not one forced on a small run."""

from __future__ import annotations

import math
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from clawspec import secrets as registry
from clawspec.reports.github.summary import render_summary
from clawspec.reports.json_report import render_json
from clawspec.reports.junit import write_junit
from clawspec.reports.kept import BLOCK, COMPACT_FROM, FinishedRun, KeptResults
from clawspec.reports.model import RunReport, ScenarioResult, Totals
from tests.reports.factory import assertion, mixed_report, scenario
from tests.reports.rich_report import rich_report

SECRETS = ["s3cret-token-value"]


def _many() -> list[ScenarioResult]:
    """Just more results than a run holds as models: every kind the reports show, repeated."""
    pool = [*mixed_report().scenarios, *rich_report().scenarios, *rich_report("é✓").scenarios]
    assert (COMPACT_FROM + 1) % BLOCK  # the last block is a partial one
    return [pool[i % len(pool)] for i in range(COMPACT_FROM + 1)]


def _finished(results: list[ScenarioResult], interrupted: bool = False) -> FinishedRun:
    kept = KeptResults(len(results))
    # Results are reported in the order they finish, not the plan's.
    for index in [*range(1, len(results), 2), *range(0, len(results), 2)]:
        kept.keep(index, results[index])
    return FinishedRun("0.1.0", "run-0001", "2026-11-22T10:00:00+00:00", 1234, interrupted, kept)


def test_kept_results_come_back_equal_in_plan_order() -> None:
    results = _many()
    assert list(_finished(results).results.results()) == results


def test_a_small_run_holds_its_results_as_models_a_large_one_compact_from_its_first() -> None:
    results = _many()
    small = KeptResults(COMPACT_FROM)
    for index, result in enumerate(results[:COMPACT_FROM]):
        small.keep(index, result)
    assert not small._pending and not small._blocks  # nothing encoded, even at the last one
    assert len(small._models) == COMPACT_FROM
    assert list(small.results()) == results[:COMPACT_FROM]

    large = KeptResults(len(results))
    large.keep(0, results[0])
    assert not large._models and len(large._pending) == 1  # compact from the first result
    for index in range(1, len(results)):
        large.keep(index, results[index])
    assert not large._models
    assert list(large.results()) == results


def test_compact_results_take_a_fraction_of_their_models() -> None:
    results = _many()
    kept = _finished(results).results
    compact = sum(len(block) for block in kept._blocks)
    assert not kept._models  # every one of these is exact as JSON
    assert compact < sum(len(r.model_dump_json()) for r in results) / 4


def test_the_report_of_kept_results_is_byte_identical(tmp_path: Path) -> None:
    results = _many()
    for interrupted in (False, True):
        direct = RunReport(
            version="0.1.0",
            run_id="run-0001",
            started_at="2026-11-22T10:00:00+00:00",
            duration_ms=1234,
            interrupted=interrupted,
            totals=Totals.of(results),
            scenarios=results,
        )
        rebuilt = _finished(results, interrupted).report()
        assert rebuilt == direct
        with registry.scope() as active:
            active.add(*SECRETS)
            assert render_json(rebuilt) == render_json(direct)
            assert render_summary(rebuilt) == render_summary(direct)
            write_junit(direct, tmp_path / "direct.xml")
            write_junit(rebuilt, tmp_path / "rebuilt.xml")
        assert (tmp_path / "rebuilt.xml").read_bytes() == (tmp_path / "direct.xml").read_bytes()


@pytest.mark.parametrize(
    "odd",
    [
        {"value": (1, 2)},  # JSON would give back a list
        {"value": {1: "one"}},  # ... string keys
        {"limit": math.nan},  # ... null
        {"value": [1.5, math.inf]},
        {"usage": {"cost_usd": math.nan}},
        {"value": 1 << 70},
        {"value": type("Text", (str,), {})("a str subclass")},
    ],
)
def test_a_result_json_cannot_carry_exactly_keeps_its_models(odd: dict[str, Any]) -> None:
    plain = scenario("plain", "pass", assertion("pass"))
    unusual = scenario("unusual", "fail", assertion("fail", **odd))
    results = [plain] * COMPACT_FROM + [unusual]
    results[BLOCK + 1] = unusual  # also one in the middle of a block
    kept = _finished(results).results
    assert kept._blocks  # the plain ones are compact ...
    back = list(kept.results())
    assert back[BLOCK + 1] is unusual and back[-1] is unusual  # ... the unusual ones are not
    assert back == results


def _float_places(model: BaseModel, path: tuple[str | int, ...] = ()) -> Iterator[tuple]:
    """The path to every float value held in `model`'s fields, at any depth."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        if type(value) is float:
            yield (*path, name)
        items = value if isinstance(value, list) else [value]
        for n, item in enumerate(items):
            if isinstance(item, BaseModel):
                place = (*path, name, n) if isinstance(value, list) else (*path, name)
                yield from _float_places(item, place)


def _replaced(model: Any, path: tuple, new: Any) -> Any:
    """A copy of `model` with the value at `path` replaced by `new` (models are frozen)."""
    if not path:
        return new
    head, *rest = path
    if isinstance(model, list):
        return [_replaced(item, tuple(rest), new) if n == head else item
                for n, item in enumerate(model)]  # fmt: skip
    return model.model_copy(update={head: _replaced(getattr(model, head), tuple(rest), new)})


def _field_names(result: ScenarioResult, path: tuple) -> str:
    """`Model.field` of the value at `path` in `result`."""
    owner: Any = result
    for step in path[:-1]:
        owner = owner[step] if isinstance(step, int) else getattr(owner, step)
    return f"{type(owner).__name__}.{path[-1]}"


def test_a_result_with_a_float_json_cannot_carry_keeps_its_models_in_a_large_run() -> None:
    """Every float field a result has, set to NaN or infinity (JSON would give back null), in a
    run large enough to keep results compact: that result comes back as it was kept."""
    rich = rich_report().scenarios[0]
    places = list(_float_places(rich))
    floats = {f for f in _floats_and_free_values(ScenarioResult, set()) if f not in FREE_VALUES}
    assert {_field_names(rich, place) for place in places} - FREE_VALUES == floats  # all tried
    odd = [_replaced(rich, place, [math.nan, -math.inf][n % 2]) for n, place in enumerate(places)]
    results = [rich] * (COMPACT_FROM + 1 - len(odd)) + odd
    kept = _finished(results).results
    back = list(kept.results())
    assert all(back[-len(odd) + n] is result for n, result in enumerate(odd))
    assert back[: -len(odd)] == results[: -len(odd)] and kept._blocks


def _floats_and_free_values(model: type[BaseModel], seen: set[type]) -> set[str]:
    """`Model.field` of every float or free-form (Any) field under `model`."""
    found: set[str] = set()
    seen.add(model)
    for name, field in model.model_fields.items():
        for kind in _kinds(field.annotation):
            if kind is float or kind is Any:
                found.add(f"{model.__name__}.{name}")
            elif isinstance(kind, type) and issubclass(kind, BaseModel) and kind not in seen:
                found |= _floats_and_free_values(kind, seen)
    return found


def _kinds(annotation: Any) -> list[Any]:
    args = typing.get_args(annotation)
    if not args:
        return [annotation]
    return [kind for arg in args for kind in _kinds(arg)]


FREE_VALUES = {
    "AssertionResult.value",
    "AssertionResult.limit",
    "AssertionResult.usage",
    "ToolCallRecord.args",
}


def test_every_value_json_could_change_is_checked() -> None:
    """A new float or free-form field in a result must be checked by `kept._exact` too (else a
    NaN or a tuple in it would come back changed): this lists the ones it checks."""
    assert _floats_and_free_values(ScenarioResult, set()) == FREE_VALUES | {
        "PassRate.pass_rate",
        "PassRate.ci_low",
        "PassRate.ci_high",
        "AttemptStats.pass_rate",
        "AttemptStats.ci_low",
        "AttemptStats.ci_high",
        "AttemptStats.duration_ms_median",
        "AttemptStats.duration_ms_p90",
        "AttemptStats.tokens_median",
        "AttemptStats.tokens_p90",
        "TokenTotals.cost_usd",
        "SpanRecord.start_ms",
        "SpanRecord.end_ms",
        "SpanRecord.cost_usd",
    }

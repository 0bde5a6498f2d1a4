"""Frozen models share their set of given field names (memory at 10,000 scenarios)
without one instance's copy or validation changing what another reports as set."""

from __future__ import annotations

from clawspec.reports.model import AssertionResult, RunReport
from tests.reports.factory import assertion, mixed_report


def test_instances_given_the_same_fields_share_one_set() -> None:
    first, second = assertion("pass", "one"), assertion("fail", "two")
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.model_fields_set == {"phase", "index", "type", "line", "status", "message"}


def test_a_copy_with_changes_does_not_change_the_shared_set() -> None:
    first = assertion("pass", "one")
    copied = first.model_copy(update={"value": 3})
    assert "value" in copied.model_fields_set
    assert "value" not in first.model_fields_set
    assert "value" not in assertion("pass", "three").model_fields_set
    fuller = AssertionResult(**first.model_dump(exclude={"attempts"}), attempts=None)
    assert "attempts" in fuller.model_fields_set and "attempts" not in first.model_fields_set


def test_dumps_that_leave_out_unset_fields_keep_each_instances_own_fields() -> None:
    plain, valued = assertion("pass", "one"), assertion("pass", "two", value=3)
    assert "value" not in plain.model_dump(exclude_unset=True)
    assert valued.model_dump(exclude_unset=True)["value"] == 3
    report = mixed_report()
    assert RunReport.model_validate_json(report.model_dump_json()) == report

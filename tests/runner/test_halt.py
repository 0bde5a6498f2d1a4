"""The run's halt reaches every scenario's own stop; a scenario's stop stays its own."""

from __future__ import annotations

from clawspec.runner.halt import Halt


def test_halting_the_run_sets_every_scenario_stop_and_one_made_afterwards() -> None:
    halt = Halt()
    first, second = halt.scenario_stop(), halt.scenario_stop()
    assert not first.is_set() and not second.is_set()
    halt.set()
    assert halt.is_set() and first.is_set() and second.is_set()
    assert halt.scenario_stop().is_set()  # a scenario starting after the halt stops at once


def test_a_scenario_stop_set_by_the_scenario_leaves_the_run_and_the_others_going() -> None:
    halt = Halt()
    missed, other = halt.scenario_stop(), halt.scenario_stop()
    missed.set()  # e.g. a replay miss in one of its runs
    assert not halt.is_set() and not other.is_set()
    assert not halt.wait(0.01) and not other.wait(0.01)

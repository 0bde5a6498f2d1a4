"""The one agent id rule of `clawspec migrate` (clawspec/migration/agents.py), as a table."""

from __future__ import annotations

import pytest

from clawspec.migration.agents import AgentIds
from clawspec.migration.rewrite import Rewrite

FOLDERS = AgentIds(
    [
        ("agents", "marketing", "brand"),
        ("agents", "sales", "brand"),
        ("agents", "marketing", "campaign-orchestrator"),
        ("agents", "orchestrator"),
        ("agents", "planner"),
        ("agents", "copy", "brand-voice"),
        ("agents", "voice"),
    ]
)


@pytest.mark.parametrize(
    ("legacy", "expected", "warned"),
    [
        ("agents-marketing-brand", "brand", False),  # legacy ClawSpec's dash-joined path
        ("agents/marketing/brand", "brand", False),  # the path itself
        ("ceremonia-marketing-brand", "brand", False),  # a prefix of its own
        ("agents-marketing-campaign-orchestrator", "campaign-orchestrator", False),  # longest
        ("examples-multi-agent-planner", "planner", False),
        ("planner", "planner", False),  # already current
        ("brand", "brand", False),  # two folders, one name: that name
        ("agents-brand-voice", "brand-voice", False),  # longest match, not 'voice'
        ("agents-sales-brand", "brand", False),
        ("agents-marketing-social", "agents-marketing-social", True),  # no folder: warned
        ("researcher", "researcher", False),  # not legacy ClawSpec's path form: kept quietly
        ("myplanner", "myplanner", False),  # only whole segments match
    ],
)
def test_agent_id_rule(legacy: str, expected: str, warned: bool) -> None:
    rewrite = Rewrite({})
    assert FOLDERS.map(legacy, ("x",), rewrite) == expected
    assert bool(rewrite.warnings) is warned


def test_a_tie_between_different_names_is_kept_and_warned_about() -> None:
    folders = AgentIds([("team", "sales-brand"), ("team-sales", "brand")])
    rewrite = Rewrite({})
    assert folders.map("team-sales-brand", ("x",), rewrite) == "team-sales-brand"
    assert [note.text for note in rewrite.warnings] == [
        "agent 'team-sales-brand' matches several agent folders (team/sales-brand, "
        "team-sales/brand): kept"
    ]
    assert folders.folder("team-sales-brand") is None

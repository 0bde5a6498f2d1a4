"""A file the agent wrote with an unquoted date that is no date (2026-02-30) is a file that
does not parse, for the assertion that reads it: its verdict, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.assertions.documents import DataError, document_fields, load_data


def test_an_impossible_date_in_data_the_agent_wrote_is_a_data_error(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    state.write_text("phase: done\nwhen: 2026-02-30\n", "utf-8")
    with pytest.raises(DataError, match=r"'state\.yaml' is not valid YAML: a value reads as"):
        load_data(state)
    note = tmp_path / "note.md"
    note.write_text("---\ntitle: x\nday: 2026-13-01\n---\n# Note\n", "utf-8")
    with pytest.raises(DataError, match=r"front matter of 'note\.md' is not valid YAML"):
        document_fields(note)
    state.write_text("phase: done\nwhen: 2026-02-28\n", "utf-8")
    assert str(load_data(state)["when"]) == "2026-02-28"  # a real date still reads as one

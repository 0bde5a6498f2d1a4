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


@pytest.mark.parametrize(
    ("assertion", "shown"),
    [
        (
            {"type": "artifact_contains", "path": "out/nul.md", "sections": ["hook"],
             "fields": ["title"]},
            "nul.md",
        ),
        ({"type": "state_file", "path": "out/state.yaml", "expected_fields": {"phase": "done"}},
         "state.yaml"),
        ({"type": "decision_routed_to", "state_path": "out/state.yaml", "expected_agent": "a"},
         "state.yaml"),
    ],
)  # fmt: skip
def test_a_file_that_is_not_utf8_is_the_assertions_error_not_a_crash(
    tmp_path: Path, assertion: dict, shown: str
) -> None:
    """An agent may write any bytes: a file read for its fields or data that is not UTF-8 is
    the assertion's `error` naming the file and the byte, never an internal error."""
    from tests.support.harness import evaluate_one, make_context

    out = tmp_path / "out"
    out.mkdir()
    (out / "nul.md").write_bytes(b"---\ntitle: N\n---\n# Hook\x00\n\n## CTA \xff\xfe\n")
    (out / "state.yaml").write_bytes(b"phase: done\nnote: \xff\xfe\n")
    verdict = evaluate_one(assertion, make_context(tmp_path))
    assert verdict.status.value == "error", verdict
    assert f"'{shown}' is not UTF-8 text: byte 0xff at offset" in verdict.message

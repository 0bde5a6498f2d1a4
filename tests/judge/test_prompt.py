"""What the judge sees: section extraction, truncation and the prompt shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.judge.prompt import (
    IDENTITY_RUBRIC,
    SYSTEM_PROMPT,
    extract_section,
    heading_names,
    make_artifact,
    render_user_prompt,
    truncation_note,
)

DOC = """\
---
title: Launch email
---
# Email

Intro line.

## Hook

Hook text.

### Hook variants

Variant A.

## Body

Body text.

```md
## Not a heading
```

Call to action
--------------

Click here.

# Appendix

Notes.
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # Nested subsections belong to the section; the next same-level heading ends it.
        ("Hook", "## Hook\n\nHook text.\n\n### Hook variants\n\nVariant A."),
        ("hook   VARIANTS", "### Hook variants\n\nVariant A."),
        # A heading-like line in a code fence does not end the section; setext level 2 does.
        ("Body", "## Body\n\nBody text.\n\n```md\n## Not a heading\n```"),
        ("Call to action", "Call to action\n--------------\n\nClick here."),
        # A higher-level heading ends a section; the last section runs to the end of the file.
        ("Appendix", "# Appendix\n\nNotes."),
    ],
)
def test_extract_section_takes_heading_until_same_or_higher_level(name: str, expected: str) -> None:
    assert extract_section(DOC, name) == expected


def test_extract_section_of_top_heading_includes_every_subsection() -> None:
    section = extract_section(DOC, "Email")
    assert section is not None
    assert section.startswith("# Email\n")
    assert section.endswith("Click here.")
    assert "# Appendix" not in section


def test_extract_section_returns_none_when_missing_or_only_in_code() -> None:
    assert extract_section(DOC, "Pricing") is None
    assert extract_section(DOC, "Not a heading") is None


def test_heading_names_lists_headings_in_order() -> None:
    assert heading_names(DOC) == [
        "Email",
        "Hook",
        "Hook variants",
        "Body",
        "Call to action",
        "Appendix",
    ]


def test_make_artifact_truncates_to_limit_and_notes_it() -> None:
    artifact = make_artifact("artifact", "big.md", "x" * 25_000, 10_000)
    assert artifact.is_truncated
    assert len(artifact.text) == 10_000
    assert truncation_note([artifact]) == "'big.md' truncated to 10,000 of 25,000 chars"
    small = make_artifact("artifact", "small.md", "short", 10_000)
    assert not small.is_truncated
    assert truncation_note([small]) == ""


def test_render_user_prompt_has_documented_shape() -> None:
    artifact = make_artifact("artifact", "out.md", "# Hook\nBuy now.\n", 100, section="Hook")
    assert render_user_prompt("Score 1-5: Is it persuasive?", [artifact]) == (
        '<artifact path="out.md" section="Hook">\n'
        "# Hook\nBuy now.\n"
        "</artifact>\n\n"
        "<rubric>\nScore 1-5: Is it persuasive?\n</rubric>\n\n"
        "Score the artifact against the rubric on the 1-5 scale and call `record_verdict` "
        "with your score and reasoning."
    )


def test_render_user_prompt_tells_the_judge_about_truncation() -> None:
    artifact = make_artifact("output", 'a"b.md', "y" * 50, 20)
    prompt = render_user_prompt("rubric", [make_artifact("soul", "SOUL.md", "soul", 20), artifact])
    assert prompt.startswith('<soul path="SOUL.md">\nsoul\n</soul>\n\n')
    assert '<output path="a&quot;b.md" truncated="true">\n' + "y" * 20 + "\n</output>" in prompt
    assert "[Note: 'a\"b.md' has 50 characters; only the first 20 are shown above.]" in prompt
    assert "Score the output against the rubric" in prompt


def test_judge_docs_show_the_prompt_verbatim() -> None:
    """The docs ("What the judge sees") must match what is sent."""
    docs = (Path(__file__).parents[2] / "docs" / "traces-and-judge.md").read_text("utf-8")
    assert f"```text\n{SYSTEM_PROMPT}\n```" in docs
    assert f"<rubric>\n{IDENTITY_RUBRIC}\n</rubric>" in docs
    task = render_user_prompt("r", [make_artifact("artifact", "p", "t", 10)]).splitlines()[-1]
    assert f"\n{task}\n" in docs

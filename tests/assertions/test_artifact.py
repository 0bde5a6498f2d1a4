"""Artifact assertions: artifact_exists, artifact_contains, artifact_absent_words,
artifact_matches_golden, state_file."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from clawspec.assertions.base import PathEscapeError, Status
from tests.support.harness import evaluate_one, make_context


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _set_mtime(path: Path, iso: str) -> None:
    stamp = datetime.fromisoformat(iso).timestamp()
    os.utime(path, (stamp, stamp))


def _later(delay_s: float, action: Any) -> threading.Thread:
    def run() -> None:
        time.sleep(delay_s)
        action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class Waits(threading.Event):
    """A context's stop event that records each poll wait (and waits it): what a check waited
    is told by these, which a busy machine cannot stretch, not by timing the check."""

    def __init__(self) -> None:
        super().__init__()
        self.delays: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.delays.append(timeout or 0.0)
        return super().wait(timeout)


# --- artifact_exists ---------------------------------------------------------------------------


def test_artifact_exists_passes_with_size(workspace: Path) -> None:
    _write(workspace, "out/draft.md", "hello")
    verdict = evaluate_one(
        {"type": "artifact_exists", "path": "out/draft.md"}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (Status.PASS, "'out/draft.md' exists (5 bytes)")


def test_artifact_exists_fails_when_missing_without_waiting(workspace: Path) -> None:
    context = make_context(workspace)
    context.stop = waits = Waits()
    verdict = evaluate_one({"type": "artifact_exists", "path": "out/draft.md"}, context)
    assert (verdict.status, verdict.message) == (Status.FAIL, "'out/draft.md' not found")
    assert waits.delays == []


def test_artifact_exists_fails_when_timeout_reached(workspace: Path) -> None:
    context = make_context(workspace)
    context.stop = waits = Waits()
    started = time.monotonic()
    verdict = evaluate_one(
        {"type": "artifact_exists", "path": "out/draft.md", "timeout": 0.3}, context
    )
    elapsed = time.monotonic() - started
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "'out/draft.md' not found after waiting 0.3 s",
    )
    assert elapsed >= 0.3  # it waited the whole timeout ...
    assert len(waits.delays) >= 2 and sum(waits.delays) <= 0.3 + 1e-9  # ... polling, no longer


def test_artifact_exists_passes_when_file_appears_during_wait(workspace: Path) -> None:
    (workspace / "out").mkdir()
    draft = workspace / "out" / "draft.md"
    context = make_context(workspace)
    context.stop = waits = Waits()
    # The check's clock stands still until the file is there (another thread writes it), so
    # the wait cannot run out first; then it counts a second per reading.
    seconds = iter(range(1_000_000))
    context.clock = lambda: float(next(seconds)) if draft.exists() else 0.0
    writer = _later(0.3, lambda: draft.write_text("late"))
    verdict = evaluate_one(
        {"type": "artifact_exists", "path": "out/draft.md", "timeout": 10}, context
    )
    writer.join()
    assert (verdict.status, verdict.message) == (Status.PASS, "'out/draft.md' exists (4 bytes)")
    assert next(seconds) < 10  # it passed when the file came, not at the end of its timeout
    assert waits.delays  # it did wait for the file


def test_artifact_exists_resolves_against_workspace_not_cwd(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(workspace, "out/draft.md", "ws")
    _write(tmp_path / "elsewhere", "out/other.md", "cwd")
    monkeypatch.chdir(tmp_path / "elsewhere")
    ctx = make_context(workspace)
    assert evaluate_one({"type": "artifact_exists", "path": "out/draft.md"}, ctx).status == "pass"
    assert evaluate_one({"type": "artifact_exists", "path": "out/other.md"}, ctx).status == "fail"


def test_artifact_exists_refuses_symlink_escaping_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    target = _write(tmp_path, "outside/secret.md", "x")
    (workspace / "out.md").symlink_to(target)
    with pytest.raises(PathEscapeError, match=r"path 'out\.md' resolves outside the workspace"):
        evaluate_one({"type": "artifact_exists", "path": "out.md"}, make_context(workspace))


# mtime of the file is 2025-01-01T00:30:00Z in every row.
@pytest.mark.parametrize(
    ("updated_after", "status"),
    [
        ("2025-01-01T00:00:00Z", Status.PASS),
        ("2025-01-01T00:30:00Z", Status.PASS),  # mtime ≥ instant: equal passes
        ("2025-01-01T00:30:00.000001Z", Status.FAIL),
        ("2025-01-01T01:00:00+01:00", Status.PASS),  # = 00:00 UTC
        ("2025-01-01T00:00:00-01:00", Status.FAIL),  # = 01:00 UTC
        ("2025-01-01T00:29:59", Status.PASS),  # no offset = UTC
        ("2025-01-01T00:31:00", Status.FAIL),
    ],
)
def test_artifact_exists_updated_after_compares_mtime_across_offsets(
    workspace: Path, updated_after: str, status: Status
) -> None:
    _set_mtime(_write(workspace, "a.md", "x"), "2025-01-01T00:30:00+00:00")
    verdict = evaluate_one(
        {"type": "artifact_exists", "path": "a.md", "updated_after": updated_after},
        make_context(workspace),
    )
    assert verdict.status == status


def test_artifact_exists_fails_on_stale_file_with_both_times(workspace: Path) -> None:
    _set_mtime(_write(workspace, "a.md", "x"), "2020-01-01T00:00:00+00:00")
    verdict = evaluate_one(
        {"type": "artifact_exists", "path": "a.md", "updated_after": "2024-01-01T00:00:00Z"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "'a.md' is stale: modified 2020-01-01T00:00:00+00:00, before 2024-01-01T00:00:00Z",
    )
    assert (verdict.value, verdict.limit) == ("2020-01-01T00:00:00+00:00", "2024-01-01T00:00:00Z")


def test_artifact_exists_passes_when_stale_file_is_rewritten_during_wait(workspace: Path) -> None:
    path = _write(workspace, "a.md", "old")
    _set_mtime(path, "2020-01-01T00:00:00+00:00")
    since = datetime.now(UTC).isoformat()
    writer = _later(0.3, lambda: path.write_text("new"))
    verdict = evaluate_one(
        {"type": "artifact_exists", "path": "a.md", "updated_after": since, "timeout": 10},
        make_context(workspace),
    )
    writer.join()
    assert (verdict.status, verdict.message) == (Status.PASS, "'a.md' exists (3 bytes)")


def test_artifact_exists_stale_after_timeout_says_it_waited(workspace: Path) -> None:
    _set_mtime(_write(workspace, "a.md", "x"), "2020-01-01T00:00:00+00:00")
    verdict = evaluate_one(
        {
            "type": "artifact_exists",
            "path": "a.md",
            "updated_after": "2024-01-01T00:00:00+02:00",
            "timeout": 0.2,
        },
        make_context(workspace),
    )
    assert verdict.status == Status.FAIL
    assert verdict.message.endswith("before 2024-01-01T00:00:00+02:00 after waiting 0.2 s")


def test_artifact_exists_rejects_non_iso_updated_after() -> None:
    with pytest.raises(ValidationError, match="'updated_after' is not an ISO-8601 timestamp"):
        evaluate_one(
            {"type": "artifact_exists", "path": "a.md", "updated_after": "yesterday"},
            make_context(Path(".")),
        )


# --- artifact_contains -------------------------------------------------------------------------

DOC = """\
---
title: Weekly newsletter
meta:
  author: ana
  reviewed: null
tags: [a, b]
---
Hook
====

Some intro.

##  Body   Text ##

Call To Action
--------------

### C# #

```markdown
# Inside Fence
```

~~~~
## Tilde Fenced
```
## still fenced
~~~~

    # indented code
#NoSpace
- list item
---
"""


@pytest.mark.parametrize(
    ("sections", "status", "message"),
    [
        (
            ["hook", "body text", "call to action"],
            Status.PASS,
            "'doc.md' has all 3 required sections/fields",
        ),
        (["HOOK", "  Body\tTEXT "], Status.PASS, "'doc.md' has all 2 required sections/fields"),
        (["c#"], Status.PASS, "'doc.md' has all 1 required sections/fields"),
        (["inside fence"], Status.FAIL, "'doc.md': missing sections 'inside fence'"),
        (
            ["tilde fenced", "still fenced"],
            Status.FAIL,
            "'doc.md': missing sections 'tilde fenced', 'still fenced'",
        ),
        (["indented code"], Status.FAIL, "'doc.md': missing sections 'indented code'"),
        (["nospace"], Status.FAIL, "'doc.md': missing sections 'nospace'"),
        (["list item"], Status.FAIL, "'doc.md': missing sections 'list item'"),
        (["weekly newsletter"], Status.FAIL, "'doc.md': missing sections 'weekly newsletter'"),
        (["body"], Status.FAIL, "'doc.md': missing sections 'body'"),
    ],
)
def test_artifact_contains_sections_match_atx_and_setext_headings(
    workspace: Path, sections: list[str], status: Status, message: str
) -> None:
    _write(workspace, "doc.md", DOC)
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "sections": sections},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (status, message)


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        (
            ["title", "meta.author", "tags"],
            Status.PASS,
            "'doc.md' has all 3 required sections/fields",
        ),
        (["meta.reviewed"], Status.PASS, "'doc.md' has all 1 required sections/fields"),
        (
            ["meta.editor", "summary"],
            Status.FAIL,
            "'doc.md': missing fields 'meta.editor', 'summary'",
        ),
        (["title.x"], Status.FAIL, "'doc.md': missing fields 'title.x'"),
    ],
)
def test_artifact_contains_fields_read_markdown_front_matter(
    workspace: Path, fields: list[str], status: Status, message: str
) -> None:
    _write(workspace, "doc.md", DOC)
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "fields": fields}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (status, message)


@pytest.mark.parametrize(
    ("text", "section", "status"),
    [
        ("Line one\nline two\n===\n", "line one line two", Status.PASS),
        ("Line one\nline two\n===\n", "line two", Status.FAIL),
        ("intro\n\n---\nText\n---\n", "text", Status.PASS),
        ("intro\n\n---\nText\n---\n", "--- text", Status.FAIL),
        ("- item\n---\n", "item", Status.FAIL),
        ("> quoted\n---\n", "quoted", Status.FAIL),
        ("# Title#\n", "title#", Status.PASS),
        ("###### Six\n####### Seven\n", "six", Status.PASS),
        ("###### Six\n####### Seven\n", "seven", Status.FAIL),
    ],
)
def test_artifact_contains_heading_edge_cases(
    workspace: Path, text: str, section: str, status: Status
) -> None:
    _write(workspace, "doc.md", text)
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "sections": [section]},
        make_context(workspace),
    )
    assert verdict.status == status


def test_artifact_contains_checks_sections_and_fields_together(workspace: Path) -> None:
    _write(workspace, "doc.md", DOC)
    verdict = evaluate_one(
        {
            "type": "artifact_contains",
            "path": "doc.md",
            "sections": ["hook", "footer"],
            "fields": ["title", "meta.date"],
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "'doc.md': missing sections 'footer'; missing fields 'meta.date'",
    )


DATA_FILES = {
    "data.yaml": "phase: done\nresult:\n  score: 3\n  notes: null\nlist: [{id: 1}]\n",
    "data.yml": "phase: done\nresult:\n  score: 3\n  notes: ~\nlist: [{id: 1}]\n",
    "data.json": json.dumps(
        {"phase": "done", "result": {"score": 3, "notes": None}, "list": [{"id": 1}]}
    ),
}


@pytest.mark.parametrize("name", sorted(DATA_FILES))
@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        (
            ["phase", "result.score", "result.notes", "list.0.id"],
            Status.PASS,
            "'{name}' has all 4 required sections/fields",
        ),
        (
            ["result.grade", "missing"],
            Status.FAIL,
            "'{name}': missing fields 'result.grade', 'missing'",
        ),
    ],
)
def test_artifact_contains_fields_of_yaml_and_json_files(
    workspace: Path, name: str, fields: list[str], status: Status, message: str
) -> None:
    _write(workspace, name, DATA_FILES[name])
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": name, "fields": fields}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (status, message.format(name=name))


def test_artifact_contains_literal_dotted_key_wins(workspace: Path) -> None:
    _write(workspace, "d.json", '{"a.b": 1}')
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "d.json", "fields": ["a.b"]}, make_context(workspace)
    )
    assert verdict.status == Status.PASS


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "doc.md",
            "---\ntitle: [unclosed\n---\n# Hook\n",
            "front matter of 'doc.md' is not valid YAML: ",
        ),
        ("data.yaml", "a: [1\n", "'data.yaml' is not valid YAML: "),
        ("data.json", '{"a": 1,}', "'data.json' is not valid JSON: "),
    ],
)
def test_artifact_contains_errors_on_unparsable_data(
    workspace: Path, name: str, text: str, message: str
) -> None:
    _write(workspace, name, text)
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": name, "fields": ["title"]}, make_context(workspace)
    )
    assert verdict.status == Status.ERROR
    assert verdict.message.startswith(message)


def test_artifact_contains_fails_when_markdown_has_no_front_matter(workspace: Path) -> None:
    _write(workspace, "doc.md", "# Hook\n")
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "fields": ["title"]},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "'doc.md': no YAML front matter; missing fields 'title'",
    )


def test_artifact_contains_fails_when_file_missing(workspace: Path) -> None:
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "sections": ["hook"]},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (Status.FAIL, "'doc.md' not found")


def test_artifact_contains_waits_for_file(workspace: Path) -> None:
    writer = _later(0.3, lambda: _write(workspace, "doc.md", "# Hook\n"))
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "sections": ["hook"], "timeout": 10},
        make_context(workspace),
    )
    writer.join()
    assert verdict.status == Status.PASS


def test_artifact_contains_requires_sections_or_fields() -> None:
    with pytest.raises(ValidationError, match="one of 'sections', 'fields' is required"):
        evaluate_one({"type": "artifact_contains", "path": "doc.md"}, make_context(Path(".")))


# --- artifact_absent_words ---------------------------------------------------------------------

DRAFT = """\
Act now: this unlimited timer is great.
Our offer is LIMITED
time only, guaranteed!
c++ and abc++ rock; 50% off, not 150%.
Urgent. Urgently. urgent_flag. URGENT
"""


@pytest.mark.parametrize(
    ("words", "status", "message"),
    [
        (["limited time"], Status.FAIL, "'draft.md' contains 'limited time' (line 2)"),
        (["unlimited"], Status.FAIL, "'draft.md' contains 'unlimited' (line 1)"),
        (["limit", "timer is", "imited"], Status.FAIL, "'draft.md' contains 'timer is' (line 1)"),
        (["guaranteed"], Status.FAIL, "'draft.md' contains 'guaranteed' (line 3)"),
        (["C++"], Status.FAIL, "'draft.md' contains 'C++' (line 4)"),
        (["50%"], Status.FAIL, "'draft.md' contains '50%' (line 4)"),
        (["urgent"], Status.FAIL, "'draft.md' contains 'urgent' (line 5)"),
        (
            ["offer is limited time"],
            Status.FAIL,
            "'draft.md' contains 'offer is limited time' (line 2)",
        ),
        (
            ["urgent", "act now", "great"],
            Status.FAIL,
            "'draft.md' contains 'urgent' (line 5), 'act now' (line 1), 'great' (line 1)",
        ),
        (
            ["limited offer", "free", "0%", "bc++", "urgently now"],
            Status.PASS,
            "none of 5 words found in 'draft.md'",
        ),
    ],
)
def test_artifact_absent_words_matches_whole_words_case_insensitively(
    workspace: Path, words: list[str], status: Status, message: str
) -> None:
    _write(workspace, "draft.md", DRAFT)
    verdict = evaluate_one(
        {"type": "artifact_absent_words", "path": "draft.md", "words": words},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (status, message)


def test_artifact_absent_words_lists_every_line_of_a_word(workspace: Path) -> None:
    _write(workspace, "draft.md", "urgent\nok\nURGENT and urgent\nfine\nUrgent\n")
    verdict = evaluate_one(
        {"type": "artifact_absent_words", "path": "draft.md", "words": ["urgent"]},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "'draft.md' contains 'urgent' (lines 1, 3, 5)",
    )
    assert (verdict.value, verdict.limit) == (1, 0)


WORD_LIST = """\
brand:
  banned:
    - synergy
    - limited time
  tone: casual
"""


def test_artifact_absent_words_unites_words_and_source_key(workspace: Path) -> None:
    _write(workspace, "policy/words.yaml", WORD_LIST)
    _write(workspace, "draft.md", "Pure synergy.\nLimited\n  time!\nurgent\n")
    verdict = evaluate_one(
        {
            "type": "artifact_absent_words",
            "path": "draft.md",
            "words": ["urgent", "limited time"],
            "source": "policy/words.yaml",
            "key": "brand.banned",
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "'draft.md' contains 'urgent' (line 4), 'limited time' (line 2), 'synergy' (line 1)",
    )


def test_artifact_absent_words_passes_counting_source_words(workspace: Path) -> None:
    _write(workspace, "policy/words.yaml", WORD_LIST)
    _write(workspace, "draft.md", "A calm note.\n")
    verdict = evaluate_one(
        {
            "type": "artifact_absent_words",
            "path": "draft.md",
            "source": "policy/words.yaml",
            "key": "brand.banned",
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (Status.PASS, "none of 2 words found in 'draft.md'")


@pytest.mark.parametrize(
    ("source", "key", "message"),
    [
        ("policy/nope.yaml", "brand.banned", "word list 'policy/nope.yaml' not found"),
        (
            "policy/words.yaml",
            "brand.allowed",
            "word list 'policy/words.yaml' has no key 'brand.allowed'",
        ),
        (
            "policy/words.yaml",
            "brand.tone",
            "'brand.tone' in 'policy/words.yaml' is not a list of words",
        ),
    ],
)
def test_artifact_absent_words_errors_on_unusable_word_list(
    workspace: Path, source: str, key: str, message: str
) -> None:
    _write(workspace, "policy/words.yaml", WORD_LIST)
    _write(workspace, "draft.md", "text\n")
    verdict = evaluate_one(
        {"type": "artifact_absent_words", "path": "draft.md", "source": source, "key": key},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (Status.ERROR, message)


def test_artifact_absent_words_fails_when_artifact_missing(workspace: Path) -> None:
    verdict = evaluate_one(
        {"type": "artifact_absent_words", "path": "draft.md", "words": ["urgent"]},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (Status.FAIL, "'draft.md' not found")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"path": "d.md"}, "one of 'words' or 'source' + 'key' is required"),
        ({"path": "d.md", "key": "a"}, "'source' and 'key' must be given together"),
        (
            {
                "path": "d.md",
                "words": [],
            },
            "one of 'words' or 'source' + 'key' is required",
        ),
    ],
)
def test_artifact_absent_words_requires_a_word_source(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("+", r"\+")):
        evaluate_one({"type": "artifact_absent_words", **fields}, make_context(Path(".")))


# --- artifact_matches_golden -------------------------------------------------------------------

GOLDEN_TEXTS = {
    "de": "Größere Übungen für die Straße: Öffnungszeiten ändern sich ab März.",
    "el": "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",  # noqa: RUF001
    "ja": "今日は 良い 天気 です。明日 も 晴れ でしょう。",
}


@pytest.mark.parametrize("language", sorted(GOLDEN_TEXTS))
def test_artifact_matches_golden_scores_non_ascii_text_against_itself(
    workspace: Path, language: str
) -> None:
    text = GOLDEN_TEXTS[language]
    _write(workspace, "golden/ref.md", text)
    _write(workspace, "out.md", text)
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "ROUGE-L F1 1.000 ≥ 0.7 against 'golden/ref.md'",
    )
    assert verdict.value == 1.0
    assert verdict.details == ()  # identical: no diff


def test_artifact_matches_golden_details_are_the_unified_diff(workspace: Path) -> None:
    _write(workspace, "golden/ref.md", "# Hook\nJoin us Sunday.\n## CTA\nReply to save a seat.\n")
    _write(workspace, "out.md", "# Hook\nJoin us Saturday.\n## CTA\nReply to save a seat.\n")
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        make_context(workspace),
    )
    assert verdict.details == (
        "--- golden/ref.md",
        "+++ out.md",
        "@@ -1,4 +1,4 @@",
        " # Hook",
        "-Join us Sunday.",
        "+Join us Saturday.",
        " ## CTA",
        " Reply to save a seat.",
    )


def test_artifact_matches_golden_diff_is_capped(workspace: Path) -> None:
    _write(workspace, "golden/ref.md", "".join(f"golden line {i}\n" for i in range(100)))
    _write(workspace, "out.md", "".join(f"other line {i}\n" for i in range(100)))
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        make_context(workspace),
    )
    assert verdict.status == Status.FAIL
    assert len(verdict.details) == 49
    assert verdict.details[:3] == ("--- golden/ref.md", "+++ out.md", "@@ -1,100 +1,100 @@")
    assert verdict.details[-1] == "… 155 more diff lines"


def test_artifact_matches_golden_ignores_case_of_non_ascii_words(workspace: Path) -> None:
    _write(workspace, "golden/ref.md", "Öl über Äpfel und Ähren")
    _write(workspace, "out.md", "ÖL ÜBER ÄPFEL UND ÄHREN")
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.value) == (Status.PASS, 1.0)


@pytest.mark.parametrize(("golden", "candidate"), [("de", "el"), ("el", "ja"), ("ja", "de")])
def test_artifact_matches_golden_fails_unrelated_non_ascii_text(
    workspace: Path, golden: str, candidate: str
) -> None:
    _write(workspace, "golden/ref.md", GOLDEN_TEXTS[golden])
    _write(workspace, "out.md", GOLDEN_TEXTS[candidate])
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.FAIL,
        "ROUGE-L F1 0.000 < 0.7 against 'golden/ref.md'",
    )


def test_artifact_matches_golden_counts_partial_non_ascii_overlap(workspace: Path) -> None:
    # 4 of 4 reference tokens in order inside 8 candidate tokens: P=0.5, R=1, F1=2/3.
    _write(workspace, "golden/ref.md", "Grüße aus München, Jürgen")
    _write(workspace, "out.md", "viele grüße heute aus dem schönen münchen jürgen")
    verdict = evaluate_one(
        {
            "type": "artifact_matches_golden",
            "path": "out.md",
            "golden": "golden/ref.md",
            "rouge_threshold": 0.6,
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.value) == (Status.PASS, 0.6667)


@pytest.mark.parametrize(
    ("threshold", "status", "message"),
    [
        (0.5, Status.PASS, "ROUGE-L F1 0.500 ≥ 0.5 against 'g.md'"),
        (0.49, Status.PASS, "ROUGE-L F1 0.500 ≥ 0.49 against 'g.md'"),
        (0.51, Status.FAIL, "ROUGE-L F1 0.500 < 0.51 against 'g.md'"),
    ],
)
def test_artifact_matches_golden_threshold_boundary(
    workspace: Path, threshold: float, status: Status, message: str
) -> None:
    # LCS "alpha beta" = 2 of 4 tokens each way: P = R = F1 = 0.5.
    _write(workspace, "g.md", "alpha beta gamma delta")
    _write(workspace, "out.md", "alpha beta x y")
    verdict = evaluate_one(
        {
            "type": "artifact_matches_golden",
            "path": "out.md",
            "golden": "g.md",
            "rouge_threshold": threshold,
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (status, message)
    assert (verdict.value, verdict.limit) == (0.5, threshold)


def test_artifact_matches_golden_errors_when_golden_missing(workspace: Path) -> None:
    _write(workspace, "out.md", "text")
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/none.md"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        "golden file 'golden/none.md' not found",
    )


def test_artifact_matches_golden_fails_when_artifact_missing(workspace: Path) -> None:
    _write(workspace, "g.md", "text")
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "g.md"},
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (Status.FAIL, "'out.md' not found")


# --- state_file --------------------------------------------------------------------------------

STATE = """\
status: ready
phase: complete
retries: 0
count: "0"
flag: true
one: 1
note: null
nested:
  a: 1
  b:
    c: [1, 2]
    d: x
items: [1, 2, 3]
"""


@pytest.mark.parametrize(
    ("expected", "status", "message"),
    [
        ({"expected_status": "ready"}, Status.PASS, "'state.yaml' matches 1 expected value(s)"),
        (
            {"expected_status": "done"},
            Status.FAIL,
            '\'state.yaml\': status: expected "done", found "ready"',
        ),
        (
            {"expected_fields": {"phase": "complete", "retries": 0}},
            Status.PASS,
            "'state.yaml' matches 2 expected value(s)",
        ),
        (
            {"expected_status": "ready", "expected_fields": {"phase": "complete"}},
            Status.PASS,
            "'state.yaml' matches 2 expected value(s)",
        ),
        (
            {"expected_fields": {"retries": "0"}},
            Status.FAIL,
            "'state.yaml': retries: expected \"0\", found 0",
        ),
        (
            {"expected_fields": {"count": 0}},
            Status.FAIL,
            "'state.yaml': count: expected 0, found \"0\"",
        ),
        (
            {"expected_fields": {"flag": 1}},
            Status.FAIL,
            "'state.yaml': flag: expected 1, found true",
        ),
        (
            {"expected_fields": {"one": True}},
            Status.FAIL,
            "'state.yaml': one: expected true, found 1",
        ),
        (
            {"expected_fields": {"one": 1.0}},
            Status.PASS,
            "'state.yaml' matches 1 expected value(s)",
        ),
        (
            {"expected_fields": {"note": None}},
            Status.PASS,
            "'state.yaml' matches 1 expected value(s)",
        ),
        ({"expected_fields": {"absent": None}}, Status.FAIL, "'state.yaml': absent: missing"),
        (
            {"expected_fields": {"nested": {"a": 1}}},
            Status.PASS,
            "'state.yaml' matches 1 expected value(s)",
        ),
        (
            {"expected_fields": {"nested": {"b": {"d": "x"}}}},
            Status.PASS,
            "'state.yaml' matches 1 expected value(s)",
        ),
        (
            {"expected_fields": {"nested": {"b": {"d": "y", "e": 1}}}},
            Status.FAIL,
            '\'state.yaml\': nested.b.d: expected "y", found "x"; nested.b.e: missing',
        ),
        (
            {"expected_fields": {"nested.b.d": "x", "nested.b.c": [1, 2]}},
            Status.PASS,
            "'state.yaml' matches 2 expected value(s)",
        ),
        (
            {"expected_fields": {"nested.b.c": [1]}},
            Status.FAIL,
            "'state.yaml': nested.b.c: expected [1], found [1, 2]",
        ),
        (
            {"expected_fields": {"items": [3, 2, 1]}},
            Status.FAIL,
            "'state.yaml': items: expected [3, 2, 1], found [1, 2, 3]",
        ),
        (
            {"expected_fields": {"items": [1, 2, 3]}},
            Status.PASS,
            "'state.yaml' matches 1 expected value(s)",
        ),
        (
            {"expected_fields": {"one": {"x": 1}}},
            Status.FAIL,
            "'state.yaml': one: expected {\"x\": 1}, found 1",
        ),
        ({"expected_fields": {"nested.zz": 1}}, Status.FAIL, "'state.yaml': nested.zz: missing"),
    ],
)
def test_state_file_expected_fields_is_a_strict_recursive_subset(
    workspace: Path, expected: dict[str, Any], status: Status, message: str
) -> None:
    _write(workspace, "state.yaml", STATE)
    verdict = evaluate_one(
        {"type": "state_file", "path": "state.yaml", **expected}, make_context(workspace)
    )
    assert (verdict.status, verdict.message) == (status, message)


@pytest.mark.parametrize("field", ["path", "state_path"])
def test_state_file_accepts_path_or_state_path_and_json(workspace: Path, field: str) -> None:
    _write(workspace, "memory/state.json", json.dumps({"status": "ready", "phase": "complete"}))
    verdict = evaluate_one(
        {
            "type": "state_file",
            field: "memory/state.json",
            "expected_status": "ready",
            "expected_fields": {"phase": "complete"},
        },
        make_context(workspace),
    )
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "'memory/state.json' matches 2 expected value(s)",
    )


def test_state_file_requires_path_or_state_path() -> None:
    with pytest.raises(ValidationError, match="one of 'path', 'state_path' is required"):
        evaluate_one({"type": "state_file", "expected_status": "ok"}, make_context(Path(".")))


@pytest.mark.parametrize(
    ("text", "status", "message"),
    [
        (None, Status.FAIL, "state file 'state.yaml' not found"),
        ("status: [ready\n", Status.ERROR, "'state.yaml' is not valid YAML: "),
        ("- a\n- b\n", Status.ERROR, "state file 'state.yaml' is not a mapping"),
    ],
)
def test_state_file_unreadable_states(
    workspace: Path, text: str | None, status: Status, message: str
) -> None:
    if text is not None:
        _write(workspace, "state.yaml", text)
    verdict = evaluate_one(
        {"type": "state_file", "path": "state.yaml", "expected_status": "ready"},
        make_context(workspace),
    )
    assert verdict.status == status
    assert verdict.message.startswith(message)


def test_state_file_resolves_against_workspace_not_cwd(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(workspace, "state.yaml", "status: ready\n")
    _write(tmp_path / "elsewhere", "state.yaml", "status: other\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    verdict = evaluate_one(
        {"type": "state_file", "state_path": "state.yaml", "expected_status": "ready"},
        make_context(workspace),
    )
    assert verdict.status == Status.PASS


def test_artifact_absent_words_rejects_blank_words_at_load() -> None:
    from clawspec.assertions import REGISTRY

    with pytest.raises(ValidationError, match="must not contain empty entries"):
        REGISTRY["artifact_absent_words"].model.model_validate(
            {"type": "artifact_absent_words", "path": "a.md", "words": ["ok", " "]}
        )


def test_a_file_being_written_is_judged_once_it_has_content(workspace: Path) -> None:
    """An agent's write creates the file, then fills it: an empty file is waited on while the
    timeout lasts (the write below is exactly that: created empty, filled a moment later)."""
    path = workspace / "doc.md"
    path.write_text("", encoding="utf-8")
    writer = _later(0.3, lambda: _write(workspace, "doc.md", "# Hook\n"))
    verdict = evaluate_one(
        {"type": "artifact_contains", "path": "doc.md", "sections": ["hook"], "timeout": 10},
        make_context(workspace),
    )
    writer.join()
    assert verdict.status == Status.PASS, verdict.message


def test_a_file_that_stays_empty_is_judged_as_it_is(workspace: Path) -> None:
    (workspace / "empty.md").write_text("", encoding="utf-8")
    exists = evaluate_one(
        {"type": "artifact_exists", "path": "empty.md", "timeout": 0.2}, make_context(workspace)
    )
    contains = evaluate_one(
        {"type": "artifact_contains", "path": "empty.md", "sections": ["hook"]},
        make_context(workspace),
    )
    assert (exists.status, exists.message) == (Status.PASS, "'empty.md' exists (0 bytes)")
    assert contains.status == Status.FAIL and "hook" in contains.message

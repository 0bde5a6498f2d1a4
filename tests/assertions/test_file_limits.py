"""Limits on what assertions read: file sizes, ROUGE-L's words, and a huge explicit log.

Over a limit, the verdict is `error` with a message naming the setting to raise (README
"Limits"); the limits are set low here, the files are real.
"""

from __future__ import annotations

import random
import re
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from clawspec.assertions import documents, rouge
from clawspec.assertions.artifact import GOLDEN_DIFF_MAX_INPUT, golden_diff
from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.config.settings import LimitsSettings, Settings
from clawspec.evidence.store import Evidence
from tests.support.harness import evaluate_one, make_context

FIXTURES = Path(__file__).parents[1] / "gateway" / "fixtures"
W1 = "d2817338-ee65-4634-a81a-ae6a811a050a"  # the hook run id of the recorded run `w1`
MIB = 1024 * 1024


def _context(workspace: Path, **limits: int) -> EvalContext:
    return make_context(workspace, Settings(limits=LimitsSettings(**limits)))


def _write(workspace: Path, rel: str, text: str) -> None:
    (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
    (workspace / rel).write_text(text, encoding="utf-8")


# --- files over limits.file_max_bytes --------------------------------------------------------


def test_a_golden_file_over_the_limit_is_an_error_naming_the_setting(workspace: Path) -> None:
    _write(workspace, "golden/ref.md", "word " * 400)  # 2,000 bytes
    _write(workspace, "out.md", "word word")
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        _context(workspace, file_max_bytes=1000),
    )
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        "'golden/ref.md' is 2,000 bytes, over the limit of 1,000 bytes for files assertions "
        "read (limits.file_max_bytes)",
    )


def test_a_file_at_the_limit_is_read(workspace: Path) -> None:
    _write(workspace, "golden/ref.md", "word " * 200)
    _write(workspace, "out.md", "word " * 200)
    verdict = evaluate_one(
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        _context(workspace, file_max_bytes=1000),
    )
    assert (verdict.status, verdict.value) == (Status.PASS, 1.0)


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"},
        {"type": "artifact_contains", "path": "out.md", "sections": ["Hook"]},
        {"type": "artifact_contains", "path": "out.md", "fields": ["title"]},
        {"type": "artifact_absent_words", "path": "out.md", "words": ["urgent"]},
    ],
)
def test_every_artifact_check_refuses_an_artifact_over_the_limit(
    workspace: Path, assertion: dict[str, object]
) -> None:
    _write(workspace, "golden/ref.md", "# Hook\n")
    _write(workspace, "out.md", "---\ntitle: x\n---\n# Hook\n" + "filler text\n" * 200)
    verdict = evaluate_one(assertion, _context(workspace, file_max_bytes=1000))
    assert verdict.status == Status.ERROR
    assert verdict.message.startswith("'out.md' is 2,424 bytes, over the limit of 1,000 bytes")


def test_state_files_and_word_lists_over_the_limit_are_errors(workspace: Path) -> None:
    _write(workspace, "state.yaml", "status: ready\nnotes: |\n" + "  line\n" * 200)
    _write(workspace, "words.yaml", "banned:\n" + "  - word\n" * 200)
    _write(workspace, "out.md", "fine\n")
    ctx = _context(workspace, file_max_bytes=1000)
    state = evaluate_one({"type": "state_file", "path": "state.yaml"}, ctx)
    words = evaluate_one(
        {
            "type": "artifact_absent_words",
            "path": "out.md",
            "source": "words.yaml",
            "key": "banned",
        },
        ctx,
    )
    for verdict in (state, words):
        assert verdict.status == Status.ERROR
        assert "over the limit of 1,000 bytes" in verdict.message
        assert "(limits.file_max_bytes)" in verdict.message


def test_a_sparse_10_gib_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.md"
    with path.open("wb") as handle:
        handle.truncate(10 * 1024**3)  # no disk used: a hole
    # CPU time of this thread, which other processes' load does not stretch (reading the
    # 10 GiB would take far more); the wall clock would.
    started = time.thread_time()
    with pytest.raises(documents.TooLargeError, match="10,737,418,240 bytes"):
        documents.read_text(path, 16 * MIB)
    assert time.thread_time() - started < 2


# --- ROUGE-L ---------------------------------------------------------------------------------


def test_rouge_over_the_word_limit_is_an_error_naming_the_setting(workspace: Path) -> None:
    _write(workspace, "golden/ref.md", "alpha beta gamma")
    _write(workspace, "out.md", "alpha " * 101)
    assertion = {"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/ref.md"}
    verdict = evaluate_one(assertion, _context(workspace, rouge_max_tokens=100))
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        "'out.md' has more than 100 words, more than ROUGE-L compares (limits.rouge_max_tokens)",
    )
    _write(workspace, "out.md", "alpha " * 100)
    verdict = evaluate_one(assertion, _context(workspace, rouge_max_tokens=100))
    assert verdict.status == Status.FAIL and verdict.message.startswith("ROUGE-L F1 0.019 <")


def test_rouge_l_equals_rouge_score() -> None:
    """The bit-parallel LCS against rouge-score's table, on random texts with repeats."""
    from rouge_score import rouge_scorer

    class Words:
        def tokenize(self, text: str) -> list[str]:
            return re.findall(r"\w+", text.lower())

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=Words())
    pick = random.Random(7)
    for _ in range(300):
        vocab = [f"w{i}" for i in range(pick.randint(1, 12))] + ["Öl", "İstanbul", "日本"]
        reference = " ".join(pick.choice(vocab) for _ in range(pick.randint(0, 90)))
        candidate = " ".join(pick.choice(vocab) for _ in range(pick.randint(0, 90)))
        expected = scorer.score(reference, candidate)["rougeL"].fmeasure
        assert rouge.rouge_l_f1(reference, candidate) == pytest.approx(expected, abs=1e-12)


def test_rouge_l_of_long_texts_stays_fast() -> None:
    pick = random.Random(3)
    a = " ".join(f"w{pick.randrange(3000)}" for _ in range(30_000))
    b = " ".join(f"w{pick.randrange(3000)}" for _ in range(30_000))
    started = time.thread_time()  # CPU time: other processes' load does not stretch it
    score = rouge.rouge_l_f1(a, b, 30_000)
    assert 0 < score < 1
    assert time.thread_time() - started < 10  # rouge-score's table: 900 million cells
    assert rouge.lcs_length(["a", "b", "c", "b"], ["b", "c", "b", "a"]) == 3


def test_the_diff_is_left_out_for_files_too_long_to_compare() -> None:
    half = GOLDEN_DIFF_MAX_INPUT // 2 + 1
    reference = "".join(f"line {i}\n" for i in range(half))
    candidate = "".join(f"other {i}\n" for i in range(half))
    assert golden_diff(reference, candidate, "g.md", "o.md") == (
        f"(no diff: the files have {2 * half:,} lines together, more than the "
        f"{GOLDEN_DIFF_MAX_INPUT:,} a diff is computed for)",
    )


# --- an explicit log_path --------------------------------------------------------------------


def _log_context(workspace: Path, noise_mb: int) -> EvalContext:
    """A context for run `w1` whose explicit log holds `noise_mb` of other lines first."""
    log = workspace / "explicit.log"
    noise = b'{"0":"{\\"subsystem\\":\\"diagnostic\\"}","message":"heartbeat"}\n'
    with log.open("wb") as handle:
        handle.write(noise * (noise_mb * MIB // len(noise)))
        with (FIXTURES / "openclaw-real.log").open("rb") as real:
            shutil.copyfileobj(real, handle)
    run = RunInfo("test", "testrun0000000001", datetime.now(UTC), gateway_run_id="gw-other")
    evidence = Evidence(requests.Session())  # no active log: no offset is known for this one
    ctx = make_context(workspace, Settings(limits=LimitsSettings(log_tail_bytes=MIB)), run=run)
    ctx.evidence = evidence
    ctx.timeout_s = 2.0
    return ctx


def test_an_explicit_log_is_read_from_its_tail_and_the_verdict_says_so(workspace: Path) -> None:
    ctx = _log_context(workspace, 3)
    assertion = {
        "type": "tool_was_called",
        "tool": "write",
        "log_path": "explicit.log",
        "run_id": W1,
    }
    verdict = evaluate_one(assertion, ctx)
    assert verdict.status == Status.PASS
    assert verdict.message.startswith(f"tool 'write' called 1 time in run {W1} (in the last 1 MiB")
    assert "limits.log_tail_bytes" in verdict.message


def test_a_run_older_than_the_tail_is_not_found_and_the_error_says_why(workspace: Path) -> None:
    ctx = _log_context(workspace, 0)
    log = workspace / "explicit.log"
    with log.open("ab") as handle:
        handle.write(b'{"message":"later"}\n' * (2 * MIB // 20))
    assertion = {
        "type": "tool_not_called",
        "tool": "exec",
        "log_path": "explicit.log",
        "run_id": W1,
    }
    verdict = evaluate_one(assertion, ctx)
    assert verdict.status == Status.ERROR
    assert verdict.message.startswith(f"run {W1} (in the last 1 MiB of the log: limits.log_tail")
    assert "not found in log" in verdict.message


def test_a_state_file_alias_bomb_is_an_error_not_a_hang(workspace: Path) -> None:
    from tests.contracts.test_limits import alias_bomb

    _write(workspace, "state.yaml", alias_bomb())
    started = time.thread_time()  # CPU time: other processes' load does not stretch it
    verdict = evaluate_one(
        {"type": "state_file", "path": "state.yaml", "expected_fields": {"scenarios": "x"}},
        make_context(workspace),
    )
    assert time.thread_time() - started < 5
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        "'state.yaml' is not valid YAML: aliases (*name) repeat more than "
        "100,000 values in all at line 7",
    )


# --- a folder where a file should be ----------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        {"type": "artifact_contains", "path": "out/adir", "sections": ["x"]},
        {"type": "artifact_absent_words", "path": "out/adir", "words": ["x"]},
        {"type": "state_file", "path": "out/adir", "expected_status": "ok"},
        {"type": "log_entry", "path": "out/adir", "pattern": "x"},
        {"type": "log_entry", "path": "out/adir", "pattern": "x", "run_id": "r1"},
    ],
    ids=lambda item: f"{item['type']}{'-run' if 'run_id' in item else ''}",
)
def test_a_folder_where_a_file_should_be_is_the_assertions_error(
    workspace: Path, item: dict[str, object]
) -> None:
    """An agent may make a folder where a file was expected: an ordinary error verdict naming
    it, not an internal error of ClawSpec."""
    (workspace / "out" / "adir").mkdir(parents=True)
    verdict = evaluate_one(item, _context(workspace))
    assert verdict.status == Status.ERROR
    assert "is a folder" in verdict.message and "internal error" not in verdict.message

"""The bytes pre-filter of the whole-file search never hides a match: a JSON line's `message`
is matched decoded, while its raw bytes hold quotes, backslashes, line breaks, non-ASCII
characters and even plain letters escaped (`\\"`, `\\\\`, `\\n`, `\\u00e9`, `\\u0074`, `\\/`).
Every answer is checked against the straightforward reading (each line decoded, each JSON line
parsed), on real files, with blocks small enough that lines are cut across reads."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from clawspec.gateway.logs import lines as log_lines
from clawspec.gateway.logs.lines import LogLines, Match, Pattern
from tests.gateway.test_log_lines import reference
from tests.support.harness import evaluate_one, make_context

FILLER = '{"time": "t", "level": "debug", "message": "heartbeat: active=0 waiting=0"}\n'


def _log(path: Path, *lines: str) -> int:
    """Filler lines around `lines` (each a whole line); the number of lines written."""
    body = [FILLER * 3, *lines, FILLER * 2]
    path.write_text("".join(body), encoding="utf-8")
    return len(path.read_bytes().splitlines())


def _raw(message: str, ascii_only: bool = False) -> str:
    """A JSON log line as a writer that escapes all non-ASCII (Python's default) writes it."""
    return json.dumps({"time": "t", "message": message}, ensure_ascii=ascii_only) + "\n"


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        (_raw('the agent said "approved" twice'), 'said "approved"'),  # \" in the raw bytes
        (_raw('the agent said "approved" twice'), r'"approved" twice$'),
        (_raw("saved to C:\\temp\\new.md"), "C:\\temp\\new"),  # \\ in the raw bytes
        (_raw("first\nsecond half"), "first\nsecond"),  # \n: only the message has the break
        (_raw("café au lait", ascii_only=True), "café au"),  # caf\u00e9
        (_raw("café au lait", ascii_only=True), r"caf. au"),
        (_raw("naïve ☃ snowman"), "ïve ☃ snow"),  # raw UTF-8
        ('{"message": "\\u0074ool=exec ran"}\n', r"tool=exec\b"),  # a plain letter escaped
        ('{"message": "see http:\\/\\/example.test\\/a"}\n', "http://example.test/a"),
        ('{"message": "\\u212Aelvin scale"}\n', "(?i)kelvin scale"),  # K sign folds to k
        ('{"message": "\u212aelvin scale"}\n', "(?i)kelvin scale"),  # the same, raw UTF-8
        ('{"message": "\u017fcope"}\n', "(?i)scope"),  # long s folds to s
        ('{"message": "TOOL=EXEC done"}\n', r"(?i)tool=exec\b"),
        ('{"message": "tab\\there"}\n', "tab\there"),
        ('{"message": "emoji \\ud83d\\ude00 end"}\n', "emoji \U0001f600 end"),
    ],
)
def test_a_match_only_the_decoded_message_holds_is_found(
    tmp_path: Path, line: str, pattern: str
) -> None:
    path = tmp_path / "gw.log"
    total = _log(path, line)
    assert reference(path, pattern).line == 4  # the test's own premise
    assert LogLines(path).first_match(Pattern(pattern)) == Match(4, total)


@pytest.mark.parametrize(
    "pattern",
    [
        "NEVER-IN-THIS-LOG",
        r"tool=exec\b",
        '"approved" thrice',
        "(?i)kelvin scales",
        r"^heartbeat$",
        "café noir",
    ],
)
def test_an_absent_pattern_is_absent_escaped_lines_or_not(tmp_path: Path, pattern: str) -> None:
    path = tmp_path / "gw.log"
    lines = [
        _raw('the agent said "approved" twice'),
        _raw("café au lait", ascii_only=True),
        '{"message": "\\u212Aelvin scale"}\n',
        "tool=executor started\n",  # holds the needle, fails the \b
    ]
    total = _log(path, *lines)
    index = LogLines(path)
    assert index.first_match(Pattern(pattern)) == Match(None, total)


def test_anchors_hold_per_line_for_raw_text_and_messages(tmp_path: Path) -> None:
    path = tmp_path / "gw.log"
    total = _log(
        path,
        "x tool=exec\n",  # not at the start of its line
        "tool=exec y\n",  # not at its end
        "crlf tool=exec\r\n",
        "lone cr\rtool=exec\n",  # a lone CR ends a line for a text-mode file: line 8
        _raw("tool=exec"),
    )
    index = LogLines(path)
    assert index.first_match(Pattern("^tool=exec$")) == Match(8, total)
    assert index.first_match(Pattern("^tool=exec")) == Match(5, total)
    assert index.first_match(Pattern("tool=exec$")) == Match(4, total)
    assert index.first_match(Pattern('^tool=exec"')) == Match(None, total)
    for pattern in ("^tool=exec$", "^tool=exec", "tool=exec$", "^lone cr$", "crlf tool=exec$"):
        assert index.first_match(Pattern(pattern)).line == reference(path, pattern).line


@pytest.mark.parametrize("at", range(0, 90, 7))
def test_a_match_across_a_block_boundary_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int
) -> None:
    """Blocks of 128 bytes; the escaped line starts at byte `at` + 40 of the file, so the read
    boundary falls before, inside (inside its needle for some `at`) or after it."""
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 128)
    path = tmp_path / "gw.log"
    head = "h" * (40 + at) + "\n"
    target = '{"message": "said \\"approved\\" at \\u0074ool=exec"}\n'
    path.write_text(head + "short\n" + target + "tail line\n" * 3, encoding="utf-8")
    index = LogLines(path)
    for pattern in ('said "approved"', r"at tool=exec\b", 'ved" at tool', "approved"):
        assert index.first_match(Pattern(pattern)) == Match(3, 6), pattern


PIECES = [
    FILLER,
    _raw('quote "q" and back\\slash'),
    _raw("caf\u00e9 \u212aelvin \u017f", ascii_only=True),
    _raw("caf\u00e9 \u212aelvin \u017f"),
    _raw("multi\nline message"),
    '{"message": "\\u0074ool=exec \\/path\\/to"}\n',
    "tool=exec raw\n",
    "tool=executor raw\n",
    "crlf line\r\n",
    '{"message": 42, "text": "tool=exec"}\n',
    "{broken json tool=exec\n",
    "\n",
]
PATTERNS = [
    "tool=exec",
    r"tool=exec\b",
    r"^tool=exec\b",
    r"tool=exec$",
    r"(?i)KELVIN",
    r"(?i)\u212aELVIN",
    "café",
    r"caf. ",
    "/path/to",
    r"\/path",
    '"q" and',
    r"back\\slash$",
    "multi\nline",
    r"^line message$",
    r"ex+ec r",
    r"x{0}tool",
    r"(?:raw|json)",
    r"e[cx]ut",
    r"^$",
    "crlf line$",
    "NEVER-IN-THIS-LOG",
]


@pytest.mark.parametrize("block", [4 * 1024 * 1024, 200, "gram index"])
def test_random_logs_of_escaped_lines_match_the_straightforward_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int | str
) -> None:
    """The bytes pre-filter with default and small blocks, and the gram index (which a file
    goes to once many patterns have searched it) given the same lines."""
    if isinstance(block, int):
        monkeypatch.setattr(log_lines, "BLOCK_BYTES", block)
    else:
        monkeypatch.setattr(log_lines, "INDEX_MIN_BYTES", 0)
        monkeypatch.setattr(log_lines, "INDEX_AFTER", 0)
    rng = random.Random(str(block))
    path = tmp_path / "gw.log"
    for round_ in range(40):
        pieces = [rng.choice(PIECES) for _ in range(rng.randrange(1, 12))]
        path.write_text("".join(pieces), encoding="utf-8")
        index = LogLines(path)
        for pattern in PATTERNS:
            got, want = index.first_match(Pattern(pattern)), reference(path, pattern)
            assert got.line == want.line, (round_, pattern, pieces)


def test_log_entry_passes_on_a_match_inside_an_escaped_message(tmp_path: Path) -> None:
    _log(tmp_path / "agent.log", _raw('decision: "approved" by the reviewer\n(final)'))
    ctx = make_context(tmp_path)
    verdict = evaluate_one('type: log_entry\npath: agent.log\npattern: "\\"approved\\" by"', ctx)
    assert verdict.status.value == "pass"
    assert verdict.message == "line 4 of 'agent.log' matches '\"approved\" by'"
    absent = evaluate_one("type: log_entry\npath: agent.log\npattern: NEVER-IN-THIS-LOG", ctx)
    assert absent.status.value == "fail"
    assert absent.message == ("no line of 'agent.log' matches 'NEVER-IN-THIS-LOG' (6 lines read)")

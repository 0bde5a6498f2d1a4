"""Scenario outlines at load time, through the real CLI and loader: rows inline and from CSV,
YAML, JSON and JSONL files, type-keeping substitution, and every load error at its exact
`file:line:column` (the row's line in the contract, or its line in the data file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.contracts.loader import load_contracts
from clawspec.errors import ContractError, UsageError
from clawspec.runner.scenario import ScenarioPlan
from clawspec.selection.filters import select_scenarios

HEADER = 'version: "1.0"\ntarget: {type: skill, path: skills/news}\nscenarios:\n'

# Line numbers are part of each test: line 4 is the first scenario's `- name:`.
INLINE = (
    HEADER
    + """\
  - name: drafts
    tags: [newsletter]
    examples:
      - {id: easter, topic: Easter, budget: 12000, words: []}
      - {topic: Advent, budget: 9000, tags: [slow], words: []}
      - topic: Lent
        budget: 7
        words: [a, b]
        description: the long one
    when: {invoke: "/send-newsletter {{vars.topic}} {{run_id}}", params: {w: "{{vars.words}}"}}
    then:
      - type: token_budget
        max_total_tokens: "{{vars.budget}}"
  - name: plain
    when: {invoke: x}
    then: [{type: file_absent, path: x}]
"""
)


def _errors(capsys: pytest.CaptureFixture[str], *paths: str) -> list[str]:
    code = main(["validate", *paths])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[-1].endswith("problem(s) found; nothing was run")
    return [line.removeprefix("error: ") for line in lines[:-1]]


def _load(workspace: Path, name: str = "case.clawspec.yaml") -> list[ScenarioPlan]:
    (loaded,) = load_contracts([workspace / name], workspace, {})
    return [ScenarioPlan(c, i, s) for c, i, s in select_scenarios([loaded])]


def test_each_row_is_a_scenario_of_its_own_with_its_values_typed(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    write_contract(INLINE)
    plans = _load(workspace)
    assert [p.identity.name for p in plans] == [
        "drafts[easter]",
        "drafts[2]",
        "drafts[3]",
        "plain",
    ]
    assert plans[0].id == "case.clawspec.yaml::drafts[easter]"
    assert [p.contract.scenario_line(p.index) for p in plans] == [7, 8, 9, 17]
    easter, _, lent, plain = plans
    # A string that is exactly one placeholder keeps the value's type.
    budgets = [p.scenario.then[0].max_total_tokens for p in plans[:3]]
    assert budgets == [12000, 9000, 7]
    # Inside longer text: scalars as written, lists as compact JSON; run-time templates stay.
    assert easter.scenario.when.invoke == "/send-newsletter Easter {{run_id}}"
    assert lent.scenario.when.params == {"w": ["a", "b"]}
    assert [p.scenario.tags for p in plans] == [
        ["newsletter"],
        ["newsletter", "slow"],
        ["newsletter"],
        [],
    ]
    assert lent.scenario.description == "the long one"
    assert all(p.scenario.examples is None for p in plans)
    # Assertion lines stay the outline's.
    assert easter.contract.assertion_line(easter.index, "then", 0) == 15
    assert plain.example is None and easter.example is not None
    assert easter.example.source is None


def test_a_number_inside_text_renders_as_written(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    write_contract(
        HEADER
        + """\
  - name: mixed
    examples: [{n: 3, ok: true, ratio: 0.5, m: {a: 1}}]
    when: {invoke: "n={{vars.n}} ok={{vars.ok}} r={{ vars.ratio }} m={{vars.m}}"}
    then: [{type: file_absent, path: "out/{{vars.n}}.md"}]
"""
    )
    (plan,) = _load(workspace)
    assert plan.scenario.when.invoke == 'n=3 ok=true r=0.5 m={"a":1}'
    assert plan.scenario.then[0].path == "out/3.md"


def test_a_placeholder_in_a_mapping_key_is_substituted_as_text(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A key is a string of the scenario: `{{vars.k}}` there is the row's value, as text (it
    stayed literal, and the run looked for a field named `{{vars.k}}`); an undefined name in a
    key is a load error like anywhere else."""
    flags = """  - name: flags
    examples: [{k: 7}]
    when: {invoke: "go"}
    then: [{type: state_file, path: flags.yaml, expected_fields: {"{{vars.KEY}}": ok}}]
"""
    write_contract(HEADER + flags.replace("KEY", "k"))
    (plan,) = _load(workspace)
    assert plan.scenario.then[0].expected_fields == {"7": "ok"}
    write_contract(HEADER + flags.replace("KEY", "nope"))
    assert main(["validate", "."]) == 2
    assert "vars.nope" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("suffix", "text", "lines"),
    [
        ("csv", "id,topic,budget\neaster,Easter,12000\n\n,Advent,9000\n", [2, 4]),
        ("yaml", "- {id: easter, topic: Easter, budget: 12000}\n\n"
                 "- topic: Advent\n  budget: 9000\n", [1, 3]),
        ("json", '[\n  {"id": "easter", "topic": "Easter", "budget": 12000},\n\n'
                 '  {"topic": "Advent", "budget": 9000}\n]\n', [2, 4]),
        ("jsonl", '{"id": "easter", "topic": "Easter", "budget": 12000}\n\n'
                  '{"topic": "Advent", "budget": "9000"}\n', [1, 3]),
    ],
)  # fmt: skip
def test_rows_from_a_data_file_beside_the_contract(
    workspace: Path, write_contract: Callable[..., Path], suffix: str, text: str, lines: list[int]
) -> None:
    (workspace / "skills" / "news").mkdir(parents=True)
    (workspace / "skills" / "news" / f"cases.{suffix}").write_text(text, encoding="utf-8")
    write_contract(
        HEADER
        + f"""\
  - name: drafts
    examples: {{file: cases.{suffix}}}
    when: {{invoke: "/send-newsletter {{{{vars.topic}}}}"}}
    then:
      - type: token_budget
        max_total_tokens: "{{{{vars.budget}}}}"
""",
        "skills/news/tests.clawspec.yaml",
    )
    plans = _load(workspace, "skills/news/tests.clawspec.yaml")
    assert [p.identity.name for p in plans] == ["drafts[easter]", "drafts[2]"]
    # CSV values are text: the model turns "12000" into the integer it declares.
    assert [p.scenario.then[0].max_total_tokens for p in plans] == [12000, 9000]
    assert [p.scenario.when.invoke for p in plans] == [
        "/send-newsletter Easter",
        "/send-newsletter Advent",
    ]
    # A data-file row's line is its outline's; the file and its line go to the report.
    assert [p.contract.scenario_line(p.index) for p in plans] == [4, 4]
    sources = [p.example.source for p in plans if p.example]
    assert sources == [f"skills/news/cases.{suffix}:{n}" for n in lines]


def test_csv_tags_and_an_empty_id_cell(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    (workspace / "cases.csv").write_text("id,tags,topic\n,slow fast,A\nb,,B\n", encoding="utf-8")
    write_contract(
        HEADER
        + """\
  - name: t
    tags: [base]
    examples: {file: cases.csv}
    when: {invoke: "{{vars.topic}}"}
    then: [{type: file_absent, path: x}]
"""
    )
    plans = _load(workspace)
    assert [(p.identity.name, p.scenario.tags) for p in plans] == [
        ("t[1]", ["base", "slow", "fast"]),
        ("t[b]", ["base"]),
    ]


OUTLINE = """\
  - name: drafts
    examples: {examples}
    when: {{invoke: "/send {{{{vars.topic}}}}"}}
    then:
      - type: token_budget
        max_total_tokens: "{{{{vars.budget}}}}"
"""


def _outline(examples: str) -> str:
    return HEADER + OUTLINE.format(examples=examples)


@pytest.mark.parametrize(
    ("contract", "files", "expected"),
    [
        pytest.param(
            _outline("\n      - {id: a, topic: A, budget: 1}\n      - {id: b, budget: 2}"),
            {},
            ["case.clawspec.yaml:7:9: scenario 'drafts', row 'b': '{{vars.topic}}' is not "
             "defined by this row (it defines budget)"],
            id="undefined-variable-inline-row",
        ),
        pytest.param(
            _outline("{file: cases.csv}"),
            {"cases.csv": "id,topic,budget\na,A,1\n\nb,B,2\n"},
            [],
            id="csv-ok",
        ),
        pytest.param(
            _outline("{file: cases.csv}"),
            {"cases.csv": "id,budget\na,1\n\nb,2\n"},
            # Said once, where the contract uses it: every row shares the file's columns.
            ["case.clawspec.yaml:6:20: scenario 'drafts': '{{vars.topic}}' is not "
             "defined by any of the outline's 2 rows (cases.csv has the columns: budget)"],
            id="undefined-variable-csv",
        ),
        pytest.param(
            _outline("{file: cases.csv}").replace("vars.budget", "vars.budgte"),
            {"cases.csv": "id,topic,budget\na,A,1\nb,B,2\nc,C,3\n"},
            ["case.clawspec.yaml:9:27: scenario 'drafts', then[0] (token_budget): "
             "'{{vars.budgte}}' is not defined by any of the outline's 3 rows (cases.csv has "
             "the columns: topic, budget); did you mean '{{vars.budget}}'?"],
            id="variable-typo-csv",
        ),
        pytest.param(
            _outline("[{topic: A, budget: 1}]").replace("vars.topic", "vars.tpoic")
            .replace("vars.budget", "vars.tpoic"),
            {},
            ["case.clawspec.yaml:6:20: scenario 'drafts': '{{vars.tpoic}}' is not "
             "defined by any of the outline's 1 row (the rows define: topic, budget); did you "
             "mean '{{vars.topic}}'? (also used on line 9)"],
            id="variable-typo-inline-used-twice",
        ),
        pytest.param(
            HEADER + '  - name: plain\n    when: {invoke: "/send {{vars.topic}}"}\n'
            "    then: [{type: file_absent, path: x}]\n",
            {},
            ["case.clawspec.yaml:5:20: scenario 'plain': '{{vars.topic}}' is a row variable, "
             "but this scenario has no 'examples' (add the rows that define it, or remove the "
             "placeholder)"],
            id="placeholder-without-examples",
        ),
        pytest.param(
            HEADER + "  - name: plain\n    description: 'about {{vars.topic}}'\n"
            "    when: {invoke: x}\n    then: [{type: file_absent, path: x}]\n",
            {},
            ["case.clawspec.yaml:5:18: scenario 'plain': '{{vars.topic}}' is a row variable, "
             "but this scenario has no 'examples' (add the rows that define it, or remove the "
             "placeholder)"],
            id="placeholder-without-examples-in-description",
        ),
        pytest.param(
            HEADER + "  - name: 'drafts {{vars.topic}}'\n    examples: [{topic: A}]\n"
            '    when: {invoke: "{{vars.topic}}"}\n    then: [{type: file_absent, path: x}]\n',
            {},
            ["case.clawspec.yaml:4:11: scenario 'drafts {{vars.topic}}': 'name' cannot hold a "
             "placeholder ('{{vars.topic}}'): each row runs as 'name[row id]'"],
            id="placeholder-in-name",
        ),
        pytest.param(
            _outline("\n      - {id: a, topic: A, budget: 1}\n      - {topic: B, budget: 2}"
                     "\n      - {id: 2, topic: C, budget: 3}"),
            {},
            ["case.clawspec.yaml:8:9: scenario 'drafts': duplicate row id '2' (row 2 at "
             "case.clawspec.yaml:7:9 has it; ids default to the row's position)"],
            id="duplicate-row-ids",
        ),
        pytest.param(
            _outline("[]"),
            {},
            ["case.clawspec.yaml:5:15: scenario 'drafts': 'examples' is an empty table: give "
             "at least one row"],
            id="empty-table",
        ),
        pytest.param(
            _outline("{file: cases.csv}"),
            {"cases.csv": "id,topic,budget\n"},
            ["cases.csv:1:1: scenario 'drafts': the data file has no rows: give at least one"],
            id="empty-data-file",
        ),
        pytest.param(
            _outline("{file: missing.csv}"),
            {},
            ["case.clawspec.yaml:5:22: scenario 'drafts': examples: data file 'missing.csv' "
             "does not exist"],
            id="data-file-missing",
        ),
        pytest.param(
            _outline("{file: cases.csv}"),
            {"cases.csv": b"id,topic\n\xff\xfe,x\n"},
            ["case.clawspec.yaml:5:22: scenario 'drafts': examples: data file 'cases.csv' is "
             "not UTF-8 text (byte 0xff at offset 9)"],
            id="data-file-unreadable",
        ),
        pytest.param(
            _outline("{file: cases.yaml}"),
            {"cases.yaml": "topic: A\nbudget: 1\n"},
            ["cases.yaml:1:1: scenario 'drafts': the data file must hold a list of rows "
             "(mappings), found dict"],
            id="data-file-not-a-list",
        ),
        pytest.param(
            _outline("{file: cases.yaml}"),
            {"cases.yaml": "- {topic: A, budget: 1}\n- just text\n"},
            ["cases.yaml:2:3: scenario 'drafts': row 2 must be a mapping, found str"],
            id="data-file-row-not-a-mapping",
        ),
        pytest.param(
            _outline("{file: cases.yaml}"),
            {"cases.yaml": "- {topic: A, budget: 1, topic: B}\n- {topic: C, budget: 2, budget: 3}\n"
                           "- just text\n"},
            ["cases.yaml:1:25: scenario 'drafts': duplicate key 'topic' (first given at 1:4): "
             "remove or rename one of them",
             "cases.yaml:2:25: scenario 'drafts': duplicate key 'budget' (first given at 2:14): "
             "remove or rename one of them",
             "cases.yaml:3:3: scenario 'drafts': row 3 must be a mapping, found str"],
            id="data-file-duplicate-keys-all-at-once",
        ),
        pytest.param(
            _outline("{file: cases.jsonl}"),
            {"cases.jsonl": '{"topic": "A", "budget": 1, "topic": "B"}\n'
                            '{"topic": "C", "budget": 2, "budget": 3, "budget": 4}\n'},
            ["cases.jsonl:1:1: scenario 'drafts': duplicate key 'topic': remove or rename one "
             "of them",
             "cases.jsonl:2:1: scenario 'drafts': duplicate key 'budget': remove or rename one "
             "of them"],
            id="jsonl-duplicate-keys",
        ),
        pytest.param(
            _outline("{file: cases.json}"),
            {"cases.json": '[\n  {"topic": "A", "budget": 1},\n  {"topic": "B", "budget": 2, '
                           '"topic": "C"}\n]'},
            ["cases.json:3:3: scenario 'drafts': duplicate key 'topic': remove or rename one "
             "of them"],
            id="json-duplicate-keys",
        ),
        pytest.param(
            _outline("{file: cases.jsonl}"),
            {"cases.jsonl": '{"topic": "A", "budget": 1}\n[1, 2]\n'},
            ["cases.jsonl:2:1: scenario 'drafts': row 2 must be a mapping, found list"],
            id="jsonl-line-not-a-mapping",
        ),
        pytest.param(
            _outline("{file: cases.json}"),
            {"cases.json": '[\n  {"topic": "A", "budget": 1},\n  {"topic": "B", "budget": }\n]'},
            ["cases.json:3:28: scenario 'drafts': invalid JSON: Expecting value"],
            id="json-syntax",
        ),
        pytest.param(
            _outline("{file: cases.csv}"),
            {"cases.csv": "id,topic,budget\na,A,1\nb,B\n"},
            ["cases.csv:3:1: scenario 'drafts': row 2 has 2 cells, the header has 3 (id, "
             "topic, budget)"],
            id="csv-cell-count",
        ),
        pytest.param(
            # Where and what are kept apart: a file name holding ": " stays whole.
            _outline("{file: 'v2: cases.csv'}"),
            {"v2: cases.csv": "id,topic,budget\na,A,1\nb,B\n"},
            ["v2: cases.csv:3:1: scenario 'drafts': row 2 has 2 cells, the header has 3 (id, "
             "topic, budget)"],
            id="data-file-name-with-colon",
        ),
        pytest.param(
            _outline("\n      - {id: a, topic: A, budget: 1}"
                     "\n      - {id: b, topic: B, budget: lots}"),
            {},
            ["case.clawspec.yaml:7:35: scenario 'drafts', row 'b', then[0] (token_budget): "
             "field 'max_total_tokens': input should be a valid integer, unable to parse "
             "string as an integer, found 'lots'"],
            id="row-value-does-not-validate",
        ),
        pytest.param(
            _outline("{file: cases.csv}"),
            {"cases.csv": "id,topic,budget\na,A,1\nb,B,lots\n"},
            ["cases.csv:3:5: scenario 'drafts', row 'b', then[0] (token_budget): field "
             "'max_total_tokens': input should be a valid integer, unable to parse string as "
             "an integer, found 'lots'"],
            id="csv-row-value-does-not-validate",
        ),
        pytest.param(
            _outline("{file: ../cases.csv}"),
            {},
            ["case.clawspec.yaml:5:22: scenario 'drafts': examples: data file '../cases.csv' "
             "is outside the workspace ({ws}); keep it beside the contract"],
            id="data-file-outside-workspace",
        ),
        pytest.param(
            _outline("{file: cases.txt}"),
            {},
            ["case.clawspec.yaml:5:22: scenario 'drafts': examples: data file 'cases.txt' "
             "must end in .csv, .yaml, .yml, .json, .jsonl (found '.txt')"],
            id="data-file-suffix",
        ),
        pytest.param(
            _outline("\n      - {id: a, topic: A, budget: 1, 2x: 3}"),
            {},
            ["case.clawspec.yaml:6:38: scenario 'drafts': row 1: '2x' is not a variable name "
             "(letters, digits and '_', not starting with a digit)"],
            id="row-key-not-a-name",
        ),
        pytest.param(
            _outline("\n      - {id: a, topic: '{{tomorrow}}', budget: 1}"),
            {},
            ["case.clawspec.yaml:6:24: scenario 'drafts', row 'a', 'topic': unknown template "
             "variable '{{tomorrow}}' (known: {{today}}, {{run_id}}, {{run_started_at}}, "
             "{{scenario}}, {{target}}, {{workspace}}, {{gateway_log}}, {{env.NAME}}, "
             "{{vars.NAME}})"],
            id="row-value-with-unknown-template",
        ),
    ],
)  # fmt: skip
def test_load_errors_point_at_the_row_or_the_data_file_line(
    workspace: Path,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    contract: str,
    files: dict[str, str | bytes],
    expected: list[str],
) -> None:
    for name, content in files.items():
        data = content.encode() if isinstance(content, str) else content
        (workspace / name).write_bytes(data)
    write_contract(contract)
    if not expected:
        assert main(["validate", "case.clawspec.yaml"]) == 0
        return
    expected = [e.replace("{ws}", str(workspace)) for e in expected]
    assert _errors(capsys, "case.clawspec.yaml") == expected


def test_an_outline_error_and_a_plain_error_come_in_file_order(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "cases.csv").write_text("topic,budget\nA,x\n", encoding="utf-8")
    write_contract(
        _outline("{file: cases.csv}")
        + "  - name: broken\n    when: {invoke: x}\n    then: [{type: nope}]\n"
    )
    errors = _errors(capsys, "case.clawspec.yaml")
    assert [e.split(": ", 1)[0] for e in errors] == ["cases.csv:2:3", "case.clawspec.yaml:12:13"]


def test_an_outline_mistake_not_from_a_row_is_reported_once_at_the_outline(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(
        HEADER
        + """\
  - name: drafts
    examples: [{topic: A}, {topic: B}]
    when: {invoke: "{{vars.topic}}"}
    then: [{type: file_absent, path: x, colour: red}]
"""
    )
    assert _errors(capsys, "case.clawspec.yaml") == [
        "case.clawspec.yaml:7:41: scenario 'drafts', then[0] (file_absent): unknown field "
        "'colour' (allowed: path)"
    ]


def test_scenario_filter_selects_an_outline_or_one_row(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    write_contract(INLINE)
    (loaded,) = load_contracts([workspace / "case.clawspec.yaml"], workspace, {})

    def names(*selected: str, tags: tuple[str, ...] = ()) -> list[str]:
        chosen = select_scenarios([loaded], selected, tags)
        return [ScenarioPlan(c, i, s).identity.name for c, i, s in chosen]

    assert names("drafts") == ["drafts[easter]", "drafts[2]", "drafts[3]"]
    assert names("drafts[easter]", "plain") == ["drafts[easter]", "plain"]
    assert names(tags=("slow",)) == ["drafts[2]"]
    with pytest.raises(UsageError, match=r"no scenario named 'drafts\[nope\]'"):
        names("drafts[nope]")


def test_a_thousand_rows_load(workspace: Path, write_contract: Callable[..., Path]) -> None:
    rows = "".join(f"{i},topic {i},{i * 10}\n" for i in range(1000))
    (workspace / "cases.csv").write_text("id,topic,budget\n" + rows, encoding="utf-8")
    write_contract(_outline("{file: cases.csv}"))
    plans = _load(workspace)
    assert len(plans) == 1000
    assert plans[-1].identity.name == "drafts[999]"
    assert plans[-1].scenario.then[0].max_total_tokens == 9990
    assert plans[-1].example is not None and plans[-1].example.source == "cases.csv:1001"


def test_the_loader_raises_contract_error_for_outline_problems(
    workspace: Path, write_contract: Callable[..., Path]
) -> None:
    write_contract(_outline("[]"))
    with pytest.raises(ContractError):
        load_contracts([workspace / "case.clawspec.yaml"], workspace, {})

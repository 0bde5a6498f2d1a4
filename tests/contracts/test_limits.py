"""Contract limits (clawspec/inputs/limits.py): size, nesting and YAML aliases.

Each is a contract error at `file:line:column` (exit 2), the same whichever parser reads the
file: libyaml with positions of list items only, libyaml with every position, or PyYAML's
pure-Python parser (used to word libyaml's rejections, and where libyaml is missing).
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
import yaml

from clawspec.cli import main
from clawspec.contracts.reading import read_contract
from clawspec.inputs import source
from clawspec.inputs.limits import MAX_DEPTH, ContractLimits
from clawspec.inputs.source import SourceError, parse_yaml

HEAD = 'version: "1.0"\ntarget: {type: skill, path: skills/x}\n'
SCENARIO = "  - name: s{i}\n    when: {{invoke: /go}}\n    then: *checks\n"


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs": each level a list of nine aliases of the one before."""
    lines = ['version: "1.0"', "a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    names = "abcdefghijklmnop"
    for prev, name in itertools.pairwise(names[:levels]):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join([*lines, f"scenarios: *{names[levels - 1]}", ""])


def nested_block(depth: int) -> str:
    """`depth` levels of nested block lists under `scenarios` (one value per level)."""
    return 'version: "1.0"\nscenarios:\n  ' + "- " * depth + "x\n"


def nested_flow(depth: int) -> str:
    """`depth` levels of nested flow lists under `scenarios` (one value in the innermost)."""
    return 'version: "1.0"\nscenarios: ' + "[" * depth + "x" + "]" * depth + "\n"


def _every_parser(text: str, alias_nodes: int = 100_000) -> list[str]:
    """The error each way of parsing gives: 'line:column: message'."""
    found = []
    for loader, item_depth in (
        (source._FastLoader, 4),
        (source._FastLoader, None),
        (source._SafeLoader, 4),
        (source._SafeLoader, None),
    ):
        try:
            source._parse(text, Path("c.yaml"), loader, item_depth, alias_nodes)
        except SourceError as exc:
            found.append(f"{exc.mark.line}:{exc.mark.column}: {exc}")
        except yaml.MarkedYAMLError as exc:  # the composer's own (parse_yaml words them)
            mark = exc.problem_mark
            assert mark is not None
            found.append(f"{mark.line + 1}:{mark.column + 1}: invalid YAML: {exc.problem}")
        else:
            found.append("no error")
    return found


# --- aliases ---------------------------------------------------------------------------------


def test_alias_bomb_is_refused_before_any_value_is_built() -> None:
    started = time.thread_time()  # CPU time: other processes' load does not stretch it
    errors = _every_parser(alias_bomb())
    assert time.thread_time() - started < 2
    assert len(set(errors)) == 1
    # the first list whose aliases take the count over 100,000 values: level `f`
    assert errors[0] == (
        "7:4: invalid YAML: aliases (*name) repeat more than 100,000 values in all "
        "(limit: limits.yaml_alias_nodes)"
    )


def test_aliases_within_the_budget_are_expanded() -> None:
    text = "checks: &checks [{type: a}, {type: b}]\nx: *checks\ny: {<<: {k: 1}, z: *checks}\n"
    doc = parse_yaml(text, Path("c.yaml"))
    assert doc.data["x"] == doc.data["checks"] == doc.data["y"]["z"]
    assert doc.data["x"] is not doc.data["checks"]  # plain data: copies, as before


def test_the_budget_counts_every_value_an_alias_repeats() -> None:
    text = "a: &a [1, 2, 3]\nb: [*a, *a]\n"  # each alias repeats 4 values (the list and 3 items)
    assert parse_yaml(text, Path("c.yaml"), alias_nodes=8).data["b"] == [[1, 2, 3]] * 2
    assert (
        _every_parser(text, alias_nodes=7)
        == [
            "2:4: invalid YAML: aliases (*name) repeat more than 7 values in all "
            "(limit: limits.yaml_alias_nodes)"
        ]
        * 4
    )
    with pytest.raises(SourceError, match="more than 0 values"):
        parse_yaml("a: &a x\nb: *a\n", Path("c.yaml"), alias_nodes=0)


def test_an_alias_inside_the_collection_it_names_is_refused() -> None:
    assert (
        _every_parser("a: &a [1, *a]\n")
        == [
            "1:4: invalid YAML: an alias (*name) inside the collection it refers to "
            "(recursive data)"
        ]
        * 4
    )


@pytest.mark.parametrize(
    "text",
    [
        "a: &a [1, 2]\nb: *a\n",
        "- &a [1, 2]\n- *a\n",
        "[&a [1, 2], *a]\n",
        "{a: &a [1, 2], b: *a}\n",
        '{"a":&a [1, 2], "b":*a}\n',
        "a: !!seq &a [1, 2]\nb: *a\n",
        "a: &a\n  - 1\n  - 2\nb:\n  *a\n",
    ],
)
def test_every_way_of_writing_an_alias_counts(text: str) -> None:
    data = parse_yaml(text, Path("c.yaml"), alias_nodes=3).data
    assert list(data.values() if isinstance(data, dict) else data) == [[1, 2], [1, 2]]
    with pytest.raises(SourceError, match="repeat more than 2 values"):
        parse_yaml(text, Path("c.yaml"), alias_nodes=2)


def test_asterisks_and_ampersands_in_text_are_not_aliases() -> None:
    doc = parse_yaml('a: "**/*.md & more"\nb: [x & y]\n', Path("c.yaml"), alias_nodes=0)
    assert doc.data == {"a": "**/*.md & more", "b": ["x & y"]}


# --- nesting ---------------------------------------------------------------------------------


def test_nesting_up_to_the_limit_loads() -> None:
    for text in (nested_block(MAX_DEPTH - 1), nested_flow(MAX_DEPTH - 1)):
        data = parse_yaml(text, Path("c.yaml")).data["scenarios"]
        for _ in range(MAX_DEPTH - 2):
            data = data[0]
        assert data == ["x"]


@pytest.mark.parametrize("depth", [MAX_DEPTH, 150, 900])
def test_deeper_nesting_is_an_error_at_the_first_value_too_deep(depth: int) -> None:
    # the list `scenarios` holds is level 1: a value in its 100th nested list is too deep
    assert (
        _every_parser(nested_block(depth))
        == [
            f"3:{3 + 2 * MAX_DEPTH}: invalid YAML: nesting deeper than 100 levels "
            "(the limit for contracts)"
        ]
        * 4
    )
    assert (
        _every_parser(nested_flow(depth))
        == [
            f"2:{12 + MAX_DEPTH}: invalid YAML: nesting deeper than 100 levels "
            "(the limit for contracts)"
        ]
        * 4
    )


@pytest.mark.parametrize("depth", [150, 5000])
def test_parse_yaml_reports_deep_nesting_past_libyaml_limit_the_same_way(depth: int) -> None:
    # libyaml refuses 1,000 levels itself; the pure-Python parser then words the error
    for text in (nested_block(depth), nested_flow(depth)):
        with pytest.raises(SourceError, match="nesting deeper than 100 levels") as caught:
            parse_yaml(text, Path("c.yaml"), item_depth=4)
        assert caught.value.mark.line in (2, 3)


def test_deep_nesting_through_an_alias_is_refused() -> None:
    inner = "[" * 60 + "]" * 60
    text = f"a: &a {inner}\nb: " + "[" * 50 + "*a" + "]" * 50 + "\n"
    with pytest.raises(SourceError, match="nesting deeper than 100 levels"):
        parse_yaml(text, Path("c.yaml"))


# --- file size -------------------------------------------------------------------------------


def test_a_contract_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(HEAD + "# " + "x" * 5000 + "\n")
    size = path.stat().st_size
    (problem,) = read_contract(path, "big.yaml", ContractLimits(max_bytes=4096))  # type: ignore[misc]
    assert problem.text == (
        f"big.yaml:1:1: contract file is {size:,} bytes, over the limit of 4,096 bytes "
        "(limits.contract_max_bytes)"
    )
    _, doc = read_contract(path, "big.yaml", ContractLimits(max_bytes=size))  # type: ignore[misc]
    assert doc.data["version"] == "1.0"


def test_a_contract_is_read_with_universal_newlines_as_before(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    path.write_bytes(b'version: "1.0"\r\nname: a\rb: c\r\n')
    text, doc = read_contract(path, "crlf.yaml")  # type: ignore[misc]
    assert text == path.read_text(encoding="utf-8")
    assert doc.data == {"version": "1.0", "name": "a", "b": "c"}


# --- through the CLI (settings, exit code) ---------------------------------------------------


def _validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["validate", *args])
    return code, capsys.readouterr().err


def test_validate_and_run_refuse_an_alias_bomb_with_exit_2(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "bomb.yaml").write_text(alias_bomb())
    code, err = _validate(capsys, "bomb.yaml")
    assert code == 2
    assert err.startswith("error: bomb.yaml:7:4: invalid YAML: aliases (*name) repeat more than")
    # `run` loads the same way: nothing is run (the gateway is never asked)
    assert main(["run", "bomb.yaml", "--gateway-base-url", "http://127.0.0.1:9"]) == 2
    assert "bomb.yaml:7:4: invalid YAML: aliases" in capsys.readouterr().err


def test_limits_come_from_the_settings(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = "  - name: s0\n    when: {invoke: /go}\n    then: &checks\n"
    first += "      - {type: artifact_exists, path: out.md}\n"
    body = HEAD + "scenarios:\n" + first + "".join(SCENARIO.format(i=i) for i in range(1, 4))
    (workspace / "c.yaml").write_text(body)
    assert _validate(capsys, "c.yaml") == (0, "")  # 3 aliases x 6 values: within 100,000
    (workspace / "clawspec.yaml").write_text("limits: {yaml_alias_nodes: 8}\n")
    code, err = _validate(capsys, "c.yaml")
    assert code == 2
    # the second alias takes the count to 12: reported at the scenario that holds it
    assert "c.yaml:11:5: invalid YAML: aliases (*name) repeat more than 8 values" in err
    (workspace / "clawspec.yaml").write_text("limits: {contract_max_bytes: 1024}\n")
    (workspace / "c.yaml").write_text(body + "# " + "x" * 2000 + "\n")
    code, err = _validate(capsys, "c.yaml")
    assert code == 2 and "over the limit of 1,024 bytes (limits.contract_max_bytes)" in err


def test_a_contract_just_under_the_limits_is_valid(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    then = "    then:\n      - {{type: artifact_exists, path: out.md}}\n"
    scenario = "  - name: s{i}\n    when: {{invoke: /go}}\n" + then
    body = HEAD + "scenarios:\n" + "".join(scenario.format(i=i) for i in range(20))
    (workspace / "c.yaml").write_text(body)
    (workspace / "clawspec.yaml").write_text(f"limits: {{contract_max_bytes: {len(body)}}}\n")
    assert _validate(capsys, "c.yaml") == (0, "")

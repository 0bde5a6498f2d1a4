"""YAML loading with positions (clawspec/inputs/source.py).

The loader skips work libyaml's composer would do for every node (path resolvers, repeated tag
resolution) and a valid contract keeps only where its list items start: these tests pin that the
data and the positions it returns are those of PyYAML's own safe loader and of a full parse.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clawspec.contracts.explain import PHASES
from clawspec.contracts.reading import ASSERTION_DEPTH
from clawspec.inputs.source import (
    Duplicate,
    DuplicateKeys,
    ItemMarks,
    Mark,
    SourceError,
    parse_yaml,
)

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = sorted(
    [
        *(ROOT / "tests" / "contracts" / "valid").glob("*.yaml"),
        *(ROOT / "examples").rglob("scenarios.yaml"),
        *(ROOT / "examples").rglob("*.clawspec.yaml"),
    ]
)

EVERY_KIND = """\
base: &base {timeout: 30, tags: [a, b]}
merged:
  <<: *base
  name: merged
value_key: {=: 1, other: x}
scalars:
  - plain
  - "double {{today}}"
  - 'single'
  - 12
  - 1.5
  - 0x1F
  - true
  - no
  - null
  - ~
  - 2026-01-31
  - 2026-01-31 10:20:30
  - !!str 42
  - !!binary aGk=
  - |
    literal
    block
  - >
    folded
    block
flow: {a: [1, {b: c}], d: [], e: {}}
numbers_as_keys: {1: one, 2.5: two, false: no}
"""


def _expected(data: object) -> object:
    """What contracts see: PyYAML's safe data with dates as ISO text and keys as text."""
    if isinstance(data, dict):
        return {str(key): _expected(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_expected(item) for item in data]
    return data.isoformat() if hasattr(data, "isoformat") else data


@pytest.mark.parametrize("item_depth", [None, ASSERTION_DEPTH])
def test_data_is_what_the_safe_loader_reads(item_depth: int | None) -> None:
    doc = parse_yaml(EVERY_KIND, Path("x.yaml"), item_depth=item_depth)
    assert doc.data == _expected(yaml.safe_load(EVERY_KIND))
    assert doc.data["merged"] == {"timeout": 30, "tags": ["a", "b"], "name": "merged"}


MERGES = """\
a: &a {k: 1, x: a, only_a: 1}
b: &b {k: 2, x: b}
over: &over
  <<: *a
  k: 3
again:
  <<: *over
  x: c
both:
  <<: [*a, *b]
twice: [*over, *over]
"""


@pytest.mark.parametrize("item_depth", [None, ASSERTION_DEPTH])
def test_a_key_stated_beside_a_merge_overrides_the_merged_one(item_depth: int | None) -> None:
    doc = parse_yaml(MERGES, Path("x.yaml"), item_depth=item_depth)
    # Not compared with PyYAML's safe loader: it reads `again` with `a`'s `k` (a mapping
    # merged into another after it was merged itself loses its own overrides there).
    assert doc.data["over"] == {"k": 3, "x": "a", "only_a": 1}
    assert doc.data["again"] == {"k": 3, "x": "c", "only_a": 1}
    assert doc.data["both"] == {"k": 1, "x": "a", "only_a": 1}  # the first merged one wins
    assert doc.data["twice"] == [doc.data["over"], doc.data["over"]]


def test_contract_corpus_exists() -> None:
    assert len(CONTRACTS) >= 3


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.name)
def test_a_valid_contract_keeps_the_start_of_each_scenario_and_assertion(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    full = parse_yaml(text, path)
    light = parse_yaml(text, path, item_depth=ASSERTION_DEPTH)
    assert light.data == full.data
    assert isinstance(light.values, ItemMarks) and light.keys == {}
    for s_index, scenario in enumerate(full.data["scenarios"]):
        loc: tuple[str | int, ...] = ("scenarios", s_index)
        assert light.value_mark(loc) == full.value_mark(loc) == full.values[loc]
        for phase in PHASES:
            for a_index in range(len(scenario.get(phase) or [])):
                loc = ("scenarios", s_index, phase, a_index)
                assert light.value_mark(loc) == full.values[loc]
    # Every list item kept is one the full parse has, at the same place.
    assert len(light.values) == len(list(light.values)) > 0
    assert all(full.values[loc] == mark for loc, mark in light.values.items())


def test_item_marks_answer_only_for_list_items_they_hold() -> None:
    text = "a:\n  - x\n  -\n    - y\nb: {c: {d: [z]}}\n"
    doc = parse_yaml(text, Path("x.yaml"), item_depth=3)
    assert dict(doc.values) == {
        ("a", 0): Mark(2, 5),
        ("a", 1): Mark(4, 5),
        ("a", 1, 0): Mark(4, 7),
    }
    assert ("b", "c", "d", 0) not in doc.values  # four deep
    assert ("a", 2) not in doc.values and ("a",) not in doc.values and () not in doc.values
    assert doc.value_mark(("a", 1, 0, "deeper")) == Mark(4, 7)  # the nearest parent kept
    assert doc.value_mark(("b", "c", "d", 0)) == Mark(1, 1)


_FIX = ": remove or rename one of them"


@pytest.mark.parametrize("item_depth", [None, ASSERTION_DEPTH])
@pytest.mark.parametrize(
    ("text", "message", "mark"),
    [
        ("a: 1\nb: 2\na: 3\n", f"duplicate key 'a' (first given at 1:1){_FIX}", Mark(3, 1)),
        ("x:\n  - {k: 1, k: 2}\n", f"duplicate key 'k' (first given at 2:6){_FIX}", Mark(2, 12)),
        ("? [a]\n: 1\n", "mapping keys must be plain scalars", Mark(1, 3)),
        (
            "base: &b {k: 1}\nm:\n  <<: *b\n  k: 2\n  k: 3\n",
            f"duplicate key 'k' (first given at 4:3){_FIX}",
            Mark(5, 3),
        ),
    ],
)
def test_structure_errors_point_at_the_key(
    text: str, message: str, mark: Mark, item_depth: int | None
) -> None:
    with pytest.raises(SourceError) as caught:
        parse_yaml(text, Path("x.yaml"), item_depth=item_depth)
    assert (str(caught.value), caught.value.mark) == (message, mark)


@pytest.mark.parametrize("item_depth", [None, ASSERTION_DEPTH])
def test_every_duplicate_key_is_named_and_the_rest_of_the_document_read(
    item_depth: int | None,
) -> None:
    """Each key given again, once even where an alias repeats its mapping, in file order; the
    data holds each key's first value, and keys given twice inside a repeated value count."""
    text = (
        "m: &m {k: 1, k: 2}\n"  # 1
        "a: 1\n"  # 2
        "list:\n"  # 3
        "  - {x: 1, x: 2}\n"  # 4
        "a: {y: 1, y: 2}\n"  # 5: the repeated value has its own
        "n: *m\n"  # 6: the alias repeats line 1's mapping, not its duplicate
    )
    with pytest.raises(DuplicateKeys) as caught:
        parse_yaml(text, Path("x.yaml"), item_depth=item_depth)
    doc = caught.value.doc
    assert doc.duplicates == (
        Duplicate("k", Mark(1, 14), Mark(1, 8)),
        Duplicate("x", Mark(4, 12), Mark(4, 6)),
        Duplicate("a", Mark(5, 1), Mark(2, 1)),
        Duplicate("y", Mark(5, 11), Mark(5, 5)),
    )
    assert doc.data == {"m": {"k": 1}, "a": 1, "list": [{"x": 1}], "n": {"k": 1}}
    assert caught.value.mark == Mark(1, 14)  # a SourceError at the first, for other callers


@pytest.mark.parametrize("item_depth", [None, ASSERTION_DEPTH])
def test_many_mappings_with_keys_given_twice_each_point_at_their_own_first(
    item_depth: int | None,
) -> None:
    """Where a key was first given is found once per mapping (not searched again for every
    duplicate): each of many mappings, one after another, still points at its own."""
    text = "".join(f"- {{a{i}: 1, b: 2, a{i}: 3, b: 4}}\n" for i in range(1, 301))
    with pytest.raises(DuplicateKeys) as caught:
        parse_yaml(text, Path("x.yaml"), item_depth=item_depth)
    duplicates = caught.value.doc.duplicates
    assert len(duplicates) == 600
    for line in (1, 150, 300):
        key, later = f"a{line}", len(f"- {{a{line}: 1, b: 2, ")
        assert Duplicate(key, Mark(line, later + 1), Mark(line, 4)) in duplicates
        assert (
            Duplicate("b", Mark(line, later + len(f"a{line}: 3, ") + 1), Mark(line, later - 5))
            in duplicates
        )

"""YAML loading that keeps `line:column` for every key and value.

PyYAML's composed node tree carries marks; we build plain Python data from it and keep a map
from each item's path (a tuple of keys and indexes) to where its key and value start, so that any
validation error can point at the exact place in the file.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

import yaml

Loc = tuple[str | int, ...]
# libyaml's parser keeps the same marks and is several times faster on large contracts.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Mark(NamedTuple):
    """A 1-based position in a file (a tuple: a contract has one per value, keep them small)."""

    line: int
    column: int


@dataclass
class SourceDoc:
    """Plain data plus the position of every value (and of the key that holds it)."""

    path: Path
    data: Any
    values: dict[Loc, Mark] = field(default_factory=dict)
    keys: dict[Loc, Mark] = field(default_factory=dict)

    def value_mark(self, loc: Loc) -> Mark:
        """Return where the value at `loc` starts (or its nearest parent's)."""
        return _nearest(self.values, loc)

    def key_mark(self, loc: Loc) -> Mark:
        """Return where the key of `loc` starts; list items fall back to the value's start."""
        return self.keys.get(loc) or _nearest(self.values, loc)


class SourceError(ValueError):
    """A YAML syntax/structure problem, with its position."""

    def __init__(self, message: str, mark: Mark) -> None:
        super().__init__(message)
        self.mark = mark


def _nearest(marks: dict[Loc, Mark], loc: Loc) -> Mark:
    while loc not in marks and loc:
        loc = loc[:-1]
    return marks.get(loc, Mark(1, 1))


def _mark(node: yaml.Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


def parse_yaml(text: str, path: Path, mark_depth: int | None = None) -> SourceDoc:
    """Parse one YAML document, raising SourceError at YAML's problem mark.

    `mark_depth` keeps the positions of values at most that deep only (and of no key), for a
    document whose deeper positions are needed only to report errors: large suites load
    faster and smaller, and a document with an error is parsed again with every position.
    """
    try:
        return _parse(text, path, _Loader, mark_depth)
    except yaml.MarkedYAMLError:
        if _Loader is yaml.SafeLoader:
            raise SourceError(*_explain_yaml_error(text, path)) from None
    except SourceError:
        raise
    # libyaml words some problems differently; errors are rare, so the pure-Python parser
    # re-reads the file to report them the same way everywhere.
    raise SourceError(*_explain_yaml_error(text, path)) from None


def _parse(text: str, path: Path, loader_class: Any, mark_depth: int | None = None) -> SourceDoc:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        doc = SourceDoc(path, None)
        if node is not None:
            depth = -1 if mark_depth is None else mark_depth
            doc.data = _build(loader, node, (), doc, depth)
        return doc
    finally:
        loader.dispose()


def _explain_yaml_error(text: str, path: Path) -> tuple[str, Mark]:
    try:
        _parse(text, path, yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Mark(mark.line + 1, mark.column + 1) if mark else Mark(1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context and exc.context_mark and exc.context_mark != mark:
            # e.g. an unclosed quote: the problem is at the end of the file, the cause earlier.
            started = exc.context_mark
            problem += f" ({exc.context} at {started.line + 1}:{started.column + 1})"
        return f"invalid YAML: {problem}", where
    return "invalid YAML", Mark(1, 1)


_STR_TAG = "tag:yaml.org,2002:str"
_SHARED_LEN = 40


def _build(loader: Any, node: yaml.Node, loc: Loc, doc: SourceDoc, depth: int) -> Any:
    """Plain data from `node`, recording marks (all of them when `depth` < 0, else only the
    values at most `depth` deep and no key)."""
    if depth < 0 or len(loc) <= depth:
        doc.values[loc] = _mark(node)
    if isinstance(node, yaml.ScalarNode):
        if node.tag == _STR_TAG:
            # What the constructor would return, without its machinery; short values (types,
            # tool names, file names) repeat across scenarios: one shared copy of each.
            return sys.intern(node.value) if len(node.value) <= _SHARED_LEN else node.value
        value = loader.construct_object(node, deep=True)
        # YAML turns unquoted dates into date objects; contracts treat them as ISO text.
        return value.isoformat() if isinstance(value, datetime | date) else value
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves `<<` merge keys
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _STR_TAG:
                key = sys.intern(key_node.value)
            else:
                key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                raise SourceError("mapping keys must be plain scalars", _mark(key_node))
            key = str(key) if not isinstance(key, str) else key
            if key in result:
                raise SourceError(f"duplicate key '{key}'", _mark(key_node))
            if depth < 0:
                doc.keys[(*loc, key)] = _mark(key_node)
            result[key] = _build(loader, value_node, (*loc, key), doc, depth)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*loc, i), doc, depth) for i, item in enumerate(node.value)]
    value = loader.construct_object(node, deep=True)
    return value.isoformat() if isinstance(value, datetime | date) else value

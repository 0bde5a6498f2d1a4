"""YAML loading that keeps `line:column` for every key and value.

PyYAML's composed node tree carries marks; we build plain Python data from it and keep a map
from each item's path (a tuple of keys and indexes) to where its key and value start, so that any
validation error can point at the exact place in the file.
"""

from __future__ import annotations

import functools
import re
import sys
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from clawspec.inputs.limits import (
    DEFAULT_ALIAS_NODES,
    MAX_DEPTH,
    RECURSIVE_ALIAS,
    too_deep,
    too_many_aliased,
)

Loc = tuple[str | int, ...]
# libyaml's parser keeps the same marks and is several times faster on large contracts.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()  # the safe loaders' tag resolution, path resolvers aside
_NO_PATH_RESOLVERS: dict[Any, None] = {}


class Mark(NamedTuple):
    """A 1-based position in a file (a tuple: a contract has one per value, keep them small)."""

    line: int
    column: int


class ItemMarks(Mapping[Loc, Mark]):
    """Where each item of some lists starts, one packed array per list.

    What a contract that loads without errors keeps of its positions (the lines of its scenarios
    and assertions): a 10,000-scenario suite has 60,000 such items; a tuple key and a Mark for
    each would take ten times the memory.
    """

    def __init__(self) -> None:
        self._lists: dict[Loc, array[int]] = {}

    def add(self, loc: Loc, items: list[yaml.Node]) -> None:
        starts = array("I")
        for item in items:
            mark = item.start_mark
            starts.append(mark.line + 1)
            starts.append(mark.column + 1)
        self._lists[loc] = starts

    def __getitem__(self, loc: Loc) -> Mark:
        index = loc[-1] if loc else None
        starts = self._lists.get(loc[:-1]) if isinstance(index, int) else None
        if starts is None or not 0 <= index < len(starts) // 2:  # type: ignore[operator]
            raise KeyError(loc)
        return Mark(starts[2 * index], starts[2 * index + 1])  # type: ignore[operator]

    def __iter__(self) -> Iterator[Loc]:
        for loc, starts in self._lists.items():
            yield from ((*loc, index) for index in range(len(starts) // 2))

    def __len__(self) -> int:
        return sum(len(starts) // 2 for starts in self._lists.values())


class Duplicate(NamedTuple):
    """A key a mapping states again: where, and where the mapping first states it."""

    key: str
    mark: Mark
    first: Mark

    @property
    def message(self) -> str:
        first = self.first
        return (
            f"duplicate key '{self.key}' (first given at {first.line}:{first.column}): "
            "remove or rename one of them"
        )


@dataclass
class SourceDoc:
    """Plain data plus the position of every value (and of the key that holds it)."""

    path: Path
    data: Any
    values: Mapping[Loc, Mark] = field(default_factory=dict)
    keys: dict[Loc, Mark] = field(default_factory=dict)
    # Keys a mapping states again, in file order: the data holds each one's first value.
    duplicates: tuple[Duplicate, ...] = ()

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


class DuplicateKeys(SourceError):
    """Keys stated twice in one mapping: the first one as the message, every one in
    `doc.duplicates`, and the document otherwise read (each key's first value), so that a
    caller can report them all at once with the document's other problems."""

    def __init__(self, doc: SourceDoc) -> None:
        first = doc.duplicates[0]
        super().__init__(first.message, first.mark)
        self.doc = doc


def _nearest(marks: Mapping[Loc, Mark], loc: Loc) -> Mark:
    while loc not in marks and loc:
        loc = loc[:-1]
    return marks.get(loc, Mark(1, 1))


def _mark(node: yaml.Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


def parse_yaml(
    text: str,
    path: Path,
    item_depth: int | None = None,
    alias_nodes: int = DEFAULT_ALIAS_NODES,
) -> SourceDoc:
    """Parse one YAML document, raising SourceError at YAML's problem mark.

    Data nested deeper than MAX_DEPTH, or aliases repeating more than `alias_nodes` values in
    all, are SourceErrors too (inputs/limits.py), whichever parser reads the file. Keys stated
    twice are DuplicateKeys, raised once the whole document is read: it names every one.
    With `item_depth`, keep only where the list items at most that deep start (no other value,
    no key), for a document whose other positions are needed only to report errors: large
    suites load faster and smaller, and a document with an error is parsed again with every
    position.
    """
    try:
        return _parse(text, path, _FastLoader, item_depth, alias_nodes)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow in a document
        raise SourceError(*_unacceptable(text, exc)) from None
    except yaml.MarkedYAMLError:
        if _Loader is yaml.SafeLoader:
            raise SourceError(*_explain_yaml_error(text, path, alias_nodes)) from None
    except SourceError:
        raise
    # libyaml words some problems differently; errors are rare, so the pure-Python parser
    # re-reads the file to report them the same way everywhere.
    raise SourceError(*_explain_yaml_error(text, path, alias_nodes)) from None


class _DepthLimited:
    """A pure-Python composer recurses for every level: refuse data deeper than MAX_DEPTH
    while composing (libyaml stops at 1,000 levels itself; `_build` checks its nodes)."""

    _depth = 0

    def __init__(self, stream: str) -> None:
        super().__init__(stream)  # type: ignore[call-arg]
        # Filled while the data is built (`_key`): every duplicate key, not the first only.
        self.duplicates: list[Duplicate] = []
        # id(a mapping's pairs) -> (the pairs, key -> its first key node), for the mappings
        # that give a key twice.
        self.firsts: dict[int, tuple[Any, dict[str, Any]]] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self._depth > MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[attr-defined]
            raise yaml.composer.ComposerError(None, None, too_deep(), mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1


class _SafeLoader(_DepthLimited, yaml.SafeLoader):
    """The pure-Python safe loader, depth-limited: it words errors as users see them."""


class _FastLoader(_DepthLimited, _Loader):  # type: ignore[misc,valid-type]
    """The safe loader without the Python work libyaml's composer asks for every node.

    It calls `descend_resolver`/`ascend_resolver` around each node (they only serve path
    resolvers, which safe loading has none of) and `resolve` for each node's tag, a function of
    the node's kind, text and style alone. Builtins stand in for the first two and a cache,
    per document, answers repeated texts (keys, types, tool names) without running Python code.
    """

    descend_resolver = _NO_PATH_RESOLVERS.get  # (parent, index) -> None
    ascend_resolver = int  # () -> 0

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.resolve = functools.lru_cache(maxsize=None)(_RESOLVER.resolve)


def _parse(
    text: str,
    path: Path,
    loader_class: Any,
    item_depth: int | None = None,
    alias_nodes: int = DEFAULT_ALIAS_NODES,
) -> SourceDoc:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return SourceDoc(path, None)
        if _may_alias(text):
            _check_aliases(node, alias_nodes)
        if item_depth is None:
            doc = SourceDoc(path, None)
            doc.data = _build(loader, node, (), doc)
        else:
            doc = SourceDoc(path, None, ItemMarks())
            doc.data = _build_items(loader, node, (), doc.values, item_depth)  # type: ignore[arg-type]
        if loader.duplicates:
            # An aliased mapping is built once per alias: each duplicate once, in file order.
            doc.duplicates = tuple(sorted(set(loader.duplicates), key=lambda d: d.mark))
            raise DuplicateKeys(doc)
        return doc
    finally:
        loader.dispose()


def safe_load(text: str) -> Any:
    """`yaml.safe_load` on libyaml's parser, for the data files agents write (front matter,
    state, routing): checks read one or more per scenario. A document libyaml rejects is read
    again by the pure-Python parser, which words the error as users see it everywhere (and
    accepts the rare corners where the two parsers disagree)."""
    try:
        return _load(text, _Loader)  # the safe loader, on libyaml
    except yaml.YAMLError:
        return _load(text, _SafeLoader)


def _load(text: str, loader_class: Any) -> Any:
    """`yaml.load`, with the alias budget of contracts (DEFAULT_ALIAS_NODES): aliases build
    shared objects here, but whoever walks the data (a message showing a value) would walk
    every repetition. Raises yaml.YAMLError past it; the pure-Python loader also past
    MAX_DEPTH levels (libyaml stops at 1,000)."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _may_alias(text):
            try:
                _check_aliases(node, DEFAULT_ALIAS_NODES, setting=False)
            except SourceError as exc:
                problem = str(exc).removeprefix("invalid YAML: ")
                raise yaml.YAMLError(f"{problem} at line {exc.mark.line}") from None
        try:
            return loader.construct_document(node)
        except ValueError as exc:  # an unquoted date that is no date: 2026-02-30
            raise yaml.YAMLError(f"a value reads as a date but is none ({exc})") from None
    finally:
        loader.dispose()


def _unacceptable(text: str, exc: yaml.reader.ReaderError) -> tuple[str, Mark]:
    """Where the character YAML rejected is, and how to write it instead."""
    at = max(exc.position, 0)
    if exc.encoding != "unicode":  # libyaml counts bytes of the UTF-8 text, not characters
        at = len(text.encode("utf-8")[:at].decode("utf-8", "ignore"))
    at = min(at, len(text))
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
    return (
        f"invalid YAML: character U+{code:04X} is not allowed in a YAML file; remove it, or "
        f'write it as an escape inside double quotes ("\\x{code:02x}")',
        Mark(line, column),
    )


def _explain_yaml_error(
    text: str, path: Path, alias_nodes: int = DEFAULT_ALIAS_NODES
) -> tuple[str, Mark]:
    try:
        _parse(text, path, _SafeLoader, alias_nodes=alias_nodes)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Mark(mark.line + 1, mark.column + 1) if mark else Mark(1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context and exc.context_mark and exc.context_mark != mark:
            # e.g. an unclosed quote: the problem is at the end of the file, the cause earlier.
            started = exc.context_mark
            problem += f" ({exc.context} at {started.line + 1}:{started.column + 1})"
        if "'\\t'" in problem:  # a tab where YAML reads indentation
            problem += " (YAML indents with spaces, never tabs)"
        elif "another document" in problem and text.startswith("---"):
            problem += (
                " (a Markdown file with front matter, such as a SKILL.md, is not a contract: "
                "give the YAML file of its scenarios)"
            )
        return f"invalid YAML: {problem}", where
    return "invalid YAML", Mark(1, 1)


_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SHARED_LEN = 40


# An anchor (`&name`) or alias (`*name`) starts where a node may: at a line's start or after a
# space, a flow indicator or a JSON-like `"key":`, and is followed by its name. A text without
# both cannot alias (`**/*.md` in quotes, `Q&A`, ` & ` cannot be either): most documents skip
# the walk below.
_ANCHOR = re.compile(r"(?:^|[\s\[{,:])&[^\s\[\]{},]")
_ALIAS = re.compile(r"(?:^|[\s\[{,:])\*[^\s\[\]{},]")


def _may_alias(text: str) -> bool:
    return "&" in text and "*" in text and bool(_ANCHOR.search(text) and _ALIAS.search(text))


def _check_aliases(root: yaml.Node, budget: int, setting: bool = True) -> None:
    """Raise SourceError when aliases repeat more than `budget` values in all, or an alias sits
    inside the collection it refers to (inputs/limits.py).

    PyYAML composes an alias as the anchored node itself, so the document is a graph whose
    nodes may be reached more than once: walked here once each, without recursion, counting
    the values each repeated reach would add when the data is built."""
    sizes: dict[int, int] = {}  # node id -> values it stands for (walked nodes only)
    walking: set[int] = set()  # the collections whose items are being walked
    repeated = 0
    stack: list[tuple[yaml.Node, yaml.Node, bool]] = [(root, root, False)]
    while stack:
        node, parent, walked = stack.pop()
        key = id(node)
        if walked:
            walking.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        if key in sizes:  # reached again: an alias
            repeated += sizes[key]
            if repeated > budget:
                over = too_many_aliased(budget, setting)
                raise SourceError(f"invalid YAML: {over}", _mark(parent))
            continue
        if key in walking:
            raise SourceError(f"invalid YAML: {RECURSIVE_ALIAS}", _mark(parent))
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 1
            continue
        walking.add(key)
        stack.append((node, parent, True))
        stack.extend((child, node, False) for child in reversed(_children(node)))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return node.value if isinstance(node, yaml.SequenceNode) else []


def _check_depth(node: yaml.Node) -> None:
    """Refuse the items of a collection MAX_DEPTH deep, at the first one (where the composer
    of the pure-Python parser stops too)."""
    if not isinstance(node, yaml.ScalarNode) and node.value:
        first = node.value[0]
        first = first[0] if isinstance(first, tuple) else first
        raise SourceError(f"invalid YAML: {too_deep()}", _mark(first))


def _build(loader: Any, node: yaml.Node, loc: Loc, doc: SourceDoc) -> Any:
    """Plain data from `node`, recording where every value and key starts."""
    if len(loc) >= MAX_DEPTH:
        _check_depth(node)
    doc.values[loc] = _mark(node)  # type: ignore[index]
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        pairs = _pairs(loader, node)
        for key_node, value_node in pairs:
            key = _key(loader, key_node, result, pairs)
            if key is None:  # stated again: read for its own duplicates, its positions aside
                _build(loader, value_node, (*loc, key_node.value), SourceDoc(doc.path, None))
                continue
            doc.keys[(*loc, key)] = _mark(key_node)
            result[key] = _build(loader, value_node, (*loc, key), doc)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*loc, i), doc) for i, item in enumerate(node.value)]
    return _scalar(loader, node)


def _build_items(loader: Any, node: yaml.Node, loc: Loc, marks: ItemMarks, depth: int) -> Any:
    """Plain data from `node`, recording where the items of lists at most `depth` deep start."""
    if len(loc) >= depth:
        return _plain(loader, node, len(loc))
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        pairs = _pairs(loader, node)
        for key_node, value_node in pairs:
            key = _key(loader, key_node, result, pairs)
            if key is None:  # stated again: read for its own duplicates, its positions aside
                _build_items(loader, value_node, (*loc, key_node.value), ItemMarks(), depth)
                continue
            result[key] = _build_items(loader, value_node, (*loc, key), marks, depth)
        return result
    if isinstance(node, yaml.SequenceNode):
        marks.add(loc, node.value)
        return [
            _build_items(loader, item, (*loc, i), marks, depth) for i, item in enumerate(node.value)
        ]
    return _scalar(loader, node)


def _plain(loader: Any, node: yaml.Node, level: int) -> Any:
    """Plain data from `node` (`level` deep), no positions."""
    if level >= MAX_DEPTH:
        _check_depth(node)
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        pairs = _pairs(loader, node)
        for key_node, value_node in pairs:
            key = _key(loader, key_node, result, pairs)
            if key is None:  # stated again: read for its own duplicates only
                _plain(loader, value_node, level + 1)
            elif value_node.tag == _STR_TAG and isinstance(value_node, yaml.ScalarNode):
                # Most values are text: `_scalar` inlined (a large suite has 100,000s of them).
                text = value_node.value
                result[key] = sys.intern(text) if len(text) <= _SHARED_LEN else text
            else:
                result[key] = _plain(loader, value_node, level + 1)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_plain(loader, item, level + 1) for item in node.value]
    return _scalar(loader, node)


def _scalar(loader: Any, node: yaml.Node) -> Any:
    if node.tag == _STR_TAG:
        # What the constructor would return, without its machinery; short values (types,
        # tool names, file names) repeat across scenarios: one shared copy of each.
        return sys.intern(node.value) if len(node.value) <= _SHARED_LEN else node.value
    try:
        value = loader.construct_object(node, deep=True)
    except ValueError as exc:  # an unquoted date or time that is no date: 2026-02-30
        raise SourceError(
            f"invalid YAML: '{node.value}' reads as a date but is none ({exc}); quote it if "
            "it is text",
            _mark(node),
        ) from None
    # YAML turns unquoted dates into date objects; contracts treat them as ISO text.
    return value.isoformat() if isinstance(value, datetime | date) else value


def _pairs(loader: Any, node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
    """The (key, value) nodes of a mapping, `<<` merge keys resolved: a key the mapping states
    itself overrides a merged one (YAML's merge rule), so only its own keys can repeat."""
    for key_node, _ in node.value:
        if key_node.tag != _STR_TAG:  # a `<<` or `=` key may be among them (rare in contracts)
            own = sum(1 for k, _ in node.value if k.tag != _MERGE_TAG)
            loader.flatten_mapping(node)  # the merged pairs first, then the mapping's own
            merged = len(node.value) - own
            if merged:
                # Kept on the node: an alias to it reads the same pairs again.
                node.value = _overridden(node.value[:merged], node.value[merged:])
            break
    return node.value


def _overridden(
    merged: list[tuple[yaml.Node, yaml.Node]], own: list[tuple[yaml.Node, yaml.Node]]
) -> list[tuple[yaml.Node, yaml.Node]]:
    """Merged pairs no later pair states (PyYAML lists the merges so that the later one of a
    key wins), then the mapping's own pairs."""
    later = {_key_text(k) for k, _ in own}
    kept: list[tuple[yaml.Node, yaml.Node]] = []
    for key_node, value_node in reversed(merged):
        text = _key_text(key_node)
        if text not in later:
            later.add(text)
            kept.append((key_node, value_node))
    return [*reversed(kept), *own]


def _key_text(node: yaml.Node) -> object:
    return node.value if isinstance(node, yaml.ScalarNode) else id(node)


def _key(
    loader: Any, node: yaml.Node, mapping: dict[str, Any], pairs: list[tuple[yaml.Node, yaml.Node]]
) -> str | None:
    """The key `node` holds, as text; None if `mapping` has it already (noted in the loader's
    duplicates, with where `pairs` first states it). Raises SourceError if it is not a scalar."""
    key = _key_string(loader, node)
    if key not in mapping:
        return key
    # Where each key of this mapping is first given, found once per mapping with a duplicate
    # (a search per duplicate took minutes for a file with thousands).
    found = loader.firsts.get(id(pairs))
    if found is None:
        firsts: dict[str, Any] = {}
        for key_node, _ in pairs:
            firsts.setdefault(_key_string(loader, key_node), key_node)
        # The pairs are kept with it: their id is never another list's while it is looked up.
        found = loader.firsts[id(pairs)] = (pairs, firsts)
    firsts = found[1]
    loader.duplicates.append(Duplicate(key, _mark(node), _mark(firsts[key])))
    return None


def _key_string(loader: Any, node: yaml.Node) -> str:
    if node.tag == _STR_TAG and isinstance(node, yaml.ScalarNode):
        return sys.intern(node.value)
    if not isinstance(node, yaml.ScalarNode):
        raise SourceError("mapping keys must be plain scalars", _mark(node))
    key = _scalar(loader, node)
    if key is None:
        # `~:` or `null:`: a key as written, so the schema names it with the file's other
        # problems instead of one parse error hiding them.
        return node.value or "null"
    if not isinstance(key, str | int | float | bool):
        raise SourceError("mapping keys must be plain scalars", _mark(node))
    return str(key) if not isinstance(key, str) else key

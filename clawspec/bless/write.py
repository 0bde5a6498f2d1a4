"""`clawspec bless --write`: append proposed items to a scenario's (or a turn's) `then`, leaving
every other byte of the contract as it was.

The YAML parser (PyYAML's composer) only finds where things are: the scenario, its `then` (or the
turn's) and where its last item's content really ends (the parser's own marks: a quoted or block
scalar may hold lines that look like comments or blank lines). The block itself is inserted as text
after the line that content ends on, at its siblings' dash column (or, when the scope has no `then`,
as a new `then:` key after the scope's last line). The new text must parse to the old data plus
exactly the new items, and load with ClawSpec's own loader; nothing is written otherwise. A `then`
(or its scenario or turn) shared through a YAML anchor, or written in flow style, is refused: the
items are added by hand. The file (a symlink's target) is replaced through a temporary file and a
rename.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clawspec.errors import ClawSpecError, ExitCode


class WriteRefused(ClawSpecError):
    """The proposal could not be written (nothing was changed)."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Insert:
    """What to append where: `turn` None is the scenario's own `then`."""

    turn: int | None
    lines: Sequence[tuple[dict[str, Any], str]]  # (mapping, comment)


def flow(mapping: dict[str, Any]) -> str:
    """One item as a one-line YAML flow mapping (it is inserted as one line: a text holding a
    line break or any other control character is written double-quoted, with escapes)."""
    return _flow(mapping)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./ -]*")
# What a one-line double-quoted scalar writes as an escape: every character PyYAML does not read
# as printable text, the ones it reads as line breaks (NEL, U+2028, U+2029), and a BOM.
_RAW_OK = re.compile(
    r"[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        plain = _PLAIN.fullmatch(value) and not value.endswith(" ") and " -" not in value
        if plain and yaml.safe_load(value) == value:
            return value
        if any(c in _ESCAPES or not _RAW_OK.match(c) for c in value):
            return _double_quoted(value)
        return "'" + value.replace("'", "''") + "'"
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def _double_quoted(text: str) -> str:
    """`text` as a one-line YAML double-quoted scalar that reads back as exactly `text`."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _RAW_OK.match(char):
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def insert_items(text: str, scenario: str, inserts: Sequence[Insert]) -> str:
    """`text` with each insert's items appended to its scope's `then` (later positions first,
    so that earlier offsets stay true). Refused (WriteRefused) when the scope cannot take them
    as text, or when the new text would not read as the old data plus exactly these items."""
    newline = "\r\n" if "\r\n" in text else "\n"  # the file's own line ends
    root = _compose(text)
    data = _load(text)
    index = _scenario_index(data, scenario)
    placed = [
        (*_place(text, root, data["scenarios"][index], index, scenario, insert), rank)
        for rank, insert in enumerate(inserts)
    ]
    # At one position (a last turn's `then` ends where the scenario does), the blocks keep
    # the inserts' order: the later one is inserted first.
    blocks = sorted(
        (p for p, i in zip(placed, inserts, strict=True) if i.lines),
        key=lambda p: (p[0], p[2]),
        reverse=True,
    )
    new = text
    for number, (at, block, _) in enumerate(blocks):
        # The file's last line had no line break: the first block after it brings one.
        last = number == len(blocks) - 1 or blocks[number + 1][0] != at
        unended = at == len(text) and at > 0 and text[-1] not in _BREAKS
        lead = "\n" if unended and last else ""
        new = new[:at] + (lead + block).replace("\n", newline) + new[at:]
    _verify(text, new, index, inserts)
    return new


_BREAKS = "\r\n\x85\u2028\u2029"  # what YAML (1.1, as PyYAML reads it) ends a line with
_BY_HAND = "add the items by hand"


class _Composer(yaml.SafeLoader):
    """Composes nodes that remember their anchor (`anchor`), and an alias (`*name`) as an
    `_Alias` node with its own marks instead of the node it names."""

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            return _Alias(super().compose_node(parent, index), event.start_mark, event.end_mark)
        return super().compose_node(parent, index)

    def compose_scalar_node(self, anchor: str | None) -> Node:
        return _anchored(super().compose_scalar_node(anchor), anchor)

    def compose_sequence_node(self, anchor: str | None) -> Node:
        return _anchored(super().compose_sequence_node(anchor), anchor)

    def compose_mapping_node(self, anchor: str | None) -> Node:
        return _anchored(super().compose_mapping_node(anchor), anchor)


class _Alias(Node):
    id = "alias"

    def __init__(self, target: Node, start_mark: Any, end_mark: Any) -> None:
        super().__init__(target.tag, target.value, start_mark, end_mark)
        self.anchor = None


def _anchored(node: Node, anchor: str | None) -> Node:
    node.anchor = anchor  # type: ignore[attr-defined]
    return node


def _compose(text: str) -> Node | None:
    loader = _Composer(text)
    try:
        return loader.get_single_node()
    except yaml.YAMLError as exc:
        raise WriteRefused(f"the contract does not parse: {str(exc).splitlines()[0]}") from None
    finally:
        loader.dispose()


def _load(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:  # ValueError: an unquoted date that is none
        raise WriteRefused(f"the contract does not parse: {str(exc).splitlines()[0]}") from None


def _scenario_index(data: Any, scenario: str) -> int:
    """The scenario's position in `scenarios` (names as YAML reads them, merges included)."""
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    found = [
        i
        for i, s in enumerate(scenarios if isinstance(scenarios, list) else [])
        if isinstance(s, dict) and s.get("name") == scenario
    ]
    if len(found) != 1:
        raise WriteRefused(f"scenario '{scenario}' is not written once in the contract")
    return found[0]


def _value(mapping: Node, key: str) -> Node | None:
    """The node written under `key` in `mapping` itself (the last one, as YAML reads it; a
    key that only comes from a `<<` merge is not found)."""
    found = None
    for k, v in mapping.value if isinstance(mapping, MappingNode) else []:
        if isinstance(k, ScalarNode) and k.tag == "tag:yaml.org,2002:str" and k.value == key:
            found = v
    return found


def _shared(what: str) -> WriteRefused:
    return WriteRefused(
        f"{what} is shared through a YAML anchor (`&name`/`*name`/`<<:`): writing into it would "
        f"change every place that uses it; {_BY_HAND}"
    )


def _place(
    text: str, root: Node | None, loaded: Any, index: int, scenario: str, insert: Insert
) -> tuple[int, str]:
    """(offset in `text` to insert at, the block's text). `loaded` is the scenario as YAML
    reads it (`<<:` merges included)."""
    if root is None or getattr(root, "anchor", None):
        raise WriteRefused("the contract is not a mapping written once")
    scenarios = _value(root, "scenarios")
    if not isinstance(scenarios, SequenceNode) or getattr(scenarios, "anchor", None):
        raise (
            _shared("its `scenarios` list")
            if scenarios is not None
            else WriteRefused(f"scenario '{scenario}' is not written once in the contract")
        )
    if index >= len(scenarios.value):
        raise WriteRefused(f"scenario '{scenario}' is not written once in the contract")
    owner = scenarios.value[index]
    what = f"scenario '{scenario}'"
    if isinstance(owner, _Alias) or getattr(owner, "anchor", None):
        raise _shared(what)
    if not isinstance(owner, MappingNode) or owner.flow_style:
        raise WriteRefused(f"{what} is written in flow style ({{...}}): {_BY_HAND}")
    if insert.turn is not None:
        turns = _value(owner, "turns")
        if turns is None and "turns" in loaded:  # they come from a `<<:` merge
            raise _shared(f"the turns of {what}")
        if not isinstance(turns, SequenceNode) or insert.turn >= len(turns.value):
            raise WriteRefused(f"turn {insert.turn + 1} of '{scenario}' is not in the contract")
        what = f"turn {insert.turn + 1} of '{scenario}'"
        if isinstance(turns, _Alias) or getattr(turns, "anchor", None):
            raise _shared(f"the turns of '{scenario}'")
        owner = turns.value[insert.turn]
        loaded = loaded["turns"][insert.turn]
        if isinstance(owner, _Alias) or getattr(owner, "anchor", None):
            raise _shared(what)
        if not isinstance(owner, MappingNode) or owner.flow_style or turns.flow_style:
            raise WriteRefused(f"{what} is written in flow style ({{...}}): {_BY_HAND}")
    then = _value(owner, "then")
    if then is not None:
        if isinstance(then, _Alias) or getattr(then, "anchor", None):
            raise _shared(f"the `then` of {what}")
        if isinstance(then, ScalarNode) and then.tag == "tag:yaml.org,2002:null":
            raise WriteRefused("its `then:` is empty (null): write `then:` items by hand first")
        if not isinstance(then, SequenceNode) or not then.value or then.flow_style:
            raise WriteRefused(f"its `then` is not a block list (`- item` lines): {_BY_HAND}")
        dash = _dash_column(text, then)
        block = "".join(f"{' ' * dash}- {flow(m)}  # {c}\n" for m, c in insert.lines)
        return _after_line(text, _content_end(text, then)), block
    if "then" in loaded:  # its `then` comes from a `<<:` merge
        raise _shared(f"the `then` of {what} (merged with `<<:`)")
    # No `then` yet: a new key after the scope's last line, at its keys' column.
    key_column = owner.value[0][0].start_mark.column
    block = f"{' ' * key_column}then:\n" + "".join(
        f"{' ' * (key_column + 2)}- {flow(m)}  # {c}\n" for m, c in insert.lines
    )
    return _after_line(text, _content_end(text, owner)), block


def _dash_column(text: str, sequence: SequenceNode) -> int:
    """The column of a block sequence's `- ` (every item's dash is at the same column)."""
    at = sequence.start_mark.index
    if text[at : at + 1] != "-":  # it starts with a tag: look before its first item
        at = sequence.value[0].start_mark.index - 1
        while at >= 0 and text[at] in " \t" + _BREAKS:
            at -= 1
        if at < 0 or text[at] != "-":
            raise WriteRefused(f"its `then` items' dashes were not found: {_BY_HAND}")
    return at - _line_start(text, at)


def _line_start(text: str, at: int) -> int:
    return max(text.rfind(b, 0, at) + len(b) for b in ("\n", "\r", "\x85", "\u2028", "\u2029"))


def _content_end(text: str, node: Node) -> int:
    """The offset just after the last character of `node`'s own content (its last descendant's:
    a block collection's end mark is where the next token starts, comments and blank lines
    after it included; a block scalar's, past the blank lines it may or may not keep)."""
    while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
    end = node.end_mark.index
    if isinstance(node, ScalarNode) and node.style in ("|", ">"):
        header = text[node.start_mark.index : _after_line(text, node.start_mark.index)]
        indicator = re.search(r"[|>]([-+0-9]*)[ \t]*(#.*)?\s*$", header)
        if indicator and "+" in indicator.group(1):  # keep: its trailing blank lines are its own
            return _line_start(text, end)
        while end > node.start_mark.index and text[end - 1] in " \t" + _BREAKS:
            end -= 1
    return end


def _after_line(text: str, at: int) -> int:
    """The offset just after the line break that ends the line holding offset `at` (the end of
    `text` when that line has none); `at` at a line's start is that line's start."""
    if at == 0 or text[at - 1] in _BREAKS:
        return at
    breaks = [i for i in (text.find(b, at) for b in _BREAKS) if i >= 0]
    if not breaks:
        return len(text)
    first = min(breaks)
    return first + (2 if text.startswith("\r\n", first) else 1)


def _verify(old_text: str, new_text: str, index: int, inserts: Sequence[Insert]) -> None:
    """Refuse unless `new_text` reads as `old_text` with exactly the inserts' items appended to
    their scopes' `then` (and nothing else changed)."""
    old, new = _load(old_text), _load(new_text)
    try:
        for insert in (i for i in inserts if i.lines):  # one without items wrote nothing
            old_owner, new_owner = old["scenarios"][index], new["scenarios"][index]
            if insert.turn is not None:
                old_owner = old_owner["turns"][insert.turn]
                new_owner = new_owner["turns"][insert.turn]
            had = "then" in old_owner
            # What the written lines say (`flow` reads back as its mapping: tested apart).
            written = [yaml.safe_load(flow(m)) for m, _ in insert.lines]
            expected = [*(old_owner["then"] if had else []), *written]
            if not _same(new_owner.get("then"), expected):
                raise KeyError("then")
            if had:
                new_owner["then"] = old_owner["then"]
            else:
                del new_owner["then"]
        if not _same(old, new):
            raise KeyError("rest")
    except (KeyError, IndexError, TypeError, AttributeError, yaml.YAMLError):
        raise WriteRefused(
            "the new text would not read as the contract plus exactly the proposed items "
            f"(its YAML is laid out in a way bless cannot extend as text): {_BY_HAND}"
        ) from None


def _same(a: Any, b: Any, seen: set[tuple[int, int]] | None = None) -> bool:
    """Equal as data, types included (1 is not True, 1.0 is not 1, NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if not isinstance(a, dict | list):
        return bool(a == b)
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:  # a recursive structure (an alias inside its own anchor)
        return True
    seen.add((id(a), id(b)))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b, strict=True))
    return a.keys() == b.keys() and all(_same(a[k], b[k], seen) for k in a)


def write_contract(
    path: Path, original: bytes, new_text: str, validate: Callable[[Path], list[str]]
) -> None:
    """Validate `new_text` and replace `path` with it, unless `path` changed since `original`
    was read. `validate` loads a file and returns its problems (none: valid). A symlink stays a
    link: its target is what is replaced (the new file is written in the target's folder)."""
    if path.read_bytes() != original:
        raise WriteRefused(
            f"{path} changed since bless read it: nothing was written (run bless again)"
        )
    # Validated next to `path`, where the contract's own relative paths are read from.
    checked = _temporary(path.parent, path, new_text)
    try:
        problems = validate(checked)
        if problems:
            # Named as the contract, not as the temporary file they were found in.
            shown = "; ".join(p.replace(checked.name, path.name) for p in problems[:3])
            raise WriteRefused(f"the written contract would not validate: {shown}")
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        temporary = checked if target == path else _temporary(target.parent, target, new_text)
        try:
            os.chmod(temporary, target.stat().st_mode & 0o7777)
            if path.read_bytes() != original:  # changed while it was validated
                raise WriteRefused(
                    f"{path} changed since bless read it: nothing was written (run bless again)"
                )
            os.replace(temporary, target)
        finally:
            if temporary.exists():
                temporary.unlink()
    finally:
        if checked.exists():
            checked.unlink()


def _temporary(folder: Path, named: Path, text: str) -> Path:
    """A new file in `folder` holding `text`, named after `named` (hidden)."""
    handle, name = tempfile.mkstemp(prefix=f".{named.stem}.", suffix=named.suffix, dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)

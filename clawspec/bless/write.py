"""`clawspec bless --write`: append proposed items to a scenario's (or a turn's) `then`, leaving
every other byte of the contract as it was.

A round-trip parser (ruamel.yaml) only finds where things are: the scenario, its `then` (or
the turn's) and the column its items start at; the block itself is inserted as text after the
last line of that `then`, indented like its siblings (or, when the scope has no `then`, as a new
`then:` key after the scope's last line). The result must load with ClawSpec's own loader;
nothing is written otherwise, and the file is replaced through a temporary file and a rename.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import yaml

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
    line break is written double-quoted, with `\\n`)."""
    return _flow(mapping)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./ -]*")


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        plain = _PLAIN.fullmatch(value) and not value.endswith(" ") and " -" not in value
        if plain and yaml.safe_load(value) == value:
            return value
        if "\n" in value or "\t" in value or '"' in value or "\\" in value:
            return json.dumps(value, ensure_ascii=False)  # a YAML double-quoted scalar
        return "'" + value.replace("'", "''") + "'"
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def insert_items(text: str, scenario: str, inserts: Sequence[Insert]) -> str:
    """`text` with each insert's items appended to its scope's `then` (later positions first,
    so that earlier offsets stay true)."""
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"  # the file's own line ends
    placed = [(*_place(lines, scenario, insert), rank) for rank, insert in enumerate(inserts)]
    # At one position (a last turn's `then` ends where the scenario does), the blocks keep
    # the inserts' order: the later one is inserted first.
    for at, block, _ in sorted(
        (p for p, i in zip(placed, inserts, strict=True) if i.lines),
        key=lambda p: (p[0], p[2]),
        reverse=True,
    ):
        # The file's last line had no newline: the block brings one.
        lead = "\n" if at > 0 and not lines[at - 1].endswith("\n") else ""
        lines.insert(at, (lead + block).replace("\n", newline))
    return "".join(lines)


def _place(lines: list[str], scenario: str, insert: Insert) -> tuple[int, str]:
    """(index of the line to insert before, the block's text)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="rt").load(StringIO("".join(lines)))
    except YAMLError as exc:
        raise WriteRefused(f"the contract does not parse: {str(exc).splitlines()[0]}") from None
    scenarios = data.get("scenarios") if hasattr(data, "get") else None
    found = [s for s in scenarios or [] if hasattr(s, "get") and s.get("name") == scenario]
    if len(found) != 1:
        raise WriteRefused(f"scenario '{scenario}' is not written once in the contract")
    owner = found[0]
    if insert.turn is not None:
        turns = owner.get("turns")
        if not isinstance(turns, list) or insert.turn >= len(turns):
            raise WriteRefused(f"turn {insert.turn + 1} of '{scenario}' is not in the contract")
        owner = turns[insert.turn]
    then = owner.get("then")
    if then is None and "then" in owner:
        raise WriteRefused("its `then:` is empty (null): write `then:` items by hand first")
    if then is not None:
        if not isinstance(then, list) or not len(then) or then.fa.flow_style():
            raise WriteRefused(
                "its `then` is not a block list (`- item` lines): add the items by hand"
            )
        column = then.lc.item(len(then) - 1)[1]  # the item's own column: after its "- "
        dash = _dash_column(lines[then.lc.item(len(then) - 1)[0]], column)
        end = _scope_end(lines, then.lc.item(len(then) - 1)[0], dash)
        block = "".join(f"{' ' * dash}- {flow(m)}  # {c}\n" for m, c in insert.lines)
        return end, block
    # No `then` yet: a new key after the scope's last line, at its keys' column.
    first_key = next(iter(owner))
    line, key_column = owner.lc.key(first_key)
    dash = _dash_column(lines[line], key_column)
    end = _scope_end(lines, line, dash if dash < key_column else key_column - 1)
    block = f"{' ' * key_column}then:\n" + "".join(
        f"{' ' * (key_column + 2)}- {flow(m)}  # {c}\n" for m, c in insert.lines
    )
    return end, block


def _dash_column(line: str, column: int) -> int:
    """The column of the `- ` that starts an item whose content is at `column` (the content's
    own column when the line holds no dash before it: a mapping's later key)."""
    before = line[:column].rstrip()
    return len(before) - 1 if before.endswith("-") else column


def _scope_end(lines: Sequence[str], start: int, dash: int) -> int:
    """The index just after the last line that belongs to the item starting on line `start`:
    the lines indented deeper than its dash (blank lines and comments between them included,
    those after its last line not)."""
    end = start + 1
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if not stripped:
            continue
        indent = len(lines[index]) - len(lines[index].lstrip(" "))
        if indent <= dash:
            break
        if not stripped.startswith("#"):
            end = index + 1
    return end


def write_contract(
    path: Path, original: bytes, new_text: str, validate: Callable[[Path], list[str]]
) -> None:
    """Validate `new_text` and replace `path` with it, unless `path` changed since `original`
    was read. `validate` loads a file and returns its problems (none: valid)."""
    current = path.read_bytes()
    if current != original:
        raise WriteRefused(
            f"{path} changed since bless read it: nothing was written (run bless again)"
        )
    folder = path.parent
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(new_text.encode("utf-8"))
        problems = validate(Path(temporary))
        if problems:
            # Named as the contract, not as the temporary file they were found in.
            shown = "; ".join(p.replace(Path(temporary).name, path.name) for p in problems[:3])
            raise WriteRefused(f"the written contract would not validate: {shown}")
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        if path.read_bytes() != original:  # changed while it was validated
            raise WriteRefused(
                f"{path} changed since bless read it: nothing was written (run bless again)"
            )
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)

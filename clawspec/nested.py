"""Walking JSON-like data (mappings, lists, tuples) for the strings it holds; imported by the
secrets registry, so it imports nothing of ClawSpec's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def strings_in(data: Any) -> Iterator[str]:
    """Every string value inside nested mappings, lists and tuples (keys not included)."""
    todo = [data]
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            todo.extend(node.values())
        elif isinstance(node, list | tuple):
            todo.extend(node)

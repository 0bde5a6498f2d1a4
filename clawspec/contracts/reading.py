"""Reading one contract file: its text and its YAML document, or the messages that say why
it cannot be read. What the loader reads each file with, in this process or, for a large suite,
in a forked child parsing ahead (`parse_ahead.py`, which only decides who reads which file)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from clawspec.contracts.discovery import display_path
from clawspec.contracts.problems import Place, Problem
from clawspec.inputs.limits import DEFAULT_LIMITS, ContractLimits, too_large
from clawspec.inputs.source import DuplicateKeys, SourceDoc, SourceError, parse_yaml

# scenarios[i].turns[t].then[j]: the deepest list item whose start a valid contract keeps (a
# conversation's turn holds assertions two levels below a scenario's given|then[j]).
ASSERTION_DEPTH = 6

Parsed = tuple[str, SourceDoc] | list[Problem]  # (text, document), or the file's problems


def read_contract(path: Path, shown: str, limits: ContractLimits = DEFAULT_LIMITS) -> Parsed:
    """Read and parse one contract file: its text and document, or its problems.

    Never more than `limits.max_bytes` (+1) bytes are read: a larger file is an error."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size  # a file known too large is not read
            data = handle.read(limits.max_bytes + 1) if size <= limits.max_bytes else b""
            if size > limits.max_bytes or len(data) > limits.max_bytes:
                too_big = too_large(max(size, len(data)), limits.max_bytes)
                return [Problem.at(shown, 1, 1, too_big)]
        # As read_text would: universal newlines.
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(
            data[data.rfind(b"\n", 0, exc.start) + 1 : exc.start].decode("utf-8", "replace")
        )
        message = (
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be read as UTF-8 (save the "
            "file as UTF-8)"
        )
        return [Problem.at(shown, line, column + 1, message)]
    except OSError as exc:
        return [Problem(Place(shown), f"cannot read contract: {exc.strerror or exc}", (0, 0))]
    try:
        # Other positions than where scenarios and assertions start are needed only to report
        # errors: the first pass keeps only those (LoadedContract's lines).
        return text, parse_yaml(text, path, ASSERTION_DEPTH, limits.alias_nodes)
    except DuplicateKeys as exc:  # the loader reports them with the file's other problems
        return text, exc.doc
    except SourceError as exc:
        return [Problem.at(shown, exc.mark.line, exc.mark.column, str(exc))]


def read_file(path: Path, limits: ContractLimits = DEFAULT_LIMITS) -> Parsed:
    """`read_contract`, its messages naming the file as it is shown (`display_path`)."""
    return read_contract(path, display_path(path), limits)


def parsed_here(
    files: Sequence[Path], limits: ContractLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, Parsed]]:
    """Each file's index and result, parsed by this process, in file order."""
    for index, path in enumerate(files):
        yield index, read_file(path, limits)

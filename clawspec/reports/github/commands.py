"""The GitHub Actions runner protocol: workflow commands, masks, job summary and outputs.

Everything that speaks to the runner lives here, so the escaping rules exist once. The stream
(normally stdout) and the CI context (the summary and output files: clawspec/ci_context.py) are
injected, so tests capture both. Escaping follows the
official toolkit (`@actions/core`, `command.ts`): data escapes `%`, CR and LF; property values
additionally escape `:` and `,`. `::add-mask::` lines go out before any other command.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from clawspec.ci_context import CIContext
from clawspec.secrets import active
from clawspec.text import clean

ANNOTATION_LEVELS = ("error", "warning", "notice")


def escape_data(text: str) -> str:
    """Escape a command's message the way the toolkit does (`%`, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (`file=`, `title=`…): data escapes plus `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_command(name: str, message: str, properties: Mapping[str, object] | None = None) -> str:
    """Return one workflow command line, e.g. `::error file=a.yaml,line=3,title=T::message`."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (properties or {}).items()
        if value is not None and value != ""
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def mask_values(secrets: Iterable[str]) -> list[str]:
    """Return the values to register with add-mask: each secret, and each line of a multi-line one.

    The runner masks line by line, so a multi-line secret is registered per line as well.
    """
    values: list[str] = []
    for secret in secrets:
        if not secret or not secret.strip():
            continue
        for value in (secret, *secret.splitlines()):
            if value.strip() and value not in values:
                values.append(value)
    return values


def add_mask_commands(secrets: Iterable[str]) -> list[tuple[str, str]]:
    """(value, `::add-mask::value`) for each value the runner must mask (`mask_values`): what
    the secrets registry announces on GitHub Actions."""
    return [(value, format_command("add-mask", value)) for value in mask_values(secrets)]


def format_output(name: str, value: str, new_delimiter: Callable[[], str] | None = None) -> str:
    """Return the `$GITHUB_OUTPUT` (or `$GITHUB_ENV`) lines for one value.

    A single-line value is `name=value`; a multi-line one uses a heredoc with a random delimiter
    that does not occur in the value (as the toolkit's `prepareKeyValueMessage` does).
    """
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    make = new_delimiter or (lambda: f"ghadelimiter_{uuid.uuid4()}")
    delimiter = make()
    while delimiter in value or delimiter in name:
        delimiter = make()
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


@dataclass(frozen=True)
class Annotation:
    """One annotation to show on a file and line."""

    level: str  # error | warning | notice
    message: str
    title: str = ""
    file: str | None = None
    line: int | None = None
    col: int | None = None


class GitHubRunner:
    """Write workflow commands, the job summary and outputs for the current step.

    Every text is cleaned (ANSI, control characters, secrets) before it is escaped. The first
    thing written to the stream is always the `::add-mask::` block for the secrets registry's
    values (clawspec/secrets.py).
    `context` is the run's CI context (the summary and output files).
    """

    def __init__(
        self,
        context: CIContext,
        stream: TextIO | None = None,
    ) -> None:
        self.context = context
        self._stream = stream
        self._masked = False

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stdout

    def _clean(self, text: str) -> str:
        return clean(text)

    def _emit(self, line: str) -> None:
        self.mask_secrets()
        self.stream.write(line + "\n")
        self.stream.flush()

    def mask_secrets(self) -> None:
        """Register every secret of the command's registry (clawspec/secrets.py) with
        `::add-mask::` (once, before any other command); a value the registry already announced
        on this stream is not repeated.
        """
        if self._masked:
            return
        self._masked = True
        registry = active()
        stream = self.stream
        for value in mask_values(registry.in_order() if registry is not None else ()):
            if registry is None or not registry.announced_on(stream, value):
                stream.write(format_command("add-mask", value) + "\n")
        stream.flush()

    def command(
        self, name: str, message: str, properties: Mapping[str, object] | None = None
    ) -> None:
        """Write one workflow command; message and property values are cleaned first."""
        props = {k: self._clean(str(v)) for k, v in (properties or {}).items() if v is not None}
        self._emit(format_command(name, self._clean(message), props))

    def annotate(self, annotation: Annotation) -> None:
        """Write `::error`/`::warning`/`::notice` for one annotation."""
        if annotation.level not in ANNOTATION_LEVELS:
            raise ValueError(f"unknown annotation level '{annotation.level}'")
        self.command(
            annotation.level,
            annotation.message,
            {
                "file": annotation.file,
                "line": annotation.line,
                "col": annotation.col,
                "title": annotation.title,
            },
        )

    def summary_path(self) -> Path | None:
        """`$GITHUB_STEP_SUMMARY` (None when not set)."""
        return _path(self.context.github.step_summary)

    def summary_bytes(self) -> int:
        """How much the step has written to its summary so far (0: nothing, or no file)."""
        path = self.summary_path()
        try:
            return path.stat().st_size if path is not None else 0
        except OSError:
            return 0

    def append_summary(self, markdown: str) -> Path | None:
        """Append Markdown to `$GITHUB_STEP_SUMMARY`; return its path (None when not set)."""
        path = self.summary_path()
        if path is None:
            return None
        with path.open("a", encoding="utf-8") as handle:
            handle.write(self._clean(markdown))
        return path

    def set_outputs(
        self, values: Mapping[str, str], new_delimiter: Callable[[], str] | None = None
    ) -> Path | None:
        """Append step outputs to `$GITHUB_OUTPUT`; return its path (None when not set)."""
        path = _path(self.context.github.output)
        if path is None:
            return None
        text = "".join(
            format_output(name, self._clean(value), new_delimiter) for name, value in values.items()
        )
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)
        return path


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def running_on_github(context: CIContext) -> bool:
    """True inside a GitHub Actions job (the runner sets GITHUB_ACTIONS=true)."""
    return context.system == "github"

"""Each attempt's own evidence, kept in the JSON report for `clawspec bless` (AttemptEvidence).

Built after an attempt's checks, only for a repeated scenario (one attempt proves nothing
invariant, and every report would grow). Tool calls with their arguments, delegations and the
reply come from OpenClaw's run record when it can be read (as the assertions read it), else the
report's evidence (names only); the files are those the agent's `write`/`edit` calls named
that exist after the attempt, read once then for their headings and keys. Every figure is
bounded: a runaway tool loop or a huge file must not blow up the report.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec import markdown_doc, secrets
from clawspec.assertions import documents
from clawspec.inputs.paths import escapes_workspace
from clawspec.reports.model import AttemptEvidence, FileSeen, ToolCallRecord

if TYPE_CHECKING:
    from clawspec.evidence.context import EvalContext
    from clawspec.evidence.record import RunRecords
    from clawspec.gateway.trajectory.values import Trajectory
    from clawspec.reports.model import ScenarioEvidence, ScenarioResult, TurnResult

# Bounds per attempt (a repeated scenario's report holds one of these per attempt).
MAX_CALLS = 100  # tool calls kept
MAX_ARGS_BYTES = 2048  # a call's arguments longer than this (as JSON) are kept cut, as text
MAX_REPLY_CHARS = 20_000
MAX_FILES = 50
MAX_NAMES = 100  # headings or keys kept per file
MAX_FILE_BYTES = 1_000_000  # a file larger than this is listed without sections/fields
MAX_VARIABLE_CHARS = 300
# The tools that write a file, and the argument keys that name it (OpenClaw's coding tools).
WRITING_TOOLS = ("write", "edit")
PATH_KEYS = ("path", "file_path", "filePath")
# The template variables whose values change from run to run (or day to day), or from machine
# to machine (the workspace's absolute path): a value holding one is written as the variable.
# The others (scenario, target, the gateway log's path) are left as they are: a short
# scenario name inside a path is more likely a coincidence than the variable.
VARIABLES = ("today", "run_id", "run_started_at", "workspace")


def attempt_evidence(
    result: ScenarioResult, ctx: EvalContext, values: Mapping[str, Any]
) -> AttemptEvidence:
    """The attempt's evidence from its result and, when readable, its run record."""
    records = _records(ctx)
    variables = {
        k: str(values[k])
        for k in VARIABLES
        if isinstance(values.get(k), str) and 0 < len(values[k]) <= MAX_VARIABLE_CHARS
    }
    if result.turns is not None:
        runs = records.runs if records is not None else ()
        aligned = len(runs) == len(result.turns)
        turns = [
            _turn(turn, runs[i] if aligned else None, ctx.workspace)
            for i, turn in enumerate(result.turns)
        ]
        return AttemptEvidence(
            tools=[call for t in turns for call in t.tools][:MAX_CALLS],
            tools_known=all(t.tools_known for t in turns),
            delegations=list(dict.fromkeys(d for t in turns for d in t.delegations)),
            files=_unique_files(f for t in turns for f in t.files),
            reply=turns[-1].reply if turns else None,
            tokens=_tokens(result.evidence),
            completed=_all_known(t.completed for t in turns),
            variables=variables,
            turns=turns,
        )
    runs = records.runs if records is not None else ()
    found = _evidence(runs, result.evidence, ctx.workspace, None)
    return found.model_copy(update={"variables": variables})


def _turn(turn: TurnResult, run: Trajectory | None, workspace: Path) -> AttemptEvidence:
    evidence = _evidence((run,) if run is not None else (), turn.evidence, workspace, turn.reply)
    return evidence.model_copy(update={"turn": turn.index, "tokens": turn.tokens})


def _evidence(
    runs: tuple[Trajectory, ...],
    report: ScenarioEvidence | None,
    workspace: Path,
    reply: str | None,
    turn: int | None = None,
) -> AttemptEvidence:
    if runs:
        every = list(_every_run(runs))
        # A refused call is not a call (as the assertions decide it).
        tools = [
            _call(run.agent, run.run_id, c)
            for run in every
            for c in run.tool_calls
            if not c.refused
        ][:MAX_CALLS]
        delegations = [
            c.spawned.agent for run in every for c in run.tool_calls if c.spawned is not None
        ]
        if report is not None:
            delegations += report.delegations
        completed: bool | None = all(
            r.stop_reason == "stop" and not r.timed_out and not r.aborted for r in runs
        )
        reply = reply if reply is not None else runs[-1].reply
    else:
        tools = [t.model_copy() for t in report.tools][:MAX_CALLS] if report is not None else []
        delegations = list(report.delegations) if report is not None else []
        completed = None
    tokens = _tokens(report)
    if tokens is None and runs:
        tokens = _record_tokens(runs)
    return AttemptEvidence(
        turn=turn,
        tools=tools,
        tools_known=bool(runs) or report is not None,
        delegations=list(dict.fromkeys(delegations)),
        files=_files(tools, workspace),
        # Cut the one way outputs are cut: masked first, so no cut leaves a secret's start.
        reply=secrets.cut(reply, MAX_REPLY_CHARS) if reply is not None else None,
        tokens=tokens,
        completed=completed,
    )


def reply_was_cut(reply: str) -> bool:
    """Whether `reply` is a longer reply cut to MAX_REPLY_CHARS (its end is not the reply's)."""
    return len(reply) == MAX_REPLY_CHARS and reply.endswith(secrets.CUT_MARK)


def _record_tokens(runs: tuple[Trajectory, ...]) -> int | None:
    """The runs' total tokens by their record (sub-agents included), when every run has its
    usage recorded (the report's own figures may be missing when its log lines came late)."""
    usages = [run.usage for run in _every_run(runs)]
    if not usages or any(usage is None for usage in usages):
        return None
    return sum(usage.total for usage in usages if usage is not None)


def _records(ctx: EvalContext) -> RunRecords | None:
    """The run record an assertion read, else read now (a repeated scenario only)."""
    from clawspec.evidence.record import RunRecords, run_records

    found = ctx.evidence.built_records()
    if isinstance(found, RunRecords):
        return found
    if found is not None or not ctx.settings.openclaw_state_dir:
        return None  # unreadable already, or nowhere to read it
    try:
        read = run_records(ctx, until="complete")
    except Exception:  # evidence for a later proposal must never cost the verdicts
        return None
    return read if isinstance(read, RunRecords) else None


def _every_run(runs: tuple[Trajectory, ...]) -> Iterator[Trajectory]:
    for run in runs:
        yield run
        yield from _every_run(run.children)


def _call(agent: str, run_id: str, call: Any) -> ToolCallRecord:
    # Arguments OpenClaw cut or redacted before recording them are not what the agent sent:
    # nothing may be proposed from them.
    args = call.args if call.args_known and not call.cuts else None
    cut = False
    if args is not None:
        text = json.dumps(args, ensure_ascii=False, default=str)
        if len(text.encode()) > MAX_ARGS_BYTES:
            args, cut = secrets.cut_bytes(text, MAX_ARGS_BYTES), True
    return ToolCallRecord(name=call.name, agent=agent, run_id=run_id, args=args, args_cut=cut)


def _tokens(evidence: ScenarioEvidence | None) -> int | None:
    tokens = evidence.tokens if evidence is not None else None
    return tokens.total if tokens is not None else None


def _all_known(values: Iterator[bool | None]) -> bool | None:
    seen = list(values)
    return None if not seen or any(v is None for v in seen) else all(seen)


def _files(tools: list[ToolCallRecord], workspace: Path) -> list[FileSeen]:
    """The files the agent's writing calls named that exist now, as they are now. A file
    written and then deleted, or named by a write or an edit that failed, is left out: only
    what exists after the run may become an `artifact_exists` (bless lists the paths the calls
    named that are missing, from the calls themselves)."""
    roots = (str(workspace), str(workspace.resolve()))
    named = dict.fromkeys(contract_path(p, roots) for p in written_paths(tools, workspace))
    found = (_file(p, workspace) for p in named)
    return _unique_files(f for f in found if f is not None)


def written_paths(tools: Iterable[ToolCallRecord], workspace: Path | None = None) -> list[str]:
    """The paths the writing calls among `tools` named, in order: as they named them, except
    a relative path that is a file in the calling agent's own folder (`<workspace>/<agent>/`,
    where OpenClaw puts an agent other than its default one: a delegated `notary`'s
    `notes/x.md` is `notary/notes/x.md`) and not one of the workspace's own."""
    paths: list[str] = []
    for tool in tools:
        if tool.name in WRITING_TOOLS and isinstance(tool.args, dict):
            named = next(
                (tool.args[k] for k in PATH_KEYS if isinstance(tool.args.get(k), str)), None
            )
            if named:
                paths.append(_in_agent_folder(named, tool.agent, workspace))
    return paths


_AGENT_FOLDER = re.compile(r"[A-Za-z0-9_][\w.-]*")


def _in_agent_folder(named: str, agent: str | None, workspace: Path | None) -> str:
    if workspace is None or not agent or posixpath.isabs(named):
        return named
    if not _AGENT_FOLDER.fullmatch(agent):
        return named
    inside = posixpath.normpath(posixpath.join(agent, named))
    mine = inside.startswith(f"{agent}/") and (workspace / inside).is_file()
    return inside if mine and not (workspace / named).is_file() else named


def contract_path(named: str, roots: Iterable[str]) -> str:
    """`named` as an artifact assertion names it: relative to the workspace (one of `roots`,
    its path as given or resolved) with `./` and `dir/..` folded, lexically; a path outside the
    workspace (absolute, or climbing out with `..`) as it was named. Bless compares the paths
    the calls named with the files found under this one form."""
    normal = posixpath.normpath(named)
    if posixpath.isabs(normal):
        for root in roots:
            prefix = root.rstrip("/") + "/"
            if normal.startswith(prefix) and len(normal) > len(prefix):
                return normal[len(prefix) :]
        return named
    return named if normal == ".." or normal.startswith("../") else normal


def _unique_files(files: Iterator[FileSeen]) -> list[FileSeen]:
    kept: dict[str, FileSeen] = {}
    for item in files:
        kept[item.path] = item  # the last version of a file written in several turns
    return list(kept.values())[:MAX_FILES]


def _file(named: str, workspace: Path) -> FileSeen | None:
    """The file at `named` (a `contract_path`) as it is now; None when there is none."""
    root = workspace.resolve()
    path = Path(named) if Path(named).is_absolute() else root / named
    try:
        if not path.is_file():
            return None
        resolved = path.resolve()
    except (OSError, RuntimeError):  # unreadable, or a loop of links: not a file to name
        return None
    shown = named
    if not Path(named).is_absolute() and not escapes_workspace(named):
        try:
            resolved.relative_to(root)
        except ValueError:
            # A link inside the workspace to a file outside it: an artifact assertion refuses
            # the path, so it is shown where it really is (outside, then never proposed).
            shown = resolved.as_posix()
    sections: list[str] | None = None
    fields: list[str] | None = None
    try:
        if path.stat().st_size <= MAX_FILE_BYTES:
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix.lower() in (".md", ".markdown", ".mdx", ".txt"):
                sections = [heading for _, heading, _ in markdown_doc.markdown_headings(text)]
            try:
                data = documents.document_fields(path, MAX_FILE_BYTES)
            except Exception:  # no front matter, not YAML/JSON: no fields to show
                data = None
            if isinstance(data, dict):
                fields = [str(k) for k in data]
    except OSError:
        pass
    return FileSeen(
        path=shown,
        sections=sections[:MAX_NAMES] if sections is not None else None,
        fields=fields[:MAX_NAMES] if fields is not None else None,
    )

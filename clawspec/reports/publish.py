"""Write every output of a run: a finished one, an interrupted one, one a bug stopped.

Each output is independent: one that fails (a full disk, a PR comment network error) is a
warning on stderr and the others are still written. A writer with a bug (any exception but
an I/O error) is the same warning, and once every other output is written `publish` raises
`InternalError` naming it (clawspec/crash.py: exit 70 and a crash log). On GitHub Actions
(`GITHUB_ACTIONS=true`) the secrets are masked first, then the job summary, annotations, step
outputs and (opt-in) the PR comment follow. Every text goes through `text.clean`, which masks
the secrets registry's values (clawspec/secrets.py); `publish` opens one from the settings when
its caller has none.
Where it all goes (the repository root, the summary and output files, the PR, the commit) comes
from the run's CI context (clawspec/ci_context.py), read once by `runner.finish`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.crash import Faults, is_bug
from clawspec.text import clean, one_line, pluralize

if TYPE_CHECKING:
    from clawspec.reports.github.commands import GitHubRunner
    from clawspec.reports.model import RunReport
    from clawspec.reports.outcome import RunOutcome

REPORT_JSON_NAME = "clawspec-report.json"


def report_json_path(settings: Settings) -> Path:
    return Path(settings.report_json or Path(settings.report_dir) / REPORT_JSON_NAME)


def output_problems(settings: Settings) -> list[str]:
    """Why a report the settings ask for could not be written, said before anything runs (a
    run whose JSON report or JUnit file is lost would be paid for and read as green): a path
    that is a folder, a name too long, a folder that cannot be made or written in."""
    import os

    named = [
        ("JSON report", report_json_path(settings)),
        ("JUnit XML", settings.junit),
        ("HTML report", settings.report_html),
        ("Code Quality report", settings.codequality),
        ("job summary file", settings.summary),
    ]
    problems = []
    for what, value in named:
        if not value:
            continue
        path = Path(value)
        if len(os.fsencode(path.name)) > 255:  # asked first: the file system refuses it
            problems.append(f"{what} '{value}': the file name is longer than 255 bytes")
        elif path.is_dir():
            problems.append(f"{what} '{value}' is a folder: give a file name")
        else:
            folder = next((p for p in (path.parent, *path.parent.parents) if p.exists()), None)
            if folder is not None and not folder.is_dir():
                problems.append(f"{what} '{value}': '{folder}' is a file, not a folder")
            elif folder is not None and not os.access(folder, os.W_OK | os.X_OK):
                problems.append(f"{what} '{value}': cannot write in '{folder}'")
    return problems


def clear_earlier_reports(settings: Settings, keep: Iterable[Path] = ()) -> list[Path]:
    """Remove the files an earlier run left where this run writes its reports, but those in
    `keep` (a report this run reads: its baseline, the durations that balance its shards);
    return the removed.

    Called once the paths are known and before any contract is read: a run that ends without
    results (invalid contracts, an unreachable gateway, a crash or a signal before it starts)
    must not leave the last run's JUnit or JSON report there, read as this run's by a CI
    system whose workspace outlives a build (Jenkins, self-hosted runners). A run that gets
    further writes its own, interrupted or not."""
    kept = {path.resolve() for path in keep}
    removed = []
    for value in (
        report_json_path(settings),
        settings.junit,
        settings.report_html,
        settings.codequality,
        settings.summary,
    ):
        path = Path(value) if value else None
        if path is not None and path.is_file() and path.resolve() not in kept:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def publish(
    report: RunReport,
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    *,
    context: CIContext | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    http: object | None = None,
    outcome: RunOutcome | None = None,
) -> list[Path]:
    """Write the JSON report and the other configured outputs; return the report files written
    (a writer's bug: `InternalError`, raised once the others are written).

    `context` is the run's CI context; without one it is read from `environ` (one of the two
    is needed). `stdout` receives workflow commands and `stderr` warnings (default: the process
    streams); `http` is an optional `requests.Session` for the PR comment and the check run.
    `outcome` is the run's verdict (`runner.finish` decides it); without one it is decided from
    the report and the settings' exit policy.
    """
    from clawspec.secrets import settings_scope

    # A Python caller may hold no secrets registry: the settings' secrets are masked regardless.
    with settings_scope(settings, environ):
        return _publish(report, settings, environ, context, stdout, stderr, http, outcome)


def _publish(
    report: RunReport,
    settings: Settings,
    environ: Mapping[str, str] | None,
    context: CIContext | None,
    stdout: TextIO | None,
    stderr: TextIO | None,
    http: object | None,
    outcome: RunOutcome | None,
) -> list[Path]:
    from clawspec.reports.outcome import decide, policy_for

    if outcome is None:
        outcome = decide(report, policy_for(settings))

    if context is None:
        if environ is None:
            raise TypeError("publish() needs the run's CI context (context=) or environ")
        context = CIContext.from_environ(environ)
    err = stderr if stderr is not None else sys.stderr
    faults = Faults()
    decided = outcome

    def now() -> RunOutcome:
        """The outcome as the next output must say it: a bug in a writer fails the job (exit
        70, `faults.raise_if_any` below), so what is written after it says so too; a green
        check run beside a failed job would hide the failure."""
        if faults:
            return decide(report, replace(policy_for(settings), internal_error=True))
        return decided

    def attempt(what: str, action: Callable[[], object]) -> object:
        try:
            return action()
        except Exception as exc:  # one output failing must not cost the others
            message = f"warning: {what} not written: {type(exc).__name__}: {one_line(str(exc))}"
            print(clean(message), file=err, flush=True)
            if is_bug(exc) and not isinstance(exc, OSError):  # not a full disk, a network
                faults.add(f"writing the {what}", exc)
            return None

    # The report's contract paths are relative to the workspace root (the scenario identity);
    # file locations resolve them from there, whatever folder ClawSpec runs from.
    workspace = settings.workspace or Path.cwd()
    json_path = report_json_path(settings)
    junit_path = Path(settings.junit) if settings.junit else None
    written = _write_files(report, settings, context, workspace, attempt)
    if settings.summary and attempt(
        "job summary file", lambda: _write_summary(report, settings.summary, now())
    ):
        written.append(Path(settings.summary))
    _keep_workspace_owner(written, context)
    if context.system == "github":
        _publish_github(
            report,
            settings,
            context,
            now,
            attempt=attempt,
            stdout=stdout,
            err=err,
            json_path=json_path if json_path in written else None,
            junit_path=junit_path if junit_path in written else None,
            http=http,
            workspace=workspace,
        )
    faults.raise_if_any(report_dir=json_path.parent, written=written)
    return written


def _write_files(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    workspace: Path,
    attempt: Callable[[str, Callable[[], object]], object],
) -> list[Path]:
    """The report files the settings ask for (JSON always), each attempted on its own."""
    from clawspec.reports.json_report import write_json

    written: list[Path] = []
    json_path = report_json_path(settings)
    if attempt("JSON report", lambda: write_json(report, json_path)):
        written.append(json_path)
    junit_path = Path(settings.junit) if settings.junit else None
    if junit_path is not None:
        from clawspec.reports.codequality import repository_root
        from clawspec.reports.junit import write_junit

        root = repository_root(context)  # `file` as annotations give it: repository-relative
        strict = settings.junit_strict
        if attempt(
            "JUnit XML",
            lambda: write_junit(
                report, junit_path, root, strict, workspace, settings.limits.reply_chars
            ),
        ):
            written.append(junit_path)
    html_path = Path(settings.report_html) if settings.report_html else None
    if html_path is not None:
        from clawspec.reports.html import write_html

        if attempt(
            "HTML report", lambda: write_html(report, html_path, settings.limits.reply_chars)
        ):
            written.append(html_path)
    quality_path = Path(settings.codequality) if settings.codequality else None
    if quality_path is not None:
        from clawspec.reports.codequality import repository_root, write_codequality

        root = repository_root(context)
        if attempt(
            "Code Quality report",
            lambda: write_codequality(report, quality_path, root, workspace),
        ):
            written.append(quality_path)
    return written


def _write_summary(report: RunReport, file: str, outcome: RunOutcome) -> Path:
    """What GitHub's job summary would show, to a file anywhere (a local preview): the Markdown
    alone, within the same 1 MiB, with no workflow commands and no `$GITHUB_STEP_SUMMARY`."""
    from clawspec.reports.github.summary import render_summary

    path = Path(file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_summary(report, outcome=outcome), encoding="utf-8")
    return path


def _publish_github(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    outcome: Callable[[], RunOutcome],
    *,
    attempt: Callable[[str, Callable[[], object]], object],
    stdout: TextIO | None,
    err: TextIO,
    json_path: Path | None,
    junit_path: Path | None,
    http: object | None,
    workspace: Path,
) -> None:
    from clawspec.reports.github.annotations import write_annotations
    from clawspec.reports.github.commands import GitHubRunner
    from clawspec.reports.github.outputs import write_outputs
    from clawspec.reports.github.summary import write_summary

    runner = GitHubRunner(context, stdout)
    runner.mask_secrets()  # before any other output of ours
    # A shard is a part: the summary, annotations and PR comment of the whole come from the
    # merge job, once. Its step outputs stay (per job; the report path feeds upload-artifact).
    whole = report.shard is None or settings.shard_publish
    if whole:
        attempt("job summary", lambda: write_summary(runner, report, outcome=outcome()))
        attempt("annotations", lambda: write_annotations(runner, report, workspace=workspace))
    attempt(
        "step outputs",
        lambda: write_outputs(runner, report, json_path, junit_path, outcome=outcome()),
    )
    context = _leg_context(context, settings)
    if settings.check_run is not False and whole:
        attempt(
            "check run",
            lambda: _check_run(
                report,
                settings,
                context,
                outcome(),
                runner=runner,
                err=err,
                http=http,
                workspace=workspace,
            ),
        )
    if settings.pr_comment != "off" and whole:
        if report.shard is not None:
            context = _shard_job(context, report.shard.index)
        attempt(
            "PR comment",
            lambda: _comment(report, settings, context, outcome(), err=err, http=http),
        )


def publish_stopped(
    problems: list[str],
    settings: Settings,
    environ: Mapping[str, str],
    *,
    shard: int | None = None,
    merge: bool = False,
    err: TextIO | None = None,
    http: object | None = None,
) -> None:
    """On GitHub, a run that invalid contracts stopped before anything ran says so on its pull
    request: the job's comment (which held an earlier push's verdicts, green perhaps) is
    updated, or created, unless `pr_comment` is off; `shard`: the index of a shard that
    publishes its own (the caller leaves out the others: the merge job speaks for the whole);
    `merge`: said by a merge that found no report to merge. A failure here is a warning, as
    for a run."""
    from clawspec.reports.github.commands import running_on_github
    from clawspec.reports.github.pr_comment import PrCommentError, publish_stopped_comment

    err = err or sys.stderr
    context = CIContext.from_environ(environ)
    if settings.pr_comment == "off" or not running_on_github(context):
        return
    context = _leg_context(context, settings)
    if shard is not None:  # a shard that publishes its own marks its own
        context = _shard_job(context, shard)
    token = settings.github_token.get_secret_value() if settings.github_token else None
    try:
        result = publish_stopped_comment(
            context,
            token,
            problems,
            merge=merge,
            http=http,  # type: ignore[arg-type]
        )
    except PrCommentError as exc:
        print(clean(f"warning: PR comment not written: {exc}"), file=err, flush=True)
        return
    if result is not None:
        print(clean(f"PR comment {result.action}: {result.url or result.comment_id} (nothing ran)"),
              file=err, flush=True)  # fmt: skip


def _leg_context(context: CIContext, settings: Settings) -> CIContext:
    """A matrix leg of some variants (`--variant NAME`, one job each, one GITHUB_JOB): its
    check run and PR comment are its own, or the legs would replace each other's."""
    if part := _variant_part(settings):
        return _job_named(context, f"{context.github.job or 'job'} ({', '.join(part)})")
    return context


def _shard_job(context: CIContext, shard: int) -> CIContext:
    """Matrix jobs share one GITHUB_JOB: each shard's comment gets a marker of its own, so the
    shards neither overwrite each other nor the merged comment."""
    return _job_named(context, f"{context.github.job or 'job'}-shard-{shard}")


def _job_named(context: CIContext, job: str) -> CIContext:
    return replace(context, github=replace(context.github, job=job))


def _variant_part(settings: Settings) -> list[str]:
    """The variants this run was limited to, when they are some of those configured."""
    chosen = list(settings.selected_variants)
    configured = {v.name for v in settings.variants}
    return chosen if chosen and set(chosen) != configured else []


def _comment(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    outcome: RunOutcome,
    *,
    err: TextIO,
    http: object | None,
) -> None:
    from clawspec.reports.github.pr_comment import PrCommentError, publish_pr_comment

    token = settings.github_token.get_secret_value() if settings.github_token else None
    try:
        result = publish_pr_comment(
            report,
            context,
            token,
            mode=settings.pr_comment,
            outcome=outcome,
            http=http,  # type: ignore[arg-type]
        )
    except PrCommentError as exc:
        # Expected failures (fork PRs, a token without rights, GitHub down): a warning only.
        print(clean(f"warning: PR comment not written: {exc}"), file=err, flush=True)
        return
    if result is None:
        why = "this run is not about a pull request"
        if context.github.event_error:  # a PR run whose payload could not be read looks so too
            why += f" (as far as can be told: {context.github.event_error})"
        print(clean(f"note: PR comment skipped: {why}"), file=err)
    elif result.action == "skipped":
        print(f"note: PR comment skipped ({settings.pr_comment}): {result.reason}", file=err)
    else:
        why = f" ({result.reason})" if result.reason else ""
        print(
            clean(f"PR comment {result.action}: {result.url or result.comment_id}{why}"),
            file=err,
            flush=True,
        )


def _check_run(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    outcome: RunOutcome,
    *,
    runner: GitHubRunner,
    err: TextIO,
    http: object | None,
    workspace: Path,
) -> None:
    from clawspec.reports.github.api import GitHubApiError
    from clawspec.reports.github.check_run import is_fork_pull_request, publish_check_run

    token = settings.github_token.get_secret_value() if settings.github_token else None
    if settings.check_run == "auto" and (not token or is_fork_pull_request(context)):
        why = "a pull request from a fork gets a read-only token" if token else "no GitHub token"
        print(f"note: check run skipped: {why} (check_run: true tries anyway)", file=err)
        return
    try:
        result = publish_check_run(
            report,
            context,
            token,
            outcome,
            name=settings.check_name,
            workspace=workspace,
            http=http,  # type: ignore[arg-type]
        )
    except GitHubApiError as exc:
        # No `checks: write` (fork PRs, restricted tokens), GitHub down: a warning, and the exit
        # code stays the exit policy's.
        # Asked for explicitly, it is also a warning annotation; `auto` only says so in the log.
        message = f"check run not written: {exc}"
        if settings.check_run is True:
            runner.command("warning", message, {"title": "ClawSpec: no check run"})
        print(clean(f"warning: {message}"), file=err, flush=True)
        return
    if result is None:
        print("note: check run skipped: no commit to attach it to (GITHUB_SHA)", file=err)
        return
    print(
        f"check run {result.conclusion}: {result.url or result.check_run_id} "
        f"({pluralize(result.annotations, 'annotation')} in "
        f"{pluralize(result.requests, 'request')})",
        file=err,
        flush=True,
    )


def _keep_workspace_owner(paths: list[Path], context: CIContext) -> None:
    """Give files we wrote into the workspace to the workspace's owner when we run as root.

    A container action runs as root while the runner user owns `$GITHUB_WORKSPACE`; root-owned
    reports there break later steps (and the next checkout). Best effort: errors are ignored.
    """
    workspace = context.github.workspace
    if not workspace or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    try:
        root = Path(workspace).resolve()
        owner = root.stat()
    except OSError:
        return
    if owner.st_uid == 0:
        return
    for path in paths:
        full = path.resolve()
        if root not in full.parents:
            continue
        node = full
        while node != root:
            try:
                if node.stat().st_uid == 0:
                    os.chown(node, owner.st_uid, owner.st_gid)
            except OSError:
                pass
            node = node.parent

"""A GitHub REST API on 127.0.0.1 for the PR comment: issue comments kept in memory.

Speaks the endpoints ClawSpec uses, with GitHub's shapes and paging:
  GET   /repos/{owner}/{repo}/issues/{number}/comments?per_page=&page=   (Link: rel="next")
  POST  /repos/{owner}/{repo}/issues/{number}/comments                   → 201
  PATCH /repos/{owner}/{repo}/issues/comments/{id}                       → 200
It checks the Bearer token (401 otherwise) and can be told to fail: `forbid_writes()` answers
POST/PATCH with the fork PR's 403 "Resource not accessible by integration"; `fail_next(status)`
queues answers such as one 502 or a secondary rate limit (403 + retry-after).

And the Actions endpoints the `github` history store reads, filled with `add_run`:
  GET /repos/{owner}/{repo}/actions/workflows/{file}/runs?branch=&status=&per_page=
  GET /repos/{owner}/{repo}/actions/runs?branch=&status=&per_page=
  GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts?name=
  GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip  → 302 to a signed URL on a second
      server (another port, as GitHub's blob storage is another host), which serves the zip and
      records whether an Authorization header reached it; an expired artifact answers 410.
`forbid_actions()` answers them like a token without `actions: read` (403).

And the Checks API the check run uses, validated as GitHub validates it (422 otherwise: more
than 50 annotations in one request, a missing or unknown field value, a title over 255
characters, a message over 64 KB, a summary or text over 65,535 characters):
  POST  /repos/{owner}/{repo}/check-runs        → 201
  PATCH /repos/{owner}/{repo}/check-runs/{id}   → 200; output.annotations are appended
`forbid_checks()` answers them like a token without `checks: write` (403); `check_runs()`
returns what was stored, every annotation included.
"""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, parse_qs, urlsplit

import pytest

from tests.support.hooks_api import HooksServer

FORK_MESSAGE = "Resource not accessible by integration"
_LIST = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")
_ONE = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$")
_RUNS = re.compile(r"^/repos/[^/]+/[^/]+/actions(?:/workflows/([^/]+))?/runs$")
_ARTIFACTS = re.compile(r"^/repos/[^/]+/[^/]+/actions/runs/(\d+)/artifacts$")
_ZIP = re.compile(r"^/repos/[^/]+/[^/]+/actions/artifacts/(\d+)/zip$")
_CHECKS = re.compile(r"^/repos/([^/]+)/([^/]+)/check-runs$")
_CHECK = re.compile(r"^/repos/([^/]+)/([^/]+)/check-runs/(\d+)$")
_LEVELS = ("notice", "warning", "failure")
_CONCLUSIONS = (
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
)


@dataclass(frozen=True)
class Recorded:
    """One request as received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class _Fault:
    status: int
    message: str
    headers: dict[str, str]
    methods: tuple[str, ...]


@dataclass
class _State:
    token: str
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    faults: list[_Fault] = field(default_factory=list)
    forbid_writes: bool = False
    forbid_actions: bool = False
    forbid_checks: bool = False
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    blobs: dict[int, bytes] = field(default_factory=dict)
    blob_url: str = ""
    blob_requests: list[Recorded] = field(default_factory=list)
    next_id: int = 1000
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if not length:
            return None
        try:
            return json.loads(self.rfile.read(length))
        except json.JSONDecodeError:
            return None

    def _handle(self) -> None:
        state = self.server.state
        body = self._body()
        url = urlsplit(self.path)
        with state.lock:
            state.requests.append(
                Recorded(self.command, self.path, dict(self.headers.items()), body)
            )
            fault = next((f for f in state.faults if self.command in f.methods), None)
            if fault is not None:
                state.faults.remove(fault)
        if self.headers.get("Authorization") != f"Bearer {state.token}":
            self._send(401, {"message": "Bad credentials"})
            return
        if fault is not None:
            self._send(fault.status, {"message": fault.message}, fault.headers)
            return
        if self.command in ("POST", "PATCH") and state.forbid_writes:
            self._send(403, {"message": FORK_MESSAGE, "documentation_url": "https://docs"})
            return
        if "/actions/" in url.path and self.command == "GET":
            self._actions(url.path, parse_qs(url.query))
            return
        checks, check = _CHECKS.match(url.path), _CHECK.match(url.path)
        if (checks or check) and state.forbid_checks:
            self._send(403, {"message": FORK_MESSAGE, "documentation_url": "https://docs"})
        elif checks and self.command == "POST":
            self._create_check(body or {}, checks)
        elif check and self.command == "PATCH":
            self._update_check(int(check.group(3)), body or {})
        else:
            self._comments(url, body)

    def _comments(self, url: SplitResult, body: dict[str, Any] | None) -> None:
        listing, single = _LIST.match(url.path), _ONE.match(url.path)
        if listing and self.command == "GET":
            self._list(int(listing.group(3)), parse_qs(url.query), url.path)
        elif listing and self.command == "POST":
            self._create(int(listing.group(3)), body or {}, listing)
        elif single and self.command == "PATCH":
            self._update(int(single.group(3)), body or {})
        else:
            self._send(404, {"message": "Not Found"})

    def _create_check(self, body: dict[str, Any], match: re.Match[str]) -> None:
        errors = _check_errors(body, creating=True)
        if errors:
            self._send(422, {"message": "Invalid request.", "errors": errors})
            return
        state = self.server.state
        with state.lock:
            state.next_id += 1
            run = {key: value for key, value in body.items() if key != "output"}
            output = dict(body.get("output") or {})
            run |= {
                "id": state.next_id,
                "html_url": f"https://github.invalid/{match.group(1)}/{match.group(2)}/runs/"
                f"{state.next_id}",
                "output": output | {"annotations": list(output.get("annotations") or [])},
            }
            state.check_runs[run["id"]] = run
            public = _public_check(run)
        self._send(201, public)

    def _update_check(self, check_id: int, body: dict[str, Any]) -> None:
        errors = _check_errors(body, creating=False)
        if errors:
            self._send(422, {"message": "Invalid request.", "errors": errors})
            return
        state = self.server.state
        with state.lock:
            run = state.check_runs.get(check_id)
            if run is not None:
                output = dict(body.get("output") or {})
                added = list(output.pop("annotations", None) or [])
                run.update({key: value for key, value in body.items() if key != "output"})
                run["output"].update(output)
                run["output"]["annotations"] += added
                public = _public_check(run)
        if run is None:
            self._send(404, {"message": "Not Found"})
        else:
            self._send(200, public)

    def _list(self, number: int, query: dict[str, list[str]], path: str) -> None:
        state = self.server.state
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        with state.lock:
            items = [c for c in state.comments.values() if c["_number"] == number]
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            host = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"
            headers["Link"] = f'<{host}{path}?per_page={per_page}&page={page + 1}>; rel="next"'
        self._send(200, [_public(c) for c in chunk], headers)

    def _create(self, number: int, body: dict[str, Any], match: re.Match[str]) -> None:
        state = self.server.state
        with state.lock:
            state.next_id += 1
            comment = {
                "id": state.next_id,
                "body": str(body.get("body", "")),
                "user": {"login": "github-actions[bot]"},
                "html_url": f"https://github.invalid/{match.group(1)}/{match.group(2)}/pull/"
                f"{number}#issuecomment-{state.next_id}",
                "_number": number,
            }
            state.comments[comment["id"]] = comment
        self._send(201, _public(comment))

    def _update(self, comment_id: int, body: dict[str, Any]) -> None:
        state = self.server.state
        with state.lock:
            comment = state.comments.get(comment_id)
            if comment is not None:
                comment["body"] = str(body.get("body", ""))
        if comment is None:
            self._send(404, {"message": "Not Found"})
        else:
            self._send(200, _public(comment))

    def _actions(self, path: str, query: dict[str, list[str]]) -> None:
        state = self.server.state
        if state.forbid_actions:
            self._send(403, {"message": FORK_MESSAGE, "documentation_url": "https://docs"})
            return
        runs, artifacts, download = _RUNS.match(path), _ARTIFACTS.match(path), _ZIP.match(path)
        with state.lock:
            if runs:
                self._send(200, _runs_page(state.runs, runs.group(1), query))
            elif artifacts:
                found = state.artifacts.get(int(artifacts.group(1)), [])
                wanted = query.get("name", [None])[0]
                items = [a for a in found if wanted is None or a["name"] == wanted]
                self._send(200, {"total_count": len(items), "artifacts": items})
            elif download:
                artifact_id = int(download.group(1))
                everything = [a for items in state.artifacts.values() for a in items]
                item = next((a for a in everything if a["id"] == artifact_id), None)
                if item is None:
                    self._send(404, {"message": "Not Found"})
                elif item["expired"]:
                    self._send(410, {"message": "Artifact has expired"})
                else:
                    location = f"{state.blob_url}/blob/{artifact_id}?sig=signed-{artifact_id}"
                    self._send(302, {}, {"Location": location})
            else:
                self._send(404, {"message": "Not Found"})

    do_GET = do_POST = do_PATCH = _handle


def _runs_page(
    runs: list[dict[str, Any]], workflow: str | None, query: dict[str, list[str]]
) -> dict[str, Any]:
    """Newest first, filtered like GitHub: by workflow file, branch and status."""
    branch = query.get("branch", [None])[0]
    status = query.get("status", [None])[0]
    per_page = int(query.get("per_page", ["30"])[0])
    found = [
        run
        for run in runs
        if (workflow is None or run["path"].endswith(f"/{workflow}"))
        and (branch is None or run["head_branch"] == branch)
        and (status is None or run["status"] == status)
    ]
    found.sort(key=lambda run: run["created_at"], reverse=True)
    return {"total_count": len(found), "workflow_runs": found[:per_page]}


class _BlobHandler(BaseHTTPRequestHandler):
    """The signed download URL's host: serves artifact zips, needs no token, records headers."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        with state.lock:
            state.blob_requests.append(Recorded("GET", self.path, dict(self.headers.items()), None))
            match = re.fullmatch(r"/blob/(\d+)", url.path)
            data = state.blobs.get(int(match.group(1))) if match else None
        if data is None or "sig=signed-" not in url.query:
            body, status = b"<Error>AuthenticationFailed</Error>", 403
        else:
            body, status = data, 200
        self.send_response(status)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def artifact_zip(files: dict[str, bytes]) -> bytes:
    """A zip as actions/upload-artifact makes it: the uploaded folder's files at the root."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _check_errors(body: dict[str, Any], *, creating: bool) -> list[str]:
    """What GitHub would refuse in a check-run request (422), as short descriptions."""
    errors = []
    if creating:
        errors += [f"missing {key}" for key in ("name", "head_sha") if not body.get(key)]
    if body.get("status") == "completed" and body.get("conclusion") not in _CONCLUSIONS:
        errors.append(f"conclusion {body.get('conclusion')!r} with status completed")
    output = body.get("output")
    if output is None:
        return errors
    errors += [f"output.{key} missing" for key in ("title", "summary") if not output.get(key)]
    for key in ("summary", "text"):
        if len(output.get(key) or "") > 65_535:
            errors.append(f"output.{key} longer than 65535 characters")
    annotations = output.get("annotations") or []
    if len(annotations) > 50:
        errors.append(f"{len(annotations)} annotations: at most 50 per request")
    for item in annotations:
        missing = [
            key
            for key in ("path", "start_line", "end_line", "annotation_level", "message")
            if item.get(key) in (None, "")
        ]
        errors += [f"annotation without {key}" for key in missing]
        if item.get("annotation_level") not in _LEVELS:
            errors.append(f"annotation_level {item.get('annotation_level')!r}")
        if len(item.get("title") or "") > 255:
            errors.append("annotation title longer than 255 characters")
        if len(str(item.get("message", "")).encode()) > 64 * 1024:
            errors.append("annotation message over 64 KB")
    return errors


def _public_check(run: dict[str, Any]) -> dict[str, Any]:
    output = {key: value for key, value in run["output"].items() if key != "annotations"}
    output["annotations_count"] = len(run["output"]["annotations"])
    return {**run, "output": output}


def _public(comment: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in comment.items() if not k.startswith("_")}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class GitHubApiServer:
    """Start with `with GitHubApiServer(token) as api:`; `api.url` is the GITHUB_API_URL."""

    def __init__(self, token: str) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = _State(token)
        self._blobs = _Server(("127.0.0.1", 0), _BlobHandler)
        self._blobs.state = self._server.state
        host, port = self._blobs.server_address[:2]
        self._server.state.blob_url = f"http://{host}:{port}"
        self._threads = [
            threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            for server in (self._server, self._blobs)
        ]

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def state(self) -> _State:
        return self._server.state

    def comments(self, number: int | None = None) -> list[dict[str, Any]]:
        with self.state.lock:
            return [
                _public(c)
                for c in self.state.comments.values()
                if number is None or c["_number"] == number
            ]

    def add_comment(self, number: int, body: str) -> int:
        """Seed a comment (someone else's, or an old one) and return its id."""
        with self.state.lock:
            self.state.next_id += 1
            self.state.comments[self.state.next_id] = {
                "id": self.state.next_id,
                "body": body,
                "user": {"login": "someone"},
                "html_url": "",
                "_number": number,
            }
            return self.state.next_id

    @property
    def requests(self) -> list[Recorded]:
        with self.state.lock:
            return list(self.state.requests)

    def add_run(
        self,
        *,
        branch: str,
        head_sha: str,
        created_at: str,
        event: str = "schedule",
        workflow: str = "nightly.yml",
        name: str = "ClawSpec nightly",
        status: str = "completed",
        committed_at: str | None = None,
        files: dict[str, bytes] | None = None,
        artifact: str = "clawspec-report",
        expired: bool = False,
    ) -> int:
        """Seed a workflow run (and, with `files`, its artifact); return the run id."""
        with self.state.lock:
            self.state.next_id += 1
            run_id = self.state.next_id
            self.state.runs.append(
                {
                    "id": run_id,
                    "name": name,
                    "path": f".github/workflows/{workflow}",
                    "head_branch": branch,
                    "head_sha": head_sha,
                    "event": event,
                    "status": status,
                    "created_at": created_at,
                    "run_started_at": created_at,
                    "html_url": f"https://github.invalid/octo/agents/actions/runs/{run_id}",
                    "head_commit": {"id": head_sha, "timestamp": committed_at or created_at},
                }
            )
            if files is not None:
                self.state.next_id += 1
                artifact_id = self.state.next_id
                self.state.blobs[artifact_id] = artifact_zip(files)
                self.state.artifacts[run_id] = [
                    {
                        "id": artifact_id,
                        "name": artifact,
                        "size_in_bytes": len(self.state.blobs[artifact_id]),
                        "expired": expired,
                        "created_at": created_at,
                        "expires_at": "2026-08-01T00:00:00Z" if expired else "2027-02-01T00:00:00Z",
                        "archive_download_url": f"{self.url}/repos/octo/agents/actions/"
                        f"artifacts/{artifact_id}/zip",
                    }
                ]
            return run_id

    def forbid_actions(self, forbidden: bool = True) -> None:
        """Answer the Actions endpoints like GitHub does for a token without `actions: read`."""
        self.state.forbid_actions = forbidden

    def check_runs(self) -> list[dict[str, Any]]:
        """Every check run created, with all its annotations, oldest first."""
        with self.state.lock:
            return [json.loads(json.dumps(run)) for run in self.state.check_runs.values()]

    def forbid_checks(self, forbidden: bool = True) -> None:
        """Answer the Checks API like GitHub does for a token without `checks: write`."""
        self.state.forbid_checks = forbidden

    def forbid_writes(self, forbidden: bool = True) -> None:
        """Answer POST/PATCH like GitHub does for a fork PR's read-only token."""
        self.state.forbid_writes = forbidden

    def fail_next(
        self,
        status: int,
        message: str = "Server Error",
        headers: dict[str, str] | None = None,
        methods: tuple[str, ...] = ("GET", "POST", "PATCH"),
    ) -> None:
        """Answer the next request with one of `methods` with this status (once)."""
        with self.state.lock:
            self.state.faults.append(_Fault(status, message, dict(headers or {}), methods))

    def __enter__(self) -> GitHubApiServer:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self._server, self._blobs):
            server.shutdown()
            server.server_close()


def pull_request_environ(api_url: str, folder: Path, number: int = 7) -> dict[str, str]:
    """A GitHub Actions environment of a `pull_request` job (event payload written to `folder`)
    whose REST API is the local server at `api_url`."""
    event = folder / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": number}}))
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api_url,
        "GITHUB_REPOSITORY": "octo/repo",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_WORKFLOW": "CI",
        "GITHUB_JOB": "test",
    }


def pull_request_env(
    api: GitHubApiServer, workspace: Path, folder: Path, pr: int, token: str, **more: str
) -> dict[str, str]:
    """A GitHub Actions job on a push to pull request `pr` (its event file written in `folder`),
    against `api`; `more` adds or replaces variables (the job, the SHA, the step's files)."""
    event = folder / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": pr}}))
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_API_URL": api.url,
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_TOKEN": token,
        **more,
    }


@contextmanager
def pull_request_job(
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    folder: Path,
    *,
    pr: int,
    token: str,
    hooks_token: str,
    job: str,
    sha: str,
) -> Iterator[tuple[GitHubApiServer, HooksServer]]:
    """A job of workflow "CI" on a push to pull request `pr`: the local GitHub REST server, a
    hook endpoint beside it, and the job's environment set (its step summary and output files
    in `folder`)."""
    with GitHubApiServer(token) as api, HooksServer(hooks_token, workspace) as hooks:
        env = pull_request_env(
            api, workspace, folder, pr, token,
            GITHUB_WORKFLOW="CI", GITHUB_JOB=job, GITHUB_SHA=sha,
            GITHUB_STEP_SUMMARY=str(folder / "summary.md"),
            GITHUB_OUTPUT=str(folder / "output"),
            CLAWSPEC_HOOKS_TOKEN=hooks_token, CLAWSPEC_GATEWAY_BASE_URL=hooks.base_url,
        )  # fmt: skip
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        yield api, hooks

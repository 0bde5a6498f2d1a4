"""The s3:// store through the real boto3 client against moto's S3 server on 127.0.0.1."""

from __future__ import annotations

import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from clawspec import cli
from clawspec.ci_context import CIContext
from clawspec.config.settings import HistorySettings, Settings
from clawspec.history.baseline import Baseline, NoBaseline, find_baseline, recent_runs
from clawspec.history.store import HistoryError
from clawspec.history.stores import open_store, save_report
from clawspec.reports.model import RunSource
from tests.history.factory import past_run

pytestmark = pytest.mark.usefixtures("aws_env")
NO_CI = CIContext.from_environ({})  # a run outside CI


def _bucket(endpoint: str) -> tuple[str, Any]:
    import boto3

    name = f"history-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=name)
    return name, client


def _settings(endpoint: str, spec: str) -> Settings:
    return Settings(baseline=spec, history=HistorySettings(s3_endpoint_url=endpoint))


def test_s3_round_trip_in_the_shared_layout(s3_endpoint: str) -> None:
    bucket, client = _bucket(s3_endpoint)
    spec = f"s3://{bucket}/team/agents"
    settings = _settings(s3_endpoint, spec)
    first = past_run("main", "a" * 40, "2026-11-20T03:00:00+00:00", "run-a")
    second = past_run("main", "b" * 40, "2026-11-21T03:00:00+00:00", "run-b", failing=True)
    feature = past_run("feature/x", "c" * 40, "2026-11-21T05:00:00+00:00", "run-c")
    messages = [save_report(run, settings, NO_CI) for run in (first, second, feature)]
    assert messages[0] == (
        f"baseline saved: s3://{bucket}/team/agents/main/20261120T030000Z-aaaaaaaaaaaa-runa/"
        "clawspec-report.json"
    )
    keys = sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket)["Contents"])
    assert keys == [
        "team/agents/feature%2Fx/20261121T050000Z-cccccccccccc-runc/clawspec-report.json",
        "team/agents/feature%2Fx/index.json",
        "team/agents/main/20261120T030000Z-aaaaaaaaaaaa-runa/clawspec-report.json",
        "team/agents/main/20261121T030000Z-bbbbbbbbbbbb-runb/clawspec-report.json",
        "team/agents/main/index.json",
    ]
    store = open_store(spec, settings, NO_CI)
    assert store.label == f"s3://{bucket}/team/agents"
    assert store.branches() == ["feature/x", "main"]
    runs = store.runs("main")
    assert [run.run_id for run in runs] == ["run-a", "run-b"]
    assert store.load(runs[0]) == first
    assert store.load(runs[1]) == second
    assert [store.load(run) for run in store.runs("feature/x")] == [feature]

    found = find_baseline(spec, RunSource(branch="main", event="schedule"), settings, NO_CI)
    assert isinstance(found, Baseline)
    assert found.report == second
    assert found.ref.source == f"s3://{bucket}/team/agents"
    assert found.ref.location == (
        f"s3://{bucket}/team/agents/main/20261121T030000Z-bbbbbbbbbbbb-runb/clawspec-report.json"
    )
    recent = recent_runs(spec, "main", 14, settings, NO_CI)
    assert [report.run_id for _, report in recent.runs] == ["run-a", "run-b"]


def test_s3_endpoint_from_the_aws_sdk_variable(
    s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket, _ = _bucket(s3_endpoint)
    spec = f"s3://{bucket}"
    settings = Settings(baseline=spec)  # no s3_endpoint_url: AWS_ENDPOINT_URL_S3 decides
    # The SDK's own variable, read where the SDK reads it (the process environment): not CI
    # context.
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_endpoint)
    save_report(past_run("main", "d" * 40, "2026-11-20T03:00:00+00:00", "run-d"), settings, NO_CI)
    found = find_baseline(spec, RunSource(branch="main"), settings, NO_CI)
    assert isinstance(found, Baseline) and found.report.run_id == "run-d"
    assert (
        found.ref.location
        == f"s3://{bucket}/main/20261120T030000Z-dddddddddddd-rund/clawspec-report.json"
    )


def test_s3_problems_are_reasons_not_crashes(s3_endpoint: str) -> None:
    spec = "s3://no-such-bucket-here/prefix"
    settings = _settings(s3_endpoint, spec)
    empty_bucket, _ = _bucket(s3_endpoint)
    empty = find_baseline(
        f"s3://{empty_bucket}/p", RunSource(branch="main"), _settings(s3_endpoint, ""), NO_CI
    )
    assert isinstance(empty, NoBaseline)
    assert empty.reason == f"no stored run of 'main' in s3://{empty_bucket}/p"
    missing = find_baseline(spec, RunSource(branch="main"), settings, NO_CI)
    assert isinstance(missing, NoBaseline)
    assert missing.reason.startswith(
        f"baseline '{spec}' unavailable: s3://no-such-bucket-here/prefix/main "
        f"at {s3_endpoint}: cannot list: NoSuchBucket"
    )
    with pytest.raises(HistoryError, match="cannot write: NoSuchBucket"):
        save_report(past_run("main", "e" * 40, "2026-11-20T03:00:00+00:00"), settings, NO_CI)
    assert "example-secret-access-key" not in missing.reason


def test_s3_unreachable_endpoint_is_a_reason(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port on 127.0.0.1 where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = "s3://bucket/p"
    found = find_baseline(
        spec, RunSource(branch="main"), _settings(f"http://127.0.0.1:{port}", spec), NO_CI
    )
    assert isinstance(found, NoBaseline)
    assert "cannot list: EndpointConnectionError" in found.reason


def test_history_command_lists_an_s3_store(
    s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bucket, _ = _bucket(s3_endpoint)
    spec = f"s3://{bucket}/h"
    save_report(
        past_run("main", "f" * 40, "2026-11-20T03:00:00+00:00"), _settings(s3_endpoint, spec), NO_CI
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAWSPEC_HISTORY__S3_ENDPOINT_URL", s3_endpoint)
    assert cli.main(["history", "--baseline", spec, "--branch", "main"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"1 run of 'main' in s3://{bucket}/h, newest first:"
    assert lines[1].endswith(
        f"s3://{bucket}/h/main/20261120T030000Z-ffffffffffff-run1/clawspec-report.json"
    )


class _Denying(BaseHTTPRequestHandler):
    """An S3 endpoint that refuses every call and echoes the secret it was signed with."""

    secret = ""

    def _deny(self) -> None:
        body = (
            "<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code>"
            f"<Message>Access Denied for secret={self.secret}</Message></Error>"
        ).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_HEAD = _deny

    def log_message(self, *args: object) -> None:
        pass


def test_credentials_of_a_profile_are_masked_when_the_store_echoes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Not from the environment: the SDK resolves them from a profile, and ClawSpec never sees
    a variable holding them; what a store answers must still not show them."""
    secret = "profile-secret-" + "q7" * 12
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[ci]\naws_access_key_id = AKIAPROFILEKEY000001\naws_secret_access_key = {secret}\n"
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_PROFILE", "ci")
    _Denying.secret = secret
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Denying)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv(
            "CLAWSPEC_HISTORY__S3_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}"
        )
        assert cli.main(["history", "--baseline", "s3://bucket/h", "--branch", "main"]) == 2
    finally:
        server.shutdown()
        server.server_close()
    out, err = capsys.readouterr()
    assert "AccessDenied" in err and "secret=***" in err
    assert secret not in out + err


def test_an_endpoint_that_is_no_url_is_a_reason_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAWSPEC_HISTORY__S3_ENDPOINT_URL", "127.0.0.1:9000")
    assert cli.main(["history", "--baseline", "s3://bucket/h", "--branch", "main"]) == 2
    err = capsys.readouterr().err
    assert "the S3 endpoint '127.0.0.1:9000' is not usable" in err and "internal error" not in err
    found = find_baseline(
        "s3://bucket/h",
        RunSource(branch="main"),
        _settings("127.0.0.1:9000", "s3://bucket/h"),
        NO_CI,
    )
    assert isinstance(found, NoBaseline) and "is not usable" in found.reason


def test_a_store_that_failed_the_baseline_lookup_is_not_asked_again_for_trends(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A silent store costs its whole wait per question: one is enough to know it is down."""
    import io

    from clawspec.regression.step import judge_against_history

    _Denying.secret = "irrelevant"
    _Denying.seen = 0

    class Counting(_Denying):
        def _deny(self) -> None:
            type(self).seen += 1
            super()._deny()

        do_GET = do_PUT = do_HEAD = _deny

    server = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        settings = _settings(endpoint, "s3://bucket/h")
        run = past_run("main", "e" * 40, "2026-11-20T03:00:00+00:00")
        find_baseline("s3://bucket/h", run.source, settings, NO_CI)
        asked_once = Counting.seen
        judged = judge_against_history(run, settings, NO_CI, io.StringIO())
    finally:
        server.shutdown()
        server.server_close()
    assert asked_once > 0 and Counting.seen == 2 * asked_once
    assert judged.comparison is not None and "unavailable" in (
        judged.comparison.baseline_missing or ""
    )
    assert judged.trends == []

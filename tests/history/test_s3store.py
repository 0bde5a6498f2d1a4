"""The s3:// store through the real boto3 client against moto's S3 server on 127.0.0.1."""

from __future__ import annotations

import uuid
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
        f"baseline saved: s3://{bucket}/team/agents/main/20261120T030000Z-aaaaaaaaaaaa/"
        "clawspec-report.json"
    )
    keys = sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket)["Contents"])
    assert keys == [
        "team/agents/feature%2Fx/20261121T050000Z-cccccccccccc/clawspec-report.json",
        "team/agents/feature%2Fx/index.json",
        "team/agents/main/20261120T030000Z-aaaaaaaaaaaa/clawspec-report.json",
        "team/agents/main/20261121T030000Z-bbbbbbbbbbbb/clawspec-report.json",
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
        f"s3://{bucket}/team/agents/main/20261121T030000Z-bbbbbbbbbbbb/clawspec-report.json"
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
        == f"s3://{bucket}/main/20261120T030000Z-dddddddddddd/clawspec-report.json"
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
        f"baseline '{spec}' unavailable: s3://no-such-bucket-here/prefix/main/index.json "
        f"at {s3_endpoint}: cannot read: NoSuchBucket"
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
    assert "cannot read: EndpointConnectionError" in found.reason


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
        f"s3://{bucket}/h/main/20261120T030000Z-ffffffffffff/clawspec-report.json"
    )

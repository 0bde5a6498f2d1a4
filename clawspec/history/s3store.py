"""`s3://bucket/prefix`: the history in an S3 bucket, or any S3-compatible store.

Credentials come from boto3's standard chain (environment, shared config/credentials files,
web identity / OIDC, container and instance roles); ClawSpec never reads or prints them.
An S3-compatible store (MinIO, Ceph, Cloudflare R2, ...) is reached through an endpoint URL:
config `history: {s3_endpoint_url: ...}` (env `CLAWSPEC_HISTORY__S3_ENDPOINT_URL`), else the
AWS SDK's own `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`. With a custom endpoint, requests use
path-style addressing (`<endpoint>/<bucket>/<key>`), which every S3-compatible server accepts.
`boto3` is imported only when an `s3://` store is used.

botocore's `read_timeout` bounds each wait between bytes, not a whole call: every operation
(retries and the body included) also runs under a deadline of OPERATION_LIMIT_S
(`deadline.call_within`), so a server that trickles its answer cannot hold the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from clawspec.history.store import FolderStore, HistoryError
from clawspec.net.deadline import Deadline, DeadlineExceeded, call_within
from clawspec.secrets import register as register_secrets
from clawspec.text import fmt_number

TIMEOUTS_S = {"connect_timeout": 10, "read_timeout": 30}
OPERATION_LIMIT_S = 120.0  # one read, write or listing, retries included

T = TypeVar("T")


def endpoint_url(configured: str | None, environ: Mapping[str, str]) -> str | None:
    """Return the S3 endpoint in effect: the config option, else the AWS SDK variables."""
    return configured or environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL")


def _register(session: Any) -> None:
    from botocore.exceptions import BotoCoreError

    try:
        credentials = session.get_credentials()
        frozen = credentials.get_frozen_credentials() if credentials is not None else None
    except BotoCoreError:
        return  # none to resolve: each call then says so
    if frozen is not None:
        register_secrets(frozen.secret_key, frozen.token)


class S3Blobs:
    """`Blobs` over one bucket and key prefix."""

    def __init__(self, bucket: str, prefix: str, endpoint: str | None = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.endpoint = endpoint
        self.label = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._client: Any = None

    def _s3(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            options: dict[str, Any] = {"retries": {"max_attempts": 3, "mode": "standard"}}
            if self.endpoint:
                options["s3"] = {"addressing_style": "path"}
            config = Config(**TIMEOUTS_S, **options)
            session = boto3.session.Session()
            try:
                self._client = session.client("s3", endpoint_url=self.endpoint, config=config)
            except ValueError as exc:  # an endpoint that is no URL (`127.0.0.1:9000`)
                raise HistoryError(
                    f"{self.label}: the S3 endpoint {self.endpoint!r} is not usable ({exc}): "
                    "give a URL such as http://127.0.0.1:9000 (history.s3_endpoint_url)"
                ) from None
            # Credentials the SDK resolved itself (a profile, SSO, a container role): masked
            # like those of the environment, for a store that echoes them in an error.
            _register(session)
        return self._client

    def _key(self, key: str) -> str:
        return "/".join(part for part in (self.prefix, key.strip("/")) if part)

    def _fail(self, action: str, key: str, exc: Exception) -> HistoryError:
        # botocore's messages name the operation and the S3 error code; they carry no secret.
        detail = getattr(exc, "response", {}).get("Error", {}) if hasattr(exc, "response") else {}
        code = detail.get("Code") or type(exc).__name__
        message = detail.get("Message") or str(exc)
        where = f" at {self.endpoint}" if self.endpoint else ""
        return HistoryError(f"{self.location(key)}{where}: cannot {action}: {code}: {message}")

    def _bounded(self, action: str, key: str, call: Callable[[], T]) -> T:
        """Run one operation under its deadline (HistoryError when it passes)."""
        self._s3()  # the client is made here, not in the worker (boto3's set-up is not shared)
        limit = Deadline.after(OPERATION_LIMIT_S, f"{fmt_number(OPERATION_LIMIT_S)} s")
        try:
            return call_within(call, limit, f"{action} {self.location(key)}")
        except DeadlineExceeded:
            where = f" at {self.endpoint}" if self.endpoint else ""
            raise HistoryError(
                f"{self.location(key)}{where}: cannot {action}: no answer within {limit.limit}"
            ) from None

    def read(self, key: str) -> bytes | None:
        from botocore.exceptions import BotoCoreError, ClientError

        def get() -> bytes:
            answer = self._s3().get_object(Bucket=self.bucket, Key=self._key(key))
            return answer["Body"].read()

        try:
            return self._bounded("read", key, get)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise self._fail("read", key, exc) from None
        except BotoCoreError as exc:
            raise self._fail("read", key, exc) from None

    def write(self, key: str, data: bytes) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._bounded(
                "write",
                key,
                lambda: self._s3().put_object(
                    Bucket=self.bucket,
                    Key=self._key(key),
                    Body=data,
                    ContentType="application/json",
                ),
            )
        except (BotoCoreError, ClientError) as exc:
            raise self._fail("write", key, exc) from None

    def children(self, key: str) -> list[str]:
        from botocore.exceptions import BotoCoreError, ClientError

        folder = self._key(key)
        folder = f"{folder}/" if folder else ""
        names: list[str] = []

        def listing() -> None:
            pages = self._s3().get_paginator("list_objects_v2")
            for page in pages.paginate(Bucket=self.bucket, Prefix=folder, Delimiter="/"):
                for item in page.get("CommonPrefixes", []):
                    names.append(item["Prefix"][len(folder) :].rstrip("/"))

        try:
            self._bounded("list", key, listing)
        except (BotoCoreError, ClientError) as exc:
            raise self._fail("list", key, exc) from None
        return sorted(names)

    def location(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._key(key)}"


def s3_store(
    url: str, configured_endpoint: str | None, environ: Mapping[str, str] | None = None
) -> FolderStore:
    """Return the store at `s3://bucket/prefix`.

    The AWS SDK's variables (`AWS_ENDPOINT_URL_S3`, ...) are read where the SDK reads them and
    its credentials: from the process environment unless `environ` is given. They are the SDK's
    configuration, not the CI context.
    """
    environ = os.environ if environ is None else environ
    rest = url.removeprefix("s3://")
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise HistoryError(f"'{url}': expected s3://bucket/prefix")
    return FolderStore(S3Blobs(bucket, prefix, endpoint_url(configured_endpoint, environ)))

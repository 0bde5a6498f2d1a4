"""A scripted Amazon Bedrock runtime (`InvokeModel`) on 127.0.0.1 for the SDK's Bedrock client.

Requests must be `POST /model/<model-id>/invoke` and SigV4-signed for service `bedrock`: the
server checks the `Authorization` header's shape and recomputes the signature with botocore from
the fake credentials, so a request signed with the wrong key, region or body is refused with 403
like the real service. Answers use Bedrock's invoke format: the body is the Messages response
JSON; errors are `{"message": ...}` with `x-amzn-ErrorType`. Steps are those of
`tests/support/anthropic_api.py`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from tests.support.anthropic_api import AnthropicApi, _Handler

ACCESS_KEY = "AKIDEXAMPLETESTKEY01"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTSECRET"
REGION = "eu-central-1"
MODEL_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"

_PATH = re.compile(r"/model/(?P<model>[^/]+)/invoke")
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/"
    r"bedrock/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<sig>[0-9a-f]{64})"
)
_ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


class BedrockApi(AnthropicApi):
    """The Bedrock variant: same script, Bedrock routing, SigV4 check and error format."""

    def __init__(self, steps: list[dict[str, Any]] | None = None, region: str = REGION) -> None:
        super().__init__(steps)
        self.region = region

    def route(self, handler: _Handler) -> str | None:
        match = _PATH.fullmatch(handler.path)
        if match is None:
            handler.send_json(404, self.error_body(404, f"no route {handler.path}"))
            return None
        problem = self.signature_problem(handler)
        if problem:
            handler.send_json(
                403, self.error_body(403, problem), {"x-amzn-ErrorType": "AccessDeniedException"}
            )
            return None
        return unquote(match["model"])

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"message": message, "__type": _ERROR_TYPES.get(status, "InternalServerException")}

    def signature_problem(self, handler: _Handler) -> str | None:
        """Return why the request is not correctly SigV4-signed for bedrock, or None."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        found = AUTHORIZATION.fullmatch(handler.headers.get("authorization", ""))
        amz_date = handler.headers.get("x-amz-date", "")
        if found is None or not re.fullmatch(r"\d{8}T\d{6}Z", amz_date):
            return "missing or malformed SigV4 Authorization / X-Amz-Date"
        if found["key"] != ACCESS_KEY or found["region"] != self.region:
            return f"unexpected credential scope {found['key']}/{found['region']}"
        if found["date"] != amz_date[:8]:
            return "credential date does not match X-Amz-Date"
        signed = found["signed"].split(";")
        request = AWSRequest(
            method="POST",
            url=f"http://{handler.headers['host']}{handler.path}",
            headers={name: handler.headers.get(name, "") for name in signed},
            data=handler.raw,
        )
        request.context["timestamp"] = amz_date
        token = handler.headers.get("x-amz-security-token")
        signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, token), "bedrock", self.region)
        canonical = signer.canonical_request(request)
        expected = signer.signature(signer.string_to_sign(request, canonical), request)
        if expected != found["sig"]:
            return "The request signature we calculated does not match the signature you provided"
        return None


AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_BASE_URL",
)


def isolate_aws(monkeypatch: Any, home: Any, *, with_credentials: bool) -> None:
    """Hide the developer's AWS setup from boto3; optionally set the fake credentials.

    The shared files point into `home` (empty) and the instance metadata service is disabled, so
    the credential chain ends quickly and offline.
    """
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "aws-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "aws-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    if with_credentials:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)

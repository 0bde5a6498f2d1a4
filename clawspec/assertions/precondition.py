"""Precondition assertions: check the environment before the agent is invoked."""

from __future__ import annotations

import json
import os
from typing import Literal

from pydantic import Field

from clawspec.assertions.base import Assertion, EvalContext, Verdict, WorkspacePath
from clawspec.assertions.registry import register
from clawspec.text import one_line, quote_list


@register(category="precondition", example="path: SKILL.md")
class FilePresent(Assertion):
    """A file exists at the given path."""

    type: Literal["file_present"]
    path: WorkspacePath = Field(description="Path to check. Supports templates.")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        if ctx.path(self.path).exists():
            return Verdict.passed(f"'{self.path}' exists")
        return Verdict.failed(f"'{self.path}' does not exist")


@register(category="precondition", example="path: memory/drafts/{{today}}-output.md")
class FileAbsent(Assertion):
    """A file does not exist (cleanup done, no stale artifact carried over)."""

    type: Literal["file_absent"]
    path: WorkspacePath = Field(description="Path that must not exist. Supports templates.")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        if ctx.path(self.path).exists():
            return Verdict.failed(f"'{self.path}' exists but must not")
        return Verdict.passed(f"'{self.path}' does not exist")


@register(category="precondition", example="{}")
class GatewayHealthy(Assertion):
    """The gateway answers 200 on its health endpoint (and its JSON body does not say not-ok)."""

    type: Literal["gateway_healthy"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        import requests  # only runs that use it pay for importing it

        url = ctx.settings.gateway_base_url.rstrip("/") + ctx.settings.gateway_health_path
        from clawspec.net import deadline as net

        try:  # a deadline for the whole answer, not a read timeout (docs/guide.md: deadlines)
            response = net.request(
                ctx.evidence.http, "GET", url, deadline=net.Deadline.after(10, "10 s")
            )
        except requests.RequestException as exc:
            return Verdict.failed(f"GET {url} failed: {one_line(str(exc), 160)}")
        if response.status_code != 200:
            return Verdict.failed(f"GET {url} → {response.status_code}", response.status_code, 200)
        try:
            body = response.json()
        except (ValueError, json.JSONDecodeError):
            body = None
        if isinstance(body, dict) and (body.get("ok") is False or body.get("ready") is False):
            return Verdict.failed(f"GET {url} → 200 but body says {one_line(response.text, 120)}")
        return Verdict.passed(f"GET {url} → 200", 200, 200)


@register(category="precondition", example="vars: [RESEND_API_KEY, ATTIO_API_KEY]")
class EnvPresent(Assertion):
    """One or more environment variables are set (non-empty)."""

    type: Literal["env_present"]
    vars: list[str] = Field(min_length=1, description="Environment variable names.")

    def evaluate(self, ctx: EvalContext) -> Verdict:
        # Only names are ever reported: the values are often secrets.
        missing = [name for name in self.vars if not os.environ.get(name)]
        if missing:
            return Verdict.failed(f"not set or empty: {quote_list(missing)}", missing)
        return Verdict.passed(f"all {len(self.vars)} set: {quote_list(self.vars)}")

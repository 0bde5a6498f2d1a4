"""A small OpenClaw workspace with two skills and two agents, for `init` and `coverage` tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clawspec.gateway.bringup import deep_merge

NEWSLETTER = """---
name: send-newsletter
description: Draft the weekly newsletter into memory/drafts; never send it in a test run.
allowed-tools: read write
triggers:
  - command: /send-newsletter
metadata:
  openclaw:
    requires: {env: [RESEND_API_KEY]}
---
# Send newsletter

Write the draft to `memory/drafts/newsletter.md` with a hook, a body and a call to action.
Send it with `$RESEND_API_KEY` only when the user confirms.
"""
REPORT = """---
description: Summarise the week's activity in memory/reports.
---
# Weekly report

Read the notes in `memory/` and write a short summary.
"""
BRAND = """# SOUL.md - Brand guardian

## Core Truths
Protect the brand voice: warm, plain, never pushy.

## Boundaries
- Never send messages; only review drafts.

## Vibe
Brief and kind.
"""
SUPPORT = """# SOUL.md - Support

## Core Truths
Answer members' questions from the FAQ.

## Boundaries
- Do not promise refunds.

## Vibe
Patient.
"""


def make_workspace(root: Path, extra_config: dict[str, Any] | None = None) -> Path:
    """Write the workspace under `root` and return it. `extra_config` is merged into
    openclaw.json (the e2e test adds the scripted model provider)."""
    files = {
        "skills/send-newsletter/SKILL.md": NEWSLETTER,
        "skills/weekly_report/SKILL.md": REPORT,
        "agents/brand/SOUL.md": BRAND,
        "agents/support/SOUL.md": SUPPORT,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config: dict[str, Any] = {
        "agents": {"entries": {"brand": {"name": "Brand", "tools": {"allow": ["read"]}}}}
    }
    config = deep_merge(config, extra_config or {})
    (root / "openclaw.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return root

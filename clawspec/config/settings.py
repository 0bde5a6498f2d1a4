"""The settings' schema: every option, its default and its checks, validated once.

How the layers (defaults, clawspec.yaml, CLAWSPEC_* environment, flags) are read and merged
is `clawspec.config.loading`; the spelling of values other packages read too (durations, skip
budgets, shards) is `clawspec.config.values`.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    WithJsonSchema,
    field_validator,
)

from clawspec.config.lint_rules import LintRuleId, LintRuleSetting
from clawspec.config.values import parse_duration, parse_shard, parse_skip_budget
from clawspec.traffic.folders import ATTEMPT_FOLDER
from clawspec.traffic.volatile import DEFAULT_VOLATILE_FIELDS, DEFAULT_VOLATILE_PATTERNS

DEFAULT_PATTERNS = [
    "skills/**/tests/scenarios.yaml",
    "agents/**/tests/scenarios.yaml",
    "**/*.clawspec.yaml",
]


DEFAULT_REPORT_DIR = "clawspec-reports"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GatewaySettings(_Section):
    """How the gateway is reached: an existing one (`target`) or one ClawSpec starts."""

    mode: Literal["target", "bring_up"] = "target"
    command: list[str] | None = None
    config: str | None = Field(None, description="The user's openclaw.json to merge into.")
    ready_timeout: float = Field(120, gt=0)
    port: int | None = Field(None, ge=1, le=65535, description="Fixed port (default: a free one).")

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """A command given as one string (a flag, an action input, an environment variable)
        is split as a shell would, quotes kept together: `'/opt/my gw/openclaw' gateway run`."""
        if not isinstance(value, str):
            return value
        import shlex

        try:
            return shlex.split(value)
        except ValueError as exc:  # an unclosed quote
            raise ValueError(f"cannot split {value!r} into words as a shell would: {exc}") from None


class ObservabilitySettings(_Section):
    """Where trace assertions read spans from (`none`: every trace assertion skips)."""

    backend: Literal["none", "local", "opik", "phoenix", "langfuse"] | None = None
    url: str | None = None
    project: str | None = None
    workspace: str | None = None
    trace_poll_delay_ms: int = Field(1000, ge=0)
    trace_timeout_ms: int = Field(30000, ge=0)
    # Local backend: a trace counts as complete once no span came for this long (the plugin
    # flushes every 200 ms; raise it if a busy gateway pauses longer between batches).
    trace_settle_ms: int = Field(1500, ge=0)


class ModelPrice(_Section):
    """USD per million tokens, used by trace_cost when the backend has no native cost."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class JudgeSettings(_Section):
    """The LLM judge behind llm_judge and agent_identity_consistent."""

    provider: Literal["anthropic", "bedrock"] = "anthropic"
    model: str = "claude-sonnet-4-6"
    max_tokens: int = Field(1024, gt=0)
    base_url: str | None = None
    region: str | None = None
    consistency_runs: int = Field(3, ge=2)
    max_input_chars: int = Field(100_000, gt=0)
    timeout: float = Field(120, gt=0)


class LintIgnore(_Section):
    """One rule silenced for the files a glob matches."""

    rule: LintRuleId = Field(description="The rule id to silence.")
    path: str = Field(
        description="Glob of the files, relative to the folder of clawspec.yaml (`**` for any "
        "folders), e.g. `skills/healthcheck/SKILL.md`."
    )


class LintSettings(_Section):
    """`clawspec lint`: rules switched off or re-graded, and the sections every SOUL.md needs."""

    rules: dict[LintRuleId, LintRuleSetting] = Field(
        default_factory=dict,
        description="Rule id → off/false (disabled), error or warning (severity override).",
    )
    soul_sections: list[str] = Field(
        default_factory=lambda: ["Core Truths", "Boundaries", "Vibe"],
        description="Headings every SOUL.md must have (rule soul-section-missing).",
    )
    ignore: list[LintIgnore] = Field(
        default_factory=list, description="Rules silenced for some files: [{rule, path}]."
    )


MIB = 1024 * 1024


class LimitsSettings(_Section):
    """Ceilings that keep hostile or huge inputs from hanging a run (docs/guide.md "Limits").

    Contracts over a limit are contract errors (exit 2, `file:line:column`); files and logs
    over one give the assertion an `error` verdict that names the setting to raise.
    """

    contract_max_bytes: int = Field(
        MIB, ge=1024, description="Largest contract file, in bytes (1 MiB)."
    )
    yaml_alias_nodes: int = Field(
        100_000,
        ge=0,
        description="Values YAML aliases (*name) may repeat in one contract, in all (0: none).",
    )
    file_max_bytes: int = Field(
        16 * MIB,
        ge=1,
        description="Largest file an assertion reads (artifact, golden, state, word list), bytes.",
    )
    rouge_max_tokens: int = Field(
        100_000, ge=1, description="Most words artifact_matches_golden compares per file."
    )
    log_tail_bytes: int = Field(
        32 * MIB,
        ge=MIB,
        description="An explicit log_path with no start offset: how much of its end is read.",
    )
    tool_args_bytes: int = Field(
        64 * 1024,
        ge=64,
        description="A tool call's arguments kept in the JSON report, bytes of their JSON text "
        "(64 KiB); longer ones are cut, and the cut is marked (args_cut, args_bytes).",
    )
    reply_chars: int = Field(
        4_000,
        ge=100,
        description="A conversation's messages and replies as JUnit and the HTML report show "
        "them, characters; the JSON report keeps them whole.",
    )


# A ratio (0.15) or a percentage ("15%"); the JSON Schema for editors accepts both spellings.
Tolerance = Annotated[
    float | None,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?%$"},
                {"type": "null"},
            ]
        }
    ),
]

# When the PR comment is written (`true`/`false` stay as aliases of always/off); the JSON Schema
# for editors accepts both spellings.
PrCommentMode = Annotated[
    Literal["always", "changes", "failures", "off"],
    WithJsonSchema(
        {
            "anyOf": [
                {"enum": ["always", "changes", "failures", "off"]},
                {"type": "boolean"},
            ],
            "default": "off",
        }
    ),
]
_COMMENT_ALIASES = {"true": "always", "yes": "always", "on": "always", "1": "always"}
_COMMENT_ALIASES |= {"false": "off", "no": "off", "0": "off"}


class RegressionSettings(_Section):
    """How a run is judged against its baseline.

    Tolerances are increases over the baseline, as a ratio (`0.15`) or a percentage (`15%`);
    `null` turns a check off. `significance` is the level of the one-sided Fisher exact test that
    decides whether a pass-rate drop is a regression.
    """

    tokens: Tolerance = Field(0.15, ge=0, description="Allowed increase of tokens.")
    duration: Tolerance = Field(0.5, ge=0, description="Allowed increase of duration.")
    cost: Tolerance = Field(0.2, ge=0, description="Allowed increase of cost.")
    significance: float = Field(0.05, gt=0, lt=1, description="Fisher test level.")
    trend_runs: int = Field(14, ge=0, le=200, description="Stored runs the trend table shows.")

    @field_validator("tokens", "duration", "cost", mode="before")
    @classmethod
    def _percent(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().endswith("%"):
            try:
                return float(value.strip()[:-1]) / 100
            except ValueError:
                raise ValueError(
                    f"expected a ratio (0.15) or a percentage (15%), found '{value}'"
                ) from None
        return value


# A duration: seconds (90), or a string of hours/minutes/seconds ("30m", "1h30m", "90s").
def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


# A count (3) or a ratio (0.2, "20%"), kept as the text `parse_skip_budget` reads: a number
# written in the file is as good as the same number in the environment or on the command line.
SkipBudget = Annotated[
    str | None,
    BeforeValidator(_number_as_text),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string"},
                {"type": "null"},
            ]
        }
    ),
]

DurationValue = Annotated[
    float | None,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": "^([0-9]+(\\.[0-9]+)?[hms]?)+$"},
                {"type": "null"},
            ]
        }
    ),
]


class BudgetSettings(_Section):
    """Spend limits for a whole run (docs/guide.md "Budgets"): once one is reached no further
    agent run starts, the rest are skipped and the job fails."""

    max_cost_usd: float | None = Field(
        None, ge=0, description="Most USD the run's agent runs may cost (native cost, else "
        "model_pricing; a run of unknown cost stops the run)."
    )  # fmt: skip
    max_tokens: int | None = Field(None, ge=0, description="Most tokens the agent runs may use.")
    max_duration: DurationValue = Field(
        None,
        description="Longest time agent runs may keep starting, from the first one: seconds, "
        "or e.g. 30m, 1h30m.",
    )

    @field_validator("max_duration", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if value is None:
            return None
        seconds = parse_duration(value)
        if seconds <= 0:
            raise ValueError(f"must be longer than 0, found '{value}'")
        return seconds

    @property
    def any(self) -> bool:
        """A limit is set."""
        return (self.max_cost_usd, self.max_tokens, self.max_duration) != (None, None, None)


DEFAULT_RUN_ALL_ON = ["**/clawspec.yaml", "**/clawspec.yml", "**/provider-scripts.json"]


class ChangedSettings(_Section):
    """`changed_since`: which changed files touch every scenario (docs/ci.md)."""

    run_all_on: list[str] = Field(
        default_factory=lambda: list(DEFAULT_RUN_ALL_ON),
        description="Globs, relative to the folder of clawspec.yaml (`**` for any folders): a "
        "change to a matching file runs every scenario. The OpenClaw config (gateway.config) "
        "always does.",
    )


_RELEASE = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?")


# The thinking levels OpenClaw 2026.9.6 knows (its THINKING_LEVELS; providers take some).
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "adaptive", "max", "ultra")


def _off(value: Any) -> Any:
    """YAML 1.1 reads an unquoted `off` (and `no`, `false`) as false: the word the docs show
    for a setting whose values are words is taken as written. True stays true: no word is meant
    by `on`, and the message says what is accepted."""
    return "off" if value is False else value


class VariantSettings(_Section):
    """One configuration every selected scenario also runs on (docs/guide.md "Comparing models
    and OpenClaw versions"). Variants that change only what the hook request carries (`model`,
    `thinking`, `agent_id`) share one gateway; one with its own config, version or URL gets its
    own."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="Unique name of the variant.")

    @field_validator("name")
    @classmethod
    def _not_an_attempt(cls, name: str) -> str:
        if ATTEMPT_FOLDER.fullmatch(name):
            raise ValueError(
                f"'{name}' is the folder name of a repeated scenario's attempt (its recordings "
                "sit beside the variants'): choose another name"
            )
        return name

    model: str | None = Field(None, description="The hook request's model override.")
    thinking: str | None = Field(None, description="The hook request's thinking level.")
    agent_id: str | None = Field(
        None, min_length=1, description="The agent that runs its scenarios."
    )
    openclaw_config: dict[str, Any] | None = Field(
        None, description="Bring-up: merged into this variant's gateway config."
    )
    openclaw_version: str | None = Field(
        None, description="Bring-up: the OpenClaw release to run, installed on first use."
    )
    gateway_base_url: str | None = Field(None, description="Target mode: another gateway.")
    hooks_token_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Target mode with gateway_base_url: the environment variable holding that "
        "gateway's hooks token (default: the run's hooks token).",
    )
    gateway_token_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Target mode with gateway_base_url: the environment variable holding that "
        "gateway's token (its gateway.auth.token, for conversations; default: the run's gateway "
        "token).",
    )
    openclaw_state_dir: str | None = Field(
        None,
        description="Target mode with gateway_base_url: that gateway's state folder (where "
        "ClawSpec reads each run's record; relative to the workspace root). Unset: that "
        "gateway's records are not read (the run's openclaw_state_dir is the default gateway's).",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Bring-up: environment of this variant's gateway process (it gets a gateway "
        "of its own).",
    )
    required: bool = Field(True, description="false: advisory, shown but never fails the job.")
    reference: bool = Field(False, description="The variant the others are compared with.")

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking_off(cls, value: Any) -> Any:
        return _off(value)

    @field_validator("thinking")
    @classmethod
    def _thinking_known(cls, value: str | None) -> str | None:
        """OpenClaw ignores a level it does not know without a word (the run keeps its
        default): a misspelled one would compare a variant with itself."""
        if value is None or value in THINKING_LEVELS:
            return value
        import difflib

        close = difflib.get_close_matches(value, THINKING_LEVELS, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(
            f"unknown thinking level '{value}' (OpenClaw knows {', '.join(THINKING_LEVELS)}){hint}"
        )

    @field_validator("openclaw_version")
    @classmethod
    def _release(cls, value: str | None) -> str | None:
        """An exact release: it names its folder in ClawSpec's cache, kept for good (a tag such
        as `latest` would stay whatever it first named; `..` would leave the cache)."""
        if value is not None and not _RELEASE.fullmatch(value):
            raise ValueError("expected an exact OpenClaw release such as 2026.9.5")
        return value

    @property
    def own_gateway(self) -> bool:
        """Needs a gateway of its own (not only a different hook request)."""
        return bool(
            self.openclaw_config or self.openclaw_version or self.gateway_base_url or self.env
        )

    @field_validator("gateway_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^/\s]+", value):
            raise ValueError(f"must be an http(s) URL, found '{value}'")
        return value.rstrip("/") if value else value


class HistorySettings(_Section):
    """Where earlier runs are kept and found (docs/guide.md "Regression runs")."""

    s3_endpoint_url: str | None = Field(
        None, description="S3-compatible endpoint (MinIO, Ceph, R2); else AWS_ENDPOINT_URL_S3."
    )
    github_artifact: str = Field(
        "clawspec-report", description="Artifact name the github store looks for."
    )
    github_workflow: str | None = Field(
        None, description="Workflow file whose runs hold the baselines (default: this one)."
    )


class Settings(BaseModel):
    """Every ClawSpec option, validated once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace: Path | None = None
    report_dir: str = DEFAULT_REPORT_DIR
    report_json: str | None = None
    junit: str | None = None
    junit_strict: bool = Field(
        False,
        description="JUnit without what the Jenkins xUnit plugin's schema lacks (testcase "
        "file/line and properties, the skipped total on testsuites): that plugin skips files "
        "with them.",
    )
    report_html: str | None = None  # the self-contained HTML report
    codequality: str | None = Field(
        None, description="GitLab Code Quality report to write (merge request findings)."
    )
    summary: str | None = Field(
        None,
        description="Write the GitHub job summary's Markdown to this file too, anywhere (a "
        "local preview): no workflow commands, no GITHUB_STEP_SUMMARY needed.",
    )
    gateway_base_url: str = "http://127.0.0.1:18789"
    hooks_path: str = "/hooks"
    gateway_health_path: str = "/health"
    gateway_webhook_endpoint: str = "/webhook/mcp-skill-invoke"
    trigger_mode: Literal["hooks", "webhook"] = "hooks"
    gateway_log_pattern: str | None = Field(
        None,
        description="The log of a gateway you run yourself ({date} / {{today}}: the date in the "
        "gateway's zone). Unset: OpenClaw's default, /tmp/openclaw/openclaw[-PROFILE]-{date}.log "
        "or /tmp/openclaw-UID/...; set it when your openclaw.json sets logging.file.",
    )
    gateway_profile: str | None = Field(
        None,
        description="The OpenClaw profile of a gateway you run yourself (openclaw --profile NAME; "
        "default: OPENCLAW_PROFILE): it names the default log.",
    )
    # JSONL written by ClawSpec's OpenClaw plugin on a gateway you run yourself (token usage,
    # tool executions); set automatically in bring-up mode.
    plugin_output: str | None = None
    openclaw_state_dir: str | None = Field(
        None,
        description="The state folder (OPENCLAW_STATE_DIR) of a gateway you run yourself: where "
        "ClawSpec reads each run's record (its reply, tool calls with their arguments, messages "
        "sent, how it ended, token usage) for reply and run-record assertions, token_budget and "
        "the report. Bring-up sets its own.",
    )
    scenario_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_PATTERNS))
    timezone: str | None = None
    default_agent_id: str = Field(
        "main", min_length=1, description="The agent of scenarios that name none."
    )
    concurrency: int = Field(4, ge=1, le=64)
    max_skipped: SkipBudget = None
    fail_on: Literal["fail", "error", "never", "regression"] = Field(
        "fail",
        description="fail: exit 1 on failed or errored scenarios; error: only on "
        "errored ones; never: report only (exit 0 unless nothing could run); regression: only "
        "on regressions against the baseline (else as fail when there is no baseline)",
    )
    repeat: int = Field(1, ge=1, le=100, description="Attempts per scenario.")
    min_pass_rate: float = Field(
        1.0, ge=0, le=1, description="Share of a scenario's attempts that must pass."
    )
    regression: RegressionSettings = Field(default_factory=RegressionSettings)
    pr_comment: PrCommentMode = Field(
        "off",
        description="When to write the PR comment: always, changes (new comment only when the "
        "verdicts changed), failures (new comment only when something failed), off.",
    )
    check_run: Literal["auto"] | bool = Field(
        "auto",
        description="GitHub check run with every annotation; auto: when the token may write "
        "checks.",
    )
    check_name: str | None = Field(
        None, description="Name of the check run (default: 'ClawSpec: <job>')."
    )
    changed_since: str | None = Field(
        None,
        description="Run only the scenarios a change since this git ref touches; 'auto': a "
        "pull/merge request's merge-base with its base branch (elsewhere everything runs).",
    )
    changed: ChangedSettings = Field(default_factory=ChangedSettings)
    shard: str | None = Field(
        None, description="Run one part of the selection: 'i/n' (1-based) or 'auto' (GitLab)."
    )
    durations: str | None = Field(
        None, description="Earlier JSON report(s) whose scenario durations balance the shards."
    )
    shard_publish: bool = Field(
        False, description="A shard writes its own job summary, annotations and PR comment."
    )
    baseline: str | None = Field(
        None,
        description="Earlier run to compare with: a report file, dir:PATH, s3://bucket/prefix "
        "or github",
    )
    save_baseline: bool = False
    history: HistorySettings = Field(default_factory=HistorySettings)
    # Hermetic runs: record the agent's model calls, or replay them from cassettes.
    model_traffic: Literal["off", "record", "replay"] = "off"
    cassette_dir: str = ".clawspec/cassettes"
    volatile_fields: list[str] = Field(default_factory=lambda: list(DEFAULT_VOLATILE_FIELDS))
    volatile_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_VOLATILE_PATTERNS))
    # Target mode: where the proxy listens (your openclaw.json baseUrl points here) and the real
    # provider base URL per provider id (record mode); bring-up mode sets both itself.
    model_proxy_port: int = Field(18790, ge=0, le=65535)
    model_upstreams: dict[str, str] = Field(default_factory=dict)
    today: str | None = Field(None, description="Fixed {{today}} (YYYY-MM-DD).")
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    model_pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    lint: LintSettings = Field(default_factory=LintSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    variants: list[VariantSettings] = Field(
        default_factory=list,
        description="Run every selected scenario on each of these configurations, side by side; "
        "the reference is the one marked reference: true, else the first.",
    )
    selected_variants: list[str] = Field(
        default_factory=list,
        description="Run only these variants, by name (--variant, CLAWSPEC_VARIANTS); empty: all.",
    )
    # Secrets: filled only from the environment (or action inputs, which arrive as environment).
    hooks_token: SecretStr | None = None
    gateway_auth_token: SecretStr | None = None
    github_token: SecretStr | None = None
    masked: list[SecretStr] = Field(default_factory=list, exclude=True, repr=False)
    secret_env: list[str] = Field(
        default_factory=list,
        description="More environment variables to mask in every output, by name or fnmatch "
        "pattern (e.g. MYCORP_*), beyond *_KEY, *_TOKEN, *_SECRET, *_PASSWORD, *_CREDENTIALS.",
    )

    @field_validator("model_traffic", mode="before")
    @classmethod
    def _traffic_off(cls, value: Any) -> Any:
        return _off(value)

    @field_validator("pr_comment", mode="before")
    @classmethod
    def _comment_mode(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "always" if value else "off"
        if isinstance(value, str):
            lowered = value.strip().lower()
            return _COMMENT_ALIASES.get(lowered, lowered)
        return value

    @field_validator("check_run", mode="before")
    @classmethod
    def _check_run(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in _COMMENT_ALIASES or lowered == "off":
                return _COMMENT_ALIASES.get(lowered, "off") == "always"
            if lowered != "auto":
                raise ValueError(f"expected auto, true or false, found '{value}'")
            return lowered
        return value

    @field_validator("max_skipped")
    @classmethod
    def _skip_budget(cls, value: str | None) -> str | None:
        if value is not None:
            parse_skip_budget(value)
        return value

    @field_validator("check_name")
    @classmethod
    def _one_line_name(cls, value: str | None) -> str | None:
        """A check run's name is one line of the PR's checks list (an action input may end
        with a newline: that one is dropped)."""
        if value is not None:
            value = value.strip()
            if not value or any(not c.isprintable() for c in value):
                raise ValueError("expected a name on one line, without control characters")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        """Checked where it is written (the run would otherwise fail when it starts)."""
        if value:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    "unknown time zone: expected an IANA name such as Europe/Berlin, "
                    "America/New_York or UTC"
                ) from None
        return value

    @field_validator("variants")
    @classmethod
    def _variants(cls, value: list[VariantSettings]) -> list[VariantSettings]:
        names = [v.name for v in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"variant names must be unique; found twice: {', '.join(twice)}")
        references = [v.name for v in value if v.reference]
        if len(references) > 1:
            raise ValueError(f"at most one variant may be the reference; found {references}")
        return value

    @property
    def trace_backend(self) -> str:
        """The trace backend in effect: unset means `local` in bring-up mode, else `none`."""
        name = self.observability.backend
        if name is None:
            return "local" if self.gateway.mode == "bring_up" else "none"
        return name

    @property
    def reference_variant(self) -> VariantSettings | None:
        """The variant the others are compared with; None without variants."""
        return next((v for v in self.variants if v.reference), None) or (
            self.variants[0] if self.variants else None
        )

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str | None) -> str | None:
        if value is not None and value.strip() != "auto":
            parse_shard(value)
        return value

    @field_validator("today", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> str | None:
        if isinstance(value, date):  # YAML reads an unquoted 2026-01-31 as a date
            value = value.isoformat()
        if value is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError(f"must be a date YYYY-MM-DD, found '{value}'")
        if value is not None:
            date.fromisoformat(value)
        return value

    @field_validator("volatile_patterns")
    @classmethod
    def _regexes(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if pattern in DEFAULT_VOLATILE_PATTERNS:
                continue  # known good; compiling them cost every command ~1 ms of start-up
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a regular expression '{pattern}': {exc}") from None
        return value

    @field_validator("gateway_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not re.match(r"https?://[^/\s]+", value):
            raise ValueError(f"must be an http(s) URL, found '{value}'")
        return value.rstrip("/")

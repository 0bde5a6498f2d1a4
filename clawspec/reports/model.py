"""The one report model: the JSON report and the input of every renderer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from clawspec.identity import Key, ScenarioIdentity, key_label
from clawspec.secrets import mask
from clawspec.status import Status
from clawspec.text import valid_unicode


def _one_name(value: str) -> str:
    """A model's name as its source gave it (a trace span, a run record), on one line and
    without control characters: it is printed bare in one-line outputs (the spend line, a
    step output), where a line break would start a workflow command of its own."""
    if value.isprintable() and len(value) <= _NAME_CHARS:
        return value
    kept = "".join(c if c.isprintable() else " " for c in value)
    return " ".join(kept.split())[:_NAME_CHARS]


_NAME_CHARS = 200
ModelName = Annotated[str, AfterValidator(_one_name)]


class _Frozen(BaseModel):
    # defer_build: the schemas are built on first use (by a worker, while other scenarios wait
    # for the gateway), not while `clawspec run` starts. Workers may do that at the same time:
    # pydantic builds a deferred model under a lock since 2.14 (hence pydantic>=2.14).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    def model_post_init(self, context: Any, /) -> None:
        # Where text enters the report, once, for every renderer after it (sub-models did their
        # own fields; numbers and statuses are left as they are):
        # - a lone surrogate (an emoji cut in half by JavaScript's JSON) would make every UTF-8
        #   output fail: it becomes U+FFFD;
        # - every secret is masked (clawspec/secrets.py) before any renderer cuts a message to
        #   fit, so no output can hold part of a secret.
        for name, value in self.__dict__.items():
            kind = type(value)
            if kind is str or kind is list or kind is dict or kind is tuple:
                entered = _entered(value)
                if entered is not value:
                    object.__setattr__(self, name, entered)
        super().model_post_init(context)


def _entered(value: Any) -> Any:
    """`value` with every string in it (dict keys included) made valid Unicode and masked; the
    same object when nothing changed."""
    kind = type(value)
    if kind is str:
        return mask(value if value.isascii() else valid_unicode(value))
    if kind is list or kind is tuple:
        for index, item in enumerate(value):  # lists of sub-models: nothing to do, no copy
            if _entered(item) is not item:
                items = [*value[:index], *map(_entered, value[index:])]
                return items if kind is list else tuple(items)
        return value
    if kind is dict:
        pairs = [(_entered(k), _entered(v)) for k, v in value.items()]
        same = all(
            k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)
        )
        return value if same else dict(pairs)
    return value


class AssertionResult(_Frozen):
    """One evaluated assertion."""

    phase: Literal["given", "then"]
    index: int = Field(description="0-based position in its phase.")
    turn: int | None = Field(
        None, description="A conversation turn's assertion: the turn's 0-based index."
    )
    type: str
    line: int = Field(description="Line of the assertion's mapping in the contract.")
    status: Status
    message: str
    value: Any = None
    limit: Any = None
    details: list[str] = Field(
        default_factory=list, description="More lines: each judge call, each violating item."
    )
    usage: dict[str, Any] | None = Field(
        None,
        description="LLM judge usage: model, calls, input/output tokens, cost_usd (null when "
        "unknown), unmetered_calls (calls whose answer gave no usage: tokens unknown).",
    )
    attempts: PassRate | None = Field(
        None, description="Repeated runs: how often this assertion passed."
    )


class TraceRef(_Frozen):
    """Where the scenario's trace lives."""

    backend: str
    id: str
    url: str | None = None


class PassRate(_Frozen):
    """How often something passed over repeated attempts, with a Wilson 95 % interval."""

    attempts: int
    passes: int
    pass_rate: float
    ci_low: float
    ci_high: float

    def describe(self) -> str:
        """Return e.g. '2/3 attempts passed (0.67, 95% CI 0.21-0.94)'."""
        return (
            f"{self.passes}/{self.attempts} attempts passed ({self.pass_rate:.2f}, "
            f"95% CI {self.ci_low:.2f}-{self.ci_high:.2f})"
        )


class FileSeen(_Frozen):
    """A file an attempt's agent wrote, as it was after the attempt."""

    path: str = Field(description="As the agent's write named it; relative to the workspace.")
    sections: list[str] | None = Field(
        None, description="Its Markdown headings (null: not read or not Markdown)."
    )
    fields: list[str] | None = Field(
        None, description="Its top-level YAML/JSON keys or front matter keys (null: none)."
    )


class AttemptEvidence(_Frozen):
    """What one attempt (or one turn of it) did: what `clawspec bless` computes invariants from."""

    turn: int | None = Field(None, description="A conversation turn's evidence: its index.")
    tools: list[ToolCallRecord] = Field(
        default_factory=list, description="Tool calls in order, with arguments when known."
    )
    tools_known: bool = Field(
        True, description="false: no source told the tool calls (no run record, log or trace)."
    )
    delegations: list[str] = Field(default_factory=list, description="Agent ids delegated to.")
    files: list[FileSeen] = Field(default_factory=list, description="Files the agent wrote.")
    reply: str | None = Field(None, description="The final reply (masked); null: none known.")
    tokens: int | None = None
    completed: bool | None = Field(
        None, description="Every run ended with stop reason `stop` (null: not known)."
    )
    variables: dict[str, str] = Field(
        default_factory=dict,
        description="The template variables' values of this attempt (run_id, today, ...).",
    )
    turns: list[AttemptEvidence] | None = Field(
        None, description="A conversation: each turn's own evidence, in order."
    )


class AttemptRun(_Frozen):
    """One attempt of a repeated scenario."""

    run_id: str | None
    gateway_run_id: str | None = None
    status: Status
    duration_ms: int
    tokens: int | None = None
    message: str = ""
    recording: str | None = Field(
        None,
        description="Hermetic runs: the cassette folder this attempt recorded into or replayed.",
    )
    evidence: AttemptEvidence | None = Field(
        None, description="This attempt's own evidence (tools with arguments, files, reply)."
    )


class AttemptStats(PassRate):
    """A repeated scenario: its attempts and their spread."""

    duration_ms_median: float | None = None
    duration_ms_p90: float | None = None
    tokens_median: float | None = None
    tokens_p90: float | None = None
    runs: list[AttemptRun] = Field(default_factory=list)


class ToolCallRecord(_Frozen):
    """One tool call of the run, in start order (from the gateway log, else the trace)."""

    name: str
    agent: str | None = Field(None, description="Agent lane: the agent id, sub-agents included.")
    run_id: str | None = Field(None, description="The embedded run that made the call.")
    started_at: str | None = Field(None, description="ISO-8601, when known.")
    ended_at: str | None = Field(None, description="ISO-8601, when known.")
    error: bool = False
    args: Any = Field(
        None,
        description="The arguments as the model sent them (JSON, masked), from OpenClaw's run "
        "record; null when the record was not read or does not tell them. When `args_cut` is "
        "true, a string: the start of the arguments' JSON text, limits.tool_args_bytes long.",
    )
    args_cut: bool = Field(
        False, description="The arguments were longer than the report keeps: `args` is cut."
    )
    args_bytes: int | None = Field(
        None, description="When cut: the size of the arguments' whole JSON text, in bytes."
    )


class SpanRecord(_Frozen):
    """One span of the scenario's trace, as the normalized span model has it."""

    id: str
    parent_id: str | None = None
    name: str
    type: str = Field(description="llm, tool, agent or general.")
    start_ms: float | None = Field(None, description="Epoch milliseconds.")
    end_ms: float | None = None
    model: ModelName | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None


class TokenTotals(_Frozen):
    """The run's summed model usage (run and sub-agents), and its cost when known."""

    input: int | None = None
    output: int | None = None
    total: int | None = None
    cost_usd: float | None = Field(
        None,
        description="Native cost, else model_pricing; null when any part of the usage has "
        "neither (never counted as 0).",
    )
    unpriced: list[ModelName] = Field(
        default_factory=list,
        description="Models whose usage has no native cost and no model_pricing entry.",
    )
    source: str = Field(
        description="Where the figures come from: run record, plugin, log or trace."
    )
    disagreement: str | None = Field(
        None,
        description="What the plugin's events count otherwise than the run record (the "
        "figures above are the record's); null when they agree or only one source counts.",
    )


class ScenarioEvidence(_Frozen):
    """What the agent did in this run, kept for reports and comparisons."""

    tools: list[ToolCallRecord] = Field(default_factory=list)
    delegations: list[str] = Field(
        default_factory=list, description="Agent ids delegated to, in order."
    )
    tokens: TokenTotals | None = None
    models: list[ModelName] = Field(
        default_factory=list,
        description="The models that answered the run's model calls (provider/model), in order "
        "of first use: a model override that was ignored or fell back shows here.",
    )
    spans: list[SpanRecord] = Field(default_factory=list)
    spans_omitted: int = Field(0, description="Spans left out to keep the report small.")


class ModelTrafficResult(_Frozen):
    """A scenario's model calls in a hermetic run."""

    mode: Literal["record", "replay"]
    cassette: str = Field(description="The scenario's cassette folder.")
    calls: int = Field(description="Model calls recorded, or answered from the cassette.")
    used: list[int] = Field(
        default_factory=list, description="Replay: the cassette files (<n>.json) that answered."
    )
    unmatched: int = Field(0, description="Replay: model calls no recording matched.")
    diff: list[str] = Field(
        default_factory=list, description="Replay: what differs from the closest recording."
    )
    problems: list[str] = Field(default_factory=list, description="Unreadable cassette files.")


class CheckRef(_Frozen):
    """One check of a scenario, by its place: `then[1]`, or a turn's (`turn` 0-based)."""

    phase: Literal["given", "then"]
    index: int = Field(description="0-based position in its phase.")
    turn: int | None = None

    def of(self, check: AssertionResult) -> bool:
        return (check.phase, check.index, check.turn) == (self.phase, self.index, self.turn)


class TurnResult(_Frozen):
    """One turn of a conversation: what was said, what the agent replied, and its verdicts."""

    index: int = Field(description="0-based; text counts turns from 1.")
    line: int = Field(description="Line of the turn in the contract.")
    say: str = Field(description="The user's message as sent (masked).")
    reply: str | None = Field(
        None, description="The agent's reply (masked); null when the turn got none."
    )
    status: Status
    message: str = Field("", description="Why the turn is not pass; empty for pass.")
    duration_ms: int
    tokens: int | None = Field(
        None,
        description="The turn's total tokens, when known: its evidence's (its run and its "
        "sub-agents) when counted there, else the chat answer's usage (its own run's).",
    )
    gateway_run_id: str | None = Field(None, description="The chat response's id.")
    trace: TraceRef | None = None
    evidence: ScenarioEvidence | None = None
    assertions: list[AssertionResult] = Field(default_factory=list)

    @property
    def answered(self) -> bool:
        """The gateway answered the turn (a chat response, whose content may still be null: a
        run that wrote no final text); False: no answer came (a timeout, a 5xx, a cut one)."""
        return self.gateway_run_id is not None


class ScenarioResult(_Frozen):
    """One scenario run."""

    id: str = Field(description="'<contract>::<name>': the scenario's identity.")
    contract: str = Field(description="The contract file, relative to the workspace root.")
    line: int
    name: str = Field(
        description="The identity name: the scenario's name, `name[row id]` for a row."
    )
    contract_digest: str | None = Field(
        None,
        description="sha256 of the scenario's definition (target, defaults and the scenario "
        "without its `then` items, as canonical JSON): what `clawspec bless --from-report` "
        "checks a report against.",
    )
    scenario: str | None = Field(
        None,
        description="The scenario's name as written in the contract (`name` without the row). "
        "Absent from reports written before it was added.",
    )
    example: str | None = Field(None, description="An outline's row: its row id.")
    example_source: str | None = Field(
        None,
        description="A row read from a data file: '<file relative to the workspace>:<line>' "
        "(`line` is then the outline's).",
    )
    variant: str | None = Field(None, description="The variant it ran on; null without variants.")
    target: str
    status: Status
    message: str = Field(description="Why the scenario is not pass; empty for pass.")
    restates: CheckRef | None = Field(
        None,
        description="The check whose failure `message` restates (outputs say it once, with the "
        "check); null when the message is the scenario's own (an invocation failure, a replay "
        "miss) or it passed.",
    )
    run_id: str | None
    gateway_run_id: str | None = None
    duration_ms: int
    trace: TraceRef | None = None
    assertions: list[AssertionResult] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list, description="The scenario's tags.")
    flaky: bool = Field(False, description="Repeated runs: some attempts passed and some did not.")
    attempts: AttemptStats | None = Field(
        None, description="Repeated runs: attempts, pass rate and spread."
    )
    evidence: ScenarioEvidence | None = Field(
        None, description="What the run did: tool calls, delegations, tokens, trace spans."
    )
    model_traffic: ModelTrafficResult | None = Field(
        None, description="Hermetic runs: the scenario's recorded or replayed model calls."
    )
    turns: list[TurnResult] | None = Field(
        None,
        description="A conversation's turns that ran, in order (null for other scenarios); "
        "`assertions` then holds only `given` and the scenario-level `then`.",
    )

    def checks(self) -> list[AssertionResult]:
        """Every verdict of the scenario: its own, then each turn's, in the order they ran
        (`given`, the turns, the scenario's `then`)."""
        given = [a for a in self.assertions if a.phase == "given"]
        then = [a for a in self.assertions if a.phase != "given"]
        return [*given, *(a for turn in self.turns or () for a in turn.assertions), *then]

    @property
    def identity(self) -> ScenarioIdentity:
        """The typed identity every output keys on (the flat fields were written from it)."""
        scenario = self.scenario
        if scenario is None:
            # Only a report written before `scenario` was a field: its `name` is the identity
            # name, `scenario[example]` for a row, so the row's part is cut off its end.
            scenario = self.name
            if self.example is not None:
                scenario = self.name[: -len(self.example) - 2]
        return ScenarioIdentity(self.contract, scenario, self.example, self.variant)


class Totals(_Frozen):
    scenarios: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    warned: int = 0

    def counts(self) -> list[tuple[str, int]]:
        """(status word, count) in display order, for every status that occurred."""
        pairs = (
            ("passed", self.passed),
            ("failed", self.failed),
            ("errored", self.errored),
            ("warned", self.warned),
            ("skipped", self.skipped),
        )
        return [(word, n) for word, n in pairs if n]

    @classmethod
    def of(cls, scenarios: Iterable[ScenarioResult]) -> Totals:
        statuses = [s.status for s in scenarios]
        return cls(
            scenarios=len(statuses),
            passed=statuses.count(Status.PASS),
            failed=statuses.count(Status.FAIL),
            errored=statuses.count(Status.ERROR),
            skipped=statuses.count(Status.SKIP),
            warned=statuses.count(Status.WARN),
        )


class RunSource(_Frozen):
    """The commit, branch and CI job a run belongs to, and the gateway it ran against."""

    commit: str | None = None
    branch: str | None = None
    base_branch: str | None = Field(None, description="Pull requests: the branch merged into.")
    pull_request: int | None = None
    event: str | None = Field(None, description="push, pull_request, schedule, ...")
    ci: str | None = Field(None, description="github, gitlab, jenkins or local.")
    repository: str | None = None
    job_url: str | None = None
    gateway_url: str | None = None
    gateway_mode: str | None = Field(None, description="target or bring_up.")
    trace_backend: str | None = Field(
        None, description="Where traces were looked up: local, opik, phoenix, langfuse or none."
    )


class ShardInfo(_Frozen):
    """One part of a run split over several machines."""

    index: int = Field(description="1-based, as CI systems count.")
    total: int
    fingerprint: str = Field(description="Hash of the whole sorted selection.")
    selected: int = Field(description="Scenarios in the whole selection.")
    split: str = Field(
        "",
        description="Hash of how the selection was split (the shard of every scenario): the "
        "same on every shard of one matrix, so shards split differently cannot be merged.",
    )
    balanced_by: Literal["duration", "count"] = "count"
    positions: list[int] = Field(
        default_factory=list,
        description="0-based place of each of this report's scenarios in the whole selection, "
        "in report order: merge restores the contract order from it.",
    )


class MergeInfo(_Frozen):
    """A report merged from shard reports by `clawspec merge`."""

    total: int = Field(description="Shards the selection was split into.")
    present: list[int] = Field(description="Indexes of the shard reports merged.")
    missing: list[int] = Field(
        default_factory=list, description="Indexes of the shards without a report."
    )
    unreported: int = Field(0, description="Scenarios of the selection in no merged report.")
    fingerprint: str
    selected: int

    def missing_message(self) -> str:
        """e.g. 'shards 2/4 and 4/4 missing: 51 of 200 scenarios have no result' (every
        renderer and `clawspec merge` say it the same way)."""
        names = [f"{i}/{self.total}" for i in self.missing]
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        word = "shard" if len(names) == 1 else "shards"
        return (
            f"{word} {joined} missing: {self.unreported:,} of {self.selected:,} scenarios have "
            "no result"
        )


class BaselineRef(_Frozen):
    """Which stored run a comparison used."""

    source: str = Field(description="Store or file it came from (no credentials).")
    branch: str | None = None
    commit: str | None = None
    created_at: str | None = None
    run_id: str | None = None
    location: str | None = Field(None, description="Path, key or URL of the stored report.")

    def describe(self) -> str:
        """Return e.g. "main @ 3f2c1ab (2026-11-22 10:00 UTC)", from what is known."""
        parts = [self.branch or self.source]
        if self.commit:
            parts.append(f"@ {self.commit[:7]}")
        if self.created_at:
            parts.append(f"({self.created_at[:16].replace('T', ' ')} UTC)")
        return " ".join(parts)


ChangeKind = Literal[
    "regressed", "fixed", "still_failing", "new", "removed", "flaky", "unchanged", "not_compared"
]


class ScenarioChange(_Frozen):
    """One scenario against the baseline."""

    id: str
    variant: str | None = Field(None, description="The variant it ran on; null without variants.")
    change: ChangeKind
    status: Status | None = None
    baseline_status: Status | None = None
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="Pass rates and p-value, token/cost/duration deltas, behaviour diff.",
    )

    @property
    def key(self) -> Key:
        """The (scenario id, variant) of the result it is about (`ScenarioIdentity.key`)."""
        return (self.id, self.variant)

    @property
    def label(self) -> str:
        return key_label(self.key)


class Comparison(_Frozen):
    """The run against its baseline, scenario by scenario, in report order."""

    scenarios: list[ScenarioChange] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict, description="Scenarios per change.")
    details: dict[str, Any] = Field(default_factory=dict, description="Totals and their deltas.")
    regressions: list[str] = Field(
        default_factory=list,
        description="What `--fail-on regression` fails on, one line each: regressed and new "
        "failing scenarios, budgets over tolerance.",
    )
    baseline_missing: str | None = Field(
        None, description="A baseline was asked for and none was found: why (normal policy then)."
    )


class VariantInfo(_Frozen):
    """One variant the run's scenarios ran on, as configured (clawspec.yaml `variants`)."""

    name: str
    required: bool = Field(True, description="false: advisory, shown but never fails the job.")
    reference: bool = Field(False, description="The variant the others are compared with.")
    model: str | None = Field(None, description="The model override the hook requests carry.")
    thinking: str | None = None
    agent_id: str | None = None
    openclaw_version: str | None = None

    @property
    def role(self) -> str:
        """'reference', 'required' or 'advisory'."""
        if self.reference:
            return "reference"
        return "required" if self.required else "advisory"


class VariantComparison(_Frozen):
    """A variant against the reference variant, scenario by scenario, with the classes and
    the statistics of the baseline comparison (the reference in the baseline's place)."""

    variant: str
    reference: str
    required: bool = Field(description="false: advisory, its regressions never fail the job.")
    scenarios: list[ScenarioChange] = Field(
        default_factory=list, description="One change per scenario, keyed by this variant."
    )
    counts: dict[str, int] = Field(default_factory=dict, description="Scenarios per change.")
    details: dict[str, Any] = Field(default_factory=dict, description="Totals and their deltas.")
    regressions: list[str] = Field(
        default_factory=list,
        description="Scenarios that regressed against the reference (or fail here and never "
        "ran there), one line each: what `fail_on: regression` fails on when `required`.",
    )


class ScenarioTrend(_Frozen):
    """One scenario over the last stored runs, oldest first."""

    id: str
    name: str | None = Field(
        None, description="The identity name (null in reports written before it was stored)."
    )
    variant: str | None = Field(None, description="The variant it ran on; null without variants.")
    runs: list[str] = Field(default_factory=list, description="Run labels (date and commit).")
    pass_rates: list[float | None] = Field(default_factory=list)
    tokens: list[int | None] = Field(default_factory=list)

    @property
    def key(self) -> Key:
        """The (scenario id, variant) of the result it is about (`ScenarioIdentity.key`)."""
        return (self.id, self.variant)

    @property
    def label(self) -> str:
        return key_label(self.key)


class BudgetReport(_Frozen):
    """The run's spend limits (null: none) and what its agent runs spent (every attempt)."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_duration_s: float | None = None
    shard_share: int | None = Field(
        None, description="A shard's limits: the configured ones divided by this shard count."
    )
    planned: int = Field(0, description="Agent runs the run was to start.")
    runs: int = Field(0, description="Agent runs that finished and were counted.")
    cost_usd: float = Field(0.0, description="Summed cost of the runs whose cost is known.")
    unpriced_runs: int = Field(
        0, description="Runs of unknown cost (no native cost, no model_pricing): not in cost_usd."
    )
    unpriced_models: list[ModelName] = Field(
        default_factory=list, description="Models to add to model_pricing."
    )
    tokens: int = Field(0, description="Summed tokens of the runs whose usage was recorded.")
    unmetered_runs: int = Field(
        0, description="Runs with no token usage recorded: not in tokens (never counted as 0)."
    )
    duration_s: float = Field(0.0, description="From the first agent run's start to the last end.")
    stopped: str | None = Field(
        None, description="Why no further agent run started (a limit reached); null if none was."
    )

    @property
    def limited(self) -> bool:
        return (self.max_cost_usd, self.max_tokens, self.max_duration_s) != (None, None, None)


class SelectionInfo(_Frozen):
    """A run of only the scenarios a change touches (`--changed-since`)."""

    changed_since: str = Field(description="The ref asked for: auto, a branch, a commit.")
    commit: str = Field(description="The commit the changes were counted from.")
    changed_files: int = Field(description="Files changed since then (working tree included).")
    selected: int = Field(description="Scenarios selected to run (all shards together).")
    total: int = Field(description="Scenarios the name and tag filters selected.")
    left_out: list[str] = Field(
        default_factory=list, description="Ids of the scenarios no change touches: not run."
    )
    run_all: list[str] = Field(
        default_factory=list,
        description="Changed files that run every scenario (changed.run_all_on, the OpenClaw "
        "config).",
    )

    def describe(self, planned: bool = False) -> str:
        """e.g. 'ran 12 of 140 scenarios: 128 unaffected by changes since 1a2b3c4' (every
        renderer says it the same way); `planned`: 'would run …', for a dry run."""
        ran = "would run" if planned else "ran"
        since = f"since {self.commit[:7]}"
        total = f"{self.total:,} scenario{'' if self.total == 1 else 's'}"
        if self.run_all:
            more = f" and {len(self.run_all) - 1:,} more" if len(self.run_all) > 1 else ""
            return (
                f"{ran} all {total}: {self.run_all[0]}{more} changed {since} (changed.run_all_on)"
            )
        if not self.left_out:
            return f"{ran} all {total}: every one is affected by changes {since}"
        files = f"{self.changed_files:,} file{'' if self.changed_files == 1 else 's'}"
        if not self.selected:
            return f"{ran} 0 of {total}: none is affected by the {files} changed {since}"
        return (
            f"{ran} {self.selected:,} of {total}: {len(self.left_out):,} unaffected by changes "
            f"{since}"
        )


class RunReport(_Frozen):
    """A whole run: serialised, this is the JSON report."""

    version: str = Field(description="Version of ClawSpec that wrote the report.")
    run_id: str
    started_at: str
    duration_ms: int
    interrupted: bool = False
    totals: Totals
    scenarios: list[ScenarioResult]
    source: RunSource | None = Field(
        None, description="Where the run came from: commit, branch, CI, gateway."
    )
    selection: SelectionInfo | None = Field(
        None, description="Only the scenarios a change touches ran (--changed-since)."
    )
    shard: ShardInfo | None = Field(None, description="This report is one shard.")
    merged: MergeInfo | None = Field(
        None, description="This report joins the reports of every shard."
    )
    baseline: BaselineRef | None = Field(
        None, description="The earlier run this one was compared with."
    )
    comparison: Comparison | None = Field(None, description="Change against the baseline.")
    trends: list[ScenarioTrend] = Field(
        default_factory=list, description="Per scenario, its last stored runs."
    )
    budget: BudgetReport | None = Field(
        None, description="Spend limits and what the agent runs spent; a limit that stopped the "
        "run fails it."
    )  # fmt: skip
    variants: list[VariantInfo] = Field(
        default_factory=list, description="The variants the scenarios ran on (none: no variants)."
    )
    variant_comparisons: list[VariantComparison] = Field(
        default_factory=list,
        description="Each variant against the reference variant: the upgrade and model gate.",
    )
    variants_missing: list[str] = Field(
        default_factory=list,
        description="Required variants of clawspec.yaml no merged report holds a result of "
        "(`clawspec merge`: a variant job failed or its report was not passed): the merged "
        "report is incomplete.",
    )


def scenario_status(statuses: Iterable[Status]) -> Status:
    """Combine assertion statuses: error > fail > warn > pass > skip."""
    seen = set(statuses)
    for status in (Status.ERROR, Status.FAIL, Status.WARN, Status.PASS):
        if status in seen:
            return status
    return Status.SKIP


def advisory_variants(report: RunReport) -> set[str]:
    """Names of the variants marked `required: false`: shown, never failing the job."""
    return {v.name for v in report.variants if not v.required}


def skipped_in_ran(scenarios: Iterable[ScenarioResult]) -> list[tuple[str, int, int]]:
    """The skipped assertions of scenarios that ran, folded by reason: (reason, assertions,
    scenarios), most assertions first. A trace backend or judge down while a scenario's file
    assertions passed: the scenario passes, and every output says what went unchecked."""
    found: dict[str, tuple[int, set[Key]]] = {}
    for scenario in scenarios:
        if scenario.status == Status.SKIP:
            continue
        for check in scenario.checks():
            if check.status == Status.SKIP:
                count, keys = found.get(check.message, (0, set()))
                found[check.message] = (count + 1, keys | {scenario.identity.key})
    folded = [(reason, count, len(keys)) for reason, (count, keys) in found.items()]
    return sorted(folded, key=lambda item: -item[1])

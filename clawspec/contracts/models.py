"""Contract, Scenario, Target, When, Turn: ClawSpec 1.0 files, assertions from the registry."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from clawspec.assertions import ByType
from clawspec.assertions.base import Assertion
from clawspec.inputs.numbers import refuse_booleans_in

# Each item validated by its type's model, built when first used (assertions/registry.py).
AnyAssertion = Annotated[Assertion, ByType()]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    _no_boolean_number = refuse_booleans_in("timeout", "poll_interval", "repeat", "min_pass_rate")


class Target(_Strict):
    """What the contract exercises."""

    type: Literal["skill", "agent"]
    path: str
    trigger: str | None = None
    agent_id: str | None = Field(
        None, min_length=1, description="Agent that runs the scenario (default: config)."
    )
    trigger_mode: Literal["hooks", "webhook"] | None = Field(
        None, description="How to invoke (default: config `trigger_mode`)."
    )


class Defaults(_Strict):
    """File-wide defaults; a scenario may override `timeout`."""

    timeout: float = Field(300, gt=0, description="Seconds the agent run may take.")
    test_mode: bool = False
    poll_interval: float = Field(1, gt=0, description="Seconds between polls in every wait.")
    stop_on_failure: bool = Field(
        False,
        description="Conversations: leave out the turns after one that replied and failed.",
    )


class When(_Strict):
    """The invocation: the message sent to the agent, with optional parameters."""

    invoke: str
    params: dict[str, Any] = Field(default_factory=dict)


class Turn(_Strict):
    """One turn of a conversation: the user's message and what its reply must hold."""

    say: str = Field(min_length=1, description="The user's message (templated).")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Parameters sent with the message, as in `when`."
    )
    then: list[AnyAssertion] = Field(
        default_factory=list, description="Judged on this turn's evidence only."
    )
    timeout: float | None = Field(
        None, gt=0, description="Seconds this turn may take (default: the scenario's timeout)."
    )


class ExamplesFile(_Strict):
    """An outline's rows read from a data file beside the contract."""

    file: str = Field(
        min_length=1,
        description="CSV (header row), YAML/JSON (a list of mappings) or JSONL file, relative "
        "to the contract's folder.",
    )


class Scenario(_Strict):
    """One given/when/then scenario."""

    name: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    given: list[AnyAssertion] = Field(default_factory=list)
    when: When | None = None
    turns: list[Turn] | None = Field(
        None,
        min_length=1,
        description="A conversation instead of `when`: messages sent in turn in one session.",
    )
    then: list[AnyAssertion] = Field(default_factory=list)
    stop_on_failure: bool | None = Field(
        None,
        description="Conversations: leave out the turns after one that replied and failed "
        "(default: defaults.stop_on_failure).",
    )
    timeout: float | None = Field(None, gt=0, description="Overrides defaults.timeout.")
    agent_id: str | None = Field(None, min_length=1)
    # Repeats: each overrides the run's setting (config / --repeat) for this scenario.
    repeat: int | None = Field(
        None, ge=1, le=100, description="Attempts of this scenario (default: config `repeat`)."
    )
    min_pass_rate: float | None = Field(
        None, ge=0, le=1, description="Share of attempts that must pass (default: config)."
    )
    # An outline: never run itself; each row runs as a scenario `name[row id]` with the row's
    # values as `{{vars.KEY}}`.
    examples: list[dict[str, Any]] | ExamplesFile | None = Field(
        None,
        description="Rows (mappings; reserved keys id, tags, description) or {file: PATH}: "
        "each row runs as a scenario of its own.",
    )

    @model_validator(mode="after")
    def _when_or_turns(self) -> Scenario:
        # A scenario without any assertion is said by contracts/checks.py, at the line of its
        # `then` or `turns` (the raw data knows where they are).
        if self.when is not None and self.turns is not None:
            raise ValueError("'when' and 'turns' exclude each other: keep one")
        if self.when is None and self.turns is None:
            raise ValueError("missing field 'when' (or 'turns', for a conversation)")
        if self.turns is None and self.stop_on_failure is not None:
            raise ValueError("'stop_on_failure' applies to conversations ('turns') only")
        return self

    def assertions(self) -> list[Any]:
        """Every assertion written in it, in run order: `given`, each turn's, `then`."""
        turns = [a for turn in self.turns or () for a in turn.then]
        return [*self.given, *turns, *self.then]


class Contract(_Strict):
    """A ClawSpec 1.0 contract file."""

    version: Literal["1.0"]
    target: Target
    defaults: Defaults = Field(default_factory=Defaults)
    scenarios: list[Scenario] = Field(min_length=1)

    @field_validator("version", mode="before")
    @classmethod
    def _unquoted_version(cls, value: Any) -> Any:
        # `version: 1.0` unquoted is a float in YAML; ClawSpec files use both spellings.
        return "1.0" if value == 1.0 and not isinstance(value, bool) else value

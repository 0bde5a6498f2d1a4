"""Settings: defaults < file < CLAWSPEC_* environment < flags; secrets only from the env."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec import secrets as registry
from clawspec.cli import build_parser, main
from clawspec.commands.options import run_flags
from clawspec.config.loading import find_config, load_settings
from clawspec.config.settings import Settings
from clawspec.config.values import parse_skip_budget
from clawspec.errors import ConfigError


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "clawspec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("file_value", "env_value", "flag_value", "expected"),
    [
        (None, None, None, 4),
        (2, None, None, 2),
        (2, "3", None, 3),
        (2, "3", 5, 5),
        (None, None, 6, 6),
    ],
)
def test_concurrency_precedence_is_flag_over_env_over_file_over_default(
    tmp_path: Path,
    file_value: int | None,
    env_value: str | None,
    flag_value: int | None,
    expected: int,
) -> None:
    path = _file(tmp_path, f"concurrency: {file_value}\n" if file_value else "{}\n")
    environ = {"CLAWSPEC_CONCURRENCY": env_value} if env_value else {}
    flags = {"concurrency": flag_value} if flag_value else {}
    assert load_settings(path, environ, flags).concurrency == expected


def test_one_name_everywhere_config_env_flag() -> None:
    """`gateway_base_url` is CLAWSPEC_GATEWAY_BASE_URL and --gateway-base-url."""
    args = build_parser().parse_args(["run", "--gateway-base-url", "http://127.0.0.1:1"])
    for name in ("gateway_base_url",):
        assert name in Settings.model_fields
        assert run_flags(args)[name] == "http://127.0.0.1:1"
    env = load_settings(None, {"CLAWSPEC_GATEWAY_BASE_URL": "http://127.0.0.1:2"})
    assert env.gateway_base_url == "http://127.0.0.1:2"


def test_nested_settings_from_environment_and_flags(tmp_path: Path) -> None:
    path = _file(tmp_path, "gateway:\n  mode: target\n  ready_timeout: 30\n")
    settings = load_settings(
        path, {"CLAWSPEC_GATEWAY__READY_TIMEOUT": "45"}, {"gateway": {"mode": "bring_up"}}
    )
    assert settings.gateway.mode == "bring_up"
    assert settings.gateway.ready_timeout == 45


def test_bring_up_flags_map_to_gateway_settings() -> None:
    args = build_parser().parse_args(
        ["run", "--bring-up", "--gateway-command", "openclaw gateway run", "--fail-on", "error"]
    )
    flags = run_flags(args)
    assert flags["gateway"] == {"mode": "bring_up", "command": "openclaw gateway run"}
    settings = load_settings(None, {}, flags)
    assert settings.gateway.command == ["openclaw", "gateway", "run"]
    assert settings.fail_on == "error"


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("'/opt/my gw/openclaw' gateway run", ["/opt/my gw/openclaw", "gateway", "run"]),
        ('sh -c "exec openclaw gateway run"', ["sh", "-c", "exec openclaw gateway run"]),
        ("openclaw  gateway\trun", ["openclaw", "gateway", "run"]),
    ],
)
def test_a_gateway_command_string_is_split_as_a_shell_would(given: str, words: list[str]) -> None:
    for settings in (
        load_settings(None, {}, {"gateway": {"command": given}}),
        load_settings(None, {"CLAWSPEC_GATEWAY__COMMAND": given}),
    ):
        assert settings.gateway.command == words


def test_a_gateway_command_with_an_unclosed_quote_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="No closing quotation"):
        load_settings(None, {"CLAWSPEC_GATEWAY__COMMAND": "sh -c 'echo x"})


def test_bad_value_in_file_names_file_line_and_column(tmp_path: Path) -> None:
    path = _file(tmp_path, "report_dir: out\nconcurrency: many\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, {})
    assert str(caught.value).startswith(f"{path}:2:1: concurrency: ")
    assert "'many'" in str(caught.value)


def test_unknown_option_in_file_is_an_error(tmp_path: Path) -> None:
    path = _file(tmp_path, "gateway:\n  moed: target\n")
    with pytest.raises(ConfigError, match=r"clawspec\.yaml:2:3: unknown option 'gateway\.moed'"):
        load_settings(path, {})


def test_bad_value_in_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="environment CLAWSPEC_CONCURRENCY: concurrency: "):
        load_settings(None, {"CLAWSPEC_CONCURRENCY": "lots"})


def test_bad_flag_value_names_the_flag() -> None:
    with pytest.raises(ConfigError, match="--max-skipped: max_skipped: expected a count"):
        load_settings(None, {}, {"max_skipped": "some"})


def test_literal_secret_in_file_is_refused_and_never_echoed(tmp_path: Path) -> None:
    path = _file(tmp_path, "hooks_token: s3cr3t-value\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, {})
    assert "CLAWSPEC_HOOKS_TOKEN" in str(caught.value)
    assert "s3cr3t-value" not in str(caught.value)


def test_secret_reference_in_file_reads_the_environment(tmp_path: Path) -> None:
    path = _file(tmp_path, "hooks_token: ${MY_HOOK_TOKEN}\n")
    settings = load_settings(path, {"MY_HOOK_TOKEN": "from-env-123"})
    assert settings.hooks_token is not None
    assert settings.hooks_token.get_secret_value() == "from-env-123"
    assert "from-env-123" not in repr(settings)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("CLAWSPEC_HOOKS_TOKEN", "a1234"),
        ("OPENCLAW_HOOKS_TOKEN", "b1234"),
        ("HOOKS_TOKEN", "c1234"),
    ],
)
def test_hooks_token_fallbacks(variable: str, value: str) -> None:
    with registry.scope() as active:  # a command's: resolving the settings registers it
        settings = load_settings(None, {variable: value})
        assert settings.hooks_token is not None
        assert settings.hooks_token.get_secret_value() == value
        assert value in active.values()


def test_first_hooks_token_variable_wins() -> None:
    settings = load_settings(None, {"HOOKS_TOKEN": "last", "CLAWSPEC_HOOKS_TOKEN": "first"})
    assert settings.hooks_token.get_secret_value() == "first"  # type: ignore[union-attr]


def test_config_is_found_by_walking_up_and_sets_the_workspace(tmp_path: Path) -> None:
    path = _file(tmp_path, "{}\n")
    deep = tmp_path / "skills" / "news" / "tests"
    deep.mkdir(parents=True)
    assert find_config(deep / "scenarios.yaml") == path
    assert load_settings(path, {}).workspace == tmp_path.resolve()


def test_relative_workspace_in_file_resolves_against_the_file(tmp_path: Path) -> None:
    (tmp_path / "agentdir").mkdir()
    path = _file(tmp_path, "workspace: agentdir\n")
    assert load_settings(path, {}).workspace == (tmp_path / "agentdir").resolve()


def test_paths_resolve_against_the_workspace_in_the_file_and_the_current_folder_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path.resolve()
    (root / "agentdir" / "sub").mkdir(parents=True)
    path = _file(
        root,
        "workspace: agentdir\nreport_dir: out\ncassette_dir: tapes\n"
        "baseline: dir:hist\ngateway: {config: openclaw.json}\n",
    )
    monkeypatch.chdir(root / "agentdir" / "sub")
    here = root / "agentdir" / "sub"
    from_file = load_settings(path, {})
    assert (from_file.report_dir, from_file.cassette_dir, from_file.baseline) == (
        str(root / "agentdir/out"),
        str(root / "agentdir/tapes"),
        f"dir:{root / 'agentdir/hist'}",
    )
    assert from_file.gateway.config == str(root / "agentdir/openclaw.json")
    # The environment and the flags: the current folder's. A path read against the workspace
    # later is made absolute; the others stay as typed (the process runs in that folder).
    environ = {"CLAWSPEC_WORKSPACE": "..", "CLAWSPEC_CASSETTE_DIR": "mine"}
    flags = {"report_dir": "reports", "gateway": {"config": "my.json"}}
    given = load_settings(path, environ, flags)
    assert given.workspace == root / "agentdir"
    assert (given.report_dir, given.cassette_dir) == ("reports", str(here / "mine"))
    assert given.gateway.config == str(here / "my.json")
    # The default report folder is the workspace root's; inside the current folder, a path is
    # given from it (the short form messages echo).
    assert load_settings(_file(here, "{}\n"), {}).report_dir == "clawspec-reports"


def test_empty_environment_values_count_as_unset(tmp_path: Path) -> None:
    path = _file(tmp_path, "concurrency: 2\n")
    assert load_settings(path, {"CLAWSPEC_CONCURRENCY": ""}).concurrency == 2


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("3", ("count", 3.0)),
        ("0", ("count", 0.0)),
        ("0.2", ("ratio", 0.2)),
        ("20%", ("ratio", 0.2)),
    ],
)
def test_skip_budget_parsing(text: str, parsed: tuple[str, float]) -> None:
    assert parse_skip_budget(text) == parsed


@pytest.mark.parametrize("text", ["-1", "1.5", "abc", "150%"])
def test_bad_skip_budgets_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_skip_budget(text)


@pytest.mark.parametrize(
    ("file_text", "expected"),
    [
        ("{}\n", "off"),
        ("pr_comment: true\n", "always"),
        ("pr_comment: false\n", "off"),
        ("pr_comment: always\n", "always"),
        ("pr_comment: changes\n", "changes"),
        ("pr_comment: failures\n", "failures"),
        ("pr_comment: 'off'\n", "off"),
        ("pr_comment: off\n", "off"),  # YAML 1.1 reads a bare off as false: the same mode
    ],
)
def test_pr_comment_modes_keep_true_and_false_as_aliases(
    tmp_path: Path, file_text: str, expected: str
) -> None:
    assert load_settings(_file(tmp_path, file_text), {}).pr_comment == expected


def test_a_bare_off_is_the_word_for_model_traffic_and_a_variants_thinking(tmp_path: Path) -> None:
    """The guide writes `model_traffic: off` and `thinking: off` unquoted; YAML 1.1 reads them
    as false. They mean the word; `on` (true) means no word and stays an error."""
    text = "model_traffic: off\nvariants:\n  - {name: quick, thinking: off}\n"
    settings = load_settings(_file(tmp_path, text), {})
    assert (settings.model_traffic, settings.variants[0].thinking) == ("off", "off")
    with pytest.raises(ConfigError, match="model_traffic"):
        load_settings(_file(tmp_path, "model_traffic: on\n"), {})


def test_pr_comment_and_check_run_have_one_name_everywhere(tmp_path: Path) -> None:
    """Config `pr_comment`/`check_run`/`check_name`, CLAWSPEC_* and the flags."""
    path = _file(tmp_path, "pr_comment: always\ncheck_run: false\ncheck_name: Agents\n")
    settings = load_settings(path, {})
    assert (settings.pr_comment, settings.check_run, settings.check_name) == (
        "always",
        False,
        "Agents",
    )
    environ = {"CLAWSPEC_PR_COMMENT": "failures", "CLAWSPEC_CHECK_RUN": "true"}
    environ["CLAWSPEC_CHECK_NAME"] = "From env"
    settings = load_settings(path, environ)
    assert (settings.pr_comment, settings.check_run, settings.check_name) == (
        "failures",
        True,
        "From env",
    )
    args = build_parser().parse_args(
        ["run", "x", "--pr-comment", "changes", "--no-check-run", "--check-name", "Flag"]
    )
    settings = load_settings(path, environ, run_flags(args))
    assert (settings.pr_comment, settings.check_run, settings.check_name) == (
        "changes",
        False,
        "Flag",
    )
    bare = build_parser().parse_args(["run", "--pr-comment", "--check-run"])
    assert run_flags(bare)["pr_comment"] == "always"
    assert run_flags(bare)["check_run"] is True
    assert load_settings(None, {}).check_run == "auto"


def test_bad_comment_mode_and_check_run_values_say_what_is_expected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"clawspec.yaml:1:1: pr_comment: Input should be"):
        load_settings(_file(tmp_path, "pr_comment: sometimes\n"), {})
    with pytest.raises(
        ConfigError,
        match=r"environment CLAWSPEC_CHECK_RUN: check_run: expected auto, true or false, "
        r"found 'maybe'",
    ):
        load_settings(None, {"CLAWSPEC_CHECK_RUN": "maybe"})
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--pr-comment", "examples"])


def test_a_configuration_file_over_its_fixed_limit_is_refused_without_reading_it_all(
    tmp_path: Path,
) -> None:
    from clawspec.config.loading import CONFIG_MAX_BYTES

    path = _file(tmp_path, "report_dir: reports\n# " + "x" * CONFIG_MAX_BYTES + "\n")
    with pytest.raises(
        ConfigError, match=r"clawspec.yaml:1:1: configuration file is over the limit"
    ):
        load_settings(path, {})
    path.write_text("report_dir: reports\n# " + "x" * (CONFIG_MAX_BYTES - 64) + "\n", "utf-8")
    assert load_settings(path, {}).report_dir == str(tmp_path / "reports")


def test_a_configuration_file_that_is_not_utf8_is_a_configuration_error(tmp_path: Path) -> None:
    path = _file(tmp_path, "")
    path.write_bytes(b"report_dir: \xff\xfe\n")
    with pytest.raises(ConfigError, match="cannot read configuration"):
        load_settings(path, {})


@pytest.mark.parametrize(("written", "kept"), [("3", "3"), ("0.2", "0.2"), ('"20%"', "20%")])
def test_max_skipped_is_a_count_or_a_ratio_in_the_file_as_everywhere(
    tmp_path: Path, written: str, kept: str
) -> None:
    settings = load_settings(_file(tmp_path, f"max_skipped: {written}\n"), {})
    assert settings.max_skipped == kept
    assert parse_skip_budget(settings.max_skipped)[0] == ("count" if kept == "3" else "ratio")
    with pytest.raises(ConfigError, match=r"clawspec\.yaml:1:1: max_skipped: a ratio must be"):
        load_settings(_file(tmp_path, "max_skipped: 1.5\n"), {})


def test_an_unknown_time_zone_is_said_where_it_is_written(tmp_path: Path) -> None:
    """Not only when a run starts: `validate` and `doctor` see the same settings."""
    assert load_settings(_file(tmp_path, "timezone: Asia/Kolkata\n"), {}).timezone == "Asia/Kolkata"
    with pytest.raises(ConfigError, match=r"clawspec\.yaml:1:1: timezone: unknown time zone: "):
        load_settings(_file(tmp_path, "timezone: Mars/Olympus\n"), {})
    with pytest.raises(ConfigError, match="environment CLAWSPEC_TIMEZONE: timezone: unknown"):
        load_settings(None, {"CLAWSPEC_TIMEZONE": "Mars/X"})


def test_an_unquoted_date_that_is_no_date_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"clawspec\.yaml:1:8: invalid YAML: '2026-02-30' "):
        load_settings(_file(tmp_path, "today: 2026-02-30\n"), {})


def test_a_check_name_is_one_line() -> None:
    """The name of the check run in the PR's checks list; an input's final newline is dropped."""
    assert load_settings(None, {"CLAWSPEC_CHECK_NAME": "ClawSpec: nightly\n"}).check_name == (
        "ClawSpec: nightly"
    )
    with pytest.raises(ConfigError, match="check_name: expected a name on one line"):
        load_settings(None, {"CLAWSPEC_CHECK_NAME": "my check\nsecond line"})


@pytest.mark.parametrize("version", ["latest", "../../outside", "9.9.9; rm -rf /", "2026.9"])
def test_a_variants_openclaw_version_is_an_exact_release(tmp_path: Path, version: str) -> None:
    """It names its folder in ClawSpec's cache, kept for good: a tag would stay whatever it
    first named, and `..` would leave the cache."""
    text = (
        "gateway: {mode: bring_up}\nvariants:\n  - name: old\n"
        f"    openclaw_version: '{version}'\n"
    )
    with pytest.raises(ConfigError, match="openclaw_version: expected an exact OpenClaw release"):
        load_settings(_file(tmp_path, text), {})
    ok = text.replace(version, "2026.9.5")
    assert load_settings(_file(tmp_path, ok), {}).variants[0].openclaw_version == "2026.9.5"


def test_a_workspace_root_that_is_not_there_is_said_where_it_was_given(tmp_path: Path) -> None:
    """Every contract path is read against it: one that is not there made file assertions
    fail with nothing pointing at the cause."""
    with pytest.raises(
        ConfigError, match=r"^--workspace: no such folder '.*nowhere' \(the workspace"
    ):
        load_settings(None, {}, {"workspace": str(tmp_path / "nowhere")})
    with pytest.raises(ConfigError, match="environment CLAWSPEC_WORKSPACE: no such folder"):
        load_settings(None, {"CLAWSPEC_WORKSPACE": str(tmp_path / "nowhere")})
    with pytest.raises(ConfigError, match=r"clawspec\.yaml: workspace: no such folder"):
        load_settings(_file(tmp_path, "workspace: nowhere\n"), {})
    assert load_settings(_file(tmp_path, "workspace: .\n"), {}).workspace == tmp_path.resolve()


def test_a_misspelled_thinking_level_is_a_config_error_not_silently_ignored() -> None:
    """OpenClaw runs an unknown level at its default without a word: the variant would be
    compared with itself."""
    variants = [{"name": "a", "thinking": "hgih"}]
    with pytest.raises(ConfigError, match=r"unknown thinking level 'hgih'.*did you mean 'high'"):
        load_settings(None, {}, {"variants": variants})
    for level in ("off", "high", "xhigh"):
        settings = load_settings(None, {}, {"variants": [{"name": "a", "thinking": level}]})
        assert settings.variants[0].thinking == level


def test_an_empty_agent_id_is_a_config_error() -> None:
    """Sent as `agentId: ""`, the gateway would pick an agent nobody asked for."""
    with pytest.raises(ConfigError, match="default_agent_id: String should have at least 1"):
        load_settings(None, {}, {"default_agent_id": ""})


def test_a_misspelled_option_is_named_with_the_closest_one_at_its_depth(tmp_path: Path) -> None:
    path = _file(tmp_path, "report_dri: out\ngateway: {ready_timout: 5}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, {})
    said = str(caught.value)
    assert "unknown option 'report_dri' (did you mean 'report_dir'?)" in said
    assert "unknown option 'gateway.ready_timout' (did you mean 'ready_timeout'?)" in said


def test_every_key_given_twice_in_the_file_is_named_at_once_with_its_other_problems(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through `validate`, as a user meets it: one run shows everything to fix in the file."""
    (workspace / "clawspec.yaml").write_text(
        "concurrency: 2\nconcurrency: 3\ngateway:\n  mode: target\n  mode: managed\n"
        "report_dri: out\n",
        encoding="utf-8",
    )
    assert main(["validate", "."]) == 2
    config = workspace / "clawspec.yaml"
    assert capsys.readouterr().err.splitlines() == [
        f"error: {config}:2:1: duplicate key 'concurrency' (first given at 1:1): "
        "remove or rename one of them",
        f"{config}:5:3: duplicate key 'mode' (first given at 4:3): remove or rename one of them",
        f"{config}:6:1: unknown option 'report_dri' (did you mean 'report_dir'?)",
    ]
    # Keys given twice and nothing else wrong: still refused, each named.
    config.write_text("concurrency: 2\nconcurrency: 3\nrepeat: 1\nrepeat: 2\n", "utf-8")
    assert main(["validate", "."]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {config}:2:1: duplicate key 'concurrency' (first given at 1:1): "
        "remove or rename one of them",
        f"{config}:4:1: duplicate key 'repeat' (first given at 3:1): remove or rename one of them",
    ]


def test_a_variant_named_like_an_attempt_folder_is_refused_where_it_is_named(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repeated scenario records each attempt in `attempt-<n>/` beside the variants' folders:
    a variant named so would have its recordings taken for an attempt's (and removed when the
    scenario is recorded again)."""
    config = workspace / "clawspec.yaml"
    config.write_text(
        "variants:\n  - {name: attempt-2, model: fake/a}\n  - {name: attempt-two, model: fake/b}\n",
        encoding="utf-8",
    )
    assert main(["validate", "."]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {config}:2:6: variants.0.name: 'attempt-2' is the folder name of a repeated "
        "scenario's attempt (its recordings sit beside the variants'): choose another name"
    ]

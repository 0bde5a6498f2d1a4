"""Legacy ClawSpec options in clawspec.yaml load with a deprecation warning naming the line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from clawspec.config.loading import load_settings
from clawspec.errors import ConfigError

LEGACY = """\
gateway_base_url: "http://127.0.0.1:18789"
report_dir: "reports"
ledger_path: "coverage-ledger.yaml"
observability_backend: none
observability:
  trace_poll_delay_ms: 3000
  time_window_padding_ms: 10000
  opik:
    project_name: "my-project"
    workspace: "my-workspace"
  model_pricing:
    claude-sonnet-4-6:
      input_per_1k: 0.003
      output_per_1k: 0.015
"""


def test_clawspec_0_1_config_loads_with_one_warning_per_option(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "clawspec.yaml"
    path.write_text(LEGACY, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="clawspec.config"):
        settings = load_settings(path, {})
    assert settings.report_dir == str(tmp_path / "reports")  # the workspace root's
    assert settings.observability.backend == "none"
    assert settings.observability.trace_poll_delay_ms == 3000
    assert settings.observability.project == "my-project"
    assert settings.observability.workspace == "my-workspace"
    price = settings.model_pricing["claude-sonnet-4-6"]
    assert (price.input_per_mtok, price.output_per_mtok) == pytest.approx((3.0, 15.0))
    hint = f"(run `clawspec migrate {path}` to update the file)"
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}:3:1: deprecated: 'ledger_path' (legacy ClawSpec) is ignored: coverage has no "
        "ledger file any more: `clawspec coverage` reads the workspace's skills, agents and "
        f"contracts {hint}",
        f"{path}:4:1: deprecated: 'observability_backend' (legacy ClawSpec) is now "
        f"'observability.backend': moved {hint}",
        f"{path}:7:3: deprecated: 'observability.time_window_padding_ms' (legacy ClawSpec) is "
        f"ignored: traces are found by run correlation; the time window needs no padding {hint}",
        f"{path}:9:5: deprecated: 'observability.opik.project_name' (legacy ClawSpec) is now "
        f"'observability.project': moved {hint}",
        f"{path}:10:5: deprecated: 'observability.opik.workspace' (legacy ClawSpec) is now "
        f"'observability.workspace': moved {hint}",
        f"{path}:11:3: deprecated: 'observability.model_pricing' (legacy ClawSpec) is now "
        "'model_pricing': moved; prices per 1k tokens become per million (`input_per_mtok`) "
        f"{hint}",
    ]


def test_current_option_wins_over_its_0_1_spelling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "clawspec.yaml"
    path.write_text("observability_backend: opik\nobservability:\n  backend: none\n", "utf-8")
    with caplog.at_level(logging.WARNING, logger="clawspec.config"):
        assert load_settings(path, {}).observability.backend == "none"
    assert "'observability.backend' is set" in caplog.records[0].getMessage()


def test_other_unknown_options_are_still_errors(tmp_path: Path) -> None:
    path = tmp_path / "clawspec.yaml"
    path.write_text("ledger_path: x.yaml\nledger_pth: y\n", "utf-8")
    with pytest.raises(ConfigError, match=r"clawspec.yaml:2:1: unknown option 'ledger_pth'"):
        load_settings(path, {})

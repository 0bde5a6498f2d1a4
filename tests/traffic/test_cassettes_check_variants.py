"""`clawspec cassettes check` with `variants` configured: each variant's recording, in the
sub-folder of the scenario's folder a record run writes, is expected, through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.identity import ScenarioIdentity
from clawspec.traffic.cassette import (
    Cassette,
    RecordedRequest,
    RecordedResponse,
    identity_dir,
    write_dir,
)

CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/x}
scenarios:
  - name: drafts
    when: {invoke: "draft it"}
    then: [{type: tool_was_called, tool: write}]
  - name: sends
    when: {invoke: "send it"}
    then: [{type: tool_was_called, tool: exec}]
"""

VARIANTS = """\
report_dir: reports
variants:
  - {name: sonnet, model: anthropic/claude-sonnet-4-6}
  - {name: haiku, model: anthropic/claude-haiku-4-5}
"""


def cassette(index: int, release: str | None = None) -> Cassette:
    return Cassette(
        scenario="x",
        index=index,
        recorded_at="2026-11-23T09:00:00+00:00",
        openclaw_version=release,
        request=RecordedRequest(path="/chat/completions", endpoint="chat/completions", body={}),
        response=RecordedResponse(status=200, body={"ok": True}),
    )


def folder(workspace: Path, scenario: str, variant: str | None = None) -> Path:
    """Where a record run writes the scenario's (variant's) cassettes."""
    identity = ScenarioIdentity("case.clawspec.yaml", scenario, None, variant)
    return identity_dir(workspace / ".clawspec" / "cassettes", identity)


def lines(capsys: pytest.CaptureFixture[str], prefix: str) -> list[str]:
    return sorted(line for line in capsys.readouterr().out.splitlines() if line.startswith(prefix))


@pytest.fixture
def variants(workspace: Path, write_contract: Callable[..., Path]) -> Path:
    (workspace / "clawspec.yaml").write_text(VARIANTS, encoding="utf-8")
    write_contract(CONTRACT)
    return workspace


def test_every_variant_recorded_is_ok(variants: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for scenario in ("drafts", "sends"):
        for variant in ("sonnet", "haiku"):
            write_dir(folder(variants, scenario, variant), [cassette(1)])
    # A repeated variant's attempts record under the variant's folder.
    write_dir(folder(variants, "drafts", "haiku") / "attempt-1", [cassette(1)])
    assert main(["cassettes", "check", "."]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "5 file(s) in 5 scenario folder(s)" in out[0]
    assert not [line for line in out if line.startswith(("stale:", "missing:"))]
    assert out[-1] == "ok"


def test_a_variant_without_recording_is_missing_and_others_are_stale(
    variants: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Missing: a variant a replay runs that has no recording. Stale: the folder of a variant
    no longer configured, and a scenario's recording made without variants (a replay with
    variants reads the variants' sub-folders only), attempts included."""
    write_dir(folder(variants, "drafts", "sonnet"), [cassette(1)])
    write_dir(folder(variants, "drafts", "haiku"), [cassette(1)])
    write_dir(folder(variants, "sends", "sonnet"), [cassette(1)])
    write_dir(folder(variants, "sends", "opus"), [cassette(1)])
    write_dir(folder(variants, "drafts") / "attempt-1", [cassette(1)])
    assert main(["cassettes", "check", "."]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("missing:")] == [
        "missing: case.clawspec.yaml::sends @ haiku: no recording (replay would be an error)"
    ]
    stale = sorted(line.split(" (")[0] + line.split(")")[-1] for line in out if "stale:" in line)
    assert stale == [
        "stale: case.clawspec/drafts/attempt-1: recorded without variants, and with variants a "
        "replay reads each variant's sub-folder; delete it",
        "stale: case.clawspec/sends/opus: no such contract, scenario or variant any more",
    ]
    assert out[-1] == "2 problem(s) found; 1 scenario(s) without a recording"


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_variant_selection_checks_only_those_variants_recordings(
    variants: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Recording one variant (`--model-traffic record --variant sonnet`), its check: the other
    variant's recordings, there or not, are neither missing nor stale; one of a variant no
    longer configured still is."""
    write_dir(folder(variants, "drafts", "sonnet"), [cassette(1)])
    write_dir(folder(variants, "sends", "haiku"), [cassette(1)])  # haiku's sends only
    write_dir(folder(variants, "sends", "opus"), [cassette(1)])
    if how == "flag":
        argv = ["cassettes", "check", ".", "--variant", "sonnet"]
    else:
        monkeypatch.setenv("CLAWSPEC_VARIANTS", "sonnet")
        argv = ["cassettes", "check", "."]
    assert main(argv) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("missing:")] == [
        "missing: case.clawspec.yaml::sends @ sonnet: no recording (replay would be an error)"
    ]
    stale = [line.split(" (")[0] for line in out if line.startswith("stale:")]
    assert [line.split(":")[1].strip() for line in stale] == ["case.clawspec/sends/opus"]
    assert out[-1] == "1 problem(s) found; 1 scenario(s) without a recording"


def test_an_unknown_variant_selected_is_a_usage_error(
    variants: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cassettes", "check", ".", "--variant", "opus"]) == 2
    err = capsys.readouterr().err
    assert "variant opus (--variant, CLAWSPEC_VARIANTS): no such variant" in err
    assert "sonnet, haiku" in err


def test_without_variants_the_variants_folders_are_stale(
    variants: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Variants taken out of the configuration: a replay reads each scenario's own folder."""
    write_dir(folder(variants, "drafts"), [cassette(1)])  # before: it replaces the folder
    for scenario in ("drafts", "sends"):
        write_dir(folder(variants, scenario, "sonnet"), [cassette(1)])
    (variants / "clawspec.yaml").write_text("report_dir: reports\n", encoding="utf-8")
    assert main(["cassettes", "check", "."]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "missing: case.clawspec.yaml::sends: no recording (replay would be an error)" in out
    stale = sorted(line.split(" (")[0] for line in out if line.startswith("stale:"))
    assert stale == ["stale: case.clawspec/drafts/sonnet", "stale: case.clawspec/sends/sonnet"]


def test_a_report_of_variant_runs_judges_each_variants_recording(
    variants: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A variant's replay without repeats reads its folder, never its attempts'; one with
    repeats its attempts', never the variant's own files."""
    for scenario in ("drafts", "sends"):
        for variant in ("sonnet", "haiku"):
            write_dir(folder(variants, scenario, variant), [cassette(1), cassette(2)])
            write_dir(folder(variants, scenario, variant) / "attempt-1", [cassette(1)])

    def replayed(cassettes: Path, variant: str) -> dict[str, object]:
        traffic = {"mode": "replay", "cassette": str(cassettes), "calls": 1, "used": [1]}
        return {"status": "pass", "variant": variant, "model_traffic": traffic}

    report = variants / "report.json"
    runs = [
        replayed(folder(variants, "drafts", "sonnet"), "sonnet"),
        replayed(folder(variants, "drafts", "haiku") / "attempt-1", "haiku"),
    ]
    report.write_text(json.dumps({"scenarios": runs}), "utf-8")
    assert main(["cassettes", "check", ".", "--report", str(report)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert sorted(line for line in out if line.startswith("unused:")) == [
        "unused: case.clawspec/drafts/haiku/1.json: the replay did not need it",
        "unused: case.clawspec/drafts/haiku/2.json: the replay did not need it",
        "unused: case.clawspec/drafts/sonnet/2.json: the replay did not need it",
        "unused: case.clawspec/drafts/sonnet/attempt-1/1.json: the replay did not need it",
    ]
    assert not [line for line in out if line.startswith(("stale:", "missing:"))]
    assert out[-1] == "4 problem(s) found"


def test_a_variants_recording_is_compared_with_the_release_it_runs(
    workspace: Path,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A variant with `openclaw_version` replays on a gateway of its own running that release,
    the others on the release a bring-up here runs."""
    (workspace / "clawspec.yaml").write_text(
        "gateway: {mode: bring_up}\n"
        "variants:\n"
        "  - {name: old, openclaw_version: 2026.9.5}\n"
        "  - {name: new, model: anthropic/claude-haiku-4-5}\n",
        encoding="utf-8",
    )
    write_contract(CONTRACT)
    package = workspace.parent / "node_modules" / "openclaw"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "openclaw", "version": "2026.9.6"}), encoding="utf-8"
    )
    (package / "openclaw.mjs").write_text("// entry\n", encoding="utf-8")
    monkeypatch.setenv("CLAWSPEC_OPENCLAW_BIN", str(package / "openclaw.mjs"))
    for scenario in ("drafts", "sends"):
        write_dir(folder(workspace, scenario, "old"), [cassette(1, "2026.9.5")])
        write_dir(folder(workspace, scenario, "new"), [cassette(1, "2026.9.6")])
    write_dir(folder(workspace, "drafts", "old"), [cassette(1, "2026.9.6")])
    write_dir(folder(workspace, "sends", "new"), [cassette(1, "2026.9.5")])
    assert main(["cassettes", "check", "."]) == 0
    assert lines(capsys, "other release:") == [
        "other release: case.clawspec/drafts/old: recorded on OpenClaw 2026.9.6, a bring-up here "
        "runs 2026.9.5: a replay may miss; record it again",
        "other release: case.clawspec/sends/new: recorded on OpenClaw 2026.9.5, a bring-up here "
        "runs 2026.9.6: a replay may miss; record it again",
    ]

"""Bless against hostile inputs: rows and variants without enough good runs, a report given
twice, a changed data file, values that only look constant, secrets' masks, the agent's own
`{{…}}`, and odd flags and names. Nothing of it may end up written as a literal that cannot
hold (or cannot even load)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from clawspec.bless.digest import scenario_digest
from clawspec.bless.invariants import Observed, Settings, propose
from clawspec.cli import main
from clawspec.contracts.loader import load_contract
from clawspec.reports.json_report import render_json
from clawspec.reports.model import AttemptEvidence, FileSeen
from clawspec.secrets import MASK
from clawspec.status import Status
from tests.bless.factory import call, evidence, report, result
from tests.bless.test_outline_cli import OUTLINE
from tests.support.hooks_api import HooksServer

PLAIN = """\
version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: drafts
    when: {invoke: "write the draft"}
    then:
      - {type: file_absent, path: never.md}
"""


def _row(city: str, tokens: int) -> AttemptEvidence:
    return evidence(
        [call("weather", city=city, units="metric")],
        tokens=tokens,
        reply=f"The weather in {city} is fine. Have a good day.",
    )


def _digest(contract: Path, index: int = 0) -> str:
    digest = scenario_digest(yaml.safe_load(contract.read_text("utf-8")), index, contract.parent)
    assert digest is not None
    return digest


def _save(path: Path, *results) -> Path:
    path.write_text(render_json(report(*results)), encoding="utf-8")
    return path


def _bless(contract: Path, scenario: str, *reports: Path, more: tuple[str, ...] = ()) -> int:
    args = ["bless", str(contract), "--scenario", scenario, "--from-report"]
    return main([*args, *(str(r) for r in reports), *more])


def _run(seen: AttemptEvidence, status: Status = Status.PASS) -> Observed:
    return Observed("attempt", status, 1200, seen)


def _whole(runs: list[Observed], settings: Settings | None = None):
    [whole] = propose(runs, settings or Settings())
    return whole


# -- 1. every row and variant, or nothing written --------------------------------------------


def test_a_row_with_fewer_than_two_good_runs_is_named_and_nothing_is_written(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(OUTLINE)
    digest = _digest(contract)
    berlin = result(
        contract.name,
        "greets",
        digest,
        [(Status.PASS, _row("Berlin", 100)), (Status.PASS, _row("Berlin", 110))],
        example="en",
    )
    lyon = result(
        contract.name,
        "greets",
        digest,
        [(Status.FAIL, _row("Lyon", 100)), (Status.ERROR, None)],
        example="fr",
    )
    path = _save(workspace / "r.json", berlin, lyon)
    assert _bless(contract, "greets", path, more=("--write",)) == 1
    captured = capsys.readouterr()
    # The good row's proposal is still printed; the short row is named with its attempts.
    assert "# row en: 2 good runs of 2" in captured.out
    assert "The weather in Berlin is fine." in captured.out
    assert "# row fr: 0 good runs of 2 (pass or warn): fewer than 2, nothing proposed" in (
        captured.out
    )
    assert "left out: attempt 1 of" in captured.out and "(fail: then[0] failed)" in captured.out
    assert "(error: then[0] failed)" in captured.out
    assert "# across every row and variant above" not in captured.out
    assert "row fr: 0 good of 2" in captured.err and "nothing was written" in captured.err
    assert contract.read_text("utf-8") == OUTLINE  # no Berlin literal in the Lyon row


def test_a_row_no_report_has_an_attempt_of_is_named_and_nothing_is_written(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(OUTLINE)
    berlin = result(
        contract.name,
        "greets",
        _digest(contract),
        [(Status.PASS, _row("Berlin", 100)), (Status.PASS, _row("Berlin", 110))],
        example="en",
    )
    path = _save(workspace / "r.json", berlin)
    assert _bless(contract, "greets", path, more=("--write",)) == 1
    captured = capsys.readouterr()
    assert "# row fr: no attempt in the reports: nothing proposed" in captured.out
    assert "row fr: no attempt in the reports" in captured.err
    assert contract.read_text("utf-8") == OUTLINE


def test_a_variant_with_fewer_than_two_good_runs_blocks_the_write(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)
    digest = _digest(contract)
    results = []
    for variant, status in (("haiku", Status.PASS), ("opus", Status.FAIL)):
        built = result(
            contract.name,
            "drafts",
            digest,
            [(status, evidence([call("weather", city="Berlin")])) for _ in range(2)],
        )
        results.append(built.model_copy(update={"variant": variant, "id": f"{built.id}@{variant}"}))
    path = _save(workspace / "r.json", *results)
    assert _bless(contract, "drafts", path, more=("--write",)) == 1
    captured = capsys.readouterr()
    assert "# variant haiku: 2 good runs of 2" in captured.out
    assert "# variant opus: 0 good runs of 2 (pass or warn): fewer than 2" in captured.out
    assert "variant opus: 0 good of 2" in captured.err
    assert contract.read_text("utf-8") == PLAIN


# -- 2. a report given twice ----------------------------------------------------------------


def test_the_same_report_twice_does_not_make_two_runs_of_one(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)
    one = result(
        contract.name,
        "drafts",
        _digest(contract),
        [(Status.PASS, evidence([call("read", path="a.md")])), (Status.FAIL, None)],
    )
    path = _save(workspace / "r.json", one)
    copy = workspace / "copy.json"
    copy.write_bytes(path.read_bytes())
    for given in ((path, path), (path, Path("./r.json")), (path, copy)):
        assert _bless(contract, "drafts", *given) == 1
        assert "fewer than 2 good runs (pass or warn) to propose from (1 good of 2)" in (
            capsys.readouterr().err
        )


def test_a_report_given_twice_is_counted_once_in_held_in_n_of_n(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)
    runs = [(Status.PASS, evidence([call("read", path="a.md")])) for _ in range(2)]
    path = _save(workspace / "r.json", result(contract.name, "drafts", _digest(contract), runs))
    copy = workspace / "copy.json"
    copy.write_bytes(path.read_bytes())
    assert _bless(contract, "drafts", path, Path("./r.json"), copy) == 0
    captured = capsys.readouterr()
    assert "# 2 good runs of 2" in captured.out
    assert "held in 2 of 2 runs" in captured.out and "of 4 runs" not in captured.out
    assert "2 attempt(s) given more than once" in captured.out
    assert "again: read once" in captured.err
    # The header names each file read, once.
    assert f"# attempts from {path}, {copy}\n" in captured.out


# -- 3. an outline's data file is part of its digest ---------------------------------------


FILE_OUTLINE = OUTLINE.replace(
    "    examples:\n      - {id: en, city: Berlin}\n      - {id: fr, city: Lyon}\n",
    "    examples: {file: cities.csv}\n",
)


def test_a_report_made_before_the_data_file_changed_is_refused(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(FILE_OUTLINE)
    rows = workspace / "cities.csv"
    rows.write_text("id,city\nen,Berlin\nfr,Lyon\n", "utf-8")
    digest = _digest(contract)
    results = [
        result(
            contract.name,
            "greets",
            digest,
            [(Status.PASS, _row(city, t)) for t in (100, 120)],
            example=row,
        )
        for row, city in (("en", "Berlin"), ("fr", "Lyon"))
    ]
    path = _save(workspace / "r.json", *results)
    assert _bless(contract, "greets", path) == 0
    capsys.readouterr()
    rows.write_text("id,city\nen,Berlin\nfr,Paris\n", "utf-8")
    assert _digest(contract) != digest
    assert _bless(contract, "greets", path) == 2
    assert "is of another version of scenario 'greets'" in capsys.readouterr().err


def test_digests_of_scenarios_without_a_data_file_are_unchanged(workspace: Path) -> None:
    data = yaml.safe_load(OUTLINE)
    # The digest as it was computed before data files counted: reports stay valid.
    defined = {"target": data["target"], "defaults": None, "scenario": dict(data["scenarios"][0])}
    del defined["scenario"]["then"]
    text = json.dumps(defined, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    before = hashlib.sha256(text.encode()).hexdigest()
    assert scenario_digest(data, 0) == before
    assert scenario_digest(data, 0, workspace) == before


# -- 4. values that only look constant -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("report-20261126.md", r"^report-\d{8}\.md$"),
        ("26/11/2026", r"^\d{1,2}/\d{1,2}/\d{4}$"),
        ("11/26/2026", r"^\d{1,2}/\d{1,2}/\d{4}$"),
        ("archive/2026-11/index.md", r"^archive/\d{4}-\d{2}/index\.md$"),
        ("2026-W48", r"^\d{4}-W\d{2}$"),
        ("2026-11-26T09:00:00Z", r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"),
        (
            "at 2026-11-26T09:00:00+01:00 sharp",
            r"^at \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+\d{2}:\d{2} sharp$",
        ),
        ("1764201600", r"^\d{10}$"),
        ("backup-1764201600.tar", r"^backup-\d{10}\.tar$"),
        ("commit a1b2c3d", r"^commit [0-9a-fA-F-]{7}$"),
        # spelled out day first, or a month and a year: never the day or the year kept
        ("Report for 29 November 2026\n", r"^Report for \d{1,2} [A-Za-z]+ \d{4}\n$"),
        ("November 2026 report", r"^[A-Za-z]+ \d{4} report$"),
        # a stamp's time part in a file name
        ("log/run-20261129-091500.md", r"^log/run-\d{8}-\d{6}\.md$"),
        (
            "run-2026-11-29_09-15-00.md",
            r"^run-\d{4}-\d{2}-\d{2}_\d{1,2}-\d{1,2}-\d{1,2}\.md$",
        ),
    ],
)
def test_a_volatile_value_is_a_pattern_that_keeps_its_literal_parts(value, pattern) -> None:
    runs = [
        _run(evidence([call("t", v=value)], variables={"today": d}))
        for d in ("2026-12-01", "2026-12-02")
    ]
    called_with = next(m.mapping for m in _whole(runs).items if m.key == "tool_called_with:t")
    assert called_with["args"]["v"] == {"matches": pattern}
    assert re.fullmatch(pattern, value)
    assert pattern != "^.+?$"


def test_a_number_that_is_a_timestamp_is_left_out_with_its_reason() -> None:
    runs = [_run(evidence([call("t", epoch=1764201600, count=42)])) for _ in range(2)]
    whole = _whole(runs)
    called_with = next(m.mapping for m in whole.items if m.key == "tool_called_with:t")
    assert called_with["args"] == {"count": 42}
    assert any("'epoch' is a number that looks like a date" in i.comment for i in whole.left_out)


def test_volatile_reply_sentences_headings_and_paths_are_never_literals() -> None:
    reply = (
        "Saved on Thursday. Filed under 2026-11 today. Report 20261126 is ready. "
        "Due 26/11/2026 at the latest. Week 48 is done. The draft is saved."
    )

    def seen(day: str) -> AttemptEvidence:
        return evidence(
            [call("write", path="notes/2026-W48.md")],
            reply=reply,
            files=[
                FileSeen(path="notes/2026-W48.md", sections=["Notes"], fields=None),
                FileSeen(path="plain.md", sections=["Week 48 of 2026", "Notes"], fields=None),
            ],
            variables={"today": day},
        )

    whole = _whole([_run(seen("2026-12-01")), _run(seen("2026-12-02"))])
    proposed = [i.mapping for i in whole.items]
    texts = [m["text"] for m in proposed if m["type"] == "reply_contains"]
    assert texts == ["The draft is saved."]
    assert {"type": "artifact_exists", "path": "notes/2026-W48.md"} not in proposed
    contains = next(m for m in proposed if m["type"] == "artifact_contains")
    assert contains == {"type": "artifact_contains", "path": "plain.md", "sections": ["Notes"]}
    assert any(i.mapping.get("path") == "notes/2026-W48.md" for i in whole.left_out)


def test_the_workspace_path_is_written_as_its_variable(workspace: Path) -> None:
    root = str(workspace)

    def seen(with_variable: bool) -> AttemptEvidence:
        variables = {"today": "2026-12-01"}
        if with_variable:
            variables["workspace"] = root
        return evidence([call("read", path=f"{root}/brief.md")], variables=variables)

    # Kept in the report (a run of this version) or, for an older report, bless's own.
    for runs, settings in (
        ([_run(seen(True)), _run(seen(True))], Settings()),
        ([_run(seen(False)), _run(seen(False))], Settings(workspace=root)),
    ):
        whole = _whole(runs, settings)
        called_with = next(i.mapping for i in whole.items if i.key == "tool_called_with:read")
        assert called_with["args"] == {"path": "{{workspace}}/brief.md"}


def test_a_run_keeps_the_workspace_among_its_variables(
    workspace: Path, write_contract, server: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(
        'version: "1.0"\ntarget: {type: skill, path: skills/news}\n'
        "defaults: {timeout: 5, poll_interval: 0.05}\nscenarios:\n"
        '  - name: writes\n    when: {invoke: "draft [write:out/x.md]"}\n'
        '    then:\n      - {type: artifact_exists, path: "out/x.md"}\n'
    )
    assert main(["bless", str(contract), "--scenario", "writes", "--runs", "2"]) == 0
    capsys.readouterr()
    data = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    runs = data["scenarios"][0]["attempts"]["runs"]
    assert {r["evidence"]["variables"]["workspace"] for r in runs} == {str(workspace)}


# -- 5. the mask of a secret ----------------------------------------------------------------


def test_a_masked_value_is_never_proposed_and_is_listed_as_left_out() -> None:
    secret = f"svc-{MASK}"

    def seen() -> AttemptEvidence:
        return evidence(
            [
                call("http", header=secret, url="https://x.example"),
                call(secret),
                call("write", path=f"out/{MASK}.md"),
            ],
            delegations=[MASK],
            files=[
                FileSeen(path=f"out/{MASK}.md", sections=["Plain"], fields=None),
                FileSeen(path="ok.md", sections=[f"Key {MASK}", "Plain"], fields=[MASK, "title"]),
            ],
            reply=f"The key is {MASK}. All done here.",
        )

    whole = _whole([_run(seen()), _run(seen())])
    assert not [i.mapping for i in whole.items if MASK in json.dumps(i.mapping)]
    assert not [i.mapping for i in whole.unstable if MASK in json.dumps(i.mapping)]
    proposed = [i.mapping for i in whole.items]
    assert {"type": "tool_called_with", "tool": "http", "args": {"url": "https://x.example"}} in (
        proposed
    )
    assert {
        "type": "artifact_contains",
        "path": "ok.md",
        "sections": ["Plain"],
        "fields": ["title"],
    } in proposed
    assert not any(m["type"] == "tool_not_permitted" for m in proposed)
    left = {i.mapping["type"] + ":" + i.comment for i in whole.left_out}
    assert any(k.startswith("tool_was_called:the tool's name holds the mask") for k in left)
    assert any(k.startswith("delegation_occurred:the agent's id holds the mask") for k in left)
    assert any(k.startswith("artifact_exists:the path holds the mask") for k in left)
    assert any(k.startswith("artifact_contains:a heading holds the mask") for k in left)
    assert any(k.startswith("artifact_contains:a field holds the mask") for k in left)
    assert any(k.startswith("tool_not_permitted:a tool's name holds the mask") for k in left)
    assert any("argument 'header' holds the mask" in k for k in left)


# -- 6. the agent's own template syntax ------------------------------------------------------


def test_template_syntax_the_agent_wrote_is_escaped_and_the_write_validates(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)

    def seen() -> AttemptEvidence:
        return evidence(
            [call("template", body="Hi {{name}}!", when="{{ today }} {{x}}")],
            reply="Use {{name}} in the greeting. The template is saved.",
            files=[FileSeen(path="t/{{name}}.md", sections=["{{title}}", "Body"], fields=None)],
        )

    runs = [(Status.PASS, seen()), (Status.PASS, seen())]
    path = _save(workspace / "r.json", result(contract.name, "drafts", _digest(contract), runs))
    assert _bless(contract, "drafts", path, more=("--write",)) == 0
    out = capsys.readouterr().out
    assert "wrote" in out
    loaded = load_contract(contract, workspace, dict(os.environ))
    assert not isinstance(loaded, list), loaded
    then = loaded.contract.scenarios[0].then
    called_with = next(a for a in then if a.type == "tool_called_with")
    patterns = {key: value["matches"] for key, value in called_with.args.items()}
    assert re.fullmatch(patterns["body"], "Hi {{name}}!")
    assert re.fullmatch(patterns["when"], "{{ today }} {{x}}")
    assert not any("{{" in p for p in patterns.values())
    assert not any(a.type == "reply_contains" and "{{" in a.text for a in then)
    assert not any(a.type in ("artifact_exists", "artifact_contains") for a in then)


# -- 7. flags, names and messages ------------------------------------------------------------


@pytest.mark.parametrize("tolerance", ["nan", "inf", "1e308", "-1", "-inf"])
def test_a_non_finite_or_absurd_tolerance_is_a_usage_error(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str], tolerance: str
) -> None:
    contract = write_contract(PLAIN)
    runs = [(Status.PASS, evidence([call("read", path="a.md")])) for _ in range(2)]
    path = _save(workspace / "r.json", result(contract.name, "drafts", _digest(contract), runs))
    assert _bless(contract, "drafts", path, more=(f"--tolerance={tolerance}",)) == 2
    assert "--tolerance" in capsys.readouterr().err


def test_a_scenario_name_with_a_line_break_is_a_contract_error_before_anything_is_proposed(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names are one line in every report (and in the proposal's header): such a contract
    does not load, so nothing is read or proposed."""
    name = "two\nlines\u2028here"
    contract = write_contract(PLAIN.replace("name: drafts", f"name: {json.dumps(name)}"))
    runs = [(Status.PASS, evidence([call("read", path="a.md")])) for _ in range(2)]
    path = _save(workspace / "r.json", result(contract.name, name, _digest(contract), runs))
    assert _bless(contract, name, path) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "scenario 'two\\nlines\\u2028here': scenario name has the character U+000A" in (
        captured.err
    )


def test_an_invalid_json_report_is_named_without_an_empty_location(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)
    (workspace / "bad.json").write_text("{not json", encoding="utf-8")
    assert _bless(contract, "drafts", Path("bad.json")) == 2
    err = capsys.readouterr().err
    assert "--from-report bad.json is not a JSON report" in err
    assert "(: " not in err and "Invalid JSON" in err


def test_nothing_proposed_is_not_called_already_present(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)
    blank = AttemptEvidence(tools_known=False, reply=None, tokens=None, completed=None)
    runs = [(Status.PASS, blank), (Status.PASS, blank)]
    path = _save(workspace / "r.json", result(contract.name, "drafts", _digest(contract), runs))
    assert _bless(contract, "drafts", path, more=("--write",)) == 0
    out = capsys.readouterr().out
    assert "nothing to write: nothing was proposed" in out
    assert "already in" not in out
    assert contract.read_text("utf-8") == PLAIN


def test_arguments_openclaw_cut_or_redacted_are_not_taken_as_seen() -> None:
    """A call whose recorded arguments hold OpenClaw's own cut or redaction markers is kept
    as a call, but its arguments count as unknown: no `tool_called_with` comes from them."""
    from clawspec.bless.observed import _call
    from clawspec.gateway.trajectory.values import ArgsCut, ToolCall

    marker = {"truncated": True, "reason": "trajectory-field-size-limit"}
    cut = ToolCall(
        tool_call_id="c1",
        name="write",
        args={"path": "f.md", "content": marker},
        args_known=True,
        success=True,
        refused=False,
        result_text=None,
        cuts=(ArgsCut(("content",), "trajectory-field-size-limit", "cut at 32,768 characters"),),
    )
    whole = ToolCall("c2", "write", {"path": "f.md"}, True, True, False, None)
    assert _call("main", "r1", cut).args is None
    assert _call("main", "r1", cut).name == "write"
    assert _call("main", "r1", whole).args == {"path": "f.md"}


# -- 7. cuts never leave a secret's start ----------------------------------------------------

TOKEN = "hk-" + "Q7w9Zr2Lx5Vb8Nc1Md4Kf6Gh3Jp0Ts"


def test_a_reply_or_arguments_cut_inside_a_secret_keep_none_of_it(tmp_path: Path) -> None:
    """The attempt's reply and a call's arguments are cut as every output is: masked first, so
    the cut cannot leave all but the last characters of a secret in the report or a proposal."""
    from clawspec import secrets
    from clawspec.bless.observed import MAX_ARGS_BYTES, MAX_REPLY_CHARS, _call, _evidence
    from clawspec.gateway.trajectory.values import ToolCall

    with secrets.scope({"CLAWSPEC_HOOKS_TOKEN": TOKEN}):
        reply = "y" * (MAX_REPLY_CHARS - 10) + TOKEN + " tail" * 30
        seen = _evidence((), None, tmp_path, reply)
        content = "x" * (MAX_ARGS_BYTES - 40) + TOKEN + " end" * 30
        args = _call("main", "r1", ToolCall("c1", "write", {"content": content}, True, True, False,
                                            None)).args  # fmt: skip
    assert seen.reply is not None and len(seen.reply) <= MAX_REPLY_CHARS
    assert isinstance(args, str) and len(args.encode()) <= MAX_ARGS_BYTES
    for kept in (seen.reply, args):
        assert TOKEN[:8] not in kept and kept.endswith("…")


def test_the_end_of_a_reply_kept_cut_is_never_proposed_as_a_sentence() -> None:
    """A reply longer than ClawSpec keeps ends where it was cut, not where the agent ended a
    sentence: that part is listed apart with why, the whole sentences before it are proposed."""
    from clawspec.bless.observed import MAX_REPLY_CHARS

    reply = "The digest is ready. " + "z" * MAX_REPLY_CHARS
    kept = reply[: MAX_REPLY_CHARS - 1] + "…"
    whole = _whole([_run(evidence([], reply=kept)), _run(evidence([], reply=kept))])
    texts = [i.mapping.get("text") for i in whole.items if i.mapping["type"] == "reply_contains"]
    assert texts == ["The digest is ready."]
    left = [i.comment for i in whole.left_out if i.mapping["type"] == "reply_contains"]
    assert left == [
        f"held in 2 of 2 runs; the sentence is where a reply over {MAX_REPLY_CHARS:,} characters "
        "was cut"
    ]

"""Each attempt of a repeated scenario records into a folder of its own and replays it, and the
report says which recording each attempt used."""

from __future__ import annotations

import json
from pathlib import Path

from clawspec.regression.attempts import combine_attempts
from clawspec.reports.model import ModelTrafficResult
from clawspec.runner.traffic import attempt_folder
from clawspec.status import Status
from tests.bless.factory import call, evidence, result


def test_record_uses_the_attempts_folder_and_replay_falls_back_to_the_one_recording(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cassettes" / "case" / "notes"
    assert attempt_folder(folder, 0, "record") == folder / "attempt-1"
    assert attempt_folder(folder, 2, "record") == folder / "attempt-3"
    # Replay without per-attempt recordings: every attempt replays the scenario's one recording.
    folder.mkdir(parents=True)
    (folder / "1.json").write_text("{}", "utf-8")
    assert attempt_folder(folder, 1, "replay") == folder
    # With them: attempt 2 replays attempt 2's.
    (folder / "attempt-2").mkdir()
    (folder / "attempt-2" / "1.json").write_text(json.dumps({}), "utf-8")
    assert attempt_folder(folder, 1, "replay") == folder / "attempt-2"
    assert attempt_folder(folder, 0, "replay") == folder  # attempt 1 was never recorded alone


def test_each_attempt_run_names_its_recording_and_keeps_its_evidence() -> None:
    attempts = []
    for n in (1, 2):
        single = result("case.yaml", "notes", "d" * 64, [(Status.PASS, None)])
        traffic = ModelTrafficResult(
            mode="replay", cassette=f"cassettes/notes/attempt-{n}", calls=2
        )
        attempts.append(single.model_copy(update={"model_traffic": traffic, "attempts": None}))
    seen = [evidence([call("read", path="a.md")], tokens=10 * n) for n in (1, 2)]
    combined = combine_attempts(attempts, 1.0, seen)
    assert combined.attempts is not None
    runs = combined.attempts.runs
    assert [r.recording for r in runs] == ["cassettes/notes/attempt-1", "cassettes/notes/attempt-2"]
    assert [r.evidence.tokens if r.evidence else None for r in runs] == [10, 20]
    # Without evidence given (an older caller), attempts keep none.
    assert all(r.evidence is None for r in combine_attempts(attempts, 1.0).attempts.runs)

"""`clawspec --help` and validation stay light: heavy SDKs load only where used (SPEC §8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ["anthropic", "boto3", "botocore", "rouge_score", "nltk"]


def _modules_after(code: str, cwd: Path | None = None) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=cwd
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_help_does_not_import_heavy_sdks() -> None:
    loaded = _modules_after(
        "from clawspec.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert "clawspec.cli" in loaded
    assert not [name for name in HEAVY if name in loaded]


def test_validate_does_not_import_heavy_sdks(tmp_path: Path) -> None:
    (tmp_path / "a.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        "  - name: x\n    when: {invoke: go}\n    then:\n"
        "      - {type: artifact_matches_golden, path: a.md, golden: b.md}\n"
        "      - {type: llm_judge, path: a.md, rubric: r}\n",
        encoding="utf-8",
    )
    loaded = _modules_after(
        "from clawspec.cli import main\nassert main(['validate', '.']) == 0", cwd=tmp_path
    )
    assert "clawspec.contracts.loader" in loaded
    assert not [name for name in HEAVY if name in loaded]

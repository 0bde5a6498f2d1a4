"""A contract linked into a workspace from elsewhere runs with that workspace's config: the
config is found walking up from the path as the user gave it, not from where the link points
(which may hold another config, or none)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

CONTRACT = """version: "1.0"
target: {type: skill, path: skills/a}
scenarios:
  - name: s
    when: {invoke: go}
    then: [{type: artifact_exists, path: out/a.md}]
"""


def test_a_linked_contract_runs_with_the_config_of_the_folder_it_is_linked_into(
    tmp_path: Path,
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    (elsewhere / "clawspec.yaml").write_text("report_dir: shared-reports\n", "utf-8")
    (elsewhere / "y.clawspec.yaml").write_text(CONTRACT, "utf-8")
    work = tmp_path / "ws"
    (work / "tests").mkdir(parents=True)
    (work / "clawspec.yaml").write_text(
        f"report_dir: ws-reports\ngateway_base_url: http://127.0.0.1:{port}\n", "utf-8"
    )
    (work / "tests" / "link.clawspec.yaml").symlink_to(elsewhere / "y.clawspec.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWSPEC_")}
    env["CLAWSPEC_HOOKS_TOKEN"] = "linked-contract-token-0123"
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "run", "tests/link.clawspec.yaml"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    # The workspace's gateway (nothing answers there: exit 3) and its report folder.
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"nothing answers at http://127.0.0.1:{port}" in done.stderr
    assert (work / "ws-reports" / "clawspec-report.json").is_file()
    assert not (elsewhere / "shared-reports").exists()

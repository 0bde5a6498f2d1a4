"""Hostile contracts get a contract error (exit 2, `file:line:column`) within seconds.

Contracts come from anyone who can open a pull request. Each case runs the real `clawspec`
command in its own process, under a 1 GiB address-space limit and a limit of CPU time (which a
busy machine does not stretch, unlike the wall clock): a YAML alias bomb,
nesting 5,000 levels deep (block and flow), and a 5 MB contract, through `validate` and `run`
(which must refuse before asking the gateway anything: its URL here has nothing listening).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

CLAWSPEC = [sys.executable, "-m", "clawspec"]
MEMORY_LIMIT = 1024**3
TIMEOUT_S = 600  # the answer comes in a few seconds; this only ends a hang
CPU_LIMIT_S = 20  # of CPU time: a process that computes longer is killed (SIGXCPU), and fails


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S))


def alias_bomb() -> str:
    """The "billion laughs": nine levels, each a list of nine aliases of the one before."""
    lines = ['version: "1.0"', "a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join([*lines, "target: {type: skill, path: x}", "scenarios: *i", ""])


CASES = {
    "alias_bomb": (alias_bomb(), r"7:4: invalid YAML: aliases \(\*name\) repeat more than 100,000"),
    "deep_block": (
        'version: "1.0"\nscenarios:\n  ' + "- " * 5000 + "x\n",
        r"3:203: invalid YAML: nesting deeper than 100 levels",
    ),
    "deep_flow": (
        'version: "1.0"\nscenarios: ' + "[" * 5000 + "]" * 5000 + "\n",
        r"2:112: invalid YAML: nesting deeper than 100 levels",
    ),
    "deep_mapping": (
        'version: "1.0"\nscenarios: ' + "{a: " * 5000 + "x" + "}" * 5000 + "\n",
        r"2:\d+: invalid YAML: nesting deeper than 100 levels",
    ),
    "control_character": (
        'version: "1.0"\nscenarios:\n  - name: "a\x01b"\n',
        r"3:13: invalid YAML: character U\+0001 is not allowed in a YAML file",
    ),
    "long_name": (
        'version: "1.0"\ntarget: {type: skill, path: x}\nscenarios:\n  - name: s\n'
        "    when: {invoke: go}\n    then:\n      - {type: artifact_exists, path: "
        + "n" * 300
        + "}\n",
        r"7:39: scenario 's', then\[0\] \(artifact_exists\): field 'path': path 'n{79}…' "
        r"cannot name a file: a name in it is 300 bytes long, over the 255 a file name may have",
    ),
    "impossible_date": (
        'version: "1.0"\ndescription: 2026-02-30\nscenarios: []\n',
        r"2:14: invalid YAML: '2026-02-30' reads as a date but is none \(day is out of range",
    ),
    "huge": (
        'version: "1.0"\n' + "# " + "x" * 5 * 1024 * 1024 + "\n",
        r"1:1: contract file is 5,242,\d+ bytes, over the limit of 1,048,576 bytes "
        r"\(limits.contract_max_bytes\)",
    ),
}


def _clawspec(args: list[str], cwd: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWSPEC_")}
    done = subprocess.run(
        [*CLAWSPEC, *args],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        preexec_fn=_limited,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_contract_is_a_contract_error_within_seconds(
    case: str, command: str, tmp_path: Path
) -> None:
    text, expected = CASES[case]
    (tmp_path / "clawspec.yaml").write_text("report_dir: reports\n")
    (tmp_path / f"{case}.yaml").write_text(text)
    args = [command, f"{case}.yaml"]
    if command == "run":
        args += ["--gateway-base-url", "http://127.0.0.1:9"]
    code, output = _clawspec(args, tmp_path)
    assert code == 2, output  # not killed at the CPU limit (-SIGXCPU)
    assert re.search(rf"error: {case}\.yaml:{expected}", output), output
    assert "Traceback" not in output and "internal error" not in output


def test_a_control_character_in_the_config_file_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "clawspec.yaml").write_text('report_dir: "r\x7f"\n')
    code, output = _clawspec(["validate", "."], tmp_path)
    assert code == 2, output
    assert "clawspec.yaml:1:15: invalid YAML: character U+007F is not allowed" in output, output
    assert "Traceback" not in output and "internal error" not in output


def test_one_hostile_file_among_many_is_reported_with_every_other_problem(
    tmp_path: Path,
) -> None:
    """A suite large enough to be parsed ahead in a forked process (over 64 KB)."""
    (tmp_path / "clawspec.yaml").write_text("report_dir: reports\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    scenario = "  - name: s{i}\n    when: {{invoke: /go}}\n"
    scenario += "    then: [{{type: artifact_exists, path: o.md}}]\n"
    body = 'version: "1.0"\ntarget: {type: skill, path: x}\nscenarios:\n'
    for n in range(8):
        text = body + "".join(scenario.format(i=i) for i in range(200))
        (suite / f"c{n}.clawspec.yaml").write_text(text)
    (suite / "c3.clawspec.yaml").write_text(alias_bomb())
    (suite / "c6.clawspec.yaml").write_text(CASES["deep_flow"][0])
    code, output = _clawspec(["validate", "suite"], tmp_path)
    assert code == 2, output  # not killed at the CPU limit (-SIGXCPU)
    assert re.search(r"suite/c3\.clawspec\.yaml:7:4: invalid YAML: aliases", output), output
    assert re.search(r"suite/c6\.clawspec\.yaml:2:112: invalid YAML: nesting", output), output
    assert "2 problem(s) found" in output


def test_a_path_too_long_after_rendering_is_that_assertions_error(tmp_path: Path) -> None:
    """Known only once templates are rendered: the assertion's verdict, not a crash."""
    from clawspec.inputs.paths import ContractPathError, resolve_in_workspace

    with pytest.raises(ContractPathError, match=r"cannot name a file: a name in it is 300 bytes"):
        resolve_in_workspace("out/" + "n" * 300, tmp_path)
    with pytest.raises(ContractPathError, match=r"it is [\d,]+ bytes long, over the 4,095"):
        resolve_in_workspace("/".join(["d" * 200] * 25), tmp_path)
    assert resolve_in_workspace("out/" + "n" * 255, tmp_path) == tmp_path.resolve() / "out" / (
        "n" * 255
    )

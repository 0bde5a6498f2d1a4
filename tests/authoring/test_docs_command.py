"""`clawspec docs [TOPIC]`: the documentation the package carries, through the real CLI, and in
a wheel built from the source and installed into a fresh virtual environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clawspec.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
WHEELHOUSE = ROOT / ".cache" / "wheelhouse"


def _section(page: str, heading: str, folder: Path = DOCS) -> str:
    """The lines of `heading` up to the next heading of its level or above (outside fenced
    code), as written."""
    lines = (folder / f"{page}.md").read_text("utf-8").splitlines()
    start = lines.index(heading)
    depth = len(heading) - len(heading.lstrip("#"))
    fenced = False
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.startswith("```"):
            fenced = not fenced
        hashes = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < hashes <= depth and line[hashes : hashes + 1] == " ":
            break
    else:
        end = len(lines)
    return "\n".join(lines[start:end]).rstrip() + "\n"


def test_a_section_a_page_and_the_guide_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "scenario-outlines"]) == 0
    assert capsys.readouterr().out == _section("guide", "### Scenario outlines")
    assert main(["docs", "ci#check-run"]) == 0
    assert capsys.readouterr().out == _section("ci", "#### Check run")
    assert main(["docs", "gateway"]) == 0
    assert capsys.readouterr().out == (DOCS / "gateway.md").read_text("utf-8")
    assert main(["docs"]) == 0
    assert capsys.readouterr().out == (DOCS / "guide.md").read_text("utf-8")
    assert main(["docs", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[listed.index("guide") + 1 :].index("    scenario-outlines") >= 0


def test_an_unknown_topic_is_a_usage_error_naming_the_closest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["docs", "scenario-outline"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: no page or section 'scenario-outline' (pages: ci, gateway, ")
    assert "did you mean scenario-outlines" in err


def test_the_hint_init_prints_names_a_section_that_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "skills" / "notes").mkdir(parents=True)  # a skill: its contract is written
    (tmp_path / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Takes notes.\n---\n# Notes\n", "utf-8"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, section in (
        (tmp_path, "## Getting started in an existing workspace\n"),
        (empty, "## Contracts\n"),  # nothing to validate yet: how to write a contract
    ):
        assert main(["init", str(folder)]) == 0
        hint = next(line for line in capsys.readouterr().out.splitlines() if "next:" in line)
        command = hint[hint.index("clawspec docs") :].rstrip(")").split()
        assert main(command[1:]) == 0
        assert capsys.readouterr().out.startswith(section)


@pytest.mark.slow
def test_an_installed_wheel_carries_the_docs_and_prints_them(tmp_path: Path) -> None:
    """Built from a copy of the source (the `clawspec/docs` link to docs/ included) without
    the network, installed into a fresh virtual environment, run from elsewhere."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(DOCS, source / "docs")
    shutil.copytree(
        ROOT / "clawspec",
        source / "clawspec",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    assert (source / "clawspec" / "docs").is_symlink()
    # The docs as built (others may edit the repository's meanwhile).
    built = {p.name: p.read_text("utf-8") for p in (source / "docs").glob("*.md")}
    check_run = _section("ci", "#### Check run", source / "docs")
    offline = [
        "--no-index",
        "--find-links",
        str(WHEELHOUSE),
        "--quiet",
        "--disable-pip-version-check",
    ]
    env = {**os.environ, "PIP_NO_CACHE_DIR": "1"}
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", *offline, "-w", wheels, source], check=True, env=env
    )
    (wheel,) = wheels.glob("clawspec-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", *offline, wheel], check=True, env=env
    )
    shutil.rmtree(source)  # nothing may come from the source any more
    installed = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import clawspec, pathlib; print(pathlib.Path(clawspec.__file__).parent)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    shipped = Path(installed) / "docs"
    assert not shipped.is_symlink()
    assert {p.name: p.read_text("utf-8") for p in shipped.glob("*.md")} == built
    done = subprocess.run(
        [venv / "bin" / "clawspec", "docs", "ci#check-run"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == check_run

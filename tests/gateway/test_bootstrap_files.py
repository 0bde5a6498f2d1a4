"""Bring-up takes OpenClaw's bootstrap files back out of the user's repository, and only those."""

from __future__ import annotations

from pathlib import Path

from clawspec.gateway.bootstrap_files import BootstrapGuard


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_what_the_run_added_goes_and_what_was_there_or_the_agents_wrote_stays(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / "skills" / "hello").mkdir(parents=True)
    (repo / "skills" / "hello" / "SKILL.md").write_text("hello", "utf-8")
    (repo / "SOUL.md").write_text("the user's own persona", "utf-8")
    (repo / "skills" / "AGENTS.md").write_text("the user's own", "utf-8")
    before = _tree(repo)
    guard = BootstrapGuard.before(repo)

    # what OpenClaw does while the gateway runs: the default agent's workspace is the root, the
    # brand agent's a folder it creates (and `git init`s); the agents write their artifacts
    for name in ("AGENTS.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md"):
        (repo / name).write_text("template", "utf-8")
    (repo / "SOUL.md").write_text("the user's own persona", "utf-8")
    brand = repo / "brand"
    (brand / ".git" / "objects").mkdir(parents=True)
    (brand / ".git" / "HEAD").write_text("ref: refs/heads/main\n", "utf-8")
    for name in ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"):
        (brand / name).write_text("template", "utf-8")
    (brand / "memory" / "reviews").mkdir(parents=True)
    (brand / "memory" / "reviews" / "review.md").write_text("the agent's artifact", "utf-8")
    (repo / "main").mkdir()
    (repo / "main" / "AGENTS.md").write_text("template", "utf-8")

    removed = guard.restore()

    assert _tree(repo) == before | {
        "brand",
        "brand/memory",
        "brand/memory/reviews",
        "brand/memory/reviews/review.md",
    }
    assert (repo / "SOUL.md").read_text("utf-8") == "the user's own persona"
    assert (repo / "skills" / "AGENTS.md").read_text("utf-8") == "the user's own"
    assert "brand/.git" in removed and "AGENTS.md" in removed and "main/AGENTS.md" in removed


def test_a_repository_the_run_left_alone_is_untouched(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("mine", "utf-8")
    (tmp_path / "sub").mkdir()
    guard = BootstrapGuard.before(tmp_path)
    assert guard.restore() == []
    assert _tree(tmp_path) == {"AGENTS.md", "sub"}

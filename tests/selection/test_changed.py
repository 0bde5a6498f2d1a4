"""`--changed-since`: which scenarios each kind of change selects, in a real git repository."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from clawspec import api
from clawspec.ci_context import CIContext
from clawspec.errors import UsageError
from clawspec.reports.model import SelectionInfo
from clawspec.selection.since import ChangeListError, changed_files, resolve_since
from clawspec.selection.steps import changed_plans
from tests.selection.conftest import ALL, BRAND, CASSETTE, NEWS, ROWS, WEATHER, Suite


@dataclass(frozen=True)
class Selected:
    ids: list[str]
    info: SelectionInfo | None
    warnings: list[str]


def select(suite: Suite, ref: str, environ: Mapping[str, str] | None = None) -> Selected:
    """Load the suite and select with `--changed-since ref`, as `clawspec run` does."""
    loaded = api.load([suite.root], flags={"changed_since": ref}, environ=dict(environ or {}))
    warnings: list[str] = []
    context = CIContext.from_environ(environ or {})
    plans, info = changed_plans(
        api.plan(loaded), loaded.settings, loaded.workspace, context, warnings.append
    )
    return Selected([p.id for p in plans], info, warnings)


def _contract(suite: Suite) -> None:
    suite.append(WEATHER, "# a comment\n")
    suite.commit("edit the weather contract")


def _skill(suite: Suite) -> None:
    suite.append("skills/news/SKILL.md", "More rules.\n")  # not committed


def _golden(suite: Suite) -> None:
    suite.append("golden/news.md", "A new paragraph.\n")
    suite.git("add", "golden/news.md")  # staged, not committed


def _word_list(suite: Suite) -> None:
    suite.write("lists/banned.yaml", "words: [storm, hail]\n")


def _soul(suite: Suite) -> None:
    suite.append("souls/brand.md", "Be kind.\n")


def _data_file(suite: Suite) -> None:
    suite.write("checks/rows.csv", "id,city\nparis,Paris\nrome,Roma\n")


def _cassette(suite: Suite) -> None:
    suite.write(CASSETTE, '{"changed": true}\n')


def _templated(suite: Suite) -> None:
    suite.write("memory/2026-11-20.md", "notes\n")  # untracked; matches memory/{{today}}.md


def _new_skill_file(suite: Suite) -> None:
    suite.write("skills/weather/references/units.md", "metric\n")  # untracked


def _rename(suite: Suite) -> None:
    # Both sides count: the golden file (draft) moves to where `today` looks.
    (suite.root / "memory").mkdir()
    suite.git("mv", "golden/news.md", "memory/2026-11-20.md")
    suite.commit("move the golden file")


def _deletion(suite: Suite) -> None:
    (suite.root / "souls/brand.md").unlink()


def _unrelated(suite: Suite) -> None:
    suite.append("README.md", "More.\n")
    suite.write("docs/notes.md", "notes\n")


CASES: dict[str, tuple[Callable[[Suite], None], list[str]]] = {
    "contract": (_contract, [f"{WEATHER}::forecast", f"{WEATHER}::today"]),
    "SKILL.md": (_skill, [f"{NEWS}::draft", f"{NEWS}::plain"]),
    "golden file": (_golden, [f"{NEWS}::draft"]),
    "word list": (_word_list, [f"{WEATHER}::forecast"]),
    "SOUL file": (_soul, [f"{BRAND}::voice"]),
    "outline data file": (_data_file, [f"{ROWS}::cities[paris]", f"{ROWS}::cities[rome]"]),
    "cassette": (_cassette, [f"{WEATHER}::forecast"]),
    "templated path": (_templated, [f"{WEATHER}::today"]),
    "new file in a skill": (_new_skill_file, [f"{WEATHER}::forecast", f"{WEATHER}::today"]),
    "rename": (_rename, [f"{NEWS}::draft", f"{WEATHER}::today"]),
    "deletion": (_deletion, [f"{BRAND}::voice"]),
    "unrelated": (_unrelated, []),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_each_kind_of_change_selects_exactly_the_scenarios_it_touches(
    suite: Suite, case: str
) -> None:
    change, expected = CASES[case]
    change(suite)
    selected = select(suite, suite.base)
    assert sorted(selected.ids) == sorted(expected)
    info = selected.info
    assert info is not None
    assert (info.commit, info.changed_since) == (suite.base, suite.base)
    assert (info.selected, info.total) == (len(expected), len(ALL))
    assert sorted(info.left_out) == sorted(set(ALL) - set(expected))
    assert info.run_all == []
    assert selected.warnings == []


def test_the_selection_says_how_many_ran_and_since_which_commit(suite: Suite) -> None:
    _golden(suite)
    info = select(suite, suite.base).info
    assert info is not None
    assert (
        info.describe() == f"ran 1 of 7 scenarios: 6 unaffected by changes since {suite.base[:7]}"
    )


def test_nothing_touched_selects_nothing_and_says_why(suite: Suite) -> None:
    _unrelated(suite)
    selected = select(suite, "HEAD")
    assert selected.ids == []
    assert selected.info is not None
    assert selected.info.describe() == (
        f"ran 0 of 7 scenarios: none is affected by the 2 files changed since {suite.base[:7]}"
    )


@pytest.mark.parametrize(
    "name", ["clawspec.yaml", "examples/clawspec.yaml", "tools/provider-scripts.json"]
)
def test_a_change_to_a_run_all_on_file_runs_everything(suite: Suite, name: str) -> None:
    path = suite.root / name
    suite.write(name, (path.read_text() if path.exists() else "") + "# changed\n")
    selected = select(suite, suite.base)
    assert selected.ids == ALL
    assert selected.info is not None
    assert selected.info.run_all == [name]
    assert selected.info.left_out == []
    assert selected.info.describe() == (
        f"ran all 7 scenarios: {name} changed since {suite.base[:7]} (changed.run_all_on)"
    )


def test_run_all_on_widens_to_any_glob_and_the_openclaw_config_always_counts(
    suite: Suite,
) -> None:
    suite.write(
        "clawspec.yaml",
        "report_dir: reports\ngateway: {config: gateway/openclaw.json}\n"
        "changed: {run_all_on: ['shared/**']}\n",
    )
    suite.write("gateway/openclaw.json", "{}\n")
    suite.commit("settings")
    suite.write("shared/prompts/tone.md", "calm\n")
    assert select(suite, "HEAD").info.run_all == ["shared/prompts/tone.md"]  # type: ignore[union-attr]
    (suite.root / "shared/prompts/tone.md").unlink()
    suite.write("gateway/openclaw.json", '{"tools": {}}\n')
    assert select(suite, "HEAD").info.run_all == ["gateway/openclaw.json"]  # type: ignore[union-attr]
    # The list replaces the defaults: a clawspec.yaml elsewhere no longer runs everything.
    suite.git("checkout", "-q", "--", "gateway/openclaw.json")
    suite.write("examples/clawspec.yaml", "x: 1\n")
    assert select(suite, "HEAD").ids == []


def test_a_branch_counts_from_its_merge_base_not_from_the_branch_tip(suite: Suite) -> None:
    suite.git("checkout", "-q", "-b", "feature")
    _contract(suite)  # the feature's change
    suite.git("checkout", "-q", "main")
    suite.append("skills/news/SKILL.md", "main moved on\n")
    suite.commit("main's own change")
    suite.git("checkout", "-q", "feature")
    assert sorted(select(suite, "main").ids) == [f"{WEATHER}::forecast", f"{WEATHER}::today"]


def test_an_unknown_ref_runs_everything_with_a_warning(suite: Suite) -> None:
    _golden(suite)
    selected = select(suite, "no-such-branch")
    assert selected.ids == ALL
    assert selected.info is None
    assert selected.warnings == [
        "--changed-since: 'no-such-branch' is not in this repository; every scenario runs; "
        "fetch it, or check out the history: `fetch-depth: 0` for actions/checkout, "
        "`GIT_DEPTH: 0` on GitLab"
    ]


def test_outside_a_git_checkout_everything_runs_with_a_warning(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    root = Path(str(tmp_path)) / "plain"
    root.mkdir()
    (root / "clawspec.yaml").write_text("report_dir: reports\n")
    (root / "a.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        "  - {name: one, when: {invoke: x}, then: [{type: file_absent, path: n}]}\n"
    )
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))
    selected = select(Suite(root, ""), "HEAD")
    assert selected.ids == ["a.clawspec.yaml::one"]
    assert selected.info is None
    assert selected.warnings == [
        f"--changed-since HEAD: {root.resolve()} is not in a git checkout; every scenario runs"
    ]


def test_without_git_installed_everything_runs_with_a_warning_that_says_so(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a checkout, and no git command to read it
    selected = select(suite, "HEAD")
    assert len(selected.ids) > 1 and selected.info is None
    assert selected.warnings == [
        "--changed-since HEAD: git is not installed (not on PATH); every scenario runs"
    ]


def test_git_failing_to_list_the_changes_of_a_resolved_commit_is_a_usage_error(
    suite: Suite,
) -> None:
    from clawspec.history.git import Git

    since = resolve_since("HEAD", CIContext(), Git(suite.root))
    (suite.root / ".git" / "index").write_bytes(b"not an index")
    with pytest.raises(ChangeListError) as raised:
        changed_files(since, Git(suite.root))  # type: ignore[arg-type]
    assert isinstance(raised.value, UsageError)
    assert str(raised.value).startswith("--changed-since: `git diff --name-status` failed in ")
    assert "index" in str(raised.value)

"""A real git repository holding a small suite, made fresh for each test.

main has one commit (`Suite.base`) with:
- skills/news (SKILL.md) and its contract: `draft` (golden file golden/news.md), `plain`;
- skills/weather (SKILL.md) and its contract: `forecast` (a word list lists/banned.yaml; a
  committed cassette), `today` (a templated path memory/{{today}}.md);
- agents/brand's contract: `voice` (SOUL file souls/brand.md, outside the target's folder);
- checks/rows.clawspec.yaml: the outline `cities`, its rows in the data file checks/rows.csv;
- clawspec.yaml, a README.md nothing depends on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.history.factory import git

NEWS = "skills/news/tests/scenarios.yaml"
WEATHER = "skills/weather/tests/scenarios.yaml"
BRAND = "agents/brand/tests/scenarios.yaml"
ROWS = "checks/rows.clawspec.yaml"
CASSETTE = ".clawspec/cassettes/skills/weather/tests/scenarios/forecast/1.json"

FILES = {
    "clawspec.yaml": "report_dir: reports\n",
    ".gitignore": "out/\nreports/\n",  # what a run writes
    "README.md": "# Suite\n",
    "skills/news/SKILL.md": "# News\n",
    "skills/weather/SKILL.md": "# Weather\n",
    "golden/news.md": "# Sunday news\n",
    "lists/banned.yaml": "words: [storm]\n",
    "souls/brand.md": "# Soul\n",
    "checks/rows.csv": "id,city\nparis,Paris\nrome,Rome\n",
    CASSETTE: "{}\n",
    NEWS: """version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: draft
    when: {invoke: "[write:out/draft.md] draft"}
    then:
      - {type: artifact_matches_golden, path: out/draft.md, golden: golden/news.md,
         rouge_threshold: 0.01}
  - name: plain
    when: {invoke: "plain"}
    then:
      - {type: file_absent, path: out/never.md}
""",
    WEATHER: """version: "1.0"
target: {type: skill, path: skills/weather}
scenarios:
  - name: forecast
    when: {invoke: "[write:out/forecast.md] forecast"}
    then:
      - {type: artifact_absent_words, path: out/forecast.md, source: lists/banned.yaml,
         key: words}
  - name: today
    when: {invoke: "today"}
    then:
      - {type: file_absent, path: "memory/{{today}}.md"}
""",
    BRAND: """version: "1.0"
target: {type: agent, path: agents/brand}
scenarios:
  - name: voice
    when: {invoke: "voice"}
    then:
      - {type: file_absent, path: out/never.md}
      - {type: file_present, path: souls/brand.md}
""",
    ROWS: """version: "1.0"
target: {type: skill, path: skills/atlas}
scenarios:
  - name: cities
    examples: {file: rows.csv}
    when: {invoke: "weather in {{vars.city}}"}
    then:
      - {type: file_absent, path: "out/{{vars.city}}.md"}
""",
}

ALL = [  # in contract order
    f"{BRAND}::voice",
    f"{ROWS}::cities[paris]",
    f"{ROWS}::cities[rome]",
    f"{NEWS}::draft",
    f"{NEWS}::plain",
    f"{WEATHER}::forecast",
    f"{WEATHER}::today",
]


@dataclass(frozen=True)
class Suite:
    root: Path
    base: str  # the first commit

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def append(self, name: str, text: str) -> None:
        path = self.root / name
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def commit(self, message: str, paths: Sequence[str] = ("-A",)) -> str:
        self.git("add", *paths)
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


def make_suite(root: Path) -> Suite:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    suite = Suite(root, "")
    for name, text in FILES.items():
        suite.write(name, text)
    return Suite(root, suite.commit("the suite"))


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Suite:
    made = make_suite(tmp_path / "repo")
    monkeypatch.chdir(made.root)
    return made

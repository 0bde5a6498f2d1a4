"""Python's cyclic garbage collector while a suite loads (clawspec/speed/collector.py): no
collection while contracts load, and what they hold in the oldest generation afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clawspec import api

SCENARIO = """  - name: s{i}
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then:
      - {{type: artifact_exists, path: out/s{i}.md}}
      - {{type: artifact_contains, path: out/s{i}.md, sections: [hook, cta], fields: [title]}}
"""


def _suite(workspace: Path, scenarios: int) -> None:
    body = "".join(SCENARIO.format(i=i) for i in range(scenarios))
    (workspace / "suite.clawspec.yaml").write_text(
        f'version: "1.0"\ntarget: {{type: skill, path: skills/s}}\nscenarios:\n{body}', "utf-8"
    )


@contextmanager
def _collections() -> Iterator[list[int]]:
    """The generation of every collection the collector runs meanwhile."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


def test_loading_a_large_suite_runs_no_collection_and_ages_what_it_loaded(
    workspace: Path,
) -> None:
    # 1,000 scenarios allocate millions of objects: left on, the collector runs hundreds of
    # times while they load.
    warm_up = workspace / "warm-up"
    warm_up.mkdir()
    _suite(warm_up, 1)
    api.load([warm_up])  # the modules loading imports before it pauses the collector
    _suite(workspace, 1000)
    gc.collect()
    with _collections() as seen:
        loaded = api.load([workspace / "suite.clawspec.yaml"])
    assert len(loaded.contracts[0].contract.scenarios) == 1000
    assert seen == []
    assert gc.isenabled()
    # What loading built is in the oldest generation, so the next young collections skip it.
    scenario = loaded.contracts[0].contract.scenarios[500]
    assert any(item is scenario for item in gc.get_objects(generation=2))

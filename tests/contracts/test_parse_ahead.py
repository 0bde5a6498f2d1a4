"""Parsing contract files ahead, in a forked child (contracts/parse_ahead.py).

What forks runs in a fresh interpreter (a subprocess): forking is only safe before any thread
starts, and the test process has threads of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from clawspec.contracts import parse_ahead
from clawspec.contracts.parse_ahead import MIN_BYTES

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = """  - name: s{i}
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then:
      - {{type: artifact_exists, path: out/s{i}.md}}
      - {{type: artifact_contains, path: out/s{i}.md, sections: [hook, cta], fields: [title]}}
      - {{type: tool_was_called, tool: write}}
"""
HEAD = 'version: "1.0"\ntarget: {type: skill, path: skills/s}\nscenarios:\n'


def _suite(root: Path, files: int = 4, scenarios: int = 120) -> list[Path]:
    """`files` valid contracts, together larger than MIN_BYTES."""
    paths = []
    for f in range(files):
        path = root / f"c{f}.clawspec.yaml"
        body = "".join(SCENARIO.format(i=f * scenarios + i) for i in range(scenarios))
        path.write_text(HEAD + body, encoding="utf-8")
        paths.append(path)
    assert sum(p.stat().st_size for p in paths) >= MIN_BYTES
    return paths


def _python(code: str, cwd: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


COMPARE = """
import json, os, sys
from pathlib import Path
from clawspec.contracts import parse_ahead as P
from clawspec.contracts import reading as R
from clawspec.contracts.discovery import display_path
files = [Path(p) for p in sys.argv[1:]] if len(sys.argv) > 1 else sorted(Path(".").iterdir())
{setup}
with P.parsing_ahead(files) as ahead:
    forked = ahead is not None
    {meanwhile}
    taken = list(ahead.results()) if ahead else []
indexes = [index for index, _ in taken]
here = [R.read_contract(p, display_path(p)) for p in files]
def plain(result):
    if isinstance(result, list):
        return result
    text, doc = result
    return [text, doc.data, sorted(map(list, doc.values.items())), sorted(doc.keys.items())]
same = all(plain(result) == plain(here[index]) for index, result in taken)
print(json.dumps({{"forked": forked, "each_once": sorted(indexes) == list(range(len(files))),
                   "same": same, "by_child": ahead.parsed_by_child if ahead else 0,
                   "here": ahead.parsed_here if ahead else 0,
                   "errors": [[p.text for p in r] for r in here if isinstance(r, list)]}}))
"""
IN_THE_CHILD = (
    "parent = os.getpid()\nreal = R.read_contract\n"
    "def flaky(path, shown, *limits):\n"
    "    if os.getpid() != parent:\n{child}\n"
    "    return real(path, shown, *limits)\n"
    "R.read_contract = flaky"
)


def test_the_child_parses_every_file_as_the_parent_would(tmp_path: Path) -> None:
    _suite(tmp_path)
    (tmp_path / "broken.yaml").write_text(HEAD + "  - name: [unclosed\n", encoding="utf-8")
    (tmp_path / "latin1.yaml").write_bytes(b"version: caf\xe9\n")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    # Taken only once the child is done: every result is the child's.
    seen = _python(COMPARE.format(setup="import time", meanwhile="time.sleep(1.5)"), tmp_path)
    assert seen["forked"] and seen["each_once"]
    assert (seen["by_child"], seen["here"]) == (7, 0)
    assert seen["same"]  # texts, data, kept positions and errors, file by file
    errors = sorted(e for errs in seen["errors"] for e in errs)
    assert len(errors) == 2
    assert errors[0].startswith("broken.yaml:5:1: invalid YAML: expected ',' or ']'")
    assert errors[1] == (
        "latin1.yaml:1:13: not UTF-8 text: byte 0xe9 cannot be read as UTF-8 (save the file as "
        "UTF-8)"
    )


def test_a_slow_child_and_the_parent_meet_in_the_middle(tmp_path: Path) -> None:
    _suite(tmp_path, files=12, scenarios=40)
    setup = "import time\n" + IN_THE_CHILD.format(child="        time.sleep(0.2)")
    # By the time the parent wants results the child has taken its first file at least.
    seen = _python(COMPARE.format(setup=setup, meanwhile="time.sleep(0.3)"), tmp_path)
    assert seen["forked"] and seen["each_once"] and seen["same"]
    # The parent parses from the back while the child's next result is not ready.
    assert seen["by_child"] >= 1 and seen["here"] >= 1
    assert seen["by_child"] + seen["here"] == 12


def test_without_memfd_the_results_go_through_an_unlinked_temporary_file(tmp_path: Path) -> None:
    _suite(tmp_path)
    setup = "import time\ndel os.memfd_create  # as on a kernel or Python without it"
    seen = _python(COMPARE.format(setup=setup, meanwhile="time.sleep(1.5)"), tmp_path)
    assert seen["forked"] and seen["each_once"] and seen["same"]
    assert (seen["by_child"], seen["here"]) == (4, 0)


def test_a_child_that_fails_leaves_the_parsing_to_the_parent(tmp_path: Path) -> None:
    _suite(tmp_path)
    # The child's parser fails at once (as a crash or a kill would): nothing is lost.
    setup = IN_THE_CHILD.format(child="        raise RuntimeError('child fails')")
    seen = _python(COMPARE.format(setup=setup, meanwhile=""), tmp_path)
    assert seen["forked"] and seen["each_once"] and seen["same"]
    assert (seen["by_child"], seen["here"]) == (0, 4)
    code = (
        "import json, os\nfrom clawspec.contracts import parse_ahead as P\n"
        "from clawspec.contracts import reading as R\n"
        "import clawspec.api as A\n" + setup + "\nwith P.allowed_here():\n"
        "    loaded = A.load(['.'])\n"
        "print(json.dumps({'scenarios': sum(len(c.contract.scenarios) for c in loaded.contracts),"
        " 'lines': [c.scenario_line(3) for c in loaded.contracts]}))"
    )
    loaded = _python(code, tmp_path)
    assert loaded == {"scenarios": 480, "lines": [22, 22, 22, 22]}


def test_a_child_that_dies_midway_keeps_what_it_sent(tmp_path: Path) -> None:
    _suite(tmp_path, files=6, scenarios=80)
    # The child dies at its third file, after the parent has waited for it: the first two are
    # its results, the parent parses the other four.
    setup = "import time\n" + IN_THE_CHILD.format(
        child="        flaky.calls = getattr(flaky, 'calls', 0) + 1\n"
        "        if flaky.calls == 3:\n            os._exit(3)"
    )
    seen = _python(COMPARE.format(setup=setup, meanwhile="time.sleep(1.5)"), tmp_path)
    assert seen["forked"] and seen["each_once"] and seen["same"]
    assert (seen["by_child"], seen["here"]) == (2, 4)


def test_an_abandoned_child_is_stopped_and_reaped(tmp_path: Path) -> None:
    _suite(tmp_path)
    code = (
        "import json, os\nfrom pathlib import Path\n"
        "from clawspec.contracts import parse_ahead as P\n"
        "files = sorted(Path('.').iterdir())\npid = None\n"
        "try:\n"
        "    with P.parsing_ahead(files) as ahead:\n"
        "        pid = ahead._pid\n        raise KeyError('the load failed')\n"
        "except KeyError:\n    pass\n"
        "try:\n    os.waitpid(pid, os.WNOHANG)\n    reaped = False\n"
        "except ChildProcessError:\n    reaped = True\n"
        "print(json.dumps({'pid': pid, 'reaped': reaped}))"
    )
    seen = _python(code, tmp_path)
    assert seen["pid"] and seen["reaped"]


def test_small_suites_and_threaded_processes_are_parsed_in_place(tmp_path: Path) -> None:
    small = tmp_path / "small.clawspec.yaml"
    small.write_text(HEAD + SCENARIO.format(i=0), encoding="utf-8")
    assert not parse_ahead._worth_forking([small])
    big = _suite(tmp_path)
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:  # a running thread may hold a lock the child would need: no fork
        assert not parse_ahead._worth_forking(big)
        with parse_ahead.parsing_ahead(big) as ahead:
            assert ahead is None
    finally:
        release.set()
        thread.join()


def test_the_cli_parses_a_large_suite_ahead_and_reports_errors_in_place(tmp_path: Path) -> None:
    paths = _suite(tmp_path)
    bad = paths[2].read_text(encoding="utf-8").replace("tool: write}", "tool: write, x: 1}", 1)
    paths[2].write_text(bad, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "clawspec", "--debug", "validate", "."],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert "parsing 4 contract file(s) ahead in process" in out.stderr
    where = "error: c2.clawspec.yaml:9:46: scenario 's240', then[2] (tool_was_called): "
    assert where in out.stderr
    assert "unknown field 'x'" in out.stderr

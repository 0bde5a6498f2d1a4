"""What bless proposes from attempts built in code: only what held in every good run."""

from __future__ import annotations

from clawspec.bless.invariants import Observed, Settings, propose
from clawspec.reports.model import FileSeen
from clawspec.status import Status
from tests.bless.factory import call, evidence


def _mappings(items):
    return [i.mapping for i in items]


def _run(seen, status=Status.PASS, label="attempt"):
    return Observed(label, status, 1200, seen)


def test_tools_in_another_order_are_invariant_and_a_sometimes_tool_is_listed_apart():
    runs = [
        _run(evidence([call("read", path="a.md"), call("write", path="out.md")])),
        _run(evidence([call("write", path="out.md"), call("read", path="a.md")])),
        _run(
            evidence(
                [
                    call("read", path="a.md"),
                    call("exec", command="ls"),
                    call("write", path="out.md"),
                ]
            )
        ),
    ]
    [whole] = propose(runs, Settings())
    proposed = _mappings(whole.items)
    assert {"type": "tool_was_called", "tool": "read"} in proposed
    assert {"type": "tool_was_called", "tool": "write"} in proposed
    assert {"type": "tool_was_called", "tool": "exec"} not in proposed
    unstable = {i.mapping.get("tool"): i.comment for i in whole.unstable}
    assert unstable["exec"].startswith("held in 1 of 3 runs")
    allowed = next(m for m in proposed if m["type"] == "tool_not_permitted")
    assert allowed["allowed_tools"] == ["exec", "read", "write"]
    comment = next(i.comment for i in whole.items if i.key == "tool_not_permitted")
    assert "union of the tools seen in 3 runs" in comment


def test_a_date_in_a_path_becomes_the_variable_and_a_varying_argument_is_not_proposed():
    runs = []
    for day, words in (("2026-11-27", "one"), ("2026-11-28", "two")):
        runs.append(
            _run(
                evidence(
                    [call("write", path=f"notes/{day}.md", content=f"# Notes\n{words}", mode="w")],
                    files=[FileSeen(path=f"notes/{day}.md", sections=["Notes", day], fields=None)],
                    variables={"today": day, "run_id": f"{day[-2:]}aa11bb22cc33dd"},
                )
            )
        )
    [whole] = propose(runs, Settings())
    proposed = _mappings(whole.items)
    called_with = next(m for m in proposed if m["type"] == "tool_called_with")
    assert called_with["args"] == {"path": "notes/{{today}}.md", "mode": "w"}
    assert {"type": "artifact_exists", "path": "notes/{{today}}.md"} in proposed
    contains = next(m for m in proposed if m["type"] == "artifact_contains")
    # The heading equal to {{today}} is written as the variable, never as a literal date.
    assert contains["sections"] == ["Notes", "{{today}}"]
    assert any("'content' varied" in i.comment for i in whole.unstable)


def test_a_date_no_variable_gives_becomes_a_pattern_even_when_every_run_agreed():
    runs = [
        _run(evidence([call("calendar", when="2025-01-01T10:00:00Z")], variables={"today": d}))
        for d in ("2026-11-27", "2026-11-28")
    ]
    [whole] = propose(runs, Settings())
    called_with = next(m for m in _mappings(whole.items) if m["type"] == "tool_called_with")
    pattern = called_with["args"]["when"]["matches"]
    assert pattern.startswith("^") and pattern.endswith("$")
    assert "2025" not in pattern


def test_token_budget_is_the_highest_seen_with_the_tolerance_and_its_comment_names_the_range():
    runs = [_run(evidence([call("read")], tokens=t)) for t in (1840, 2310, 2000)]
    [whole] = propose(runs, Settings(tolerance=0.5))
    budget = next(i for i in whole.items if i.key == "token_budget")
    assert budget.mapping == {"type": "token_budget", "max_total_tokens": 3465}
    assert "tokens 1,840\u20132,310" in budget.comment
    assert budget.comment.startswith("held in 3 of 3 runs")


def test_bad_runs_are_left_out_and_reply_sentences_in_every_reply_are_proposed():
    runs = [
        _run(evidence([call("read")], reply="Saved the draft. It has 3 sections.")),
        _run(evidence([call("read")], reply="saved   the DRAFT.  It has 4 sections.")),
        _run(evidence([call("exec")], reply="Broken."), status=Status.FAIL),
    ]
    [whole] = propose(runs, Settings())
    proposed = _mappings(whole.items)
    assert {"type": "reply_contains", "text": "Saved the draft."} in proposed
    assert not any(m.get("text", "").startswith("It has") for m in proposed)
    assert {"type": "tool_was_called", "tool": "exec"} not in proposed  # the failed run's
    assert next(m for m in proposed if m["type"] == "tool_not_permitted")["allowed_tools"] == [
        "read"
    ]


def test_conversation_turns_get_their_own_proposals():
    def convo(reply2: str):
        turns = [
            evidence([call("memory_search", query="name")], reply="Hi Zed.", tokens=100),
            evidence([], reply=reply2, tokens=120),
        ]
        return evidence([call("memory_search", query="name")], turns=turns, tokens=220)

    [first, second, whole] = propose(
        [_run(convo("Your name is Zed.")), _run(convo("Your name is Zed."))], Settings()
    )
    assert (first.turn, second.turn, whole.turn) == (0, 1, None)
    assert {"type": "tool_was_called", "tool": "memory_search"} in _mappings(first.items)
    assert {"type": "reply_contains", "text": "Your name is Zed."} in _mappings(second.items)
    whole_types = [m["type"] for m in _mappings(whole.items)]
    assert whole_types == ["run_completed", "tool_not_permitted", "token_budget"]


def test_trace_duration_only_with_a_trace_backend():
    runs = [
        Observed(f"a{n}", Status.PASS, ms, evidence([call("read")]))
        for n, ms in ((1, 800), (2, 1200))
    ]
    [without] = propose(runs, Settings())
    assert not any(i.key == "trace_duration" for i in without.items)
    [with_backend] = propose(runs, Settings(tolerance=0.25, trace_backend=True))
    item = next(i for i in with_backend.items if i.key == "trace_duration")
    assert item.mapping == {"type": "trace_duration", "max_ms": 1500}
    assert "800\u20131,200 ms" in item.comment


def test_unknown_tool_evidence_proposes_no_tool_assertions():
    blind = evidence([], tokens=50).model_copy(update={"tools_known": False})
    [whole] = propose([_run(blind), _run(blind)], Settings())
    kinds = {m["type"] for m in _mappings(whole.items)}
    assert "tool_not_permitted" not in kinds and "tool_was_called" not in kinds
    assert {"run_completed", "token_budget", "reply_contains"} <= kinds


def test_a_masked_secret_is_never_proposed():
    runs = [
        _run(
            evidence([call("http", url="https://x", token="***")], reply="Key *** used. Done here.")
        )
        for _ in range(2)
    ]
    [whole] = propose(runs, Settings())
    called_with = next(m for m in _mappings(whole.items) if m["type"] == "tool_called_with")
    assert called_with["args"] == {"url": "https://x"}
    texts = [m.get("text") for m in _mappings(whole.items) if m["type"] == "reply_contains"]
    assert texts == ["Done here."]

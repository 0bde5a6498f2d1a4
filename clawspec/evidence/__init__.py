"""What assertions judge from, gathered once per scenario run and shared by its assertions.

- `store`: the scenario's typed evidence store (what has been looked up, and for whom);
- `log`: the run's gateway log (`RunLog`: waits, scoping, incomplete evidence is an error);
- `trace`, `trace_poll`: the trace backend of the run and the scenario's trace lookup;
- `spans`: what a trace says (tool calls, delegations, usage, cost, pending sub-agents);
- `context`: what an evaluator is given (`EvalContext`, `RunInfo`) and returns (`Verdict`).

Assertions read the gateway's and the traces' data only through these modules.
"""

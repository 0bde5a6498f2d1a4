"""The gateway's log as evidence: where it is, how it is read, what its lines say about a run.

- `location`: which file is the log of a gateway ClawSpec did not start;
- `reader`: reading from an offset in bounded blocks, across rotations, or only a tail;
- `cache`: each line decoded and parsed once per process, however many run indexes read it;
- `facts`: what one line says about runs (run starts, tool calls, hooks, failures, …);
- `model`: what a run index keeps of the lines it read (runs, tool calls, line references);
- `index`: `LogIndex`, the run's slice indexed once, polled until the run's last lines are in,
  and the token usage of its runs from the plugin's records;
- `scope`: which runs, sessions and lines are the scenario's, and what is still pending;
- `legacy`: what older ClawSpec setups' `key=value` lines say about a run;
- `lines`: whole-file line search for un-scoped `log_entry`, shared by every scenario.
"""

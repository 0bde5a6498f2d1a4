"""OpenClaw's run record: the trajectory of each run in the agent's SQLite store, read-only.

OpenClaw (2026.9.5 and 2026.9.6 alike) records every run in its agent's store,
`<state dir>/agents/<agent id>/agent/openclaw-agent.sqlite`, table `trajectory_runtime_events`
(`session_id`, `seq`, `run_id`, `event_json`; primary key `(session_id, seq)`, and a partial index
`(session_id, run_id, seq)`). Each event is JSON of `traceSchema: "openclaw-trajectory"`,
`schemaVersion: 1` with `type`, `runId`, `sessionId`, `sessionKey`, `provider`, `modelId` and
`data`. What a run is made of (checked on both versions, stores kept in
tests/gateway/data/trajectory/):

- `prompt.submitted`: `data.prompt`, the message as the agent got it (a hook's is wrapped in
  OpenClaw's untrusted-content notice);
- `tool.call` `{toolCallId, name, args}` and `tool.result` `{toolCallId, name, success, result}`;
  with Tool Search a `tool_call` or `tool_search_code` wrapper is recorded beside the calls it
  made, whose ids read `tool_search_code:<wrapper id>:<tool>:<n>` (as in the log);
- `model.completed`, once per run however many model calls it made: `assistantTexts`, the summed
  `usage`, `stopReason` and the time-out/abort flags. The reply is the LAST element of
  `assistantTexts`: text the model wrote beside a tool call is commentary, which OpenClaw keeps out
  of `assistantTexts` (it is only in `messagesSnapshot`); checked against the chat response's
  `choices[0].message.content`;
- `trace.artifacts`: `finalStatus` and what the agent sent through messaging tools;
- `session.started` first and `session.ended` last: a run without `session.ended` has not been
  written out completely yet.

One module per job:

- `errors`: what can go wrong reading the record (`TrajectoryError` and its kinds);
- `values`: what is read of it (`Trajectory`, `ToolCall`, `SentMessage`, `Usage`, `ArgsCut`,
  `TextCut`, …);
- `events`: the event format (pydantic models of OpenClaw's events) and its version check;
- `layout`: where the stores are under a gateway's state folder, and which agent a session key
  names;
- `store`: `TrajectoryStore`, one agent's store read while the gateway writes it, its runs built
  from their events;
- `calls`: a run's tool calls from its events, Tool Search's wrappers taken out;
- `cuts`: what OpenClaw cut or redacted in what it recorded, found by its markers;
- `reader`: `TrajectoryReader`, following sub-agents into their own stores, and `wait_for`.
"""

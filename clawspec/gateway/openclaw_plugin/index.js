// ClawSpec's OpenClaw plugin: turns internal diagnostic events into versioned JSON lines
// (format in FORMAT.md) so ClawSpec can sum token usage, list tool executions and link
// sub-agent runs to their parents without an OTLP collector. With `otlpEndpoint` (or env
// CLAWSPEC_OTLP_ENDPOINT) it also exports the same events as OTLP/JSON spans (FORMAT.md).
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { onInternalDiagnosticEvent } from "openclaw/plugin-sdk/diagnostic-runtime";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

const FORMAT_VERSION = 1;
const PLUGIN_ID = "clawspec";
// A tool result's error text kept in a `tool_result` record (the gateway's answer, quoted by
// the assertions); longer texts are cut.
const MAX_ERROR_CHARS = 500;

// Only these events matter for contracts; the rest (gc, heartbeat, rpc...) is noise.
const INTERESTING = [
  "run.started",
  "run.completed",
  "harness.run.started",
  "harness.run.completed",
  "harness.run.error",
  "model.call.started",
  "model.call.completed",
  "model.call.error",
  "model.usage",
  "model.failover",
  "tool.execution.started",
  "tool.execution.completed",
  "tool.execution.error",
  "tool.execution.blocked",
  "tool.loop",
  "message.processed",
];

function phaseOf(type) {
  const last = type.slice(type.lastIndexOf(".") + 1);
  return last === "started" ? "started" : last;
}

function tokens(usage) {
  if (!usage || typeof usage !== "object") return {};
  const out = {};
  for (const [src, dst] of [
    ["input", "inputTokens"],
    ["output", "outputTokens"],
    ["total", "totalTokens"],
    ["cacheRead", "cacheReadTokens"],
    ["cacheWrite", "cacheWriteTokens"],
    ["reasoningTokens", "reasoningTokens"],
  ]) {
    if (typeof usage[src] === "number") out[dst] = usage[src];
  }
  if (out.totalTokens === undefined && (out.inputTokens !== undefined || out.outputTokens !== undefined)) {
    out.totalTokens = (out.inputTokens ?? 0) + (out.outputTokens ?? 0);
  }
  return out;
}

function pick(evt, keys) {
  const out = {};
  for (const k of keys) {
    if (evt[k] !== undefined && evt[k] !== null) out[k] = evt[k];
  }
  return out;
}

function agentFromSessionKey(sessionKey) {
  // Session keys look like "agent:<agentId>:..."; events often carry only the key.
  if (typeof sessionKey !== "string") return undefined;
  const m = /^agent:([^:]+):/.exec(sessionKey);
  return m ? m[1] : undefined;
}

export class RecordBuilder {
  constructor() {
    // spanId -> {runId, sessionKey, toolName}: lets a child run find the run that spawned it.
    this.spans = new Map();
    this.spawnCalls = new Map(); // runId -> sessions_spawn toolCallIds not yet matched to a child
  }

  // A child run's span chain is: child run -> child harness -> the parent's harness span.
  // Walk up until a span belongs to another run: that run spawned this one.
  parentRun(runId, parentSpanId) {
    let spanId = parentSpanId;
    for (let hops = 0; spanId && hops < 16; hops++) {
      const span = this.spans.get(spanId);
      if (!span) return undefined;
      if (span.runId && span.runId !== runId) {
        // Best effort: children start in the order their sessions_spawn calls ran.
        const calls = this.spawnCalls.get(span.runId);
        return { ...span, spawnCallId: calls?.shift() };
      }
      spanId = span.parentSpanId;
    }
    return undefined;
  }

  remember(spanId, info) {
    if (!spanId) return;
    this.spans.set(spanId, info);
    if (this.spans.size > 20000) this.spans.delete(this.spans.keys().next().value);
  }

  build(evt) {
    const type = evt.type;
    const trace = evt.trace ?? {};
    const base = {
      v: FORMAT_VERSION,
      kind: "",
      event: type,
      ts: evt.ts,
      seq: evt.seq,
      ...pick(evt, ["runId", "sessionKey", "sessionId", "agentId"]),
      ...pick(trace, ["traceId", "spanId", "parentSpanId"]),
    };
    if (base.agentId === undefined) {
      const agentId = agentFromSessionKey(evt.sessionKey);
      if (agentId) base.agentId = agentId;
    }
    const records = [];
    if (type === "run.started" || type === "run.completed") {
      records.push({
        ...base,
        kind: "run",
        phase: phaseOf(type),
        ...pick(evt, ["provider", "model", "trigger", "channel", "durationMs", "outcome",
          "errorCategory", "blockedBy"]),
      });
      if (type === "run.started") {
        this.remember(trace.spanId, { runId: evt.runId, sessionKey: evt.sessionKey,
          parentSpanId: trace.parentSpanId });
        const parent = this.parentRun(evt.runId, trace.parentSpanId);
        if (parent) {
          records.push({
            ...base,
            kind: "subagent",
            childRunId: evt.runId,
            childSessionKey: evt.sessionKey,
            ...(parent?.runId ? { parentRunId: parent.runId } : {}),
            ...(parent?.sessionKey ? { parentSessionKey: parent.sessionKey } : {}),
            ...(parent?.spawnCallId ? { parentToolCallId: parent.spawnCallId } : {}),
          });
        }
      }
    } else if (type.startsWith("harness.run.")) {
      records.push({
        ...base,
        kind: "harness",
        phase: phaseOf(type),
        ...pick(evt, ["provider", "model", "harnessId", "durationMs", "outcome", "errorCategory"]),
        ...(evt.phase ? { failedPhase: evt.phase } : {}),
      });
      if (type === "harness.run.started") {
        this.remember(trace.spanId, { runId: evt.runId, sessionKey: evt.sessionKey,
          parentSpanId: trace.parentSpanId });
      }
    } else if (type.startsWith("model.call.")) {
      records.push({
        ...base,
        kind: "model_call",
        phase: phaseOf(type),
        ...pick(evt, ["callId", "provider", "model", "api", "durationMs", "timeToFirstByteMs",
          "errorCategory", "failureKind"]),
        ...tokens(evt.usage),
      });
    } else if (type === "model.usage") {
      const usage = tokens(evt.usage);
      if (usage.inputTokens === undefined && typeof evt.usage?.promptTokens === "number") {
        usage.inputTokens = evt.usage.promptTokens;
      }
      records.push({
        ...base,
        kind: "model_usage",
        ...pick(evt, ["provider", "model", "channel", "costUsd", "durationMs"]),
        ...usage,
      });
    } else if (type === "model.failover") {
      records.push({
        ...base,
        kind: "model_failover",
        ...pick(evt, ["fromProvider", "fromModel", "toProvider", "toModel", "reason"]),
      });
    } else if (type.startsWith("tool.execution.")) {
      records.push({
        ...base,
        kind: "tool",
        phase: phaseOf(type),
        ...pick(evt, ["toolName", "toolCallId", "toolSource", "durationMs", "errorCategory",
          "errorCode", "terminalReason", "deniedReason", "reason", "mutatingAction"]),
      });
      if (type === "tool.execution.started" && evt.toolName === "sessions_spawn" && evt.runId) {
        const calls = this.spawnCalls.get(evt.runId) ?? [];
        calls.push(evt.toolCallId);
        this.spawnCalls.set(evt.runId, calls);
      }
    } else if (type === "message.processed") {
      // The only place a failed turn says so: run.completed still reports outcome "completed"
      // when every model call failed.
      records.push({
        ...base,
        kind: "message",
        ...pick(evt, ["channel", "outcome", "durationMs", "error", "reason"]),
      });
    } else if (type === "tool.loop") {
      records.push({ ...base, kind: "tool_loop", ...pick(evt, ["toolName", "level", "action"]) });
    }
    return records;
  }
}

// The `after_tool_call` hook: how the gateway answered a call, whether or not the tool ran.
// A call the gateway refused before running it ("Tool sessions_spawn not found", a
// before_tool_call block, arguments that do not validate) has this record with `isError` and
// no `tool` record: the tool.execution.* events come from the tool's own execution.
export function toolResultRecord(event, ctx) {
  const error = typeof event?.error === "string" ? event.error : undefined;
  const record = {
    v: FORMAT_VERSION,
    kind: "tool_result",
    event: "after_tool_call",
    ts: Date.now(),
    ...pick(ctx ?? {}, ["runId", "sessionKey", "sessionId", "agentId", "toolCallId"]),
    ...pick(event ?? {}, ["runId", "toolName", "toolCallId", "durationMs"]),
    isError: error !== undefined,
  };
  if (error !== undefined) {
    record.error = error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS)}…` : error;
  }
  if (record.agentId === undefined) {
    const agentId = agentFromSessionKey(record.sessionKey);
    if (agentId) record.agentId = agentId;
  }
  return record;
}

// ---- OTLP span export -------------------------------------------------------------------

const SCOPE_VERSION = "1.0.0";
const HOOKS_SUBSYSTEM = "gateway/hooks";

function otlpValue(value) {
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") {
    return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  }
  if (Array.isArray(value)) return { arrayValue: { values: value.map(otlpValue) } };
  return { stringValue: String(value) };
}

function otlpAttributes(attrs) {
  const out = [];
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== "") out.push({ key, value: otlpValue(value) });
  }
  return out;
}

function nanos(ms) {
  return (BigInt(Math.max(0, Math.round(ms))) * 1000000n).toString();
}

function newSpanId() {
  return randomBytes(8).toString("hex");
}

function sessionAttrs(evt) {
  return {
    "openclaw.run_id": evt.runId,
    "openclaw.session_key": evt.sessionKey,
    "openclaw.session_id": evt.sessionId,
    "openclaw.agent_id": evt.agentId ?? agentFromSessionKey(evt.sessionKey),
  };
}

function modelAttrs(evt) {
  return { "gen_ai.request.model": evt.model, "gen_ai.provider.name": evt.provider };
}

// Turns diagnostic events (and the records RecordBuilder made of them) into finished OTLP/JSON
// spans: trace and span ids come from the event's `trace`, so a sub-agent run keeps the
// parent chain OpenClaw gave it (child harness -> the parent's harness span).
export class SpanBuilder {
  constructor() {
    this.open = new Map(); // spanId -> {name, traceId, parentSpanId, startMs, attrs}
    this.seen = new Set(); // span ids already used by a span (model.usage may reuse one)
    this.messageStart = new Map(); // spanId of a message/hook context -> start ms
    this.harnessOf = new Map(); // sessionKey -> its latest harness span id (for model.usage)
  }

  mark(spanId) {
    this.seen.add(spanId);
    if (this.seen.size > 50000) this.seen.delete(this.seen.values().next().value);
  }

  start(name, evt, attrs) {
    const trace = evt.trace ?? {};
    if (!trace.traceId || !trace.spanId) return;
    this.mark(trace.spanId);
    this.open.set(trace.spanId, {
      name, traceId: trace.traceId, parentSpanId: trace.parentSpanId, startMs: evt.ts, attrs,
    });
    if (this.open.size > 20000) this.open.delete(this.open.keys().next().value);
  }

  finish(name, evt, attrs, error) {
    const trace = evt.trace ?? {};
    if (!trace.traceId || !trace.spanId) return [];
    const opened = this.open.get(trace.spanId);
    this.open.delete(trace.spanId);
    this.mark(trace.spanId);
    const startMs = opened?.startMs
      ?? (typeof evt.durationMs === "number" ? evt.ts - evt.durationMs : evt.ts);
    return [this.span({
      name, traceId: trace.traceId, spanId: trace.spanId,
      parentSpanId: opened?.parentSpanId ?? trace.parentSpanId,
      startMs, endMs: evt.ts, attrs: { ...(opened?.attrs ?? {}), ...attrs }, error,
    })];
  }

  span({ name, traceId, spanId, parentSpanId, startMs, endMs, attrs, error }) {
    const out = {
      traceId, spanId, name, kind: 1,
      startTimeUnixNano: nanos(startMs), endTimeUnixNano: nanos(Math.max(endMs, startMs)),
      attributes: otlpAttributes(attrs),
      status: error ? { code: 2, message: String(error) } : { code: 0 },
    };
    if (parentSpanId) out.parentSpanId = parentSpanId;
    if (error) {
      out.events = [{ name: "exception", timeUnixNano: nanos(endMs),
        attributes: otlpAttributes({ "exception.message": String(error) }) }];
    }
    return out;
  }

  // evt: the raw diagnostic event; records: what RecordBuilder made of it.
  build(evt, records = []) {
    const type = evt.type;
    const trace = evt.trace ?? {};
    if (type === "run.started") {
      const sub = records.find((r) => r.kind === "subagent");
      this.start("openclaw.run", evt, {
        ...sessionAttrs(evt), ...modelAttrs(evt), "gen_ai.operation.name": "invoke_agent",
        "openclaw.trigger": evt.trigger,
        ...(sub ? {
          "openclaw.subagent": true,
          "openclaw.parent_run_id": sub.parentRunId,
          "openclaw.parent_session_key": sub.parentSessionKey,
          "openclaw.parent_tool_call_id": sub.parentToolCallId,
        } : {}),
      });
      return [];
    }
    if (type === "run.completed") {
      const failed = evt.outcome && evt.outcome !== "completed";
      return this.finish("openclaw.run", evt, {
        ...sessionAttrs(evt), "openclaw.outcome": evt.outcome,
        "openclaw.error_category": evt.errorCategory,
      }, failed ? (evt.errorCategory || evt.outcome) : undefined);
    }
    if (type === "harness.run.started") {
      if (evt.sessionKey && trace.spanId) {
        this.harnessOf.delete(evt.sessionKey);
        this.harnessOf.set(evt.sessionKey, trace.spanId);
        if (this.harnessOf.size > 5000) this.harnessOf.delete(this.harnessOf.keys().next().value);
      }
      this.start("openclaw.harness.run", evt, {
        ...sessionAttrs(evt), ...modelAttrs(evt), "openclaw.harness_id": evt.harnessId,
      });
      return [];
    }
    if (type === "harness.run.completed" || type === "harness.run.error") {
      const failed = type === "harness.run.error" || (evt.outcome && evt.outcome !== "completed");
      return this.finish("openclaw.harness.run", evt, {
        ...sessionAttrs(evt), "openclaw.outcome": evt.outcome,
        "openclaw.error_category": evt.errorCategory,
      }, failed ? (evt.errorCategory || evt.outcome || "error") : undefined);
    }
    if (type === "model.call.started") {
      this.start("openclaw.model.call", evt, {
        ...sessionAttrs(evt), ...modelAttrs(evt), "gen_ai.operation.name": "chat",
        "openclaw.call_id": evt.callId, "openclaw.api": evt.api,
      });
      return [];
    }
    if (type === "model.call.completed" || type === "model.call.error") {
      const t = tokens(evt.usage);
      const cost = evt.usage?.cost?.total;
      return this.finish("openclaw.model.call", evt, {
        ...sessionAttrs(evt), ...modelAttrs(evt),
        "gen_ai.usage.input_tokens": t.inputTokens,
        "gen_ai.usage.output_tokens": t.outputTokens,
        "gen_ai.usage.total_tokens": t.totalTokens,
        "gen_ai.usage.cache_read_input_tokens": t.cacheReadTokens,
        "openclaw.cost_usd": typeof cost === "number" ? cost : undefined,
        "openclaw.time_to_first_byte_ms": evt.timeToFirstByteMs,
        "openclaw.error_category": evt.errorCategory,
        "openclaw.failure_kind": evt.failureKind,
      }, type === "model.call.error" ? (evt.errorCategory || evt.failureKind || "error") : undefined);
    }
    if (type === "tool.execution.started") {
      this.start("openclaw.tool.execution", evt, {
        ...sessionAttrs(evt), "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": evt.toolName, "gen_ai.tool.call.id": evt.toolCallId,
        "openclaw.tool_source": evt.toolSource,
      });
      return [];
    }
    if (type.startsWith("tool.execution.")) {
      const failed = type === "tool.execution.error" || type === "tool.execution.blocked";
      return this.finish("openclaw.tool.execution", evt, {
        ...sessionAttrs(evt), "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": evt.toolName, "gen_ai.tool.call.id": evt.toolCallId,
        "openclaw.tool.outcome": type.slice("tool.execution.".length),
        "openclaw.error_category": evt.errorCategory,
        "openclaw.denied_reason": evt.deniedReason,
      }, failed
        ? (evt.errorCategory || evt.deniedReason || evt.reason || evt.terminalReason || "error")
        : undefined);
    }
    if (type === "model.usage") {
      // A per-session summary: its tokens are NOT gen_ai.usage.* (they would count twice).
      // It hangs under its session's harness span; a sub-agent's usage event carries its
      // parent's harness span id as its own, so it gets a fresh one.
      if (!trace.traceId || !trace.spanId) return [];
      const reused = this.seen.has(trace.spanId);
      const spanId = reused ? newSpanId() : trace.spanId;
      this.mark(spanId);
      const t = tokens(evt.usage);
      return [this.span({
        name: "openclaw.model.usage", traceId: trace.traceId, spanId,
        parentSpanId: this.harnessOf.get(evt.sessionKey)
          ?? (reused ? trace.spanId : trace.parentSpanId),
        startMs: typeof evt.durationMs === "number" ? evt.ts - evt.durationMs : evt.ts,
        endMs: evt.ts,
        attrs: {
          ...sessionAttrs(evt), ...modelAttrs(evt),
          "openclaw.usage.input_tokens": t.inputTokens ?? evt.usage?.promptTokens,
          "openclaw.usage.output_tokens": t.outputTokens,
          "openclaw.usage.total_tokens": t.totalTokens,
          "openclaw.usage.cost_usd": evt.costUsd,
          "openclaw.channel": evt.channel,
        },
      })];
    }
    if (type === "message.queued") {
      if (trace.spanId) this.messageStart.set(trace.spanId, evt.ts);
      if (this.messageStart.size > 5000) this.messageStart.delete(this.messageStart.keys().next().value);
      return [];
    }
    if (type === "message.processed") {
      if (!trace.traceId || !trace.spanId) return [];
      this.mark(trace.spanId);
      const startMs = this.messageStart.get(trace.spanId)
        ?? (typeof evt.durationMs === "number" ? evt.ts - evt.durationMs : evt.ts);
      return [this.span({
        name: "openclaw.message", traceId: trace.traceId, spanId: trace.spanId,
        parentSpanId: trace.parentSpanId, startMs, endMs: evt.ts,
        attrs: { ...sessionAttrs(evt), "openclaw.channel": evt.channel, "openclaw.outcome": evt.outcome },
        error: evt.outcome === "error" ? (evt.error || evt.reason || "error") : undefined,
      })];
    }
    if (type === "log.record") {
      // The hook's completion line is the one place the logical session key (the one the
      // caller sent) meets the run's cron session key and the hook run id.
      const a = evt.attributes;
      if (!a || a.subsystem !== HOOKS_SUBSYSTEM || !a.runId || !trace.traceId) return [];
      // A hook that failed before its run started (no session key: e.g. "session metadata
      // unavailable" right after start-up) is logged in whatever context was current, often
      // another run's: give it a trace of its own so it never lands in that run's spans.
      const started = Boolean(a.sessionKey);
      const startMs = (started && trace.spanId && this.messageStart.get(trace.spanId)) ?? evt.ts;
      return [this.span({
        name: "openclaw.hook", traceId: started ? trace.traceId : randomBytes(16).toString("hex"),
        spanId: newSpanId(), parentSpanId: started ? trace.spanId : undefined, startMs, endMs: evt.ts,
        attrs: {
          "openclaw.hook_run_id": a.runId,
          "openclaw.logical_session_key": a.logicalSessionKey,
          "session.id": a.logicalSessionKey,
          "openclaw.session_key": a.sessionKey,
          "openclaw.session_id": a.sessionId,
          "openclaw.job_id": a.jobId,
          "openclaw.agent_id": a.agentId,
          "openclaw.hook.name": a.name,
          "openclaw.hook.status": a.status,
          "openclaw.hook.source_path": a.sourcePath,
        },
        error: a.status && a.status !== "ok" ? `hook run ${a.status}` : undefined,
      })];
    }
    return [];
  }
}

function resolveEndpoint(pluginConfig) {
  const fromConfig = pluginConfig && typeof pluginConfig.otlpEndpoint === "string"
    ? pluginConfig.otlpEndpoint : "";
  const url = (fromConfig || process.env.CLAWSPEC_OTLP_ENDPOINT || "").trim().replace(/\/+$/, "");
  if (!url) return "";
  return url.endsWith("/v1/traces") ? url : `${url}/v1/traces`;
}

// Batches spans and POSTs them as OTLP/JSON: never blocks the gateway, never throws.
export class SpanExporter {
  constructor(url, { flushMs = 200, maxBatch = 512, maxBuffer = 20000, timeoutMs = 5000,
    logger = undefined, post = undefined } = {}) {
    this.url = url;
    this.flushMs = flushMs;
    this.maxBatch = maxBatch;
    this.maxBuffer = maxBuffer;
    this.timeoutMs = timeoutMs;
    this.logger = logger;
    this.post = post ?? ((body) => fetch(this.url, {
      method: "POST", headers: { "content-type": "application/json" }, body,
      signal: AbortSignal.timeout(this.timeoutMs),
    }));
    this.buffer = [];
    this.timer = null;
    this.inflight = new Set();
    this.stats = { exported: 0, failed: 0, dropped: 0, requests: 0 };
  }

  add(spans) {
    if (!spans.length) return;
    this.buffer.push(...spans);
    if (this.buffer.length > this.maxBuffer) {
      const extra = this.buffer.length - this.maxBuffer;
      this.buffer.splice(0, extra);
      this.stats.dropped += extra;
    }
    if (this.buffer.length >= this.maxBatch) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => { this.timer = null; this.flush(); }, this.flushMs);
      this.timer.unref?.();
    }
  }

  flush() {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    const sends = [];
    while (this.buffer.length) {
      const spans = this.buffer.splice(0, this.maxBatch);
      const body = JSON.stringify({ resourceSpans: [{
        resource: { attributes: otlpAttributes({ "service.name": "openclaw",
          "telemetry.sdk.name": "clawspec-openclaw-plugin", "process.pid": process.pid }) },
        scopeSpans: [{ scope: { name: PLUGIN_ID, version: SCOPE_VERSION }, spans }],
      }] });
      this.stats.requests += 1;
      const sent = Promise.resolve()
        .then(() => this.post(body))
        .then((resp) => {
          if (resp && resp.ok === false) throw new Error(`HTTP ${resp.status}`);
          this.stats.exported += spans.length;
        })
        .catch((err) => {
          this.stats.failed += spans.length;
          if (this.stats.failed === spans.length || this.stats.failed % 1000 < spans.length) {
            this.logger?.warn?.(`clawspec: span export to ${this.url} failed: ${err}`);
          }
        })
        .finally(() => this.inflight.delete(sent));
      this.inflight.add(sent);
      sends.push(sent);
    }
    return Promise.all(sends);
  }

  async close() {
    await this.flush();
    await Promise.all([...this.inflight]);
  }
}

function resolveOutputPath(pluginConfig) {
  const fromConfig = pluginConfig && typeof pluginConfig.outputPath === "string"
    ? pluginConfig.outputPath : "";
  return fromConfig || process.env.CLAWSPEC_PLUGIN_OUTPUT || "";
}

export default definePluginEntry({
  id: PLUGIN_ID,
  name: "ClawSpec trace recorder",
  description: "Writes diagnostic events as versioned JSON lines for ClawSpec",
  register(api) {
    let unsubscribe = null;
    let exporter = null;
    // The hook writes on its own: OpenClaw may run a plugin's hooks from another registration
    // of it than the one whose service started (seen on 2026.9.6).
    const hookOutput = resolveOutputPath(api.pluginConfig);
    if (hookOutput) {
      api.on?.("after_tool_call", (event, ctx) => {
        try {
          appendFileSync(hookOutput, `${JSON.stringify(toolResultRecord(event, ctx))}\n`);
        } catch (err) {
          api.logger?.warn?.(`clawspec: could not record a tool result: ${err}`);
        }
      });
    }
    api.registerService({
      id: "clawspec-trace-writer",
      start() {
        const outputPath = resolveOutputPath(api.pluginConfig);
        const endpoint = resolveEndpoint(api.pluginConfig);
        if (!outputPath && !endpoint) {
          api.logger?.warn?.("clawspec: no outputPath or otlpEndpoint configured; not recording");
          return;
        }
        const raw = Boolean(api.pluginConfig?.raw) || process.env.CLAWSPEC_PLUGIN_RAW === "1";
        const builder = new RecordBuilder();
        const spans = endpoint ? new SpanBuilder() : null;
        exporter = endpoint ? new SpanExporter(endpoint, { logger: api.logger }) : null;
        const write = outputPath
          ? (record) => {
            // One synchronous O_APPEND write per line keeps lines whole and ordered.
            appendFileSync(outputPath, `${JSON.stringify(record)}\n`);
          }
          : () => {};
        if (outputPath) mkdirSync(dirname(outputPath), { recursive: true });
        write({ v: FORMAT_VERSION, kind: "plugin", event: "plugin.started", ts: Date.now(),
          pid: process.pid });
        const listener = (evt) => {
          try {
            if (raw) write({ v: FORMAT_VERSION, kind: "raw", event: evt.type, ts: evt.ts, data: evt });
            const records = builder.build(evt);
            for (const record of records) write(record);
            if (spans) exporter.add(spans.build(evt, records));
          } catch (err) {
            // Never let tracing break a run.
            api.logger?.warn?.(`clawspec: could not record ${evt?.type}: ${err}`);
          }
        };
        // log.record: only for the hook line that links the logical session key (spans).
        const include = spans ? [...INTERESTING, "message.queued", "log.record"] : INTERESTING;
        unsubscribe = raw
          ? onInternalDiagnosticEvent(listener)
          : onInternalDiagnosticEvent(listener, { include });
        if (outputPath) api.logger?.info?.(`clawspec: recording diagnostic events to ${outputPath}`);
        if (endpoint) api.logger?.info?.(`clawspec: exporting OTLP spans to ${endpoint}`);
      },
      async stop() {
        if (unsubscribe) unsubscribe();
        unsubscribe = null;
        const closing = exporter;
        exporter = null;
        if (closing) {
          await closing.close();
          api.logger?.info?.(`clawspec: span export ${JSON.stringify(closing.stats)}`);
        }
      },
    });
  },
});

// ClawSpec's OpenClaw plugin: turns internal diagnostic events into versioned JSON lines
// (format in FORMAT.md) so ClawSpec can sum token usage, list tool executions and link
// sub-agent runs to their parents without an OTLP collector.
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { onInternalDiagnosticEvent } from "openclaw/plugin-sdk/diagnostic-runtime";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

const FORMAT_VERSION = 1;
const PLUGIN_ID = "clawspec";

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
    api.registerService({
      id: "clawspec-trace-writer",
      start() {
        const outputPath = resolveOutputPath(api.pluginConfig);
        if (!outputPath) {
          api.logger?.warn?.("clawspec: no outputPath configured; not recording");
          return;
        }
        mkdirSync(dirname(outputPath), { recursive: true });
        const raw = Boolean(api.pluginConfig?.raw) || process.env.CLAWSPEC_PLUGIN_RAW === "1";
        const builder = new RecordBuilder();
        const write = (record) => {
          // One synchronous O_APPEND write per line keeps lines whole and ordered.
          appendFileSync(outputPath, `${JSON.stringify(record)}\n`);
        };
        write({ v: FORMAT_VERSION, kind: "plugin", event: "plugin.started", ts: Date.now(),
          pid: process.pid });
        const listener = (evt) => {
          try {
            if (raw) write({ v: FORMAT_VERSION, kind: "raw", event: evt.type, ts: evt.ts, data: evt });
            for (const record of builder.build(evt)) write(record);
          } catch (err) {
            // Never let tracing break a run.
            api.logger?.warn?.(`clawspec: could not record ${evt?.type}: ${err}`);
          }
        };
        unsubscribe = raw
          ? onInternalDiagnosticEvent(listener)
          : onInternalDiagnosticEvent(listener, { include: INTERESTING });
        api.logger?.info?.(`clawspec: recording diagnostic events to ${outputPath}`);
      },
      stop() {
        if (unsubscribe) unsubscribe();
        unsubscribe = null;
      },
    });
  },
});

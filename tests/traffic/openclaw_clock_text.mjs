// Prints what OpenClaw's own prompt formatters make of the instants and zones given on stdin.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dist = process.argv[2];
const wanted = ["formatUserTime", "formatZonedTimestamp", "formatUtcTimestamp",
  "buildTemporalContextText", "formatTimeAgo", "formatRelativeTimestamp", "formatAgentEnvelope"];
const found = {};
for (const prefix of ["date-time-", "format-datetime-", "format-relative-", "envelope-"]) {
  for (const file of readdirSync(dist).filter((f) => f.startsWith(prefix) && f.endsWith(".mjs"))) {
    const mod = await import(pathToFileURL(join(dist, file)).href);
    for (const value of Object.values(mod)) {
      if (typeof value === "function" && wanted.includes(value.name)) found[value.name] = value;
    }
  }
}
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = { missing: wanted.filter((n) => !found[n]), texts: [] };
for (const { ms, tz } of cases) {
  const date = new Date(ms);
  process.env.TZ = tz;
  const row = [];
  for (const hours of ["12", "24"]) row.push(found.formatUserTime(date, tz, hours) + ` (${tz})`);
  for (const seconds of [false, true]) {
    row.push(found.formatZonedTimestamp(date, { timeZone: tz, displaySeconds: seconds, displayWeekday: true }));
    row.push(found.formatZonedTimestamp(date, { timeZone: tz, displaySeconds: seconds }));
    row.push(found.formatUtcTimestamp(date, { displaySeconds: seconds }));
  }
  row.push(found.buildTemporalContextText({ configuredTimezone: tz, sessionStatusAvailable: true }));
  row.push(found.formatAgentEnvelope({ channel: "WebChat", from: "alice", body: "hi", timestamp: ms,
    previousTimestamp: ms - (ms % 7200000), envelope: { timezone: tz } }));
  row.push(found.formatAgentEnvelope({ channel: "WebChat", from: "alice", body: "hi", timestamp: ms,
    previousTimestamp: ms - (ms % 90000), envelope: { timezone: "utc" } }));
  row.push(`updated ${found.formatTimeAgo(ms % 200000000)}, next ${found.formatRelativeTimestamp(Date.now() + (ms % 9000000))}`);
  row.push(`Current time: ${found.formatUserTime(date, tz, "12")} (${tz})\nReference UTC: ${date.toISOString()}`);
  out.texts.push(row);
}
console.log(JSON.stringify(out));

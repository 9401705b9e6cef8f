/**
 * Audit records from the core's rows.
 *
 * The core hands each record over as a row — a JSON array of its values in
 * `AuditRecord::FIELDS` order (`AuditRow`) — and this module builds the
 * object the subscriber gets. Parsing the array and filling an object
 * literal of fixed shape costs V8 less than half of parsing the object, and
 * every governed call with a subscriber delivers two records. The object is
 * the core's `AuditRecord::to_json()`, key for key and in the same order
 * (test/audit-rows.test.js checks it against the core's field list). Which
 * fields exist, and what they say, is the core's; this is value conversion.
 */
import { N } from "./native.js";
import type { AuditRecord } from "./types.js";

/** A row as the core serializes it (`AuditRow`). */
export type AuditRow = unknown[];

/** The record a row stands for. */
export function auditRecordFromRow(a: AuditRow): AuditRecord {
  // A trace state is rare: keep its place in the key order the generic way.
  // So is a failure's class (keys in the core's order).
  if (!ROW_MATCHES_FAST_PATH || a[14] !== null || a[18] !== null) {
    return auditRecordByFields(a, CORE.fields, CORE_OMITTED);
  }
  return fastRecord(a);
}

/** The record built as a literal of fixed shape (no trace state). */
function fastRecord(a: AuditRow): AuditRecord {
  const r: Record<string, unknown> =
    a[2] === null
      ? {
          event: a[0],
          capabilityId: a[1],
          surface: a[3],
          actorId: a[4],
          resumed: a[5],
          policies: a[6],
          approvalId: a[7],
          attempts: a[8],
          startedAt: a[9],
          durationMs: a[10],
          outcome: a[11],
          stage: a[12],
          traceparent: a[13],
          requestId: a[15],
          agentId: a[16],
          sessionId: a[17],
        }
      : {
          event: a[0],
          capabilityId: a[1],
          requested: a[2],
          surface: a[3],
          actorId: a[4],
          resumed: a[5],
          policies: a[6],
          approvalId: a[7],
          attempts: a[8],
          startedAt: a[9],
          durationMs: a[10],
          outcome: a[11],
          stage: a[12],
          traceparent: a[13],
          requestId: a[15],
          agentId: a[16],
          sessionId: a[17],
        };
  const output = a[19];
  if (Array.isArray(output)) r.output = output[0];
  return r as unknown as AuditRecord;
}

/**
 * The record built from the core's own field list: `fields` in row order,
 * those in `omitted` left out when `null`, the output unwrapped. The slow,
 * obviously faithful path, and what the fast one is tested against.
 */
export function auditRecordByFields(a: AuditRow, fields: readonly string[], omitted: ReadonlySet<string>): AuditRecord {
  const r: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) {
    const key = fields[i]!;
    const value = a[i];
    if (value === null && omitted.has(key)) continue;
    r[key] = key === "output" ? (value as unknown[])[0] : value;
  }
  return r as unknown as AuditRecord;
}

/** The core's field list (`AuditRecord::FIELDS`, `OMITTED_WHEN_ABSENT`). */
export const CORE: { readonly fields: readonly string[]; readonly omittedWhenAbsent: readonly string[] } = JSON.parse(
  N.auditRecordFields(),
);
const CORE_OMITTED: ReadonlySet<string> = new Set(CORE.omittedWhenAbsent);
/**
 * Whether the fast path builds what the core's field list says, checked
 * once at load on probe rows (every position a distinct marker, with and
 * without a requested name): same keys, same order, same values. Should a
 * core ever change its fields without this file following, records are
 * still right, only built the slow way (and the drift test fails).
 */
export const ROW_MATCHES_FAST_PATH: boolean = [true, false].every((requested) => {
  const probe: AuditRow = CORE.fields.map((_, i) => `#${i}`);
  if (!requested) probe[2] = null;
  probe[14] = null; // a trace state takes the slow path anyway
  probe[18] = null; // and so does a failure
  probe[19] = ["#19"];
  const fast = JSON.stringify(fastRecord(probe));
  return probe.length === 20 && fast === JSON.stringify(auditRecordByFields(probe, CORE.fields, CORE_OMITTED));
});

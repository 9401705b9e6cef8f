/**
 * Standard Schema (https://standardschema.dev): validation through
 * `~standard.validate`, JSON Schema for descriptors through Standard JSON
 * Schema (`~standard.jsonSchema`, which zod ≥ 4.2 and other validators
 * implement). No validator library is imported here.
 */

export interface StandardIssue {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
}

export type StandardResult = { value: unknown; issues?: undefined } | { issues: ReadonlyArray<StandardIssue> };

export interface StandardSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult | Promise<StandardResult>;
    readonly jsonSchema?: {
      input(options: { target: string }): Record<string, unknown>;
      output(options: { target: string }): Record<string, unknown>;
    };
  };
}

/** The JSON Schema (draft 2020-12) of a schema's input or output side, if it can say. */
export function jsonSchemaOf(
  schema: StandardSchema | undefined,
  side: "input" | "output",
): Record<string, unknown> | undefined {
  const conv = schema?.["~standard"]?.jsonSchema;
  if (!conv) return undefined;
  try {
    return conv[side]({ target: "draft-2020-12" });
  } catch {
    // Some types (transforms, dates) have no JSON Schema: descriptors go without.
    return undefined;
  }
}

/**
 * A validator's issues as the core reads them (`Answer::InputIssues`):
 * `[{path: [segment as text], message}]` as JSON. The core writes the
 * model's message from them; this only converts Standard Schema's path
 * segments (keys, or `{key}` objects) to text. `null` when they are not in
 * Standard Schema's shape (not a list, an issue or path that is not one):
 * malformed issues are a failed validator, as the core reads them
 * (`ffi::answer`), not a failure of the call.
 */
export function issuesJson(issues: ReadonlyArray<StandardIssue>): string | null {
  try {
    return JSON.stringify(
      issues.map((i) => ({
        path: (i.path ?? []).map((p) => (typeof p === "object" && p !== null ? String(p.key) : String(p))),
        message: String(i.message),
      })),
    );
  } catch {
    return null;
  }
}

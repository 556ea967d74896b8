import { z } from "zod";
import type { Operation } from "../shared/operations.js";

/** Keys that cost tokens on every turn but that the server enforces itself (zod validates every call). */
const DROP = new Set(["$schema", "default", "const", "enum", "additionalProperties", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "exclusiveMinimum", "exclusiveMaximum", "pattern", "format", "description", "required"]);

/**
 * The element shapes the spec leaves open (`results`, `layers`, `communities`) are spelled out where
 * they are the answer; other nested values are typed but opaque (their zod schemas still validate).
 */
const SHAPES: Record<string, string[]> = {
  query: ["layers", "communities"],
  wakeup: ["layers"],
  search: ["results"],
};

function strip(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strip);
  if (!schema || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (DROP.has(k)) continue;
    out[k] = k === "properties" ? Object.fromEntries(Object.entries(v as object).map(([pk, pv]) => [pk, strip(pv)])) : strip(v);
  }
  return out;
}

/** Output schema: every top-level field with its type; nested shapes only for the named elements. */
function outputSchema(op: Operation): unknown {
  const full = strip(z.toJSONSchema(op.output)) as { properties: Record<string, Record<string, unknown>> };
  const keep = new Set(SHAPES[op.name] ?? []);
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(full.properties)) {
    if (keep.has(k)) props[k] = v;
    else if (v.type === "array") props[k] = { type: "array" };
    else if (v.type === "object") props[k] = { type: "object" };
    else props[k] = v;
  }
  return { type: "object", properties: props };
}

/** Input schema: names, types, defaults and `required`; the tool's description carries the meaning. */
function inputSchema(op: Operation, projectDefault: boolean): unknown {
  const full = z.toJSONSchema(op.input, { io: "input" }) as { properties: Record<string, unknown>; required?: string[] };
  const required = (full.required ?? []).filter((k) => !(projectDefault && k === "project_path"));
  return { type: "object", properties: (strip(full) as { properties: unknown }).properties, required };
}

/**
 * The `tools/list` entries for the declared operations: terse, because assistants read them every
 * turn. `projectDefault`: the server was started for a project, so `project_path` is optional;
 * `textAnswers`: tools answering with a text alone (no output schema).
 */
export function toolList(ops: readonly Operation[], opts: { projectDefault?: boolean; textAnswers?: ReadonlySet<string> } = {}) {
  return ops.map((op) => ({
    name: op.tool,
    description: op.description,
    inputSchema: inputSchema(op, !!opts.projectDefault) as { type: "object" },
    ...(opts.textAnswers?.has(op.name) ? {} : { outputSchema: outputSchema(op) as { type: "object" } }),
    annotations: op.readOnly ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: false },
  }));
}

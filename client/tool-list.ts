import { z } from "zod";
import type { Operation } from "../shared/operations.js";

/**
 * What a model needs to call a tool right, per parameter: its type, one-line description, values
 * (enum), bounds and default. The rest (length limits, patterns, `additionalProperties`) the server
 * enforces itself, as zod validates every call; sending it would cost tokens on every turn.
 */
const KEEP = new Set(["type", "description", "enum", "default", "minimum", "maximum", "items"]);

/** zod's bounds of a bare integer (±2^53-1): no bound at all, to the model. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function param(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (!KEEP.has(k)) continue;
    if ((k === "minimum" || k === "maximum") && Math.abs(v as number) === UNBOUNDED) continue;
    if (k === "items") {
      const items = param(v as Record<string, unknown>);
      if (Object.keys(items).length > 0) out.items = items;
      continue;
    }
    out[k] = v;
  }
  return out;
}

/** Input schema: each parameter as `param` keeps it, and `required` when anything is. */
function inputSchema(op: Operation, projectDefault: boolean): { type: "object"; properties: Record<string, unknown>; required?: string[] } {
  const full = z.toJSONSchema(op.input, { io: "input" }) as { properties: Record<string, Record<string, unknown>>; required?: string[] };
  const properties = Object.fromEntries(Object.entries(full.properties).map(([k, v]) => [k, param(v)]));
  const required = (full.required ?? []).filter((k) => !(projectDefault && k === "project_path"));
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * The `tools/list` entries for the declared operations: terse, because assistants read them every
 * turn. `projectDefault`: the server was started for a project, so `project_path` is optional. No
 * output schemas: hosts do not show them to the model (it reads the result), and a client
 * validates structured results only against a schema it was given.
 */
export function toolList(ops: readonly Operation[], opts: { projectDefault?: boolean } = {}) {
  return ops.map((op) => ({
    name: op.tool,
    description: op.description,
    inputSchema: inputSchema(op, !!opts.projectDefault),
    annotations: op.readOnly ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: false },
  }));
}

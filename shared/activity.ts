/** Node ids an operation's result involved: what a tool call reinforces and what its event reports. */
export function nodesOf(result: unknown): string[] {
  const out: string[] = [];
  const r = result as Record<string, any> | undefined;
  if (!r || typeof r !== "object") return out;
  for (const c of r.citations ?? []) if (typeof c?.node_id === "string") out.push(c.node_id);
  for (const x of r.results ?? []) if (typeof x?.id === "string") out.push(x.id);
  for (const x of r.symbols ?? []) if (typeof x?.id === "string") out.push(x.id);
  for (const x of r.neighbors ?? []) if (typeof x?.id === "string") out.push(x.id);
  return [...new Set(out)];
}

/** Files an operation's result pointed at. */
export function filesOf(result: unknown): string[] {
  const r = result as Record<string, any> | undefined;
  if (!r || typeof r !== "object") return [];
  const files = [
    ...(r.citations ?? []).map((c: any) => c?.file_path),
    ...(r.results ?? []).map((x: any) => x?.file_path),
    r.file_path,
  ].filter((f): f is string => typeof f === "string");
  return [...new Set(files)];
}

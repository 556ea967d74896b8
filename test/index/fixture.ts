import fs from "node:fs";
import path from "node:path";
import { afterEach } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject } from "../helpers.js";

/** Small real projects for the language tests, each under test/fixtures/trees/<name> with its licence. */
const FIXTURES = path.resolve("test/fixtures/trees");

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function filesOf(dir: string, rel = ""): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, filesOf(dir, r));
    else out[r] = fs.readFileSync(path.join(dir, r));
  }
  return out;
}

/**
 * A copy of the fixture built by a real engine, with lookups into its graph.json (removed after the
 * test); further names are fixtures laid over the first (go-tests over go).
 */
export async function builtFixture(...names: [string, ...string[]]) {
  return builtProject(Object.assign({}, ...names.map((n) => filesOf(path.join(FIXTURES, n)))));
}

/** A project of the given files built by a real engine, with lookups into its graph.json (removed after the test). */
export async function builtProject(files: Record<string, string | Buffer>) {
  const p = makeProject(files);
  const engine = await ProjectEngine.open(p.root, { sideEffects: false });
  cleanups.push(p.cleanup, () => engine.close());
  const result = await engine.build({ project_path: p.root });
  const g = JSON.parse(fs.readFileSync(path.join(p.root, "codegraph-out/graph.json"), "utf8"));
  const node = (id: string) => g.nodes.find((n: any) => n.id === id);
  const edge = (s: string, t: string, type = "calls") => g.edges.some((e: any) => e.source === s && e.target === t && e.type === type);
  return { result, g, node, edge, engine, root: p.root };
}

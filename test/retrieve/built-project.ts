import { afterAll, beforeAll } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject } from "../helpers.js";

/** A temporary project of these files, built once for the test file by a real engine (no daemon), removed after it. */
export function builtProject(files: Record<string, string>): { root: () => string; engine: () => ProjectEngine } {
  let p: ReturnType<typeof makeProject> | undefined;
  let engine: ProjectEngine | undefined;
  beforeAll(async () => {
    p = makeProject(files);
    engine = await ProjectEngine.open(p.root, { sideEffects: false });
    await engine.build({ project_path: p.root });
  });
  afterAll(async () => {
    await engine?.close();
    p?.cleanup();
  });
  return { root: () => p!.root, engine: () => engine! };
}

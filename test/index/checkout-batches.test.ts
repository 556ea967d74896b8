import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject } from "../helpers.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const TYPES_A = "package app\n\n// Server serves.\ntype Server struct{}\n";
const TYPES_B = "package app\n\n// Service serves.\ntype Service struct{}\n";
const HANDLERS_A = "package app\n\n// Start starts the server.\nfunc (s *Server) Start() int { return 1 }\n";
const HANDLERS_B = "package app\n\nfunc helper() int { return 3 }\n\n// Stop stops it.\nfunc (s *Server) Stop() int { return 2 }\n\n// Start starts the server.\nfunc (s *Server) Start() int { return helper() }\n";

function graphOf(root: string) {
  const g = JSON.parse(fs.readFileSync(path.join(root, "codegraph-out/graph.json"), "utf8"));
  return { ids: g.nodes.map((n: any) => n.id).sort(), node: (id: string) => g.nodes.find((n: any) => n.id === id) };
}

describe("a watch batch that sees part of a checkout", () => {
  it("rewrites an unchanged file's methods whose receiver type moved from the index, not from a disk that moved on, and the next batch catches up", async () => {
    const p = makeProject({ "types.go": TYPES_A, "handlers.go": HANDLERS_A });
    cleanups.push(p.cleanup);
    const git = (...args: string[]) => execFileSync("git", ["-C", p.root, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", ...args], { encoding: "utf8" });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-q", "-m", "A");
    git("checkout", "-q", "-b", "next");
    p.write("types.go", TYPES_B);
    p.write("handlers.go", HANDLERS_B);
    git("commit", "-q", "-am", "B");
    git("checkout", "-q", "main");

    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(() => engine.close());
    await engine.build({ project_path: p.root });
    expect(graphOf(p.root).node("handlers.go::Server.Start").parent).toBe("types.go::Server");

    // The checkout rewrites both files; the batch holds types.go's event only (handlers.go's is still queued).
    git("checkout", "-q", "next");
    const first = await engine.build({ project_path: p.root }, { paths: ["types.go"] });
    expect(first.files_changed).toBe(1);
    // Start lost its receiver type: its node is rewritten as indexed (code and all), handlers.go's new definitions wait for their batch.
    let g = graphOf(p.root);
    expect(g.node("handlers.go::Server.Start")).toMatchObject({ parent: "handlers.go" });
    expect(g.node("handlers.go::Server.Stop")).toBeUndefined();
    const search = await engine.search({ project_path: p.root, query: "Start starts the server" });
    expect(JSON.stringify(search)).toContain("Server.Start");

    await engine.build({ project_path: p.root }, { paths: ["handlers.go"] });
    g = graphOf(p.root);
    // The same graph as a build from scratch of the checkout.
    const scratch = makeProject({ "types.go": TYPES_B, "handlers.go": HANDLERS_B });
    cleanups.push(scratch.cleanup);
    const other = await ProjectEngine.open(scratch.root, { sideEffects: false });
    cleanups.push(() => other.close());
    await other.build({ project_path: scratch.root });
    expect(g.ids).toEqual(graphOf(scratch.root).ids);
    expect(g.node("handlers.go::Server.Stop")).toMatchObject({ parent: "handlers.go" });
  });
});

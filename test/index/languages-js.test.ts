import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";

/** Three files of express 5 (lib/response.js, lib/utils.js, lib/view.js, MIT, licence kept). */
const ROOT = path.resolve("test/fixtures/trees/js-express");

async function graph() {
  const x = new Extractor();
  const files = ["lib/response.js", "lib/utils.js", "lib/view.js"];
  const extracts = await Promise.all(files.map((f) => x.extract(f, fs.readFileSync(path.join(ROOT, f), "utf8"), languageForPath(f)!)));
  return resolveGraph(extracts);
}

describe("JavaScript functions assigned to properties", () => {
  it("res.name = function … are methods of res, with their JSDoc (a blank line below it) and signature", async () => {
    const { nodes } = await graph();
    const res = nodes.filter((n) => n.file_path === "lib/response.js" && n.type === "method").map((n) => n.qualified_name);
    expect(res).toHaveLength(20);
    expect(res).toEqual(expect.arrayContaining(["res.status", "res.send", "res.json", "res.sendFile", "res.redirect", "res.cookie", "res.render", "res.header", "res.type"]));
    const status = nodes.find((n) => n.id === "lib/response.js::res.status")!;
    expect(status).toMatchObject({ signature: "res.status = function status(code)", line_start: 65 });
    expect(status.docstring).toMatch(/^Set the HTTP status code for the response\./);
  });

  it("X.prototype.name = function … joins X; exports.name = function … is a function of the module", async () => {
    const { nodes, edges } = await graph();
    expect(nodes.find((n) => n.id === "lib/view.js::View.lookup")).toMatchObject({ type: "method", parent: "lib/view.js::View", signature: "View.prototype.lookup = function lookup(name)" });
    expect(edges).toContainEqual({ source: "lib/view.js::View", target: "lib/view.js::View.lookup", type: "contains" });
    expect(nodes.find((n) => n.id === "lib/utils.js::setCharset")).toMatchObject({ type: "function", parent: "lib/utils.js" });
    // Calls inside an assigned function are its own: res.send calls utils' setCharset.
    expect(edges).toContainEqual({ source: "lib/response.js::res.send", target: "lib/utils.js::setCharset", type: "calls" });
    expect(edges).toContainEqual({ source: "lib/view.js::View.resolve", target: "lib/view.js::tryStat", type: "calls" });
    // this.x() inside res.send is res.x, though no class defines res.
    expect(edges).toContainEqual({ source: "lib/response.js::res.send", target: "lib/response.js::res.type", type: "calls" });
    expect(edges).toContainEqual({ source: "lib/response.js::res.send", target: "lib/response.js::res.json", type: "calls" });
  });
});

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { countTokens } from "../../dist/shared/tokens.js";
import { expectCode, makeProject, PY_PROJECT, touchLater } from "../helpers.js";

let p: ReturnType<typeof makeProject>;
let engine: ProjectEngine;
beforeAll(async () => {
  p = makeProject({ ...PY_PROJECT, "README.md": "# Shop\n" });
  engine = await ProjectEngine.open(p.root, { sideEffects: false });
  await engine.build({ project_path: p.root });
});
afterAll(async () => {
  await engine.close();
  p.cleanup();
});

describe("query", () => {
  it("returns the spec's fields with layers, citations and honest token counts", async () => {
    const a = await engine.query({ project_path: p.root, question: "How is a credit card charged and retried?" });
    expect(a.tokenizer).toBe("o200k_base");
    expect(a.tokens).toBe(countTokens(a.context));
    expect(a.layers.map((l) => l.level)).toEqual(["L0", "L1", "L2", "L3"]);
    expect(a.citations[0]).toMatchObject({ node_id: "shop/payments.py::charge_card", file_path: "shop/payments.py", line_start: 6 });
    expect(a.context).toContain("shop/payments.py:6-");
    // A tiny project can be smaller than the answer: the ratio is honest, not floored at 1.
    expect(a.reduction_ratio).toBeCloseTo(a.source_tokens / a.tokens, 1);
    expect(a.communities.length).toBeGreaterThan(0);
    expect(a.communities[0]).toHaveProperty("name");
    expect(a.freshness.stale).toBe(false);
  });

  it("never exceeds the budget, whatever it is", async () => {
    for (const budget of [200, 300, 500, 800, 1500]) {
      const a = await engine.query({ project_path: p.root, question: "order total tax checkout validate save", budget });
      expect(a.tokens).toBeLessThanOrEqual(budget);
      expect(countTokens(a.context)).toBe(a.tokens);
      for (const l of a.layers) expect(l.tokens).toBeLessThanOrEqual(Math.max(l.budget, 30));
    }
  });

  it("gives a layer with no content no heading, at any budget", async () => {
    for (const budget of [200, 250, 300, 800]) {
      const a = await engine.query({ project_path: p.root, question: "order total tax checkout validate save", budget });
      expect(headingsWithoutItems(a.context), `budget ${budget}`).toEqual([]);
      for (const l of a.layers.filter((x) => x.level !== "L0")) expect(l.tokens === 0, `${l.level} at ${budget}`).toBe(l.items === 0);
    }
    // The wake-up's budget comes from the settings: 50 is the least they accept.
    for (const budget of [50, 80, 120]) {
      const q = makeProject({ ...PY_PROJECT, "codemem.toml": `[query]\nwakeup_budget = ${budget}\n` });
      const e = await ProjectEngine.open(q.root, { sideEffects: false });
      try {
        await e.build({ project_path: q.root });
        expect(headingsWithoutItems((await e.wakeup({ project_path: q.root })).context), `wakeup budget ${budget}`).toEqual([]);
      } finally {
        await e.close();
        q.cleanup();
      }
    }
  });

  it("rejects unknown arguments and empty questions", async () => {
    await expectCode(engine.query({ project_path: p.root, question: "x", role: "admin" } as never), "INVALID_ARGUMENT");
    // Whitespace alone is as empty as "", in every operation that takes a question.
    for (const question of ["", " ", "  \n\t "]) {
      await expectCode(engine.query({ project_path: p.root, question }), "INVALID_ARGUMENT");
      await expectCode(engine.recursive_query({ project_path: p.root, question }), "INVALID_ARGUMENT");
      await expectCode(engine.search({ project_path: p.root, query: question }), "INVALID_ARGUMENT");
      await expectCode(engine.dispatch("synaptic_neighbors", { project_path: p.root, query: question }), "INVALID_ARGUMENT");
    }
    await expectCode(engine.query({ project_path: "shop", question: "x" }), "PATH_RELATIVE");
  });
});

describe("search and wakeup", () => {
  it("ranks the defining function first and carries the result fields", async () => {
    const s = await engine.search({ project_path: p.root, query: "add VAT to an amount" });
    expect(s.results[0]).toMatchObject({ id: "shop/models.py::apply_tax", name: "apply_tax", type: "function", file_path: "shop/models.py", line_start: 27, line_end: 29 });
    expect(s.results[0].score).toBeGreaterThan(0);
    expect(typeof s.results[0].community).toBe("number");
    expect(s.results.length).toBeLessThanOrEqual(10);
    expect((await engine.search({ project_path: p.root, query: "order", limit: 2 })).results).toHaveLength(2);
  });

  it("wakeup fits in a few hundred tokens", async () => {
    const w = await engine.wakeup({ project_path: p.root });
    expect(w.tokens).toBeLessThanOrEqual(400);
    expect(w.context).toMatch(/Architecture/);
    expect(w.layers.length).toBe(3);
  });
});

describe("skeleton", () => {
  it("outlines a file with signatures, docstrings and line numbers", async () => {
    const s = await engine.skeleton({ project_path: p.root, file_path: "shop/models.py" });
    expect(s.outline).toContain("L15-24 class Order(Entity)  # A customer order with line items.");
    expect(s.outline).toContain("  L18-20 def total(self)");
    expect(s.outline).not.toContain("return apply_tax");
    expect(s.tokens).toBeLessThan(s.file_tokens);
    expect(s.symbols.map((x) => x.name)).toContain("Order.checkout");
    expect((await engine.skeleton({ project_path: p.root, file_path: path.join(p.root, "shop/models.py") })).file_path).toBe("shop/models.py");
  });

  it("refuses paths outside the project, missing and unindexed files", async () => {
    await expectCode(engine.skeleton({ project_path: p.root, file_path: "../etc/passwd" }), "PATH_OUTSIDE_PROJECT");
    await expectCode(engine.skeleton({ project_path: p.root, file_path: "/etc/hostname" }), "PATH_OUTSIDE_PROJECT");
    await expectCode(engine.skeleton({ project_path: p.root, file_path: "shop/nope.py" }), "PATH_NOT_FOUND");
    await expectCode(engine.skeleton({ project_path: p.root, file_path: "README.md" }), "FILE_NOT_INDEXED");
  });

  it("outlines an indexed file whose name starts with two dots (inside, not a parent directory)", async () => {
    const g = makeProject({ "..weird.py": 'def odd_name():\n    """A file named ..weird.py."""\n    return 1\n', "pkg/..hidden.py": "def deeper():\n    return 2\n" });
    const e = await ProjectEngine.open(g.root, { sideEffects: false });
    try {
      await e.build({ project_path: g.root });
      expect((await e.skeleton({ project_path: g.root, file_path: "..weird.py" })).outline).toContain("def odd_name()");
      expect((await e.skeleton({ project_path: g.root, file_path: path.join(g.root, "..weird.py") })).file_path).toBe("..weird.py");
      expect((await e.skeleton({ project_path: g.root, file_path: "pkg/..hidden.py" })).outline).toContain("def deeper()");
      await expectCode(e.skeleton({ project_path: g.root, file_path: "../..weird.py" }), "PATH_OUTSIDE_PROJECT");
    } finally {
      await e.close();
      g.cleanup();
    }
  });
});

describe("freshness", () => {
  it("turns stale after an edit and fresh after the next build", async () => {
    const q = { project_path: p.root, question: "refund" };
    expect((await engine.query(q)).freshness.stale).toBe(false);
    fs.appendFileSync(path.join(p.root, "shop/payments.py"), "\n\ndef later():\n    pass\n");
    touchLater(path.join(p.root, "shop/payments.py"));
    engine.markChanged();
    const stale = await engine.query(q);
    expect(stale.freshness).toMatchObject({ stale: true, pending_count: 1, pending_files: ["shop/payments.py"] });
    expect(stale.context).toMatch(/STALE/);
    await engine.build({ project_path: p.root });
    expect((await engine.query(q)).freshness.stale).toBe(false);
  });
});

describe("freshness of files left out for their content", () => {
  it("a generated file the build skipped is not pending until it changes", async () => {
    const g = makeProject({ ...PY_PROJECT, "shop/gen_pb2.py": "# Code generated by protoc. DO NOT EDIT.\ndef stub():\n    return 1\n" });
    const e = await ProjectEngine.open(g.root, { sideEffects: false });
    try {
      const b = await e.build({ project_path: g.root });
      expect(b.skipped.map((s) => s.path)).toContain("shop/gen_pb2.py");
      expect((await e.stats({ project_path: g.root })).freshness).toMatchObject({ stale: false, pending_count: 0 });
      fs.appendFileSync(path.join(g.root, "shop/gen_pb2.py"), "def more():\n    return 2\n");
      touchLater(path.join(g.root, "shop/gen_pb2.py"));
      e.markChanged();
      expect((await e.stats({ project_path: g.root })).freshness).toMatchObject({ stale: true, pending_files: ["shop/gen_pb2.py"] });
    } finally {
      await e.close();
      g.cleanup();
    }
  });
});

describe("benchmark", () => {
  it("reports rows and averages from a question file and leaves no trace", async () => {
    const qf = path.join(p.root, "questions.json");
    fs.writeFileSync(qf, JSON.stringify([{ question: "How is VAT applied?", gold_files: ["shop/models.py"] }, { question: "card gateway retries", gold_files: ["shop/payments.py"] }]));
    const before = fs.existsSync(path.join(p.root, ".codemem")) ? fs.readdirSync(path.join(p.root, ".codemem")) : [];
    const b = await engine.benchmark({ project_path: p.root, questions_file: qf });
    expect(b.query_count).toBe(2);
    expect(b.results[0]).toMatchObject({ recall: 1, reciprocal_rank: 1 });
    expect(b.averages.recall).toBe(1);
    expect(b.averages.tokens).toBeGreaterThan(0);
    const derived = await engine.benchmark({ project_path: p.root, limit: 3 });
    expect(derived.query_count).toBeGreaterThan(0);
    const after = fs.existsSync(path.join(p.root, ".codemem")) ? fs.readdirSync(path.join(p.root, ".codemem")) : [];
    expect(after).toEqual(before);
  });
});

describe("recursive query", () => {
  it("decomposes deterministically without a provider", async () => {
    const r = await engine.recursive_query({ project_path: p.root, question: "How is the order total computed and how does charge_card retry the gateway?" });
    expect(r.decomposition).toBe("heuristic");
    expect(r.sub_questions.length).toBeGreaterThanOrEqual(2);
    const files = r.citations.map((c) => c.file_path);
    expect(files).toContain("shop/models.py");
    expect(files).toContain("shop/payments.py");
    expect(r.tokens).toBeLessThanOrEqual(1200);
  });

  it("uses a chat-completions provider, and falls back on 429, malformed replies and timeouts without losing the answer", async () => {
    let mode: "ok" | "429" | "malformed" | "hang" = "ok";
    const seen: { model: string; auth: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const msg = JSON.parse(body);
        seen.push({ model: msg.model, auth: String(req.headers.authorization) });
        if (mode === "hang") return; // never answers
        if (mode === "429" && seen.length === 1) {
          res.writeHead(429, { "retry-after": "1" }).end('{"error":"rate limited"}');
          return;
        }
        const content = mode === "malformed" ? "Sure! here are some questions" : JSON.stringify(["How is the order total computed?", "How are card payments retried?"]);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const oldKey = process.env.PROVIDER_API_KEY;
    const oldUrl = process.env.CODEMEM_LLM_BASE_URL;
    process.env.PROVIDER_API_KEY = "test-key";
    process.env.CODEMEM_LLM_BASE_URL = `http://127.0.0.1:${port}/v1`;
    // 3 s: the stand-in answers at once and only "hang" must time out (300 ms timed out the answers too under load).
    fs.writeFileSync(path.join(p.root, "codemem.toml"), "[llm]\ntimeout_ms = 3000\n[llm.models]\nfast = \"tiny-fast\"\nreliable = \"tiny-reliable\"\n");
    const e = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      const q = { project_path: p.root, question: "How is the order total computed and how are payments retried?" };
      const ok = await e.recursive_query(q);
      expect(ok.decomposition).toBe("provider");
      expect(ok.sub_questions.map((s) => s.question)).toEqual(["How is the order total computed?", "How are card payments retried?"]);
      expect(seen[0]).toEqual({ model: "tiny-fast", auth: "Bearer test-key" });

      mode = "429";
      seen.length = 0;
      const limited = await e.recursive_query(q);
      expect(seen.map((s) => s.model)).toEqual(["tiny-fast", "tiny-reliable"]); // next tier after 429
      expect(limited.decomposition).toBe("provider");

      mode = "malformed";
      const bad = await e.recursive_query(q);
      expect(bad.decomposition).toBe("heuristic");
      expect(bad.provider_error).toMatch(/malformed/);
      expect(bad.citations.length).toBeGreaterThan(0);

      mode = "hang";
      const slow = await e.recursive_query(q);
      expect(slow.decomposition).toBe("heuristic");
      expect(slow.provider_error).toMatch(/timed out/);
      expect(slow.citations.length).toBeGreaterThan(0);
    } finally {
      await e.close();
      fs.rmSync(path.join(p.root, "codemem.toml"));
      process.env.PROVIDER_API_KEY = oldKey ?? "";
      process.env.CODEMEM_LLM_BASE_URL = oldUrl ?? "";
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("a project without source files", () => {
  it("answers that nothing is indexed and why, without empty sections", async () => {
    const q = makeProject({ "README.md": "# Notes\n", "docs/guide.md": "# Guide\n" });
    const e = await ProjectEngine.open(q.root, { sideEffects: false });
    try {
      await e.build({ project_path: q.root });
      for (const context of [(await e.query({ project_path: q.root, question: "how are orders charged?" })).context, (await e.wakeup({ project_path: q.root })).context]) {
        expect(context).toMatch(/no source files indexed: check \.gitignore and exclude_patterns \(codemem reads python, .*\)$/m);
        expect(context).not.toMatch(/^## /m);
      }
    } finally {
      await e.close();
      q.cleanup();
    }
  });
});

/** Section headings ("## …") followed by no line of their own (a blank line, another section or the end). */
function headingsWithoutItems(context: string): string[] {
  const lines = context.split("\n");
  return lines.filter((l, i) => /^## /.test(l) && !/^(?!#{1,2} )\S/.test(lines[i + 1] ?? ""));
}

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { SynapseStore } from "../../dist/daemon/synapse/store.js";
import { makeProject } from "../helpers.js";

// One concept in two areas: both load their settings from a file. Which one answers "where are the
// settings loaded" should follow the area being worked on.
const loader = (area: string, other: string) => `"""${area}: ${other}."""

import json


def load_settings(path):
    """Load the settings from a file and return them as a dict."""
    with open(path) as f:
        return json.load(f)


def ${area}_defaults():
    """Default values of the ${area} settings."""
    return {"${area}": True}
`;
const FILES: Record<string, string> = {
  "billing/config.py": loader("billing", "invoices and payment terms"),
  "billing/invoice.py": `"""Invoices."""\n\n\ndef issue_invoice(order):\n    """Issue an invoice for an order."""\n    return {"order": order}\n`,
  "shipping/config.py": loader("shipping", "carriers and delivery zones"),
  "shipping/carrier.py": `"""Carriers."""\n\n\ndef pick_carrier(parcel):\n    """Choose a carrier for a parcel."""\n    return "post"\n`,
};
const QUESTION = "where are the settings loaded from a file";

let p: ReturnType<typeof makeProject>;
beforeAll(async () => {
  p = makeProject(FILES);
  const e = await ProjectEngine.open(p.root, { sideEffects: false });
  await e.build({ project_path: p.root });
  await e.close();
});
afterAll(() => p.cleanup());

const db = () => path.join(p.root, ".codemem/synapses.db");
function forget(): void {
  for (const s of ["", "-wal", "-shm"]) fs.rmSync(db() + s, { force: true });
}

/** An assistant working in an area: the outline of its files, a search, an edit (through the daemon's dispatch). */
async function workIn(area: string): Promise<void> {
  const e = await ProjectEngine.open(p.root);
  for (const f of Object.keys(FILES).filter((x) => x.startsWith(area))) {
    const sk = (await e.dispatch("skeleton", { project_path: p.root, file_path: f })) as { symbols: { name: string }[] };
    await e.dispatch("search", { project_path: p.root, query: sk.symbols[sk.symbols.length - 1].name, limit: 4 });
  }
  await e.dispatch("hook_event", { project_path: p.root, event: "post_tool_use", tool: "Edit", files: [`${area}/config.py`] });
  await e.close();
}

async function lead(budget = 500): Promise<{ file: string; tokens: number }> {
  const e = await ProjectEngine.open(p.root, { sideEffects: false }); // asking changes nothing
  try {
    const a = await e.query({ project_path: p.root, question: QUESTION, budget });
    return { file: a.citations[0].file_path, tokens: a.tokens };
  } finally {
    await e.close();
  }
}

describe("the focus of the session under way ranks an ambiguous question's answers", () => {
  it("answers from the area being worked on, whichever it is, within the same budget", async () => {
    for (const area of ["shipping", "billing"]) {
      forget();
      await workIn(area);
      const a = await lead();
      expect(a.file).toBe(`${area}/config.py`);
      expect(a.tokens).toBeLessThanOrEqual(500);
    }
  });

  it("reaches the files of the directory worked in that the session has not opened", async () => {
    const other = { billing: "billing/invoice.py", shipping: "shipping/carrier.py" };
    for (const area of ["shipping", "billing"] as const) {
      forget();
      const e = await ProjectEngine.open(p.root);
      await e.dispatch("skeleton", { project_path: p.root, file_path: other[area] });
      await e.dispatch("hook_event", { project_path: p.root, event: "post_tool_use", tool: "Edit", files: [other[area]] });
      await e.close();
      expect((await lead()).file).toBe(`${area}/config.py`);
    }
  });

  it("is off with synapse recall off, is not fed by answers, and forgets a session over an hour old", async () => {
    forget();
    const off = await lead();
    const other = off.file.startsWith("billing") ? "shipping" : "billing";
    forget();
    await workIn(off.file.startsWith("billing") ? "shipping" : "billing");
    fs.writeFileSync(path.join(p.root, "codemem.toml"), "[query]\nsynapse_recall = false\n");
    try {
      expect((await lead()).file).toBe(off.file);
    } finally {
      fs.rmSync(path.join(p.root, "codemem.toml"));
    }

    // What answers return is not work: asking again and again for the other area's code does not
    // make it the focus (a wrong answer would otherwise pull the next ones toward itself).
    forget();
    const e = await ProjectEngine.open(p.root);
    for (let i = 0; i < 5; i++) await e.dispatch("search", { project_path: p.root, query: `${other}_defaults load_settings ${other}`, limit: 3 });
    await e.close();
    expect((await lead()).file).toBe(off.file);

    // The same work two hours ago is no longer the session.
    forget();
    const s = SynapseStore.open(db());
    s.reinforce([`${other}/config.py`, `${other}/config.py::load_settings`, `${other}/carrier.py`, `${other}/invoice.py`], { now: Date.now() - 2 * 3600_000 });
    s.close();
    expect((await lead()).file).toBe(off.file);
  });
});

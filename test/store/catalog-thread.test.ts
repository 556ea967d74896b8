import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { prefetchCatalog, takeCatalog } from "../../dist/daemon/store/catalog-thread.js";
import { openStore } from "../../dist/daemon/store/open.js";
import type { IndexStore } from "../../dist/daemon/store/types.js";
import { stateDirs } from "../../dist/shared/paths.js";
import { makeProject } from "../helpers.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

// Text JSON must escape (quotes, backslashes, control characters) and text beyond ASCII.
const FILES: Record<string, string> = {
  "shop/cart.py": [
    '"""The cart: "quoted", back\\\\slash, tab\there, naïve café, 東京, emoji 🎉, bell \x07."""',
    "",
    "class Cart:",
    '    """A cart of items; prices in €."""',
    "",
    "    def add(self, item, qty=1):",
    '        """Adds `qty` of item.\n\n        Second paragraph with \\\\n and "quotes"."""',
    "        self.items.append((item, qty))",
    "",
    "def total(cart):",
    '    """Sum of the cart\'s prices — with a dash."""',
    "    return sum(q for _, q in cart.items)",
    "",
  ].join("\n"),
  "shop/util.py": '"""Helpers."""\n\ndef fmt(x):\n    """Formats x: {x!r}\\t<tab>."""\n    return f"{x!r}"\n',
};

async function project() {
  const p = makeProject(FILES);
  const engine = await ProjectEngine.open(p.root, { sideEffects: false });
  cleanups.push(p.cleanup, () => engine.close());
  await engine.build({ project_path: p.root });
  const reader = async (): Promise<IndexStore> => {
    const store = await openStore(engine.cfg, { mode: "read" });
    cleanups.push(() => store.close());
    return store;
  };
  return { p, engine, reader, file: stateDirs(p.root).dbFile };
}

describe("a catalog read on another thread (a daemon's start)", () => {
  it("is the catalog the reader reads itself, field by field, and is claimed once", async () => {
    const { reader, file } = await project();
    const own = await (await reader()).catalog();
    expect(own.some((n) => n.parent === null) && own.some((n) => n.parent !== null)).toBe(true);
    expect(own.some((n) => n.docstring.includes("東京, emoji 🎉, bell \x07"))).toBe(true);
    expect(own.some((n) => n.docstring.includes("item.\n\n"))).toBe(true);

    const snapshot = await prefetchCatalog(file);
    expect(JSON.parse(snapshot.columns)[0]).toEqual(own.map((n) => n.rowid));
    const store = await reader();
    expect(await store.catalog()).toEqual(own);
    expect(takeCatalog(file)).toBeUndefined(); // the reader claimed it
    expect(await store.catalog()).toEqual(own); // and reads the rows from then on
  });

  it("is not taken when a build came after it: the reader reads the new rows", async () => {
    const { p, engine, reader, file } = await project();
    const stale = await prefetchCatalog(file);
    p.write("shop/util.py", FILES["shop/util.py"] + '\ndef parse(s):\n    """Parses s."""\n    return s\n');
    await engine.build({ project_path: p.root });
    const store = await reader();
    const nodes = await store.catalog();
    expect(takeCatalog(file)).toBeUndefined();
    expect(nodes.map((n) => n.qualified_name)).toContain("parse");
    expect(JSON.parse(stale.columns)[2]).not.toContain("parse");
    const fresh = await (await reader()).catalog();
    expect(nodes).toEqual(fresh);
  });

  it("of a file that is no index fails without an unhandled rejection", async () => {
    const { file } = await project();
    await expect(prefetchCatalog(file + ".missing")).rejects.toThrow();
    expect(takeCatalog(file + ".missing")).toBeDefined();
  });
});

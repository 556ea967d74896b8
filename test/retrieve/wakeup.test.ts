import { describe, expect, it } from "vitest";
import { countTokens } from "../../dist/shared/tokens.js";
import { builtProject } from "./built-project.js";

// A package in requests' shape: the entry point (Client) re-exported by __init__.py and used from
// other files; helpers (to_text in a private module, as requests' to_native_string; quote) called
// from everywhere, so that they lead by raw call degree; tests that call everything.
const callers = (fn: string, n: number) => Array.from({ length: n }, (_, i) => `def ${fn}_${i}(value):\n    return quote(to_text(value))\n`).join("\n");
const FILES = {
  "shop/__init__.py": `"""A tiny HTTP-ish client."""\nfrom .api import fetch\nfrom .client import Client\n`,
  "shop/_compat.py": `def to_text(value):\n    """Coerce to str."""\n    return value if isinstance(value, str) else value.decode()\n`,
  "shop/utils.py": `from ._compat import to_text\n\n\ndef quote(value):\n    """Percent-quote a value."""\n    return to_text(value).replace(" ", "%20")\n\n\n${callers("encode", 4)}`,
  "shop/client.py": `from ._compat import to_text\nfrom .utils import quote\n\n\nclass Client:\n    """Sends requests and keeps their settings."""\n\n    def send(self, url):\n        return quote(to_text(url))\n\n    def close(self):\n        return None\n`,
  "shop/api.py": `from .client import Client\nfrom ._compat import to_text\nfrom .utils import quote\n\n\ndef fetch(url):\n    """Fetch a URL with a one-off client."""\n    return Client().send(url)\n\n\n${callers("prepare", 4)}`,
  "shop/orders.py": `from ._compat import to_text\nfrom .utils import quote\nfrom .client import Client\n\n\ndef place(order):\n    return Client().send(order)\n\n\n${callers("line", 4)}`,
  "tests/test_client.py": `from shop._compat import to_text\nfrom shop.utils import quote\nfrom shop.client import Client\nfrom shop.api import fetch\n\n\ndef test_everything():\n    Client().send(quote(to_text("a b")))\n    fetch(to_text("x"))\n    quote("y")\n`,
};

const project = builtProject(FILES);

describe("wakeup", () => {
  it("lists the entry points, not helpers or tests, says how to use the tools, within its budget", async () => {
    const w = await project.engine().wakeup({ project_path: project.root() });
    const keys = w.context.slice(w.context.indexOf("## Key symbols"));
    const listed = [...keys.matchAll(/^- (\S+) \(/gm)].map((m) => m[1]);
    expect(listed[0]).toBe("Client");
    expect(listed).toContain("fetch");
    expect(listed.indexOf("Client")).toBeLessThan(listed.indexOf("quote") >= 0 ? listed.indexOf("quote") : Infinity);
    expect(listed).not.toContain("to_text");
    expect(listed).not.toContain("test_everything");
    expect(w.context).toMatch(/codemem_query\b.*codemem_search\b/);
    expect(w.tokens).toBeLessThanOrEqual(400);
    expect(countTokens(w.context)).toBe(w.tokens);
  });
});

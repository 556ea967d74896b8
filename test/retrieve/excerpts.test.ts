import { describe, expect, it } from "vitest";
import { countTokens } from "../../dist/shared/tokens.js";
import { builtProject } from "./built-project.js";

// requests' rebuild_auth in shape: a docstring long enough to eat the entry's code budget, and the
// line that answers ("del headers[...]") at the end of the body, where the old excerpt had stopped
// (within the 1,600 characters the index keeps of a definition).
const DOC = Array.from({ length: 12 }, (_, i) => `    Paragraph line ${i + 1} explains credential handling across hosts, ports and schemes in prose.`).join("\n");
const REDIRECTS = `"""Redirects and the credentials they carry."""
from urllib.parse import urlparse


def should_strip_auth(old_url, new_url):
    """Whether credentials may follow to the new URL."""
    old, new = urlparse(old_url), urlparse(new_url)
    return old.hostname != new.hostname


def rebuild_auth(prepared_request, response, trust_env=True):
    """When being redirected we may want to strip authentication from the request.

${DOC}
    """
    headers = prepared_request.headers
    url = prepared_request.url
    original_url = response.request.url

    if "Authorization" in headers and should_strip_auth(original_url, url):
        # If we get redirected to a new host, we should strip out any
        # authentication headers.
        del headers["Authorization"]

    new_auth = netrc_auth(url) if trust_env else None
    if new_auth is not None:
        prepared_request.prepare_auth(new_auth)
`;

const project = builtProject({ "net/redirects.py": REDIRECTS, "net/models.py": `class Response:\n    """A server's response."""\n    def __init__(self, request):\n        self.request = request\n` });

describe("code excerpts", () => {
  const question = "How is the Authorization header removed when a redirect goes to another host?";

  it("keep the body line that answers, not the long docstring, and mark what they leave out", async () => {
    const a = await project.engine().query({ project_path: project.root(), question });
    const entry = a.context.slice(a.context.indexOf("rebuild_auth (function)"));
    expect(a.citations.map((c) => c.node_id)).toContain("net/redirects.py::rebuild_auth");
    expect(entry).toContain('del headers["Authorization"]');
    expect(entry).toContain("def rebuild_auth(prepared_request, response, trust_env=True):");
    expect(entry).toContain("When being redirected we may want to strip authentication");
    expect(entry).not.toContain("Paragraph line 12");
    expect(entry).toMatch(/\n\s+…\n/);
  });

  it("never exceed the budget, whatever it is", async () => {
    for (const budget of [200, 300, 500, 800, 1500]) {
      const a = await project.engine().query({ project_path: project.root(), question, budget });
      expect(a.tokens).toBeLessThanOrEqual(budget);
      expect(countTokens(a.context)).toBe(a.tokens);
      const code = a.layers.find((l) => l.level === "L3")!;
      expect(code.tokens).toBeLessThanOrEqual(code.budget);
    }
  });
});

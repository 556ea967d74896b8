import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "../index/fixture.js";

/** Debian python3-cryptography 38.0.4's ciphers/base.py: one file of nine classes. */
const FILE = "cryptography/hazmat/primitives/ciphers/base.py";

describe("a file's entry in an answer", () => {
  it("lists what the file defines in the order the question ranks it, with the lines of each", async () => {
    const { engine, root } = await builtFixture("python-cryptography-ciphers");
    const question = "what does the cryptography ciphers base module define";
    const a = await engine.query({ project_path: root, question });
    const defines = a.context.split("\n").find((l) => l.startsWith("defines: "));
    expect(defines).toBeDefined();
    const listed = defines!.slice("defines: ".length).split(", ");
    // The same question's ranking (query ranks 40 hits as search does), restricted to the file's top-level definitions.
    const { results } = await engine.search({ project_path: root, query: question, limit: 40 });
    const ranked = results.filter((r) => r.file_path === FILE && r.type !== "module" && !r.qualified_name.includes("."));
    expect(ranked.length).toBeGreaterThan(2);
    expect(listed.slice(0, ranked.length)).toEqual(ranked.map((r) => `${r.name} (${r.line_start}-${r.line_end})`));
  });

  it("a method defined in another file than its type is cited on its own: the type's entry does not show it", async () => {
    const { engine, root } = await builtProject({
      "go.mod": "module example.com/netx\n\ngo 1.21\n",
      "unixsock.go": `package netx

// UnixListener is a Unix domain socket listener. Clients should typically use variables of type
// Listener instead of assuming Unix domain sockets.
type UnixListener struct {
	fd         int
	path       string
	unlink     bool
	unlinkOnce bool
}

// Addr returns the listener's network address.
func (l *UnixListener) Addr() string { return l.path }
`,
      "unixsock_posix.go": `package netx

import "os"

// close closes the listener's socket and, unless switched off, removes its socket file from the file system.
func (ln *UnixListener) close() error {
	if ln.unlink && !ln.unlinkOnce {
		ln.unlinkOnce = true
		os.Remove(ln.path)
	}
	return nil
}

// SetUnlinkOnClose sets whether the underlying socket file should be removed from the file system
// when the listener is closed. The default is to remove it only if the package created it.
func (l *UnixListener) SetUnlinkOnClose(unlink bool) { l.unlink = unlink }
`,
    });
    const question = "When a UnixListener is closed, does it remove the socket file from the file system, and how can that be switched off?";
    const a = await engine.query({ project_path: root, question });
    expect(a.citations.map((c) => c.file_path)).toContain("unixsock.go");
    expect(a.citations.map((c) => c.node_id)).toContain("unixsock_posix.go::UnixListener.SetUnlinkOnClose");
    expect(a.context).toContain("func (l *UnixListener) SetUnlinkOnClose(unlink bool)");
  });
});

import { describe, expect, it } from "vitest";
import { builtFixture } from "./fixture.js";

/**
 * Python's `@typing.overload` signatures on real code: `cryptography/hazmat/primitives/ciphers/base.py`
 * of Debian's python3-cryptography 38.0.4-3+deb12u1, with its copyright file. `Cipher.encryptor` and
 * `Cipher.decryptor` each have two overload stubs (`...` bodies) before the implementation.
 */
describe("Python @overload", () => {
  it("keeps the implementation as the one node of an overloaded function, not its stubs", async () => {
    const { g, node, edge } = await builtFixture("python-cryptography-ciphers");
    const file = "cryptography/hazmat/primitives/ciphers/base.py";
    const named = (q: string) => g.nodes.filter((n: any) => n.file_path === file && n.qualified_name === q);
    expect(named("Cipher.encryptor").map((n: any) => n.line_start)).toEqual([109]);
    expect(named("Cipher.decryptor").map((n: any) => n.line_start)).toEqual([134]);
    const encryptor = node(`${file}::Cipher.encryptor`);
    expect(encryptor).toMatchObject({ type: "method", signature: "def encryptor(self)", line_end: 120 });
    // The implementation's calls are its own: self._wrap_ctx(...).
    expect(edge(`${file}::Cipher.encryptor`, `${file}::Cipher._wrap_ctx`)).toBe(true);
    // Methods that are not overloads are untouched (abstract ones included).
    expect(named("CipherContext.update")).toHaveLength(1);
    expect(named("_CipherContext.update")).toHaveLength(1);
  });
});

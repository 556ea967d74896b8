import { describe, expect, it } from "vitest";
import { builtFixture } from "../index/fixture.js";

/**
 * Undocumented overrides on real code: Debian python3-cryptography 38.0.4's ciphers/base.py. The
 * abstract `CipherContext.update` documents the contract ("Processes the provided bytes through the
 * cipher …"); `_CipherContext(CipherContext).update`, which does it, has no docstring.
 */
const FILE = "cryptography/hazmat/primitives/ciphers/base.py";

describe("overrides answer as the documented method they override", () => {
  it("an undocumented override in a subclass ranks with the documented base method", async () => {
    const { engine, root } = await builtFixture("python-cryptography-ciphers");
    const { results } = await engine.search({ project_path: root, query: "process the provided bytes through the cipher and return the results" });
    const ids = results.map((r) => r.id);
    const base = ids.indexOf(`${FILE}::CipherContext.update`);
    const impl = ids.indexOf(`${FILE}::_CipherContext.update`);
    expect(base).toBeGreaterThanOrEqual(0);
    expect(results[impl]?.via).toContain("override");
    // Within a file, each further hit is discounted (diversify): the override comes right after its base.
    expect(impl).toBe(base + 1);
    // Every override found is an undocumented method of a direct subclass of a documented seed's class;
    // `_AEADCipherContext`'s methods are not (it inherits CipherContext through AEADCipherContext).
    const direct = ["_CipherContext.update", "_CipherContext.update_into", "_CipherContext.finalize", "_AEADDecryptionContext.finalize_with_tag", "_AEADEncryptionContext.tag"];
    const overrides = results.filter((r) => r.via.includes("override")).map((r) => r.id.slice(FILE.length + 2));
    expect(overrides).toContain("_CipherContext.update");
    for (const o of overrides) expect(direct, o).toContain(o);
  });
});

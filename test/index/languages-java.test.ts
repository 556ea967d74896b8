import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";

/** Extracts Java files given inline (lines joined) and resolves them. */
async function extractAll(files: Record<string, string[]>) {
  const x = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, lines]) => x.extract(p, lines.join("\n") + "\n", languageForPath(p)!)));
  return { defs: extracts.flatMap((e) => e.defs), edges: resolveGraph(extracts).edges };
}

describe("Java anonymous class bodies", () => {
  it("a field's anonymous class and an enum constant's body are classes named by the field and the constant, extending what they create", async () => {
    const { defs, edges } = await extractAll({
      "src/a/TypeAdapter.java": ["package a;", "public abstract class TypeAdapter<T> {", "  public abstract void write(T value);", "}"],
      "src/a/TypeAdapters.java": [
        "package a;",
        "public final class TypeAdapters {",
        "  /** Writes a URI in its original form. */",
        "  public static final TypeAdapter<URI> URI = new TypeAdapter<URI>() {",
        "    @Override public void write(URI value) { value.toString(); }",
        "  };",
        "  public static final TypeAdapter<Long> LONG = new TypeAdapter<>() {",
        "    @Override public void write(Long value) { }",
        "  };",
        "  static final Object PLAIN = new Object();",
        "}",
      ],
      "src/a/Policy.java": ["package a;", "public enum Policy {", "  IDENTITY {", "    @Override String translate(String f) { return f; }", "  },", "  PLAIN;", "  abstract String translate(String f);", "}"],
    });
    const byName = new Map(defs.map((d) => [d.qualifiedName, d]));
    // Each `write` answers to its adapter, not to TypeAdapters alone (two `TypeAdapters.write`s before).
    expect([...byName.keys()].filter((q) => q.endsWith(".write")).sort()).toEqual(["TypeAdapter.write", "TypeAdapters.LONG.write", "TypeAdapters.URI.write"]);
    expect(byName.get("TypeAdapters.URI")).toMatchObject({ kind: "class", docstring: "Writes a URI in its original form." });
    expect(byName.get("TypeAdapters.URI")!.signature).toContain("new TypeAdapter<URI>()");
    expect(byName.has("TypeAdapters.PLAIN")).toBe(false);
    expect(byName.get("Policy.IDENTITY.translate")?.kind).toBe("method");
    const inherits = edges.filter((e) => e.type === "inherits").map((e) => `${e.source} -> ${e.target}`).sort();
    expect(inherits).toEqual([
      "src/a/Policy.java::Policy.IDENTITY -> src/a/Policy.java::Policy",
      "src/a/TypeAdapters.java::TypeAdapters.LONG -> src/a/TypeAdapter.java::TypeAdapter",
      "src/a/TypeAdapters.java::TypeAdapters.URI -> src/a/TypeAdapter.java::TypeAdapter",
    ]);
  });
});

describe("annotated declarations", () => {
  it("sign from after their annotations: an interface method is its head, not `@Deprecated`", async () => {
    const source = `public interface Api {
  @Deprecated
  @Nullable
  String get(String key,
             int n);

  @Override
  public String toString() { return ""; }
}
`;
    const ex = await new Extractor().extract("Api.java", source, languageForPath("Api.java")!, { countTokens: false });
    const sig = (name: string) => ex.defs.find((d: any) => d.name === name)?.signature;
    expect(sig("get")).toBe("String get(String key, int n);");
    expect(sig("toString")).toBe("public String toString()");
  });
});

import { describe, expect, it } from "vitest";
import { builtFixture } from "./fixture.js";

/**
 * C# on real code: Json.NET 6.0.8's BSON writer (six files of Src/Newtonsoft.Json/Bson and Utilities/ValidationUtils.cs),
 * from the orig tarball of Debian's source package newtonsoft-json 6.0.8+dfsg-1.1, with its licence.
 */
const built = () => builtFixture("csharp-newtonsoft-bson");

const BSON = "Newtonsoft.Json/Bson";

describe("C# (Json.NET BSON)", () => {
  it("extracts classes, enums, constructors and overloaded methods with signatures, XML docs and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(7);
    expect(result.unsupported).toEqual([]);
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter`)).toMatchObject({ type: "class", qualified_name: "BsonWriter", signature: "public class BsonWriter : JsonWriter", line_start: 43, line_end: 516 });
    // <summary> tags are dropped, their text kept.
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter`).docstring).toMatch(/^Represents a writer that provides a fast, non-cached, forward-only way of generating JSON data/);
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter.Flush`)).toMatchObject({ type: "method", signature: "public override void Flush()", parent: `${BSON}/BsonWriter.cs::BsonWriter`, line_start: 85, line_end: 88 });
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter.Flush`).docstring).not.toMatch(/<summary>/);
    // Constructors and overloads are nodes of their own.
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter.BsonWriter`)).toMatchObject({ signature: "public BsonWriter(Stream stream)" });
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter.BsonWriter#2`)).toMatchObject({ signature: "public BsonWriter(BinaryWriter writer)" });
    expect(node(`${BSON}/BsonType.cs::BsonType`)).toMatchObject({ type: "enum", signature: "internal enum BsonType : sbyte" });
    // The licence header is not the file's description.
    expect(node(`${BSON}/BsonWriter.cs`).docstring).toBe("");
    expect(g.nodes.filter((n: any) => n.language === "csharp" && n.type === "method").length).toBeGreaterThan(60);
  });

  it("resolves using to the namespace's file, base types, constructor and static calls across files", async () => {
    const { edge } = await built();
    // using Newtonsoft.Json.Utilities; names the file declaring that namespace.
    expect(edge(`${BSON}/BsonWriter.cs`, "Newtonsoft.Json/Utilities/ValidationUtils.cs", "imports")).toBe(true);
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.BsonWriter`, "Newtonsoft.Json/Utilities/ValidationUtils.cs::ValidationUtils.ArgumentNotNull")).toBe(true);
    // new BsonBinaryWriter(...) and new BsonObject() (a class of another file of the same namespace).
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.BsonWriter`, `${BSON}/BsonBinaryWriter.cs::BsonBinaryWriter`)).toBe(true);
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.WriteStartObject`, `${BSON}/BsonToken.cs::BsonObject`)).toBe(true);
    expect(edge(`${BSON}/BsonToken.cs::BsonString`, `${BSON}/BsonToken.cs::BsonValue`, "inherits")).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "write a BSON object id", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(`${BSON}/BsonWriter.cs`);
  });
});

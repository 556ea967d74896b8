import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * C# on real code: Json.NET 6.0.8's BSON writer (six files of Src/Newtonsoft.Json/Bson and Utilities/ValidationUtils.cs),
 * with Linq/JEnumerable.cs (an indexer), Linq/JsonMergeSettings.cs (a property with a checking setter),
 * Serialization/JsonSerializerProxy.cs (forwarding properties), Utilities/MethodCall.cs (a delegate) and
 * Utilities/DateTimeUtils.cs with DateTimeParser.cs (a typed local), Serialization/JsonContract.cs (`#if`
 * inside an else-if chain), from the orig tarball of Debian's source package
 * newtonsoft-json 6.0.8+dfsg-1.1, with its licence.
 */
const built = () => builtFixture("csharp-newtonsoft-bson");

const BSON = "Newtonsoft.Json/Bson";

describe("C# (Json.NET BSON)", () => {
  it("extracts classes, enums, constructors and overloaded methods with signatures, XML docs and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(14);
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

  it("extracts properties and indexers whose accessors do work, and delegates; state-only properties stay part of their type", async () => {
    const { node, edge } = await built();
    // A property whose setter checks its value is a method of its type, with its XML doc; its signature stops before the accessors.
    expect(node("Newtonsoft.Json/Linq/JsonMergeSettings.cs::JsonMergeSettings.MergeArrayHandling")).toMatchObject({ type: "method", signature: "public MergeArrayHandling MergeArrayHandling", parent: "Newtonsoft.Json/Linq/JsonMergeSettings.cs::JsonMergeSettings", line_start: 16, line_end: 26 });
    expect(node("Newtonsoft.Json/Linq/JsonMergeSettings.cs::JsonMergeSettings.MergeArrayHandling").docstring).toMatch(/^Gets or sets the method used when merging JSON arrays\./);
    // An indexer is named `this`; the calls in its accessors are its own.
    expect(node("Newtonsoft.Json/Linq/JEnumerable.cs::JEnumerable.this")).toMatchObject({ type: "method", signature: "public IJEnumerable<JToken> this[object key]", line_start: 91, line_end: 100 });
    expect(node("Newtonsoft.Json/Linq/JEnumerable.cs::JEnumerable.this").docstring).toBe("Gets the IJEnumerable{JToken} with the specified key.");
    expect(edge("Newtonsoft.Json/Linq/JEnumerable.cs::JEnumerable.this", "Newtonsoft.Json/Linq/JEnumerable.cs::JEnumerable.JEnumerable")).toBe(true);
    // Auto-properties, abstract ones and those that only read or write a field (a constant, another object's property) are state, like fields: no nodes.
    expect(node(`${BSON}/BsonToken.cs::BsonToken.Parent`)).toBeUndefined();
    expect(node(`${BSON}/BsonToken.cs::BsonToken.Type`)).toBeUndefined();
    expect(node(`${BSON}/BsonToken.cs::BsonObject.Type`)).toBeUndefined();
    expect(node(`${BSON}/BsonWriter.cs::BsonWriter.DateTimeKindHandling`)).toBeUndefined();
    expect(node("Newtonsoft.Json/Serialization/JsonSerializerProxy.cs::JsonSerializerProxy.ContractResolver")).toBeUndefined();
    // A delegate is a type.
    expect(node("Newtonsoft.Json/Utilities/MethodCall.cs::MethodCall")).toMatchObject({ type: "type", line_start: 28, signature: "internal delegate TResult MethodCall<T, TResult>(T target, params object[] args);" });
  });

  it("resolves using to the namespace's file, base types, constructor and static calls across files", async () => {
    const { edge, g } = await built();
    // using Newtonsoft.Json.Utilities; names a file declaring that namespace.
    expect(g.edges.some((e: any) => e.source === `${BSON}/BsonWriter.cs` && e.type === "imports" && e.target.startsWith("Newtonsoft.Json/Utilities/"))).toBe(true);
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.BsonWriter`, "Newtonsoft.Json/Utilities/ValidationUtils.cs::ValidationUtils.ArgumentNotNull")).toBe(true);
    // new BsonBinaryWriter(...) and new BsonObject() (a class of another file of the same namespace).
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.BsonWriter`, `${BSON}/BsonBinaryWriter.cs::BsonBinaryWriter`)).toBe(true);
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.WriteStartObject`, `${BSON}/BsonToken.cs::BsonObject`)).toBe(true);
    expect(edge(`${BSON}/BsonToken.cs::BsonString`, `${BSON}/BsonToken.cs::BsonValue`, "inherits")).toBe(true);
  });

  it("gives calls on typed fields and locals their type as receiver", async () => {
    const { edge } = await built();
    // `private readonly BsonBinaryWriter _writer;` … `_writer.Flush()`: Flush is no unique name (BsonWriter has one too).
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.Flush`, `${BSON}/BsonBinaryWriter.cs::BsonBinaryWriter.Flush`)).toBe(true);
    expect(edge(`${BSON}/BsonWriter.cs::BsonWriter.Close`, `${BSON}/BsonBinaryWriter.cs::BsonBinaryWriter.Close`)).toBe(true);
    // `DateTimeParser dateTimeParser = new DateTimeParser(); dateTimeParser.Parse(text)`, a struct of another file.
    expect(edge("Newtonsoft.Json/Utilities/DateTimeUtils.cs::DateTimeUtils.TryParseDateIso", "Newtonsoft.Json/Utilities/DateTimeParser.cs::DateTimeParser.Parse")).toBe(true);
    expect(edge("Newtonsoft.Json/Utilities/DateTimeUtils.cs::DateTimeUtils.TryParseDateIso", "Newtonsoft.Json/Utilities/DateTimeParser.cs::DateTimeParser")).toBe(true);
  });

  it("reads a file whose #if lines split a statement (every branch kept): its methods stay its class's", async () => {
    const { node } = await built();
    // `else if (…) {…}\n#if !NET20\n else if (…) {…}\n#endif\n else {…}` in JsonContract's constructor is a syntax
    // error to the grammar, which then read every method after it as a loose function.
    const CONTRACT = "Newtonsoft.Json/Serialization/JsonContract.cs::JsonContract";
    expect(node(`${CONTRACT}.JsonContract`)).toMatchObject({ type: "method", parent: CONTRACT, line_start: 300, line_end: 344 });
    for (const m of ["InvokeOnSerializing", "InvokeOnSerialized", "InvokeOnDeserializing", "InvokeOnDeserialized"]) {
      expect(node(`${CONTRACT}.${m}`)).toMatchObject({ type: "method", parent: CONTRACT });
    }
    expect(node("Newtonsoft.Json/Serialization/JsonContract.cs::InvokeOnSerializing")).toBeUndefined();
  });

  it("reads C# 12 syntax in a file whose #if lines split a statement: its methods stay its class's", async () => {
    // The #if lines are blanked only if the rest then parses: a grammar without C# 12 failed on the
    // empty collection expression `[]` and kept the tree where `#if` broke the else-if chain (see above).
    const file = "Serialization/JsonContract.cs";
    const source = fs.readFileSync(path.join("test/fixtures/trees/csharp-newtonsoft-bson/Newtonsoft.Json", file), "utf8");
    const at = source.indexOf("        internal void InvokeOnSerializing(");
    const member = "        internal List<SerializationCallback> NoCallbacks() => [];\n\n";
    const { node } = await builtProject({ [file]: source.slice(0, at) + member + source.slice(at) });
    for (const m of ["JsonContract", "NoCallbacks", "InvokeOnSerializing", "InvokeOnDeserialized"]) {
      expect(node(`${file}::JsonContract.${m}`)).toMatchObject({ type: "method", parent: `${file}::JsonContract` });
    }
    expect(node(`${file}::InvokeOnSerializing`)).toBeUndefined();
  });

  it("keeps a /// comment above #if lines as the documentation of the declaration below them", async () => {
    // The #else-if split makes the file's #if lines blanked; the doc comment and the property are then lines apart.
    const { node } = await builtProject({
      "Options.cs": [
        "namespace Demo;",
        "",
        "public class Options",
        "{",
        "    private int _max;",
        "",
        "    /// <summary>",
        "    /// The most redirects followed.",
        "    /// </summary>",
        "#if NET",
        '    [UnsupportedOSPlatform("browser")]',
        "#endif",
        "    public int MaxRedirects { get => _max; set { Check(value); _max = value; } }",
        "",
        "    private static void Check(int value)",
        "    {",
        "        if (value < 0) { throw new ArgumentOutOfRangeException(nameof(value)); }",
        "#if NET",
        "        else if (value > 100) { throw new ArgumentOutOfRangeException(nameof(value)); }",
        "#endif",
        "        else { }",
        "    }",
        "}",
        "",
      ].join("\n"),
    });
    // The attribute above it is no part of its signature.
    expect(node("Options.cs::Options.MaxRedirects")).toMatchObject({ type: "method", docstring: "The most redirects followed.", signature: "public int MaxRedirects" });
  });

  it("counts default(T), typeof(T) and nameof(x) in accessors as no work, and keeps a bodiless head's parameters that span lines", async () => {
    const { node } = await builtProject({
      "Settings.cs": [
        "namespace Demo;",
        "",
        "public abstract class Settings",
        "{",
        "    private Handling? _handling;",
        "",
        "    /// <summary>The handling used when writing.</summary>",
        "    public Handling Handling",
        "    {",
        "        get { return _handling ?? default(Handling); }",
        "        set { _handling = value; }",
        "    }",
        "",
        "    public string Kind { get { return nameof(Settings) + typeof(Handling).Name; } }",
        "",
        "    public int Depth { get { return Compute(); } }",
        "",
        "    protected abstract int Compute(",
        "        int start,",
        "        Handling handling);",
        "}",
        "",
        "public record Change(",
        "    string Name,",
        "    int Count);",
        "",
      ].join("\n"),
    });
    // `?? default(Handling)` and `nameof(…) + typeof(…).Name` only read state: the properties stay part of their class.
    expect(node("Settings.cs::Settings.Handling")).toBeUndefined();
    expect(node("Settings.cs::Settings.Kind")).toBeUndefined();
    expect(node("Settings.cs::Settings.Depth")).toMatchObject({ type: "method" });
    // An abstract method and a record without bodies: their heads run through the line their parameters end on.
    expect(node("Settings.cs::Settings.Compute")).toMatchObject({ signature: "protected abstract int Compute( int start, Handling handling);" });
    expect(node("Settings.cs::Change")).toMatchObject({ signature: "public record Change( string Name, int Count);" });
  });

  it("reads a file-based program's #: lines (#:package) as no code: the calls below them count", async () => {
    const { edge } = await builtProject({
      "app.cs": ["#:package Humanizer@2.14.1", "#:property LangVersion=preview", "", "var g = new Greeter();", 'g.Hi("world");', "", "class Greeter", "{", '    public void Hi(string name) => Console.WriteLine($"Hi {name}");', "}", ""].join("\n"),
    });
    expect(edge("app.cs", "app.cs::Greeter.Hi")).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "write a BSON object id", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(`${BSON}/BsonWriter.cs`);
  });
});

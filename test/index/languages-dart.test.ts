import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Dart on real code: the Dart package of flutter-skill 0.9.36 from the npm registry (dart/: lib/ and
 * pubspec.yaml, MIT per its package.json; its bin/ is build output to the walk and left out), plus a
 * small project for the forms it lacks (mixins, extensions, enums, named constructors, package: URIs).
 */
const built = () => builtFixture("dart-flutter-skill");


const CLIENT = "lib/src/flutter_skill_client.dart";
const SERVER = "lib/src/cli/server.dart";

describe("Dart (flutter-skill)", () => {
  it("extracts classes, functions, methods, constructors and getters with signatures, docs and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(7);
    expect(result.unsupported).toEqual([]);
    expect(node(`${CLIENT}::FlutterSkillClient`)).toMatchObject({ type: "class", signature: "class FlutterSkillClient", line_start: 5, line_end: 294 });
    // A method's body is beside its signature in the grammar: the line range covers it, the signature leaves it out.
    expect(node(`${CLIENT}::FlutterSkillClient.connect`)).toMatchObject({ type: "method", signature: "Future<void> connect()", line_start: 12, line_end: 24 });
    expect(node(`${CLIENT}::FlutterSkillClient._call`)).toMatchObject({ signature: "Future<Map<String, dynamic>> _call(String method, [Map<String, dynamic>? args])", line_start: 32, line_end: 43 });
    expect(node(`${CLIENT}::FlutterSkillClient.FlutterSkillClient`)).toMatchObject({ type: "method", signature: "FlutterSkillClient(this.wsUri)", line_start: 10 });
    expect(node(`${CLIENT}::FlutterSkillClient.isConnected`)).toMatchObject({ type: "method", signature: "bool get isConnected" });
    expect(node(`${SERVER}::_checkForUpdates`)).toMatchObject({ type: "function", signature: "Future<void> _checkForUpdates()", docstring: "Check pub.dev for newer version", line_start: 20, line_end: 57 });
    expect(node("lib/flutter_skill.dart::FlutterSkillBinding").docstring).toBe("The Binding that enables Flutter Skill automation.");
    expect(g.nodes.filter((n: any) => n.language === "dart" && n.type === "method").length).toBeGreaterThan(70);
  });

  it("resolves relative imports, constructor, member and bare calls across files", async () => {
    const { edge, g } = await built();
    // import '../flutter_skill_client.dart': one edge; import 'dart:io' none.
    expect(edge("lib/src/cli/act.dart", CLIENT, "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "lib/src/cli/act.dart" && e.type === "imports").length).toBe(1);
    expect(edge("lib/src/cli/launch.dart", "lib/src/cli/setup.dart", "imports")).toBe(true);
    // FlutterSkillClient(uri) constructs the class of another file; client.connect() reaches its method; a bare function of an imported file.
    expect(edge("lib/src/cli/act.dart::runAct", `${CLIENT}::FlutterSkillClient`)).toBe(true);
    expect(edge("lib/src/cli/act.dart::runAct", `${CLIENT}::FlutterSkillClient.connect`)).toBe(true);
    expect(edge("lib/src/cli/launch.dart::runLaunch", "lib/src/cli/setup.dart::runSetup")).toBe(true);
    // Bare calls inside the class reach its own static methods.
    expect(edge("lib/flutter_skill.dart::FlutterSkillBinding._performTap", "lib/flutter_skill.dart::FlutterSkillBinding._findElement")).toBe(true);
    expect(edge(`${SERVER}::runServer`, `${SERVER}::_checkForUpdates`)).toBe(true);
  });

  it("reads mixins, extensions, enums, named constructors and package: imports in a small project", async () => {
    const shapes = [
      "import 'package:demo/src/util.dart' as util;",
      "part 'shapes_part.dart';",
      "",
      "/// A shape.",
      "abstract class Shape with Named {",
      "  final double size;",
      "  Shape(this.size);",
      "",
      "  /** The unit shape. */",
      "  Shape.unit() : size = 1;",
      "  factory Shape.of(double s) => Square(s);",
      "  double area();",
      "  double twice() {",
      "    return this.area() * 2 + util.clamp(size);",
      "  }",
      "  set scale(double f) {}",
      "}",
      "",
      "class Square extends Shape {",
      "  Square(double s) : super(s);",
      "  @override",
      "  double area() => size * size + describe().length;",
      "}",
      "",
      "mixin Named on Object {",
      "  String describe() => 'named';",
      "}",
      "",
      "extension Doubling on Square {",
      "  /// Doubles it.",
      "  Square doubled() => Square(size * 2);",
      "}",
      "",
      "enum Kind { round, square; bool get isRound => this == Kind.round; }",
      "",
    ].join("\n");
    const util = "/// Clamps.\ndouble clamp(double x) => x < 0 ? 0 : x;\n";
    const { g, node, edge } = await builtProject({
      "pubspec.yaml": "name: demo\n",
      "lib/shapes.dart": shapes,
      "lib/shapes_part.dart": "part of 'shapes.dart';\n",
      "lib/src/util.dart": util,
      "lib/main.dart": "export 'shapes.dart';\nimport 'package:demo/shapes.dart';\nvoid main() {\n  Shape.of(2).twice();\n  Square(1).doubled();\n}\n",
    });
    const S = "lib/shapes.dart";
    expect(node(`${S}::Shape`)).toMatchObject({ type: "class", docstring: "A shape.", line_start: 5, line_end: 17 });
    expect(node(`${S}::Shape.unit`)).toMatchObject({ type: "method", signature: "Shape.unit() : size = 1", docstring: "The unit shape." });
    expect(node(`${S}::Shape.of`)).toMatchObject({ type: "method", signature: "factory Shape.of(double s)" });
    expect(node(`${S}::Shape.area`)).toMatchObject({ type: "method", signature: "double area()" });
    expect(node(`${S}::Shape.twice`)).toMatchObject({ line_start: 13, line_end: 15 });
    expect(node(`${S}::Shape.scale`)).toMatchObject({ signature: "set scale(double f)" });
    expect(node(`${S}::Named`)).toMatchObject({ type: "class" });
    expect(node(`${S}::Kind`)).toMatchObject({ type: "enum" });
    expect(node(`${S}::Kind.isRound`)).toMatchObject({ type: "method" });
    // An extension's members join the extended type.
    expect(node(`${S}::Square.doubled`)).toMatchObject({ type: "method", parent: `${S}::Square`, docstring: "Doubles it." });
    // @override between the doc and the method is skipped; bases.
    expect(edge(`${S}::Square`, `${S}::Shape`, "inherits")).toBe(true);
    // package:demo/… resolves to lib/…; part and export are edges; one per file and URI.
    expect(edge(S, "lib/src/util.dart", "imports")).toBe(true);
    expect(edge(S, "lib/shapes_part.dart", "imports")).toBe(true);
    expect(edge("lib/main.dart", S, "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "lib/main.dart" && e.type === "imports").length).toBe(1);
    // this.f(), a prefixed import's function, a mixin's method, Foo.f(), Foo(...).
    expect(edge(`${S}::Shape.twice`, `${S}::Shape.area`)).toBe(true);
    expect(edge(`${S}::Shape.twice`, "lib/src/util.dart::clamp")).toBe(true);
    expect(edge(`${S}::Square.area`, `${S}::Named.describe`)).toBe(true);
    expect(edge("lib/main.dart::main", `${S}::Shape.of`)).toBe(true);
    expect(edge("lib/main.dart::main", `${S}::Square`)).toBe(true);
    expect(edge(`${S}::Shape.of`, `${S}::Square`)).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "check pub.dev for a newer version of the package", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(SERVER);
  });
});

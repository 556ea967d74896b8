import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Kotlin on real code: ten files of the Android sources of react-native-gesture-handler 3.5.0 (core and react),
 * from the npm registry, with its licence.
 */
const built = () => builtFixture("kotlin-gesture-handler");

const GH = "com/swmansion/gesturehandler";

describe("Kotlin (react-native-gesture-handler)", () => {
  it("extracts classes, objects, nested classes, companion and extension functions with signatures, KDoc and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(10);
    expect(result.unsupported).toEqual([]);
    expect(node(`${GH}/core/FlingGestureHandler.kt::FlingGestureHandler`)).toMatchObject({ type: "class", signature: "class FlingGestureHandler : GestureHandler()", line_start: 11, line_end: 162 });
    expect(node(`${GH}/core/FlingGestureHandler.kt::FlingGestureHandler.tryEndFling`)).toMatchObject({ type: "method", qualified_name: "FlingGestureHandler.tryEndFling", signature: "private fun tryEndFling(event: MotionEvent): Boolean", line_start: 36, line_end: 74 });
    expect(node(`${GH}/core/FlingGestureHandler.kt::FlingGestureHandler.Factory.create`)).toMatchObject({ parent: `${GH}/core/FlingGestureHandler.kt::FlingGestureHandler.Factory` });
    // An object is a class; an expression body is no part of the signature.
    expect(node(`${GH}/core/GestureUtils.kt::GestureUtils`)).toMatchObject({ type: "class", signature: "object GestureUtils" });
    expect(node(`${GH}/core/GestureUtils.kt::GestureUtils.coneToDeviation`)).toMatchObject({ signature: "fun coneToDeviation(angle: Double): Double" });
    // A companion's functions belong to the class (Vector.fromVelocity(...)).
    expect(node(`${GH}/core/Vector.kt::Vector.fromVelocity`)).toMatchObject({ type: "method", parent: `${GH}/core/Vector.kt::Vector` });
    // An extension function is named by its receiver type.
    expect(node(`${GH}/react/Extensions.kt::Context.findActivity`)).toMatchObject({ name: "findActivity", signature: "fun Context?.findActivity(): Activity?" });
    expect(node(`${GH}/react/Extensions.kt::Context.findActivity`).docstring).toMatch(/^Views are handed a ThemedReactContext/);
    expect(g.nodes.filter((n: any) => n.language === "kotlin" && n.type === "method").length).toBeGreaterThan(80);
  });

  it("resolves imports by package, superclasses, inherited, companion, object and extension calls across files", async () => {
    const { edge } = await built();
    const fling = `${GH}/core/FlingGestureHandler.kt`;
    expect(edge(fling, `${GH}/react/events/eventbuilders/FlingGestureHandlerEventDataBuilder.kt`, "imports")).toBe(true);
    expect(edge(`${fling}::FlingGestureHandler`, `${GH}/core/GestureHandler.kt::GestureHandler`, "inherits")).toBe(true);
    // begin() is GestureHandler's (the superclass, another file); Vector.fromVelocity a companion function.
    expect(edge(`${fling}::FlingGestureHandler.startFling`, `${GH}/core/GestureHandler.kt::GestureHandler.begin`)).toBe(true);
    expect(edge(`${fling}::FlingGestureHandler.tryEndFling`, `${GH}/core/Vector.kt::Vector.fromVelocity`)).toBe(true);
    expect(edge(`${fling}::FlingGestureHandler`, `${GH}/core/GestureUtils.kt::GestureUtils.coneToDeviation`)).toBe(true);
    // FlingGestureHandlerEventDataBuilder(handler) constructs the class.
    expect(edge(`${fling}::FlingGestureHandler.Factory.createEventBuilder`, `${GH}/react/events/eventbuilders/FlingGestureHandlerEventDataBuilder.kt::FlingGestureHandlerEventDataBuilder`)).toBe(true);
    // context.findActivity() in another package reaches the extension function.
    expect(edge(`${GH}/core/GestureHandler.kt::GestureHandler.prepare`, `${GH}/react/Extensions.kt::Context.findActivity`)).toBe(true);
  });

  it("keeps a declaration's head whole: after its annotations, through a constructor or parameters on several lines, without comments", async () => {
    const { node } = await builtProject({
      "Chain.kt": [
        "package demo",
        "",
        "/** Observes requests. */",
        "fun interface Interceptor {",
        "  @Throws(IOException::class)",
        "  fun intercept(chain: Chain): Response",
        "",
        "  interface Chain {",
        "    fun withConnectTimeout(",
        "      timeout: Int,",
        "      unit: TimeUnit,",
        "    ): Chain",
        "  }",
        "}",
        "",
        "/** A request. */",
        "@Serializable",
        "data class Request(",
        "  val url: String, // as given",
        "  /** The verb. */",
        "  val method: String,",
        ") : Message() {",
        "  @Deprecated(\"use url\") fun path(): String = url",
        "}",
        "",
      ].join("\n"),
    });
    expect(node("Chain.kt::Interceptor")).toMatchObject({ type: "interface", signature: "fun interface Interceptor", docstring: "Observes requests." });
    expect(node("Chain.kt::Interceptor.intercept")).toMatchObject({ signature: "fun intercept(chain: Chain): Response" });
    expect(node("Chain.kt::Interceptor.Chain.withConnectTimeout")).toMatchObject({ signature: "fun withConnectTimeout( timeout: Int, unit: TimeUnit, ): Chain" });
    expect(node("Chain.kt::Request")).toMatchObject({ type: "class", signature: "data class Request( val url: String, val method: String, ) : Message()", docstring: "A request." });
    expect(node("Chain.kt::Request.path")).toMatchObject({ signature: "fun path(): String" });
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "fling direction and velocity", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(`${GH}/core/FlingGestureHandler.kt`);
  });
});

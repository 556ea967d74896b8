import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Swift on real code: the iOS sources of @capacitor/camera 8.2.4 from the npm registry (a SwiftPM
 * package: ios/Sources/CameraPlugin, its test target, Package.swift), with its licence.
 */
const built = () => builtFixture("swift-capacitor-camera");

const SRC = "ios/Sources/CameraPlugin";
const PLUGIN = `${SRC}/CameraPlugin.swift`;

describe("Swift (@capacitor/camera)", () => {
  it("extracts classes, structs, enums, protocols, extension methods and initialisers with signatures, docs and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(6);
    expect(result.unsupported).toEqual([]);
    expect(node(`${PLUGIN}::CameraPlugin`)).toMatchObject({ type: "class", signature: "public class CameraPlugin: CAPPlugin, CAPBridgedPlugin", line_start: 8, line_end: 309 });
    expect(node(`${PLUGIN}::CameraPlugin.cameraSettings`)).toMatchObject({ type: "method", signature: "private func cameraSettings(from call: CAPPluginCall) -> CameraSettings", line_start: 278, line_end: 308 });
    // Methods of an extension (`private extension CameraPlugin`, `extension CameraPlugin: PHPickerViewControllerDelegate`) join the type.
    expect(node(`${PLUGIN}::CameraPlugin.returnImage`)).toMatchObject({ type: "method", qualified_name: "CameraPlugin.returnImage", parent: `${PLUGIN}::CameraPlugin`, line_start: 399 });
    expect(node(`${PLUGIN}::CameraPlugin.picker`)).toMatchObject({ parent: `${PLUGIN}::CameraPlugin` });
    // Overloads apart.
    expect(node(`${PLUGIN}::CameraPlugin.callback#2`)).toMatchObject({ signature: "public func callback(result: IONCAMRMediaResult)" });
    expect(node(`${SRC}/CameraTypes.swift::ProcessedImage`)).toMatchObject({ type: "struct", line_start: 94, line_end: 142 });
    expect(node(`${SRC}/CameraTypes.swift::CameraResultType`)).toMatchObject({ type: "enum", signature: "public enum CameraResultType: String" });
    expect(node(`${SRC}/CameraExtensions.swift::CameraAuthorizationState`)).toMatchObject({ type: "interface" });
    expect(node(`${SRC}/ImageSaver.swift::ImageSaver.init`)).toMatchObject({ type: "method", signature: "init(image: UIImage, onResult: @escaping ((Error?) -> Void))" });
    // A method of an extension of a type the project does not define is named by that type; its /** */ doc.
    const reformat = node(`${SRC}/CameraExtensions.swift::UIImage.reformat`);
    expect(reformat).toMatchObject({ name: "reformat", signature: "func reformat(to size: CGSize? = nil) -> UIImage", line_start: 70, line_end: 99 });
    expect(reformat.docstring).toMatch(/^Generates a new image from the existing one, implicitly resetting any orientation\./);
    expect(g.nodes.filter((n: any) => n.language === "swift" && n.type === "method").length).toBeGreaterThan(50);
  });

  it("resolves module imports, constructor, member and extension calls across files", async () => {
    const { edge, g } = await built();
    const test = "ios/Tests/CameraPluginTests/CameraPluginTests.swift";
    // @testable import CameraPlugin: one edge to the module (its first file), none to the others.
    expect(edge(test, `${SRC}/CameraExtensions.swift`, "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === test && e.type === "imports").length).toBe(1);
    // ImageSaver(image:) constructs the class of another file; generateJPEG is a method of a struct there.
    expect(edge(`${PLUGIN}::CameraPlugin.returnProcessedImage`, `${SRC}/ImageSaver.swift::ImageSaver`)).toBe(true);
    expect(edge(`${PLUGIN}::CameraPlugin.returnImage`, `${SRC}/CameraTypes.swift::ProcessedImage.generateJPEG`)).toBe(true);
    // result.image.reformat(to:) reaches the UIImage extension.
    expect(edge(`${PLUGIN}::CameraPlugin.processedImage`, `${SRC}/CameraExtensions.swift::UIImage.reformat`)).toBe(true);
    // self.x() inside the type reaches its own method.
    expect(edge(`${SRC}/CameraTypes.swift::ProcessedImage.overwriteMetadataOrientation`, `${SRC}/CameraTypes.swift::ProcessedImage.replaceDictionaryOrientation`)).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "resize an image preserving its aspect ratio", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(`${SRC}/CameraExtensions.swift`);
  });
});

describe("annotated declarations", () => {
  it("sign from after their attributes, a bodiless head through its parameters on several lines", async () => {
    const { node } = await builtProject({
      "Session.swift": `public protocol Session {
    @available(macOS 10.15, iOS 13, *)
    func request(_ url: URL,
                 method: String) async throws -> Data
    @discardableResult
    func cancel() -> Self
}
`,
    });
    expect(node("Session.swift::Session.request")).toMatchObject({ type: "method", signature: "func request(_ url: URL, method: String) async throws -> Data" });
    expect(node("Session.swift::Session.cancel")).toMatchObject({ signature: "func cancel() -> Self" });
  });
});

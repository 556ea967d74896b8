import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Kotlin and Java in one source tree: the frame processor of react-native-vision-camera 3.9.2 (Java,
 * with one Kotlin file beside it) and the Kotlin classes it uses, from the npm registry, with its licence.
 */
const built = () => builtFixture("jvm-vision-camera");

const VC = "com/mrousavy/camera";

describe("Kotlin and Java together (react-native-vision-camera)", () => {
  it("resolves Kotlin calls and imports of Java classes", async () => {
    const { edge, result } = await built();
    expect(result.files_indexed).toBe(14);
    const pipeline = `${VC}/core/VideoPipeline.kt`;
    // import com.mrousavy.camera.frameprocessor.Frame, then Frame(image, ...) in the class's init constructs the Java class.
    expect(edge(pipeline, `${VC}/frameprocessor/Frame.java`, "imports")).toBe(true);
    expect(edge(`${pipeline}::VideoPipeline`, `${VC}/frameprocessor/Frame.java::Frame`)).toBe(true);
    // Same package, no import: a Kotlin class calls a static method of a Java class beside it.
    const proxy = `${VC}/frameprocessor/VisionCameraProxy.kt::VisionCameraProxy`;
    expect(edge(`${proxy}.initFrameProcessorPlugin`, `${VC}/frameprocessor/FrameProcessorPluginRegistry.java::FrameProcessorPluginRegistry.getPlugin`)).toBe(true);
    expect(edge(proxy, `${VC}/frameprocessor/VisionCameraScheduler.java::VisionCameraScheduler`)).toBe(true);
  });

  it("resolves Java calls and imports of Kotlin classes and companion functions", async () => {
    const { edge } = await built();
    const frame = `${VC}/frameprocessor/Frame.java`;
    // import com.mrousavy.camera.core.FrameInvalidError: a class of CameraError.kt, no file of its name.
    expect(edge(frame, `${VC}/core/CameraError.kt`, "imports")).toBe(true);
    expect(edge(frame, `${VC}/types/PixelFormat.kt`, "imports")).toBe(true);
    expect(edge(`${frame}::Frame.assertIsValid`, `${VC}/core/CameraError.kt::FrameInvalidError`)).toBe(true);
    // PixelFormat.Companion.fromImageFormat(...) is the companion's function, which belongs to the class.
    expect(edge(`${frame}::Frame.getPixelFormat`, `${VC}/types/PixelFormat.kt::PixelFormat.fromImageFormat`)).toBe(true);
    // A Java class importing a Kotlin class of another package.
    expect(edge(`${VC}/frameprocessor/VisionCameraScheduler.java`, `${VC}/core/CameraQueues.kt`, "imports")).toBe(true);
  });

  it("reaches a Kotlin file's top-level functions through its JVM class (FooKt, @file:JvmName, View_SizesKt), and companions and objects through Companion and INSTANCE", async () => {
    const { edge } = await builtProject({
      "src/main/kotlin/app/util/Strings.kt": "package app.util\n\nfun slugify(title: String): String = title.lowercase().replace(' ', '-')\n",
      "src/main/kotlin/app/util/Paths.kt": '@file:JvmName("PathTools")\npackage app.util\n\nfun joinSegments(a: String, b: String): String = "$a/$b"\n',
      "src/main/kotlin/app/util/Slug.kt": "package app.util\n\nclass Slug(val text: String) {\n  companion object {\n    fun parse(s: String): Slug = Slug(s)\n  }\n}\n",
      "src/main/kotlin/app/util/Route.kt": "package app.util\n\nobject Route {\n  fun parse(s: String): List<String> = s.split('/')\n}\n",
      "src/main/kotlin/app/util/View+Sizes.kt": "package app.util\n\nfun dpToPx(dp: Int): Int = dp * 2\n",
      // The same names elsewhere: only the file class tells which one a call means.
      "src/main/java/app/legacy/Text.java":
        "package app.legacy;\n\npublic class Text {\n  static String slugify(String s) { return s; }\n  static String joinSegments(String a, String b) { return a + b; }\n  static int dpToPx(int dp) { return dp; }\n}\n",
      "src/main/java/app/web/Page.java":
        "package app.web;\n\nimport app.util.StringsKt;\nimport app.util.PathTools;\nimport app.util.View_SizesKt;\nimport app.util.Slug;\nimport app.util.Route;\n\npublic class Page {\n  Object parts(String url) {\n    return Route.INSTANCE.parse(Slug.Companion.parse(url).getText());\n  }\n\n  String url(String title) {\n    return PathTools.joinSegments(\"/pages\", StringsKt.slugify(title));\n  }\n\n  int margin() {\n    return View_SizesKt.dpToPx(8);\n  }\n}\n",
    });
    const page = "src/main/java/app/web/Page.java";
    expect(edge(page, "src/main/kotlin/app/util/Strings.kt", "imports")).toBe(true);
    expect(edge(`${page}::Page.url`, "src/main/kotlin/app/util/Strings.kt::slugify")).toBe(true);
    expect(edge(`${page}::Page.url`, "src/main/kotlin/app/util/Paths.kt::joinSegments")).toBe(true);
    // A character no Java name holds becomes "_": View+Sizes.kt is View_SizesKt.
    expect(edge(`${page}::Page.margin`, "src/main/kotlin/app/util/View+Sizes.kt::dpToPx")).toBe(true);
    // Slug.Companion.parse() and Route.INSTANCE.parse(): two functions named parse, told apart by their class.
    expect(edge(`${page}::Page.parts`, "src/main/kotlin/app/util/Slug.kt::Slug.parse")).toBe(true);
    expect(edge(`${page}::Page.parts`, "src/main/kotlin/app/util/Route.kt::Route.parse")).toBe(true);
  });
});

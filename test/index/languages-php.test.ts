import { describe, expect, it } from "vitest";
import { builtFixture } from "./fixture.js";

/**
 * PHP on real code: PSR-3's logger interfaces, traits and classes (Psr/Log, nine files of psr/log 1.1.4),
 * from Debian's php-psr-log 1.1.4-2, with its copyright file.
 */
const built = () => builtFixture("php-psr-log");

describe("PHP (psr/log)", () => {
  it("extracts classes, interfaces, traits and methods with signatures, PHPDoc and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(9);
    expect(result.unsupported).toEqual([]);
    expect(node("Psr/Log/AbstractLogger.php::AbstractLogger")).toMatchObject({ type: "class", signature: "abstract class AbstractLogger implements LoggerInterface", line_start: 12, line_end: 128 });
    expect(node("Psr/Log/AbstractLogger.php::AbstractLogger").docstring).toMatch(/^This is a simple Logger implementation that other Loggers can inherit from/);
    expect(node("Psr/Log/AbstractLogger.php::AbstractLogger.emergency")).toMatchObject({ type: "method", qualified_name: "AbstractLogger.emergency", signature: "public function emergency($message, array $context = array())", parent: "Psr/Log/AbstractLogger.php::AbstractLogger", line_start: 22, line_end: 25 });
    expect(node("Psr/Log/AbstractLogger.php::AbstractLogger.emergency").docstring).toMatch(/^System is unusable\./);
    expect(node("Psr/Log/LoggerInterface.php::LoggerInterface")).toMatchObject({ type: "interface", signature: "interface LoggerInterface" });
    // A trait is a class-like container.
    expect(node("Psr/Log/LoggerTrait.php::LoggerTrait")).toMatchObject({ type: "class", signature: "trait LoggerTrait" });
    expect(node("Psr/Log/LoggerTrait.php::LoggerTrait.log")).toMatchObject({ type: "method", signature: expect.stringMatching(/^abstract public function log\(\$level, \$message, array \$context = array\(\)\)/) });
    // The licence header is not the file's description.
    expect(node("Psr/Log/AbstractLogger.php").docstring).toBe("");
    expect(g.nodes.filter((n: any) => n.language === "php" && n.type === "method").length).toBeGreaterThan(30);
  });

  it("resolves use to the namespace's file, extends and implements, and $this calls through an interface", async () => {
    const { edge } = await built();
    // use Psr\Log\AbstractLogger; from the Psr\Log\Test namespace.
    expect(edge("Psr/Log/Test/TestLogger.php", "Psr/Log/AbstractLogger.php", "imports")).toBe(true);
    expect(edge("Psr/Log/Test/TestLogger.php::TestLogger", "Psr/Log/AbstractLogger.php::AbstractLogger", "inherits")).toBe(true);
    expect(edge("Psr/Log/AbstractLogger.php::AbstractLogger", "Psr/Log/LoggerInterface.php::LoggerInterface", "inherits")).toBe(true);
    // $this->log(...) in AbstractLogger is LoggerInterface::log (declared by what it implements, in another file).
    expect(edge("Psr/Log/AbstractLogger.php::AbstractLogger.emergency", "Psr/Log/LoggerInterface.php::LoggerInterface.log")).toBe(true);
    expect(edge("Psr/Log/Test/TestLogger.php::TestLogger.hasRecordThatContains", "Psr/Log/Test/TestLogger.php::TestLogger.hasRecordThatPasses")).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "logger that discards every message", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain("Psr/Log/NullLogger.php");
  });
});

// Ground truth for Java: JavaTruth.java compiled by the JDK's javac (apt-get install openjdk-17-jdk-headless)
// into .bench-cache and run by its java; it uses javac's own API (jdk.compiler). The classpath is
// Debian's Java packages (/usr/share/java): a dependency not there leaves its calls 'unknown'.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const here = path.dirname(new URL(import.meta.url).pathname);
export const JAVA_LIBS = "/usr/share/java";

/** Computes the truth for a Java tree. */
export function javaTruth(tree) {
  const out = path.join(here, "../../.bench-cache/callgraph/java-truth");
  try {
    fs.mkdirSync(out, { recursive: true });
    execFileSync("javac", ["-d", out, path.join(here, "JavaTruth.java")], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    throw new Error(`cannot compile JavaTruth.java (${String(e.stderr ?? e.message).trim().split("\n")[0]}): apt-get install -y openjdk-17-jdk-headless`);
  }
  const jars = fs.existsSync(JAVA_LIBS) ? fs.readdirSync(JAVA_LIBS).filter((f) => f.endsWith(".jar")).sort().map((f) => path.join(JAVA_LIBS, f)) : [];
  // One compiler thread and a small heap: the machine running the benchmark is shared.
  return JSON.parse(execFileSync("java", ["-Xmx1g", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1", "-XX:+UseSerialGC", "-cp", out, "JavaTruth", tree, jars.join(":")], { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "inherit"] }));
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "docs");

/** A real temporary project holding copies of the document fixtures under `docs/`. */
export function makeDocsProject(files: string[] = fs.readdirSync(FIXTURES)): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-docs-")));
  fs.mkdirSync(path.join(root, "docs"));
  for (const f of files) fs.copyFileSync(path.join(FIXTURES, f), path.join(root, "docs", f));
  fs.writeFileSync(path.join(root, "main.py"), "def main():\n    return 1\n");
  return root;
}

export function removeProject(root: string): void {
  fs.rmSync(root, { recursive: true, force: true });
}

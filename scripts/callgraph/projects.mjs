// The projects of bench:callgraph: real repositories with their tests, each pinned to a commit.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

/**
 * `keep`: the paths of the repository that make the tree (sources, tests, the files the compiler
 * reads: tsconfig.json, go.mod). rxjs is taken at 7.8.2, the last release whose repository is one
 * TypeScript package with its tests (spec/) beside src/; master has become a monorepo of rxjs 9.
 */
export const PROJECTS = [
  { name: "rxjs", repo: "ReactiveX/rxjs", commit: "e5351d02e225e275ac0e497c7b66eaa5f0c88791", ref: "7.8.2", language: "typescript", keep: ["src", "spec", "tsconfig.json", "package.json", "LICENSE.txt"] },
  { name: "requests", repo: "psf/requests", commit: "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e", language: "python", keep: ["src", "tests", "pyproject.toml", "LICENSE"] },
  { name: "flask", repo: "pallets/flask", commit: "2ac89889f4cc330eabd50f295dcef02828522c69", language: "python", keep: ["src", "tests", "pyproject.toml", "LICENSE.txt"] },
  { name: "gin", repo: "gin-gonic/gin", commit: "dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9", language: "go", keep: ["."] },
  { name: "cobra", repo: "spf13/cobra", commit: "adbc8813901bba65827259daa8e22ff94ec1f30e", language: "go", keep: ["."] },
  { name: "jsoup", repo: "jhy/jsoup", commit: "46b620860af930eedc193a705eaf7cea5aec89a6", language: "java", keep: ["src", "pom.xml", "LICENSE"] },
  { name: "javapoet", repo: "square/javapoet", commit: "b9017a9503b76e11b4ad4c1a9f050e2d29112cb0", language: "java", keep: ["src", "pom.xml", "LICENSE.txt"] },
];

/** Where a project's pinned tree is kept: `<root>/.bench-cache/callgraph/<name>`. */
export function treeDir(root, p) {
  return path.join(root, ".bench-cache/callgraph", p.name);
}

const STAMP = ".callgraph-commit";

/** True when the project's tree is in the cache at its pinned commit. */
export function cached(root, p) {
  const f = path.join(treeDir(root, p), STAMP);
  return fs.existsSync(f) && fs.readFileSync(f, "utf8").trim() === p.commit;
}

/**
 * The git directory holding a project's history: `<mirrors>/<owner>+<name>/repo` (the layout the
 * session's fetch tool gives) or `<mirrors>/<name>` (a plain clone), the first that exists.
 */
function gitDirOf(mirrors, p) {
  for (const d of [path.join(mirrors, p.repo.replace("/", "+"), "repo"), path.join(mirrors, p.name, ".git"), path.join(mirrors, p.name)]) {
    if (fs.existsSync(path.join(d, "HEAD"))) return d;
  }
  return undefined;
}

/** Writes the project's pinned tree into the cache from a git directory under `mirrors` (git archive: no network). */
export function fill(root, p, mirrors) {
  const gitDir = gitDirOf(mirrors, p);
  if (!gitDir) throw new Error(`${p.name}: no git directory for ${p.repo} under ${mirrors} (clone it there as ${p.name}/ or ${p.repo.replace("/", "+")}/repo)`);
  const dest = treeDir(root, p);
  const staged = `${dest}.partial`;
  fs.rmSync(staged, { recursive: true, force: true });
  fs.mkdirSync(staged, { recursive: true });
  const tar = execFileSync("git", ["--git-dir", gitDir, "archive", "--format=tar", p.commit, ...p.keep], { maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", staged], { input: tar });
  fs.writeFileSync(path.join(staged, STAMP), `${p.commit}\n`);
  fs.rmSync(dest, { recursive: true, force: true });
  fs.renameSync(staged, dest);
  return dest;
}

#!/usr/bin/env node
/**
 * Run by the git post-commit block (in the background, output discarded): hands the files the
 * commit changed to the daemon, then asks for an incremental build. Exit 0 always.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { armHardCap } from "./hook-io.js";
import { callQuiet, notifyHookEvent } from "./notify.js";

// The commit is already done; this only bounds a stuck daemon. A build of a big change takes longer
// than the reply wait, and the daemon finishes it anyway.
const CAP_MS = 60_000;

/** Files changed by HEAD (the root commit included), repository-relative. */
export function changedFiles(root: string): string[] {
  const out = execFileSync("git", ["-C", root, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "HEAD"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return out.split("\n").map((l) => l.trim()).filter(Boolean);
}

async function main(): Promise<void> {
  armHardCap(CAP_MS);
  const root = fs.realpathSync(process.argv[2] || process.cwd());
  const files = changedFiles(root);
  await notifyHookEvent({ project_path: root, event: "git_commit", files }, { timeoutMs: 15_000, autostart: true });
  await callQuiet(root, "build", { project_path: root }, { timeoutMs: CAP_MS - 16_000, autostart: true });
  process.exit(0);
}

if (process.argv[1] && pathToFileURL(fs.realpathSync(process.argv[1])).href === import.meta.url) {
  main().catch(() => process.exit(0));
}

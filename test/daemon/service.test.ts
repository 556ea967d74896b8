import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installService, renderLaunchdPlist, renderSystemdUnit, uninstallService } from "../../dist/client/service.js";
import { cleanupAll, DAEMON_MAIN, makeProject } from "./helpers.js";
import { DAEMON_ENV, DAEMON_NODE_FLAGS } from "../../dist/client/rpc.js";

const hasSystemdAnalyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" }).status === 0;

describe("login service", () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "cm-home-"));
  afterAll(async () => {
    fs.rmSync(home, { recursive: true, force: true });
    await cleanupAll();
  });

  it("renders a systemd unit that passes systemd-analyze verify", (ctx) => {
    const root = makeProject();
    const unit = renderSystemdUnit(root);
    expect(unit).not.toMatch(/@[A-Z]+@/);
    // The daemon's node flags and malloc settings are those of a daemon a client spawns.
    expect(unit).toContain(`Environment=${Object.entries(DAEMON_ENV).map(([k, v]) => `${k}=${v}`).join(" ")}\n`);
    expect(unit).toContain(`ExecStart=${[process.execPath, ...DAEMON_NODE_FLAGS, DAEMON_MAIN].map((a) => `"${a}"`).join(" ")} --project "${root}"\n`);
    // One space between arguments, whatever the flags (none today).
    expect(unit.split("\n").find((l) => l.startsWith("ExecStart="))).not.toMatch(/ {2}/);
    if (!hasSystemdAnalyze) {
      console.warn("NOTE: systemd-analyze is not installed; the unit file was not verified.");
      ctx.skip();
      return;
    }
    const file = path.join(home, "codemem-verify.service");
    fs.writeFileSync(file, unit);
    const r = spawnSync("systemd-analyze", ["verify", file], { encoding: "utf8" });
    // verify exits 0 even for unknown keys; any complaint about our file is a failure.
    const complaints = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.includes(file));
    expect(r.status, r.stderr).toBe(0);
    expect(complaints).toEqual([]);
  });

  it("install writes the unit under HOME and reports whether it could be enabled; uninstall removes it", () => {
    const root = makeProject();
    const r = installService(root, { home, platform: "linux", activate: false });
    expect(r.manager).toBe("systemd");
    expect(r.file).toBe(path.join(home, ".config/systemd/user", r.name));
    expect(r.name).toMatch(/^codemem-[0-9a-f]{16}\.service$/);
    expect(fs.readFileSync(r.file, "utf8")).toBe(renderSystemdUnit(root));
    expect(r.activated).toBe(false);
    expect(r.reason).toBeTruthy();
    const u = uninstallService(root, { home, platform: "linux", activate: false });
    expect(u.file_changed).toBe(true);
    expect(fs.existsSync(r.file)).toBe(false);
  });

  it("renders a launchd agent with escaped values", () => {
    const root = makeProject();
    const plist = renderLaunchdPlist(root, "dev.codemem.test");
    expect(plist).not.toMatch(/@[A-Z]+@/);
    expect(plist).toContain(`<string>${root}</string>`);
    expect(plist).toContain("<string>dev.codemem.test</string>");
    expect(plist).toContain([process.execPath, ...DAEMON_NODE_FLAGS, DAEMON_MAIN].map((a) => `    <string>${a}</string>\n`).join(""));
    expect(plist).not.toMatch(/\n\s*\n/);
    const r = installService(root, { home, platform: "darwin", activate: false });
    expect(r.file).toMatch(/Library\/LaunchAgents\/dev\.codemem\.[0-9a-f]{16}\.plist$/);
    expect(fs.existsSync(r.file)).toBe(true);
  });
});

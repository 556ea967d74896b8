import { generateKeyPairSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject, touchLater } from "../helpers.js";

const awsKey = "AKIA" + randomBytes(10).toString("hex").toUpperCase().slice(0, 16);
const pem = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const pemBody = pem.split("\n")[5];
const envToken = "tok_" + randomBytes(16).toString("hex");
const docToken = "ghp_" + randomBytes(18).toString("hex");

const p = makeProject({
  "deploy/aws.py": `"""Deployment helpers."""\n\n\ndef upload_bundle(path):\n    """Upload the release bundle to the bucket."""\n    key_id = "${awsKey}"\n    return connect_bucket(key_id, path)\n\n\ndef connect_bucket(key, path):\n    return (key, path)\n`,
  "deploy/keys.ts": `/** Signs release manifests. */\nexport function signManifest(m: string): string {\n  const signingKey = \`${pem}\`;\n  return m + signingKey.length;\n}\n`,
  ".env": `API_TOKEN=${envToken}\n`,
  "docs/ops.md": `# Operations\n\nThe deploy bot uses the token ${docToken} to push release tags.\n`,
});
afterAll(() => p.cleanup());

describe("build --exclude-secrets", () => {
  it("keeps planted secrets out of search, query, skeleton, docs and export output, also after later builds that do not repeat the flag", async () => {
    const engine = await ProjectEngine.open(p.root);
    const built = await engine.build({ project_path: p.root, exclude_secrets: true });
    expect(built.files_indexed).toBe(2);
    const outputs: unknown[] = [];
    for (const q of ["AWS access key upload bundle", awsKey, "signing key manifest", "private key", envToken]) {
      outputs.push(await engine.dispatch("search", { project_path: p.root, query: q }));
      outputs.push(await engine.dispatch("query", { project_path: p.root, question: q }));
    }
    outputs.push(await engine.dispatch("skeleton", { project_path: p.root, file_path: "deploy/aws.py" }));
    outputs.push(await engine.dispatch("skeleton", { project_path: p.root, file_path: "deploy/keys.ts" }));
    outputs.push(await engine.dispatch("wakeup", { project_path: p.root }));
    outputs.push(await engine.dispatch("query_docs", { project_path: p.root, question: "deploy bot token release tags" }));
    outputs.push(await engine.dispatch("export_synapse_memory", { project_path: p.root }));
    const all = JSON.stringify(outputs);
    for (const secret of [awsKey, pemBody, envToken, docToken]) expect(all).not.toContain(secret);
    // The code around the secrets is still indexed, with its line numbers.
    const s = (await engine.dispatch("search", { project_path: p.root, query: "upload release bundle" })) as { results: { id: string; line_start: number }[] };
    expect(s.results[0]).toMatchObject({ id: "deploy/aws.py::upload_bundle", line_start: 4 });
    expect(all).toContain("«redacted»");

    // The policy stays with the index: a plain build, an edit, a forced build and a restarted daemon keep it.
    const secretFree = async (e: ProjectEngine) => {
      const out = JSON.stringify([
        await e.dispatch("query", { project_path: p.root, question: "AWS access key upload bundle" }),
        await e.dispatch("query_docs", { project_path: p.root, question: "deploy bot token release tags" }),
      ]);
      for (const secret of [awsKey, docToken]) expect(out).not.toContain(secret);
    };
    expect((await engine.build({ project_path: p.root })).files_changed).toBe(0);
    await secretFree(engine);
    p.write("deploy/aws.py", fs.readFileSync(path.join(p.root, "deploy/aws.py"), "utf8") + "\n\ndef rotate_key():\n    return None\n");
    touchLater(path.join(p.root, "deploy/aws.py"));
    expect((await engine.build({ project_path: p.root })).files_changed).toBe(1);
    await secretFree(engine);
    await engine.build({ project_path: p.root, force: true });
    await secretFree(engine);
    const restarted = await ProjectEngine.open(p.root);
    await restarted.build({ project_path: p.root });
    await secretFree(restarted);
    await restarted.close();

    // Control: without redaction the same questions do surface the secrets (so the check above can fail).
    const open = await engine.build({ project_path: p.root, exclude_secrets: false });
    expect(open.files_changed).toBe(2); // switching the policy re-reads everything
    const leaked = JSON.stringify([
      await engine.dispatch("query", { project_path: p.root, question: "AWS access key upload bundle" }),
      await engine.dispatch("query", { project_path: p.root, question: "sign release manifests signing key" }),
      await engine.dispatch("query_docs", { project_path: p.root, question: "deploy bot token release tags" }),
    ]);
    expect(leaked).toContain(awsKey);
    expect(leaked).toContain(docToken);
    await engine.close();
  });
});

#!/usr/bin/env node
// Secret-redaction benchmark.
// 1. Recall per form: each planted form of test/secrets/forms.mjs is redacted (its secret gone from
//    the redacted text) or missed.
// 2. False redactions on real code: lines redacted in trees that hold no real secret — this
//    repository's own source (test/secrets excluded: it plants secrets), the system Python's stdlib
//    (CPython's test suite excluded: it ships test keys) and the .bench-cache corpora when fetched.
//    Every finding there counts as false; --list prints them for review.
// Usage: npm run bench:secrets [-- --json] [-- --list] [-- --missed]
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { findSecrets, redactSecrets } = await import(path.join(root, "dist/daemon/secrets/scan.js"));
const { FORMS } = await import(path.join(root, "test/secrets/forms.mjs"));
const { PY_TESTSUITE_DIRS } = await import(path.join(root, "scripts/corpora.mjs"));
const json = process.argv.includes("--json");
const list = process.argv.includes("--list");

// ---- recall
const forms = FORMS.map((f) => ({ form: f.form, file: f.file, redacted: !redactSecrets(f.text(f.secret), f.file).text.includes(f.secret) }));
const hit = forms.filter((f) => f.redacted).length;
const recall = { forms: forms.length, redacted: hit, recall: +(hit / forms.length).toFixed(3), missed: forms.filter((f) => !f.redacted).map((f) => f.form) };

// ---- false redactions
const TEXT_EXT = /\.(?:[cm]?[jt]sx?|py|pyi|go|rs|rb|java|kt|cs|php|c|h|cc|cpp|hpp|swift|scala|lua|ex|exs|hs|dart|zig|sh|bash|md|ya?ml|json|toml|ini|cfg|conf|properties|txt|rst|sql|xml|html|css)$/i;
function walk(dir, skip, out, rel = "") {
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.name === ".git" || e.name === "node_modules" || e.name === "__pycache__" || e.name === "dist" || skip.has(r)) continue;
    if (e.isDirectory()) walk(dir, skip, out, r);
    else if (e.isFile() && TEXT_EXT.test(e.name)) out.push(r);
  }
  return out;
}
function falseRedactions(name, dir, subdirs, skip) {
  const files = subdirs.flatMap((d) => {
    const abs = path.join(dir, d);
    if (!fs.existsSync(abs)) return [];
    return fs.statSync(abs).isDirectory() ? walk(dir, skip, [], d === "." ? "" : d) : [d];
  });
  let lines = 0;
  let bytes = 0;
  const findings = [];
  const t0 = performance.now();
  for (const f of files) {
    const buf = fs.readFileSync(path.join(dir, f));
    if (buf.length > 2 * 1024 * 1024 || buf.subarray(0, 8192).includes(0)) continue;
    const text = buf.toString("utf8");
    bytes += buf.length;
    lines += text.split("\n").filter((l) => l.trim()).length;
    for (const x of findSecrets(text, f)) findings.push({ ...x, text: text.split("\n")[x.line - 1].trim().slice(0, 160) });
  }
  const ms = performance.now() - t0;
  const redactedLines = new Set(findings.map((x) => `${x.file}:${x.line}`)).size;
  const kinds = {};
  for (const x of findings) kinds[x.kind] = (kinds[x.kind] ?? 0) + 1;
  return { corpus: name, files: files.length, lines, redacted_lines: redactedLines, per_10k_lines: +((redactedLines / lines) * 1e4).toFixed(2), mb_per_s: +(bytes / 1e6 / (ms / 1000)).toFixed(1), kinds, ...(list ? { list: findings } : {}) };
}
const corpora = [falseRedactions("codemem", root, ["daemon", "client", "shared", "hooks", "scripts", "test", "docs", "README.md"], new Set(["test/secrets"]))];
const stdlib = ["/usr/lib/python3.11", "/usr/lib/python3.12", "/usr/lib/python3.13"].find((d) => fs.existsSync(d));
if (stdlib) corpora.push(falseRedactions(`python stdlib (${stdlib})`, stdlib, ["."], new Set([...PY_TESTSUITE_DIRS, "site-packages", "dist-packages", "lib2to3/tests", "test"])));
for (const name of ["python-stdlib", "go-net", "rxjs"]) {
  const dir = path.join(root, ".bench-cache/corpora", name);
  if (fs.existsSync(dir)) corpora.push(falseRedactions(name, dir, ["."], new Set(PY_TESTSUITE_DIRS)));
}

if (json) console.log(JSON.stringify({ recall, forms, false_redactions: corpora }, null, 2));
else {
  console.log(`recall: ${hit}/${forms.length} forms = ${(100 * recall.recall).toFixed(1)} %`);
  for (const f of forms) console.log(`  ${f.redacted ? "redacted" : "MISSED  "}  ${f.form}`);
  for (const c of corpora) {
    console.log(`false redactions, ${c.corpus}: ${c.redacted_lines} of ${c.lines} non-empty lines in ${c.files} files (${c.per_10k_lines} per 10K lines; ${c.mb_per_s} MB/s) ${JSON.stringify(c.kinds)}`);
    if (list) for (const x of c.list) console.log(`  ${x.file}:${x.line} ${x.kind}  ${x.text}`);
  }
}

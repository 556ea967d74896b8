#!/usr/bin/env node
// Checks the retrieval benchmark's gold answers against the fetched corpora:
// every gold file must exist in its corpus, and every gold symbol must be
// defined (not merely mentioned) in one of the question's gold files.
// Run scripts/fetch-corpora.sh first. Exits 1 listing every failure.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, extname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const questionsPath = process.argv[2] ?? join(root, 'test/bench/retrieval/questions.json');
const MIN_PER_CORPUS = 22;

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Line-anchored definition patterns per language (a grep-like scan).
const py = (n) => [new RegExp(`^\\s*(async\\s+)?(def|class)\\s+${n}\\b`, 'm')];
const go = (n) => [
  new RegExp(`^func\\s+(\\([^)]*\\)\\s*)?${n}\\s*[[(]`, 'm'), // func f( / func (r T) f( / func f[T any](
  new RegExp(`^\\s*type\\s+${n}\\b`, 'm'),
];
const ts = (n) => [
  new RegExp(
    `^\\s*(export\\s+)?(default\\s+)?(declare\\s+)?(abstract\\s+)?(async\\s+)?` +
      `(function\\s*\\*?\\s*${n}\\b|class\\s+${n}\\b|interface\\s+${n}\\b|type\\s+${n}\\b|enum\\s+${n}\\b|(const|let|var)\\s+${n}\\b)`,
    'm',
  ),
  { test: (src) => tsMethodDefined(src, n) },
];
const definers = { '.py': py, '.go': go, '.ts': ts };

// A method definition `[modifiers] name[<T>](params)` whose closing parenthesis
// is followed by `{` or a return type `:`, which tells it apart from a call.
function tsMethodDefined(src, n) {
  const mods = '((public|private|protected|static|readonly|async|override|get|set)\\s+)*';
  const re = new RegExp(`^[ \\t]*${mods}${n}\\s*(<[^\\n(]*>)?\\s*\\(`, 'gm');
  for (const m of src.matchAll(re)) {
    let depth = 0;
    let i = m.index + m[0].length - 1;
    for (; i < src.length; i++) {
      if (src[i] === '(') depth++;
      else if (src[i] === ')' && --depth === 0) break;
    }
    const next = /^\s*(\S)/.exec(src.slice(i + 1, i + 200));
    if (next && (next[1] === '{' || next[1] === ':')) return true;
  }
  return false;
}

const failures = [];
const fail = (id, msg) => failures.push(`${id}: ${msg}`);

const doc = JSON.parse(readFileSync(questionsPath, 'utf8'));
const perCorpus = Object.fromEntries(Object.keys(doc.corpora).map((c) => [c, 0]));
const seen = new Set();
const cache = new Map();
const read = (p) => {
  if (!cache.has(p)) cache.set(p, readFileSync(p, 'utf8'));
  return cache.get(p);
};

for (const [name, c] of Object.entries(doc.corpora)) {
  if (!existsSync(join(root, c.dir))) {
    console.error(`corpus ${name} not found at ${c.dir}: run ${c.fetch} first`);
    process.exit(2);
  }
}

for (const q of doc.questions) {
  const id = q.id ?? '(no id)';
  if (seen.has(id)) fail(id, 'duplicate id');
  seen.add(id);
  const corpus = doc.corpora[q.corpus];
  if (!corpus) {
    fail(id, `unknown corpus ${q.corpus}`);
    continue;
  }
  perCorpus[q.corpus]++;
  if (!q.question || typeof q.question !== 'string') fail(id, 'missing question text');
  const files = q.gold_files ?? [];
  const symbols = q.gold_symbols ?? [];
  if (files.length < 1 || files.length > 2) fail(id, `expected 1-2 gold_files, got ${files.length}`);
  if (symbols.length < 1) fail(id, 'no gold_symbols');

  const present = [];
  for (const f of files) {
    const p = join(root, corpus.dir, f);
    if (f.startsWith('/') || f.includes('\\') || f.split('/').includes('..')) fail(id, `not a relative POSIX path: ${f}`);
    else if (!existsSync(p)) fail(id, `gold file missing: ${f}`);
    else if (!definers[extname(f)]) fail(id, `no definition patterns for ${extname(f)} files: ${f}`);
    else present.push(f);
  }
  if (present.length !== files.length) continue;
  for (const s of symbols) {
    const found = present.some((f) =>
      definers[extname(f)](esc(s)).some((re) => re.test(read(join(root, corpus.dir, f)))),
    );
    if (!found) fail(id, `symbol ${s} not defined in ${present.join(', ')}`);
  }
}

for (const [c, n] of Object.entries(perCorpus)) {
  if (n < MIN_PER_CORPUS) failures.push(`corpus ${c}: only ${n} questions (need ${MIN_PER_CORPUS})`);
}

const counts = Object.entries(perCorpus).map(([c, n]) => `${c}=${n}`).join(' ');
if (failures.length) {
  console.error(`check-gold: ${failures.length} failure(s)`);
  for (const f of failures) console.error(`  ${f}`);
  console.error(`questions: ${doc.questions.length} (${counts})`);
  process.exit(1);
}
console.log(`check-gold: all ${doc.questions.length} questions OK (${counts})`);

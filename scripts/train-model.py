#!/usr/bin/env python3
"""Trains codemem's own code-search model (daemon/index/embed/code-model.bin) on this machine's CPU.

    /usr/bin/python3 scripts/train-model.py [--epochs N] [--minutes M] [--out FILE] [--seed S]

Needs Debian's python3-torch (1.13); reads the docstring/code pairs of scripts/model-pairs.mjs
(.bench-cache/model-pairs/*.json, from the packages of scripts/fetch-train-corpora.sh: never the
retrieval benchmark's corpora) and, to report its progress, the tuning data of
`node scripts/model-pairs.mjs --eval` (questions.json and dev.json only; heldout.json is never
read). `npm run train:model` runs the whole recipe.

The model is a bi-encoder over identifier pieces: a text's word stems and its adjacent stem pairs
("take until", "skip until") are looked up in one embedding table, pooled with a learned weight per
piece (times the retriever's term weight on the question side), then passed through a residual
two-layer perceptron of its side (question or code) and normalised. It is trained with a symmetric
in-batch contrastive loss, half the batches drawn from one package, and one same-package sibling
per pair as an extra negative: code whose name shares a piece with the pair's (timeout and
timeoutWith, skipUntil and takeUntil). Everything is seeded; a run is deterministic on one thread.
"""
import argparse
import glob
import gzip
import json
import math
import os
import random
import struct
import time

try:
    import torch
    import torch.nn.functional as F
except ModuleNotFoundError:
    raise SystemExit("train-model.py needs Debian's PyTorch: sudo apt-get install -y python3-torch, then run it with /usr/bin/python3")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAGIC = "codemem-code-model-1"

ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=6)
ap.add_argument("--minutes", type=float, default=20.0, help="stop after the epoch that passes this much training time")
ap.add_argument("--dim", type=int, default=128)
ap.add_argument("--hidden", type=int, default=256)
ap.add_argument("--unigrams", type=int, default=50000)
ap.add_argument("--bigrams", type=int, default=50000)
ap.add_argument("--batch", type=int, default=512)
ap.add_argument("--tau", type=float, default=0.05)
ap.add_argument("--lr", type=float, default=2e-3)
ap.add_argument("--grouped", type=float, default=0.5, help="share of batches drawn from one package")
ap.add_argument("--mask", type=float, default=0.5, help="probability of hiding from the code a word the summary also uses")
ap.add_argument("--dropout", type=float, default=0.0, help="probability of dropping each piece of a text in training")
ap.add_argument("--seed", type=int, default=7)
ap.add_argument("--out", default=os.path.join(ROOT, "daemon/index/embed/code-model.bin"))
args = ap.parse_args()

torch.set_num_threads(1)
random.seed(args.seed)
torch.manual_seed(args.seed)


def log(msg, **kw):
    print(json.dumps({"level": "info", "msg": msg, **kw}), flush=True)


# 1. Pairs, deduplicated, in a fixed order.
pairs = []
seen = set()
for f in sorted(glob.glob(os.path.join(ROOT, ".bench-cache/model-pairs/*.json"))):
    pkg = os.path.basename(f)[:-5]
    for q, c, name, _file in json.load(open(f))["pairs"]:
        if (q, c) in seen:
            continue
        seen.add((q, c))
        pairs.append((q.split(), c.split(), name, pkg))
log("pairs", count=len(pairs), packages=len({p[3] for p in pairs}))

# 2. Vocabulary: frequent stems, then frequent adjacent pairs of stems ("a b").
uni, bi = {}, {}
for q, c, _, _ in pairs:
    for seq in (q, c):
        for w in seq:
            uni[w] = uni.get(w, 0) + 1
        for a, b in zip(seq, seq[1:]):
            if a != b:
                k = a + " " + b
                bi[k] = bi.get(k, 0) + 1
top = lambda d, n, m: [w for w, k in sorted(d.items(), key=lambda x: (-x[1], x[0])) if k >= m][:n]
vocab = top(uni, args.unigrams, 5) + top(bi, args.bigrams, 10)
index = {w: i for i, w in enumerate(vocab)}
total = sum(uni.values())
# Initial piece weights: SIF a/(a + p(w)) for stems, the mean of the two for pairs.
sif = {w: 1e-3 / (1e-3 + k / total) for w, k in uni.items()}
init_w = [sif[w] if " " not in w else 0.5 * (sif[w.split(" ")[0]] + sif[w.split(" ")[1]]) for w in vocab]
log("vocabulary", stems=sum(1 for w in vocab if " " not in w), pairs=sum(1 for w in vocab if " " in w))


def pieces(words, weights=None):
    """Piece ids of a text and their outside weights (the question's term weights; 1 for code)."""
    ids, ws = [], []
    for i, w in enumerate(words):
        if w in index:
            ids.append(index[w])
            ws.append(weights[i] if weights else 1.0)
    for i in range(len(words) - 1):
        k = words[i] + " " + words[i + 1]
        if k in index:
            ids.append(index[k])
            ws.append(0.5 * (weights[i] + weights[i + 1]) if weights else 1.0)
    return ids, ws


# Question-side term weights as the retriever computes them: IDF over the package's code texts.
dfs = {}
for _, c, _, pkg in pairs:
    d = dfs.setdefault(pkg, [0, {}])
    d[0] += 1
    for w in set(c):
        d[1][w] = d[1].get(w, 0) + 1


def idf(pkg, w):
    n, df = dfs[pkg]
    return math.log((n + 1) / (df[w] + 1)) + 1 if w in df else math.log(n + 1) + 1


data = []
for q, c, name, pkg in pairs:
    qi, qw = pieces(q, [idf(pkg, w) for w in q])
    ci, cw = pieces(c[:160])
    if len(qi) >= 2 and len(ci) >= 1:
        data.append((qi, qw, ci, cw, name, pkg, " ".join(q), set(q)))
log("training pairs", count=len(data))

# Siblings: pairs of one package whose names share a piece but differ.
def name_pieces(name):
    out, cur = [], ""
    for ch in name:
        if ch.isupper() and cur and not cur[-1].isupper():
            out.append(cur)
            cur = ""
        if ch.isalnum():
            cur += ch.lower()
        elif cur:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return [p for p in out if len(p) > 2]


by_piece = {}
for i, d in enumerate(data):
    for p in set(name_pieces(d[4])):
        by_piece.setdefault((d[5], p), []).append(i)
siblings = []
for i, d in enumerate(data):
    cands = set()
    for p in set(name_pieces(d[4])):
        lst = by_piece[(d[5], p)]
        if len(lst) <= 200:
            cands.update(j for j in lst if data[j][4] != d[4])
    siblings.append(sorted(cands))
log("siblings", with_sibling=sum(1 for s in siblings if s))


# 3. Model.
class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(len(vocab), args.dim, mode="sum")
        torch.nn.init.normal_(self.emb.weight, std=0.1)
        self.gate = torch.nn.Embedding(len(vocab), 1)
        with torch.no_grad():
            self.gate.weight[:, 0] = torch.log(torch.tensor(init_w))
        self.w1 = torch.nn.ModuleList([torch.nn.Linear(args.dim, args.hidden) for _ in range(2)])
        self.w2 = torch.nn.ModuleList([torch.nn.Linear(args.hidden, args.dim) for _ in range(2)])
        for m in self.w2:
            torch.nn.init.zeros_(m.weight)
            torch.nn.init.zeros_(m.bias)

    def forward(self, ids, outer, offsets, side):
        w = torch.exp(self.gate(ids)[:, 0]) * outer
        p = F.normalize(self.emb(ids, offsets, per_sample_weights=w), dim=-1)
        return F.normalize(p + self.w2[side](F.relu(self.w1[side](p))), dim=-1)


def packed(rows):
    ids, ws, offs = [], [], []
    for r_ids, r_ws in rows:
        offs.append(len(ids))
        ids.extend(r_ids)
        ws.extend(r_ws)
    return torch.tensor(ids, dtype=torch.long), torch.tensor(ws, dtype=torch.float32), torch.tensor(offs, dtype=torch.long)


model = Encoder()
opt = torch.optim.Adam(model.parameters(), lr=args.lr)


def dropped(ids, ws, hide=None):
    """Pieces kept in training: each dropped with probability --dropout, and (code side) each
    piece whose word the summary also uses with probability --mask; never all of them."""
    keep = [k for k, t in enumerate(ids) if random.random() >= args.dropout and not (hide is not None and vocab[t] in hide and random.random() < args.mask)]
    if not keep:
        return ids, ws
    return [ids[k] for k in keep], [ws[k] for k in keep]


def step(batch):
    qs = packed([dropped(data[i][0], data[i][1]) for i in batch])
    cs = [dropped(data[i][2], data[i][3], data[i][7]) for i in batch]
    hard = [random.choice(siblings[i]) for i in batch if siblings[i]]
    cs += [(data[j][2], data[j][3]) for j in hard]
    cs = packed(cs)
    Q = model(*qs, 0)
    C = model(*cs, 1)
    S = Q @ C.T / args.tau
    B = len(batch)
    # Questions with the same words, and siblings that are the pair itself, are not negatives.
    keys = [data[i][6] for i in batch] + [data[j][6] for j in hard]
    same = torch.tensor([[keys[i] == keys[j] and i != j for j in range(len(keys))] for i in range(B)])
    S = S.masked_fill(same, -1e4)
    target = torch.arange(B)
    loss = 0.5 * (F.cross_entropy(S, target) + F.cross_entropy(S[:, :B].T, target))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


# 4. Evaluation on the tuning questions: vector-only file MRR@10 of the built-in vector, the model,
# and their mixes (the share of the cosine the model carries).
eval_file = os.path.join(ROOT, ".bench-cache/model-eval.json")
evals = json.load(open(eval_file)) if os.path.exists(eval_file) else {}
if not evals:
    log("no tuning data (node scripts/model-pairs.mjs --eval): progress is not measured")
SHARES = [0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1.0]


@torch.no_grad()
def evaluate():
    model.eval()
    out = {}
    for name, c in evals.items():
        H = torch.tensor(c["hash"])
        W = torch.tensor(c["wv"])
        rows = [pieces(ws[:160]) for ws in c["words"]]
        M = torch.cat([model(*packed(rows[k:k + 2048]), 1) for k in range(0, len(rows), 2048)])
        res = {s: 0.0 for s in SHARES}
        for q in c["questions"]:
            qi, qw = pieces(q["words"], q["weights"])
            m = model(*packed([(qi, qw)]), 0)[0] if qi else torch.zeros(args.dim)
            builtin = 0.4 * (H @ torch.tensor(q["hash"])) + 0.6 * (W @ torch.tensor(q["wv"]))
            mm = M @ m
            for s in SHARES:
                sims = (1 - s) * builtin + s * mm
                files = []
                for k in torch.argsort(sims, descending=True).tolist():
                    f = c["files"][k]
                    if f not in files:
                        files.append(f)
                    if len(files) >= 10:
                        break
                r = next((i for i, f in enumerate(files) if f in q["gold"]), None)
                res[s] += 1 / (r + 1) if r is not None else 0
        out[name] = {str(s): round(v / len(c["questions"]), 3) for s, v in res.items()}
    if out:
        out["mean"] = {str(s): round(sum(o[str(s)] for o in out.values()) / len(out), 4) for s in SHARES}
    model.train()
    return out


log("before training", mrr=evaluate())
# The epoch kept is the one with the best tuning MRR at any share (the last one without tuning data).
best = (-1.0, None, 0)
by_pkg = {}
for i, d in enumerate(data):
    by_pkg.setdefault(d[5], []).append(i)
t_start = time.time()
for epoch in range(1, args.epochs + 1):
    batches, mixed = [], []
    for pkg in sorted(by_pkg):
        lst = by_pkg[pkg][:]
        random.shuffle(lst)
        k = 0
        while k + args.batch <= len(lst) and random.random() < args.grouped:
            batches.append(lst[k:k + args.batch])
            k += args.batch
        mixed += lst[k:]
    random.shuffle(mixed)
    batches += [mixed[k:k + args.batch] for k in range(0, len(mixed) - args.batch + 1, args.batch)]
    random.shuffle(batches)
    t0 = time.time()
    loss = sum(step(b) for b in batches) / len(batches)
    mrr = evaluate()
    log("epoch", epoch=epoch, loss=round(loss, 4), batches=len(batches), seconds=round(time.time() - t0), mrr=mrr)
    score = max(mrr["mean"].values()) if mrr else epoch
    if score > best[0]:
        best = (score, {k: v.clone() for k, v in model.state_dict().items()}, epoch)
    if time.time() - t_start > args.minutes * 60:
        log("time budget reached", minutes=args.minutes)
        break

model.load_state_dict(best[1])
log("kept", epoch=best[2], best_mean_mrr=best[0])

# 5. Export: gzip of a JSON header line, the pieces one per line, then float32 piece weights and row
# scales, int8 rows, and the float32 perceptron weights of each side (w1, b1, w2, b2).
with torch.no_grad():
    E = model.emb.weight.clone()
    gate = torch.exp(model.gate.weight[:, 0])
    scale = E.abs().max(dim=1).values / 127
    scale[scale == 0] = 1
    q = torch.round(E / scale[:, None]).to(torch.int8)
    words = "\n".join(vocab).encode("utf8")
    mlp = []
    for side in range(2):
        for t in (model.w1[side].weight, model.w1[side].bias, model.w2[side].weight, model.w2[side].bias):
            mlp.append(t.detach().contiguous().numpy().astype("<f4").tobytes())
    header = {"magic": MAGIC, "dim": args.dim, "hidden": args.hidden, "count": len(vocab), "wordsBytes": len(words)}
    body = json.dumps(header).encode() + b"\n" + words + gate.numpy().astype("<f4").tobytes() + scale.numpy().astype("<f4").tobytes() + q.numpy().tobytes() + b"".join(mlp)
    with open(args.out, "wb") as f:
        f.write(gzip.compress(body, compresslevel=9, mtime=0))
log("wrote", file=args.out, mb=round(os.path.getsize(args.out) / 1e6, 2), training_minutes=round((time.time() - t_start) / 60, 1))

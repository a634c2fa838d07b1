"""How much of the query-rewriting gain is learnable: one-edit ceilings and cheap policies.

    python experiments/probe_rewrite_ceiling.py [--claims FILE] [--format climate-fever] [--holdout 0.2]
    python experiments/probe_rewrite_ceiling.py --retriever knn --reward recall@50
    python experiments/probe_rewrite_ceiling.py --format checkthat \\
        --claims "$FACTSEEK_DATA/checkthat2020_task2/dev" --train "$FACTSEEK_DATA/checkthat2020_task2/train"

``--claims`` defaults to ``climate_fever/climate-fever.jsonl`` under ``--data`` (default
``$FACTSEEK_DATA``; docs/data.md says where to get the data sets).

Every single edit of every claim (``factseek.rewrite.environment.actions.expand``: remove / swap / add /
present) is scored by the search endpoint's top-k and the reward (``--reward``, AP@50 by default;
k is the reward's cut-off), so each edit has its real reward change. The endpoint
(``--retriever``) is ``bm25`` (default; ``BM25Retriever``, the incremental exact scorer per
claim) or ``knn`` (``KNNRetriever``: MiniLM cosine kNN over the corpus; every distinct claim and
edited query is encoded once, in large batches, and each batch ranked with one matrix product). On the held-out claims (``is_held_out(id, --holdout)`` of the one claims file, or
all claims of ``--claims`` when ``--train`` names a separate training file or split), it reports:

- ``claim``: the original claims; ``oracle``: the best single edit of each claim, or none;
- ``learned <features>``: a gradient-boosted regressor (sklearn ``HistGradientBoostingRegressor``)
  of an edit's reward change, fit on the single edits of the training claims minus a validation
  slice (``--val``, by claim); per held-out claim it makes the edit with the highest prediction
  when that prediction exceeds a threshold. The threshold is chosen on the validation slice only
  (never on the held-out claims); the full threshold sweep on the held-out claims is printed
  after the main table for information. Feature sets: ``lexical`` (edit kind, POS, position,
  IDF of the touched and added/removed terms, query length and IDF profile), ``+embeddings``
  (MiniLM embeddings of the touched token and of the added words, their cosines with the claim)
  and ``+feedback`` ("endpoint feedback": cosines between the claim embedding and the endpoint's
  top-k documents of the edited query, DCG-weighted and top-n means, deltas against the claim's
  own top-k, top-10/top-k overlap). The IDF features are always corpus-derived, whatever the
  endpoint;
- ``proxy greedy K``: training-free; up to K times accept the edit that most raises the
  DCG-weighted cosine between the claim and the endpoint's top-k of the edited query, while it
  rises by more than ``--margin``. With ``knn`` this proxy is close to what the endpoint itself
  maximises (claim-to-document cosine); it is reported as measured, not special-cased.

Per row: held-out mean reward, change relative to the claim, claims better / worse, edits per
claim, mean reward change with a paired bootstrap 95% CI (1,000 resamples over claims, seeded).
The output header names the endpoint and the reward. Corpus embeddings are cached outside the
repository (``~/.cache/factseek/embeddings``, as the rewriter's ``knn`` retriever does; the
``knn`` endpoint reuses them). Needs scikit-learn (bench-only).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# torch (MiniLM) and scikit-learn each bring an OpenMP runtime; spinning idle threads of one
# starve the other (and any other process) on a small machine: up to 50x slower fits.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from factseek.datasets import data_root

DEFAULT_CLAIMS = Path("climate_fever") / "climate-fever.jsonl"  # under --data
KINDS = ("remove", "swap", "add", "present")
UPOS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON")
UPOS += ("PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X", "SPACE")
THRESHOLDS = (-math.inf, 0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, math.inf)
FEATURE_SETS = ("lexical", "lexical+embeddings", "lexical+feedback")
PROXY_STEPS = (1, 2, 4)
BOOTSTRAP = 1000
RETRIEVERS = ("bm25", "knn")
KNN_BATCH = 4096  # distinct queries encoded and ranked per batch (knn endpoint)


class Progress:
    """Counts to stderr: a rewritten line on a terminal, a line per 10% otherwise."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, max(total, 1), 0
        self.t0 = self.last = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.next_decile = 1

    def step(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if self.tty and now - self.last > 0.5:
            self.last = now
            sys.stderr.write(f"\r{self.label}: {self.done}/{self.total} ({now - self.t0:.0f} s)")
        elif not self.tty and self.done * 10 >= self.next_decile * self.total:
            self.next_decile = self.done * 10 // self.total + 1
            print(f"{self.label}: {self.done}/{self.total}", file=sys.stderr, flush=True)

    def close(self) -> float:
        dt = time.perf_counter() - self.t0
        sys.stderr.write(("\r" if self.tty else "") + f"{self.label}: done in {dt:.1f} s\n")
        return dt


@dataclass
class Edit:
    kind: str
    position: int
    text: str
    reward: float
    docs: np.ndarray  # corpus positions of the top-k, best first


@dataclass
class Claim:
    id: str
    text: str
    relevant: frozenset[str]
    held: bool
    tq: Any  # actions.TaggedQuery
    reward: float = 0.0
    docs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    edits: list[Edit] = field(default_factory=list)


@dataclass
class Row:
    name: str
    gains: np.ndarray  # per held-out claim, reward change
    edits: float  # edits per claim
    note: str = ""


# ----------------------------------------------------------------------------- data


def load_claims(args: argparse.Namespace) -> tuple[list[Claim], list[tuple[str, str]]]:
    from factseek.datasets.retrieval import load_retrieval
    from factseek.rewrite.environment import actions
    from factseek.rewrite.splits import is_held_out

    held_data = load_retrieval(args.claims, None, args.format)
    docs = held_data.pairs()
    if args.train is not None:
        train_data = load_retrieval(args.train, None, args.format)
        if train_data.pairs() != docs:
            sys.exit("--train and --claims must share one corpus")
        held = [(c, True) for c in held_data.claims]
        train = [(c, False) for c in train_data.claims]
    else:
        split = [(c, is_held_out(c.id, args.holdout)) for c in held_data.claims]
        held = [x for x in split if x[1]]
        train = [x for x in split if not x[1]]
    if args.limit is not None:
        train = train[: args.limit]
    pairs = held + train
    tagged = actions.tag_many([c.text for c, _ in pairs])
    claims = [
        Claim(id=c.id, text=tq.text, relevant=frozenset(c.relevant), held=h, tq=tq)
        for (c, h), tq in zip(pairs, tagged, strict=True)
    ]
    return claims, docs


class Endpoint:
    """Top-k document ids of many queries at once, from the chosen search endpoint.

    ``bm25``: per parent query, ``rank_edits`` of the incremental exact scorer. ``knn``: all
    distinct queries of a call encoded in batches of ``KNN_BATCH`` (through the shared
    ``CachedEncoder``) and each batch ranked with one matrix product against the corpus
    embeddings; ties by ``(-score, corpus position)`` as in ``KNNRetriever``.
    """

    def __init__(self, env: Any, knn: Any | None) -> None:
        self.env, self.k, self.knn = env, env.k, knn

    def _knn(self, texts: Sequence[str], label: str) -> dict[str, list[str]]:
        from factseek.rewrite.environment.env import top_k_rows

        assert self.knn is not None
        distinct = list(dict.fromkeys(texts))
        ids, emb = self.knn.doc_ids, self.knn.embeddings
        out: dict[str, list[str]] = {}
        prog = Progress(f"{label} (MiniLM + kNN)", len(distinct))
        for s in range(0, len(distinct), KNN_BATCH):
            chunk = distinct[s : s + KNN_BATCH]
            q = np.asarray(self.knn.encoder.encode(chunk), dtype=np.float32)
            for text, row in zip(chunk, top_k_rows(q @ emb.T, self.k), strict=True):
                out[text] = [ids[i] for i in row.tolist()]
            prog.step(len(chunk))
        prog.close()
        return out

    def rank(self, texts: Sequence[str], label: str) -> list[list[str]]:
        """Rankings of unrelated queries (the claims)."""
        if self.knn is None:
            return [self.env.retriever.rank([t], self.k)[0] for t in texts]
        ranked = self._knn(texts, label)
        return [ranked[t] for t in texts]

    def rank_groups(
        self, groups: Sequence[tuple[str, Sequence[str]]], label: str
    ) -> list[list[list[str]]]:
        """Per ``(parent, edited queries)`` group, the rankings of the edited queries."""
        if self.knn is None:
            retriever = self.env.retriever
            prog = Progress(label, len(groups))
            out = []
            for parent, queries in groups:
                out.append(retriever.rank_edits(parent, queries, self.k) if queries else [])
                prog.step()
            prog.close()
            return out
        ranked = self._knn([q for _, qs in groups for q in qs], label)
        return [[ranked[q] for q in qs] for _, qs in groups]


def score_edits(claims: list[Claim], endpoint: Endpoint, pos: dict[str, int]) -> None:
    """Every single edit of every claim, with its top-k and its reward."""
    from factseek.rewrite.environment import actions

    env = endpoint.env
    for c, ranking in zip(
        claims, endpoint.rank([c.tq.text for c in claims], "claims"), strict=True
    ):
        c.reward = env.score(ranking, c.relevant)
        c.docs = np.array([pos[d] for d in ranking], np.int64)
    expanded = [actions.expand(c.tq) for c in claims]
    groups = [(c.tq.text, [q for _, q in ex]) for c, ex in zip(claims, expanded, strict=True)]
    ranks = endpoint.rank_groups(groups, "single edits")
    for c, ex, rs in zip(claims, expanded, ranks, strict=True):
        for (a, q), r in zip(ex, rs, strict=True):
            c.edits.append(
                Edit(
                    kind=str(a.kind.value),
                    position=a.position,
                    text=q,
                    reward=env.score(r, c.relevant),
                    docs=np.array([pos[d] for d in r], np.int64),
                )
            )


# ----------------------------------------------------------------------------- features


def added_words(old: str, new: str) -> str:
    o = set(old.split())
    return " ".join(w for w in new.split() if w not in o)


class Featurizer:
    def __init__(
        self,
        claims: list[Claim],
        docs: Sequence[tuple[str, str]],
        doc_emb: np.ndarray,
        encoder: Any,
        k: int,
    ) -> None:
        from factseek.text import tokenize

        self.tokenize = tokenize
        df: Counter[str] = Counter()
        for _, t in docs:
            df.update(set(tokenize(t)))
        self.df, self.n = df, len(docs)
        self.doc_emb = doc_emb
        self.weights = 1.0 / np.log2(np.arange(2, k + 2))
        strings = {c.text for c in claims}
        for c in claims:
            for e in c.edits:
                strings.add(c.tq.tokens[e.position].text)
                strings.add(added_words(c.text, e.text))
        strings.discard("")
        ordered = sorted(strings)
        emb = np.zeros((len(ordered), encoder.dim), np.float32)
        prog = Progress("MiniLM: claims, tokens, added words", len(ordered))
        for s in range(0, len(ordered), 512):
            emb[s : s + 512] = encoder.encode(ordered[s : s + 512])
            prog.step(len(ordered[s : s + 512]))
        prog.close()
        self.emb = dict(zip(ordered, emb, strict=True))
        self.zero = np.zeros(encoder.dim, np.float32)

    def idf(self, term: str) -> float:
        return math.log(self.n / (1 + self.df.get(term, 0)))

    def endpoint(self, docs: np.ndarray, ce: np.ndarray) -> np.ndarray:
        """Cosines of the claim with its top-k documents: DCG-weighted, top-1/5/10, all, best 10."""
        if len(docs) == 0:
            return np.zeros(6)
        s = self.doc_emb[docs] @ ce
        w = self.weights[: len(s)]
        return np.array(
            [
                (w * s).sum() / w.sum(),
                s[:1].mean(),
                s[:5].mean(),
                s[:10].mean(),
                s.mean(),
                np.sort(s)[::-1][:10].mean(),
            ]
        )

    def proxy(self, docs: np.ndarray, ce: np.ndarray) -> float:
        if len(docs) == 0:
            return 0.0
        s = self.doc_emb[docs] @ ce
        w = self.weights[: len(s)]
        return float((w * s).sum() / w.sum())

    def claim_matrices(self, c: Claim) -> dict[str, np.ndarray]:
        """Feature rows of a claim's edits, per feature set."""
        old_terms = set(self.tokenize(c.text))
        qidf = sorted((self.idf(t) for t in old_terms), reverse=True)
        ce = self.emb[c.text]
        base_end = self.endpoint(c.docs, ce)
        base_top10, base_top = set(c.docs[:10].tolist()), set(c.docs.tolist())
        lex, emb, fb = [], [], []
        n = len(c.tq)
        for e in c.edits:
            tok = c.tq.tokens[e.position]
            toks = self.tokenize(tok.text)
            i = max((self.idf(t) for t in toks), default=0.0)
            new_terms = set(self.tokenize(e.text))
            added, removed = new_terms - old_terms, old_terms - new_terms
            row = [
                *(float(e.kind == k) for k in KINDS),
                *(float(tok.pos == p) for p in UPOS),
                float(tok.is_stop),
                e.position / n,
                n,
                i,
                len(toks),
                max((self.idf(t) for t in added), default=0.0),
                max((self.idf(t) for t in removed), default=0.0),
                len(added),
                len(removed),
                sum(1 for q in qidf if q > i),
                len(old_terms),
                float(np.mean(qidf)) if qidf else 0.0,
            ]
            lex.append(row)
            et = self.emb.get(tok.text, self.zero)
            aw = added_words(c.text, e.text)
            ea = self.emb.get(aw, self.zero) if aw else self.zero
            emb.append(
                np.concatenate([row, [et @ ce, ea @ ce, ea @ et], et, ea]).astype(np.float32)
            )
            end = self.endpoint(e.docs, ce)
            ov10 = len(base_top10 & set(e.docs[:10].tolist())) / 10
            ov = len(base_top & set(e.docs.tolist())) / max(len(base_top), 1)
            fb.append(np.concatenate([row, [ov10, ov], end - base_end, base_end]))
        return {
            "lexical": np.asarray(lex, np.float32).reshape(len(c.edits), -1),
            "lexical+embeddings": np.asarray(emb, np.float32).reshape(len(c.edits), -1),
            "lexical+feedback": np.asarray(fb, np.float32).reshape(len(c.edits), -1),
        }


# ----------------------------------------------------------------------------- policies


def one_edit_gains(
    claims: list[Claim], preds: list[np.ndarray], tau: float
) -> tuple[np.ndarray, int]:
    """Per claim: make the top-predicted edit when its prediction exceeds ``tau``."""
    gains = np.zeros(len(claims))
    made = 0
    for j, (c, p) in enumerate(zip(claims, preds, strict=True)):
        if len(p) and p.max() > tau:
            gains[j] = c.edits[int(np.argmax(p))].reward - c.reward
            made += 1
    return gains, made


def proxy_greedy(
    claims: list[Claim], endpoint: Endpoint, feat: Featurizer, pos: dict[str, int], margin: float
) -> dict[int, tuple[np.ndarray, float]]:
    """Greedy on the endpoint-feedback proxy; one run to max(K), read off at every K.

    Step by step over all claims still improving, so each step's edits are ranked in one call.
    """
    from factseek.rewrite.environment import actions

    env = endpoint.env
    kmax = max(PROXY_STEPS)
    rewards = np.zeros((len(claims), kmax + 1))
    steps = np.zeros(len(claims), np.int64)
    ces = [feat.emb[c.text] for c in claims]
    tqs = [c.tq for c in claims]
    cur = [feat.proxy(c.docs, ce) for c, ce in zip(claims, ces, strict=True)]
    rewards[:, 0] = [c.reward for c in claims]
    active = list(range(len(claims)))
    for step in range(1, kmax + 1):
        if step == 1:  # the claims' own single edits are already ranked
            texts = [[e.text for e in claims[j].edits] for j in active]
            cands = [[(e.docs, e.reward) for e in claims[j].edits] for j in active]
        else:
            texts = [[q for _, q in actions.expand(tqs[j])] for j in active]
            groups = [(tqs[j].text, ts) for j, ts in zip(active, texts, strict=True)]
            ranks = endpoint.rank_groups(groups, f"proxy greedy step {step}")
            cands = [
                [
                    (np.array([pos[d] for d in rk], np.int64), env.score(rk, claims[j].relevant))
                    for rk in rs
                ]
                for j, rs in zip(active, ranks, strict=True)
            ]
        still = []
        for j, ts, cand in zip(active, texts, cands, strict=True):
            ps = [feat.proxy(d, ces[j]) for d, _ in cand]
            best = int(np.argmax(ps)) if ps else -1
            if best < 0 or ps[best] <= cur[j] + margin:
                rewards[j, step:] = rewards[j, step - 1]
                continue
            cur[j] = ps[best]
            rewards[j, step] = cand[best][1]
            steps[j] = step
            tqs[j] = actions.tag(ts[best])
            still.append(j)
        active = still
        if not active:
            break
    base = rewards[:, 0]
    return {k: (rewards[:, k] - base, float(np.minimum(steps, k).mean())) for k in PROXY_STEPS}


# ----------------------------------------------------------------------------- report


def bootstrap_ci(gains: np.ndarray, idx: np.ndarray) -> tuple[float, float]:
    means = gains[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def main_table(rows: list[Row], base: np.ndarray, idx: np.ndarray, metric: str) -> list[str]:
    b = base.mean()
    out = [
        f"| policy | held-out {metric} | vs claim | better | worse | edits/claim "
        "| mean change [95% CI] | note |",
        "|---|---|---|---|---|---|---|---|",
        f"| claim | {b:.4f} | | | | 0.00 | | |",
    ]
    for r in rows:
        m = b + r.gains.mean()
        rel = 100 * (m / b - 1) if b > 0 else float("nan")
        lo, hi = bootstrap_ci(r.gains, idx)
        out.append(
            f"| {r.name} | {m:.4f} | {rel:+.1f}% | {(r.gains > 0).sum()} | {(r.gains < 0).sum()} "
            f"| {r.edits:.2f} | {r.gains.mean():+.4f} [{lo:+.4f}, {hi:+.4f}] | {r.note} |"
        )
    return out


def fmt_tau(t: float) -> str:
    if t == -math.inf:
        return "always"
    if t == math.inf:
        return "never"
    return f"> {t:g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=data_root(),
        help="folder of the public data sets (docs/data.md); default $FACTSEEK_DATA",
    )
    ap.add_argument(
        "--claims", type=Path, default=None, help=f"held-out claims (default DATA/{DEFAULT_CLAIMS})"
    )
    ap.add_argument("--format", default="climate-fever", help="climate-fever, checkthat, ...")
    ap.add_argument(
        "--train", type=Path, default=None, help="training claims (default: split of --claims)"
    )
    ap.add_argument("--holdout", type=float, default=0.2, help="held-out fraction, one file")
    ap.add_argument("--val", type=float, default=0.2, help="validation slice of training claims")
    ap.add_argument("--limit", type=int, default=None, help="cap on training claims")
    ap.add_argument(
        "--retriever", choices=RETRIEVERS, default="bm25", help="search endpoint (default bm25)"
    )
    ap.add_argument("--reward", default="ap@50", help="ap@K, recall@K or rr (default ap@50)")
    ap.add_argument("--margin", type=float, default=0.0, help="proxy greedy: least rise")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="also write the tables (Markdown)")
    args = ap.parse_args()
    if args.claims is None:
        if args.data is None:
            sys.exit("give --claims FILE, or --data DIR / FACTSEEK_DATA (see docs/data.md)")
        args.claims = args.data / DEFAULT_CLAIMS

    try:
        from sklearn.ensemble import HistGradientBoostingRegressor
    except ImportError:
        sys.exit("scikit-learn is needed for this benchmark: pip install scikit-learn")
    from factseek.ml.encode import encoder_from_name
    from factseek.rewrite.environment.env import BM25Retriever, Environment, KNNRetriever
    from factseek.rewrite.environment.wordnet import cache_root

    t_start = time.perf_counter()
    claims, docs = load_claims(args)
    pos = {d: i for i, (d, _) in enumerate(docs)}
    print(f"loaded + tagged in {time.perf_counter() - t_start:.1f} s", file=sys.stderr)
    encoder = encoder_from_name("minilm")
    t0 = time.perf_counter()
    knn = KNNRetriever.build(docs, encoder, cache_dir=cache_root())
    print(f"corpus embeddings in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    retriever: Any = knn if args.retriever == "knn" else BM25Retriever.from_docs(docs)
    env = Environment(retriever=retriever, reward=args.reward)
    endpoint = Endpoint(env, knn if args.retriever == "knn" else None)
    metric = {"ap": "mAP", "recall": "recall", "rr": "MRR"}.get(env.metric, env.metric)
    metric += f"@{env.k}"
    endpoint_desc = (
        f"{args.retriever} top-{env.k} "
        + ("(BM25, exact)" if args.retriever == "bm25" else "(MiniLM cosine kNN, exact)")
        + f"; reward {args.reward}"
    )
    t0 = time.perf_counter()
    score_edits(claims, endpoint, pos)
    t_edits = time.perf_counter() - t0
    print(f"single edits scored in {t_edits:.1f} s", file=sys.stderr)
    feat = Featurizer(claims, docs, knn.embeddings, encoder, env.k)

    held = [c for c in claims if c.held]
    train = [c for c in claims if not c.held]
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(train))
    n_val = round(args.val * len(train))
    val = [train[i] for i in sorted(order[:n_val])]
    fit = [train[i] for i in sorted(order[n_val:])]
    if not held or not fit or not val:
        sys.exit(f"need held-out, fit and validation claims: {len(held)}/{len(fit)}/{len(val)}")
    print(
        f"{args.format}: {len(docs)} documents; held-out {len(held)} claims "
        f"({sum(len(c.edits) for c in held)} edits); training {len(train)} claims "
        f"= fit {len(fit)} ({sum(len(c.edits) for c in fit)} edits) + validation {len(val)}"
        f"{f' (--limit {args.limit})' if args.limit is not None else ''}; endpoint {endpoint_desc}"
    )

    t0 = time.perf_counter()
    mats = {id(c): feat.claim_matrices(c) for c in claims}
    print(f"features in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    base = np.array([c.reward for c in held])
    idx = np.random.default_rng(args.seed).integers(0, len(held), (BOOTSTRAP, len(held)))
    oracle = np.array([max([0.0] + [e.reward - c.reward for e in c.edits]) for c in held])
    rows = [Row("oracle best single edit", oracle, float((oracle > 0).mean()), "upper bound")]
    sweeps: list[str] = []
    for name in FEATURE_SETS:
        t0 = time.perf_counter()
        x = np.concatenate([mats[id(c)][name] for c in fit])
        y = np.concatenate([[e.reward - c.reward for e in c.edits] for c in fit])
        model = HistGradientBoostingRegressor(
            max_iter=300, learning_rate=0.05, max_leaf_nodes=15, random_state=args.seed
        ).fit(x, y)

        def predict(cs: list[Claim], name: str = name, model: Any = model) -> list[np.ndarray]:
            return [model.predict(mats[id(c)][name]) if c.edits else np.zeros(0) for c in cs]

        pv, ph = predict(val), predict(held)
        val_gain = {t: one_edit_gains(val, pv, t)[0].mean() for t in THRESHOLDS}
        tau = max(THRESHOLDS, key=lambda t: (val_gain[t], t))  # ties: the stricter threshold
        gains, made = one_edit_gains(held, ph, tau)
        rows.append(
            Row(
                f"learned {name}",
                gains,
                made / len(held),
                f"threshold {fmt_tau(tau)} (validation change {val_gain[tau]:+.4f})",
            )
        )
        p_all = np.concatenate(ph)
        y_all = np.concatenate([[e.reward - c.reward for e in c.edits] for c in held])
        corr = float(np.corrcoef(p_all, y_all)[0, 1]) if len(p_all) > 1 else float("nan")
        sweeps += [
            "",
            f"threshold sweep, learned {name} (held-out edit correlation {corr:.3f}; "
            f"fit in {time.perf_counter() - t0:.1f} s)",
            "",
            f"| threshold | validation change | held-out {metric} | held-out change "
            "| edited | better | worse |",
            "|---|---|---|---|---|---|---|",
        ]
        for t in THRESHOLDS:
            g, m = one_edit_gains(held, ph, t)
            mark = " (chosen)" if t == tau else ""
            sweeps.append(
                f"| {fmt_tau(t)}{mark} | {val_gain[t]:+.4f} | {base.mean() + g.mean():.4f} "
                f"| {g.mean():+.4f} | {m}/{len(held)} | {(g > 0).sum()} | {(g < 0).sum()} |"
            )
        print(f"learned {name}: fit + sweep in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    t0 = time.perf_counter()
    for k, (gains, per_claim) in proxy_greedy(held, endpoint, feat, pos, args.margin).items():
        rows.append(Row(f"proxy greedy K={k}", gains, per_claim, f"margin {args.margin:g}"))
    t_proxy = time.perf_counter() - t0
    print(f"proxy greedy in {t_proxy:.1f} s", file=sys.stderr)

    runtime = time.perf_counter() - t_start
    lines = [
        f"{args.format} held-out: {args.claims}"
        + (f" (train: {args.train})" if args.train else f" (is_held_out {args.holdout})"),
        f"endpoint: {endpoint_desc}",
        "",
        *main_table(rows, base, idx, metric),
        *sweeps,
        "",
        f"runtime {runtime:.0f} s (single edits {t_edits:.0f} s, proxy greedy {t_proxy:.0f} s); "
        f"seed {args.seed}; bootstrap {BOOTSTRAP} resamples over claims",
    ]
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

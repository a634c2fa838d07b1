"""A judge trained on claim + evidence features: one model for claim-only, gold and retrieved input.

Features of a claim and its evidence texts (at most ``max_texts``, in the order given):

- the claim's sentence embedding ``c`` (the encoder, MiniLM by default);
- the mean embedding ``m`` of the evidence texts and the product ``c * m`` (zeros without
  evidence), and the largest and the mean cosine between the claim and a text (how on-topic);
- the stance toward the claim of every text (the stance model, when the judge has one): the
  largest and the mean probability of ``supports`` and of ``refutes``, the mean of ``nei``, and
  the share of texts labelled each way;
- whether there is evidence at all, and ``log(1 + n)``;
- with ``bow > 0``: hashed bags of words (terms and their bigrams, ``log(1 + count)``, ``bow``
  buckets each) of the claim and of the evidence texts together, so that cue words ("hoax",
  "satire", "no evidence") count as they are, not only as embeddings. ``words="index"`` takes the
  terms ``factseek.text.tokenize`` indexes (no stop words); ``words="all"`` keeps every word, so
  "no", "not" and "never" count too (AVeriTeC answers begin "Yes." or "No.").

The classifier is a multinomial logistic regression over the standardised features with an L2
penalty, fitted with scikit-learn's L-BFGS (the ``train`` extra); predicting needs numpy only. ``fit``
chooses the penalty and the class weighting (``(n / count) ** balance``) by 5-fold
cross-validation over the claims (whole claims: all their inputs go to one fold; every input is
predicted by the model fitted without its fold), scored by the mean of accuracy and macro-F1 over
the input kinds, then refits on everything. Training examples come in kinds: ``claim-only`` (no
evidence), ``gold`` and ``retrieved``; every claim should appear with no evidence too, so that
the model is fair when it is given only the claim.

A judge folder holds ``config.json`` (``format_version``, ``kind``, labels, encoder and stance
names, feature normalisation, selection results) and ``weights.npy``. It is a user-trained model:
trained on AVeriTeC (CC BY-NC 4.0) it must not be shipped.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from factseek.errors import InputError, MissingDependency, ModelError
from factseek.files import atomic_write
from factseek.labels import LABEL_SETS, LabelSet
from factseek.metrics.veracity import veracity_metrics
from factseek.ml.encode import Encoder
from factseek.ml.folder import read_model_config
from factseek.stance import StanceModel
from factseek.text import tokenize
from factseek.text import words as all_words
from factseek.types import Answer, Claim, Evidence, Passage, Question, Verdict

FORMAT_VERSION = 1
KIND = "factseek-evidence-judge"
BAG_WORDS: tuple[str, ...] = ("index", "all")
STANCE_FEATURES = (
    "max_supports",
    "mean_supports",
    "max_refutes",
    "mean_refutes",
    "mean_nei",
    "share_supports",
    "share_refutes",
)


@dataclass(frozen=True, kw_only=True)
class FitConfig:
    l2: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0)  # penalty per example: C = 1 / (l2 * n)
    balance: tuple[float, ...] = (0.0, 0.5, 1.0)
    steps: int = 1000  # L-BFGS iterations at most
    folds: int = 5  # grouped cross-validation over claims chooses l2 and balance
    max_texts: int = 20
    bow: int = 0  # hashed bag-of-words buckets for the claim and for the evidence (0: none)
    words: str = "index"  # the bags' words: "index" (no stop words) or "all"
    seed: int = 0


DEFAULT_FIT = FitConfig()


@dataclass(frozen=True, kw_only=True)
class Example:
    """One training input: a claim, its evidence texts, which kind of input, the gold label."""

    claim: Claim
    texts: tuple[str, ...]
    kind: str  # "claim-only", "gold", "retrieved"
    label: str
    group: str  # the claim's id: held-out splits keep a claim's inputs together


@functools.lru_cache(maxsize=1 << 18)
def _term_hash(term: str) -> int:
    """A stable 32-bit hash of a term (the same in every process, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "little")


def bag_of_words(texts: Sequence[str], buckets: int, words: str = "index") -> np.ndarray:
    """``log(1 + count)`` of the texts' hashed terms and bigrams in ``buckets`` buckets; ``words``
    is ``"index"`` (``factseek.text.tokenize``: no stop words) or ``"all"`` (every word)."""
    out = np.zeros(buckets, dtype=np.float32)
    for text in texts:
        terms = tokenize(text) if words == "index" else all_words(text)
        for t in [*terms, *(f"{a} {b}" for a, b in itertools.pairwise(terms))]:
            out[_term_hash(t) % buckets] += 1.0
    return np.log1p(out)


class Featurizer:
    """Claim + evidence texts -> feature rows (one encoder batch, one stance batch per call)."""

    def __init__(
        self,
        encoder: Encoder,
        stance: StanceModel | None,
        max_texts: int,
        bow: int = 0,
        words: str = "index",
    ) -> None:
        if words not in BAG_WORDS:
            raise InputError(f"unknown bag words {words!r}; choose one of: {', '.join(BAG_WORDS)}")
        self.encoder = encoder
        self.stance = stance
        self.max_texts = max_texts
        self.bow = bow
        self.words = words

    @property
    def dim(self) -> int:
        return 3 * self.encoder.dim + len(STANCE_FEATURES) + 4 + 2 * self.bow

    def _bag(self, texts: Sequence[str]) -> np.ndarray:
        return bag_of_words(texts, self.bow, self.words)

    def __call__(self, items: Sequence[tuple[Claim, Sequence[str]]]) -> np.ndarray:
        items = [
            (c, list(dict.fromkeys(t for t in texts if t.strip()))[: self.max_texts])
            for c, texts in items
        ]
        claims = [c.text for c, _ in items]
        texts = [t for _, ts in items for t in ts]
        vecs = self.encoder.encode(claims + texts)  # (n_claims + n_texts, dim)
        probs = np.zeros((len(texts), 3), dtype=np.float32)
        labels = np.zeros((len(texts), 3), dtype=np.float32)
        if self.stance is not None and texts:
            pairs = [(c.text, t) for c, ts in items for t in ts]
            for i, r in enumerate(self.stance.classify(pairs)):
                probs[i] = [r.probs.get(x, 0.0) for x in ("supports", "refutes", "nei")]
                labels[i, ("supports", "refutes", "nei").index(r.label)] = 1.0
        out = np.zeros((len(items), self.dim), dtype=np.float32)  # (items, features)
        d, first = self.encoder.dim, 0  # first: this item's first text among all texts
        tail = 3 * d + len(STANCE_FEATURES) + 4  # where the bags of words start
        for i, (claim, ts) in enumerate(items):
            c = vecs[i]
            out[i, :d] = c
            if self.bow:
                out[i, tail : tail + self.bow] = self._bag([claim.text])
                out[i, tail + self.bow :] = self._bag(ts)
            if not ts:
                continue
            rows = slice(first, first + len(ts))
            first += len(ts)
            ev = vecs[len(items) :][rows]  # (texts, dim), unit rows
            m = ev.mean(axis=0)
            cos = ev @ c
            out[i, d : 2 * d] = m
            out[i, 2 * d : 3 * d] = c * m
            if self.stance is not None:
                p, lab = probs[rows], labels[rows]  # (texts, 3): supports, refutes, nei
                out[i, 3 * d : 3 * d + len(STANCE_FEATURES)] = [
                    p[:, 0].max(),
                    p[:, 0].mean(),
                    p[:, 1].max(),
                    p[:, 1].mean(),
                    p[:, 2].mean(),
                    lab[:, 0].mean(),
                    lab[:, 1].mean(),
                ]
            out[i, tail - 4] = cos.max()
            out[i, tail - 3] = cos.mean()
            out[i, tail - 2] = 1.0
            out[i, tail - 1] = math.log1p(len(ts))
        return out


# ----------------------------------------------------------------------------- softmax regression


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _fit(
    x: np.ndarray, y: np.ndarray, k: int, *, l2: float, balance: float, cfg: FitConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Weights (F, K) and bias (K,): multinomial logistic regression (scikit-learn's L-BFGS) on
    cross-entropy weighted by ``(n / count) ** balance`` per class, penalty ``l2 * |W|^2 / 2``."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError as e:
        raise MissingDependency("scikit-learn", "train", "training an evidence judge") from e
    n = len(y)
    counts = np.bincount(y, minlength=k).astype(np.float64)
    cw = np.where(counts > 0, (n / np.maximum(counts, 1) / k) ** balance, 0.0)
    sw = cw[y] / cw[y].mean()  # (n,) sample weights, mean 1
    model = LogisticRegression(C=1.0 / (l2 * n), max_iter=cfg.steps, tol=1e-6)
    model.fit(x, y, sample_weight=sw)
    w = np.zeros((x.shape[1], k))
    b = np.full(k, -1e9)  # a label never seen in training is never predicted
    for j, c in enumerate(model.classes_.tolist()):
        w[:, c] = (
            model.coef_[j]
            if len(model.classes_) > 2
            else (model.coef_[0] if j else -model.coef_[0]) / 2
        )
        b[c] = (
            model.intercept_[j]
            if len(model.classes_) > 2
            else (model.intercept_[0] if j else -model.intercept_[0]) / 2
        )
    return w, b


def _standardise(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature mean and standard deviation (1 where a feature is constant)."""
    sd = rows.std(axis=0)
    return rows.mean(axis=0), np.where(sd > 1e-8, sd, 1.0)


def cross_predict(
    x: np.ndarray,
    y: np.ndarray,
    fold: np.ndarray,
    k: int,
    *,
    l2: float,
    balance: float,
    cfg: FitConfig,
) -> np.ndarray:
    """Label indices of every row predicted by the model fitted (standardised, ``_fit``) on the
    rows of the other folds; ``fold`` gives each row's fold."""
    pred = np.zeros(len(y), dtype=int)
    for f in np.unique(fold):
        train = fold != f
        mu, sd = _standardise(x[train])
        w, b = _fit((x[train] - mu) / sd, y[train], k, l2=l2, balance=balance, cfg=cfg)
        pred[~train] = ((x[~train] - mu) / sd @ w + b).argmax(axis=1)
    return pred


def fit(
    examples: Sequence[Example],
    featurize: Featurizer,
    labels: LabelSet,
    cfg: FitConfig = DEFAULT_FIT,
    *,
    log: Callable[[str], None] = lambda _: None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """(weights, bias, feature mean, feature std, selection report) from the examples."""
    if not examples:
        raise InputError("no training examples")
    bad = sorted({e.label for e in examples if e.label not in labels})
    if bad:
        raise InputError(f"labels {bad} are not {labels.name} labels")
    log(f"featurizing {len(examples)} inputs")
    feats = np.concatenate(
        [
            featurize([(e.claim, e.texts) for e in examples[i : i + 256]])
            for i in range(0, len(examples), 256)
        ]
    ).astype(np.float32)
    y = np.array([labels.index(e.label) for e in examples])
    groups = sorted({e.group for e in examples})
    folds = min(cfg.folds, len(groups))
    if folds < 2:
        raise InputError("a judge needs the inputs of at least 2 claims (cross-validation)")
    order = np.random.default_rng(cfg.seed).permutation(groups)
    fold_of = {g: i % folds for i, g in enumerate(order.tolist())}
    fold = np.array([fold_of[e.group] for e in examples])  # whole claims go to one fold
    kind = np.array([e.kind for e in examples])
    kinds = sorted(set(kind.tolist()))

    grid = []
    for l2 in cfg.l2:
        for balance in cfg.balance:
            pred = cross_predict(feats, y, fold, len(labels), l2=l2, balance=balance, cfg=cfg)
            scores = {}
            for kd in kinds:
                m = veracity_metrics(
                    [labels.labels[i] for i in y[kind == kd]],
                    [labels.labels[i] for i in pred[kind == kd]],
                    labels,
                )
                scores[kd] = {"accuracy": round(m.accuracy, 4), "macro_f1": round(m.macro_f1, 4)}
            value = float(np.mean([(s["accuracy"] + s["macro_f1"]) / 2 for s in scores.values()]))
            grid.append({"l2": l2, "balance": balance, "cv": scores, "value": round(value, 4)})
            log(f"l2 {l2:g} balance {balance:g}: {json.dumps(scores)} score {value:.4f}")
    best = max(grid, key=lambda g: (g["value"], -g["l2"], -g["balance"]))
    if len(cfg.l2) > 1 and best["l2"] in (min(cfg.l2), max(cfg.l2)):
        log(f"note: the chosen l2 {best['l2']:g} is at the edge of the grid {list(cfg.l2)}")
    mu, sd = _standardise(feats)
    w, b = _fit((feats - mu) / sd, y, len(labels), l2=best["l2"], balance=best["balance"], cfg=cfg)
    report = {
        "selected": {"l2": best["l2"], "balance": best["balance"]},
        "cv_score": best["value"],
        "grid": grid,
        "n_examples": len(examples),
        "n_claims": len(groups),
        "folds": folds,
        "kinds": {k: sum(e.kind == k for e in examples) for k in kinds},
    }
    return w, b, mu, sd, report


# ----------------------------------------------------------------------------- the judge


class EvidenceModelJudge:
    """A trained evidence judge (see the module docstring); an ``EvidenceJudge``."""

    def __init__(
        self,
        *,
        weights: np.ndarray,
        bias: np.ndarray,
        mean: np.ndarray,
        std: np.ndarray,
        labels: LabelSet,
        featurize: Featurizer,
        name: str,
        config: dict[str, Any] | None = None,
    ) -> None:
        if weights.shape != (featurize.dim, len(labels)):
            raise ModelError(
                f"weights are {weights.shape}, expected {(featurize.dim, len(labels))}"
            )
        self.weights, self.bias, self.mean, self.std = weights, bias, mean, std
        self.labels = labels
        self.scale = labels.name
        self.featurize = featurize
        self.name = f"evidence-model:{name}"
        self.config = dict(config or {})
        self.reads: Reads = self.config.get("reads", "passages")

    def probabilities(self, items: Sequence[tuple[Claim, Sequence[str]]]) -> np.ndarray:
        x = (self.featurize(items).astype(np.float64) - self.mean) / self.std
        return _softmax(x @ self.weights + self.bias)

    def judge(
        self,
        claim: Claim,
        questions: Sequence[Question],
        evidence: Sequence[Evidence],
        answers: Sequence[Answer] | None = None,
        passages: Sequence[Passage] = (),
    ) -> Verdict:
        """The verdict from what the judge was trained to read (``reads``: the pipeline's top
        passages, its evidence cards, or both; given evidence without passages, as gold evidence
        is, it reads the evidence)."""
        named = judge_texts(self.reads, evidence, passages)
        used = named[: self.featurize.max_texts]
        (probs,) = self.probabilities([(claim, [t for _, t in used])])
        scores = {x: round(float(p), 6) for x, p in zip(self.labels.labels, probs, strict=True)}
        best = min(scores, key=lambda x: (-scores[x], self.labels.index(x)))
        basis = (
            f"the claim and {len(used)} evidence text(s): {', '.join(n for n, _ in used)}"
            if used
            else "the claim alone (no evidence)"
        )
        why = f"{best} with probability {scores[best]:.2f}, read from {basis}"
        return Verdict(
            judged=True,
            label=best,
            judge=self.name,
            scores=scores,
            scale=self.scale,
            confidence=scores[best],
            rationale=why,
            explanation=why,
            evidence_ids=tuple(n for n, _ in used if not n.startswith("passage")),
        )

    # -- folders

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        np.save(path / "weights.npy", np.concatenate([self.weights, self.bias[None, :]]))
        cfg = {
            **self.config,
            "format_version": FORMAT_VERSION,
            "kind": KIND,
            "label_set": self.labels.name,
            "labels": list(self.labels.labels),
            "max_texts": self.featurize.max_texts,
            "bow": self.featurize.bow,
            "words": self.featurize.words,
            "encoder": self.config.get("encoder", "minilm"),
            "stance": self.config.get("stance", "none"),
            "mean": self.mean.tolist(),
            "std": self.std.tolist(),
        }
        atomic_write(path / "config.json", json.dumps(cfg, indent=1) + "\n")
        return path

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        encoder: Encoder | None = None,
        stance: StanceModel | None = None,
    ) -> EvidenceModelJudge:
        """Open a judge folder; the encoder and stance model named in it are loaded unless given."""
        path = Path(path)
        cfg = read_config(path)
        labels = LABEL_SETS[cfg["label_set"]]
        if encoder is None:
            from factseek.ml.encode import encoder_from_name

            encoder = encoder_from_name(cfg["encoder"])
        if stance is None and cfg["stance"] != "none":
            from factseek.stance import load_stance

            # a judge trained before 4 December 2026 says "default" for the small model
            stance = load_stance("small" if cfg["stance"] == "default" else cfg["stance"])
        wb = np.load(path / "weights.npy", allow_pickle=False)
        return cls(
            weights=wb[:-1],
            bias=wb[-1],
            mean=np.asarray(cfg["mean"], dtype=np.float64),
            std=np.asarray(cfg["std"], dtype=np.float64),
            labels=labels,
            featurize=Featurizer(
                encoder,
                stance,
                int(cfg["max_texts"]),
                int(cfg.get("bow", 0)),
                str(cfg.get("words", "index")),
            ),
            name=str(cfg.get("name") or path.name),
            config=cfg,
        )


Reads = Literal["passages", "cards", "both"]
READS: tuple[str, ...] = ("passages", "cards", "both")


def judge_texts(
    reads: str, evidence: Sequence[Evidence], passages: Sequence[Passage]
) -> list[tuple[str, str]]:
    """(name, text) of what a judge reads, distinct texts in order: the pipeline's passages
    (top documents, "passage 1", ...), its evidence cards that take a side (by id; a figure
    card, read ``nei``, is for the reviewer), or both (passages first). With no passages (gold
    evidence given as cards) every card is read whatever ``reads`` is."""
    named: list[tuple[str, str]] = []
    if reads in ("passages", "both"):
        named += [(f"passage {i}", p.text) for i, p in enumerate(passages, start=1)]
    if not passages:
        named += [(e.id, e.text) for e in evidence]
    elif reads in ("cards", "both"):
        named += [(e.id, e.text) for e in evidence if e.stance is None or e.stance.decides]
    seen: set[str] = set()
    out = []
    for name, text in named:
        if text.strip() and text not in seen:
            seen.add(text)
            out.append((name, text))
    return out


def read_config(path: Path) -> dict[str, Any]:
    """A judge folder's config.json, checked (ModelError with one line otherwise)."""
    cfg = read_model_config(path, kind=KIND, version=FORMAT_VERSION, what="evidence judge")
    if cfg.get("label_set") not in LABEL_SETS or not (path / "weights.npy").is_file():
        raise ModelError(f"{path}: unknown label set or missing weights.npy")
    if cfg.get("words", "index") not in BAG_WORDS:
        raise ModelError(f"{path}: unknown bag words {cfg.get('words')!r}")
    return cfg


def train_evidence_judge(
    examples: Sequence[Example],
    labels: LabelSet,
    out: str | Path,
    *,
    encoder: Encoder,
    stance: StanceModel | None,
    encoder_name: str = "minilm",
    stance_name: str = "none",
    reads: str = "passages",
    cfg: FitConfig = DEFAULT_FIT,
    info: dict[str, Any] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> EvidenceModelJudge:
    """Fit and save a judge folder at ``out``."""
    featurize = Featurizer(encoder, stance, cfg.max_texts, cfg.bow, cfg.words)
    w, b, mu, sd, report = fit(examples, featurize, labels, cfg, log=log)
    judge = EvidenceModelJudge(
        weights=w,
        bias=b,
        mean=mu,
        std=sd,
        labels=labels,
        featurize=featurize,
        name=Path(out).name,
        config={
            "name": Path(out).name,
            "encoder": encoder_name,
            "stance": stance_name,
            "reads": reads,
            "fit": asdict(cfg),
            "selection": report,
            "train": info or {},
        },
    )
    judge.save(out)
    return judge

#!/usr/bin/env bash
# The decision transformer on FEVER train, end to end (docs/rewrite-model.md, "FEVER train"):
#
#   bash experiments/fever_train_dt.sh DATA OUT
#
# DATA holds fever_train/, fever_dev/ and fool_me_twice/; everything is written under OUT, and a
# rerun picks up where a killed one stopped (the BFS resumes, finished models are kept, the
# encoder's rows are cached). Settings come from the environment:
#
#   PRESET=small|paper      model size (paper: 6 layers, 8 heads, 768-d)       [small]
#   ENCODER=minilm|mpnet    state embeddings (the paper's: mpnet)               [minilm]
#   DEVICE=cpu|cuda         where training (and the encoder) runs               [cuda if present]
#   WORKERS=N               BFS processes                                       [nproc]
#   THREADS=N               torch CPU threads for training and evaluation       [1]
#   VARIANTS="dense:negatives sparse:no-negatives ..."   returns x negatives    [all four]
#   MAXSEQ=N                BFS sequences per claim and kind used in training   [5]
#   EPOCHS=N                                                                    [5]
#   KNN_CLAIMS=N            also a kNN BFS (MiniLM, recall@50) over the first N  [0: none]
#                           FEVER train claims (bound by the encoder: a GPU's work)
#
# On a GPU machine (16 cores): PRESET=paper ENCODER=mpnet. Not yet run on one: at the ~20 claims
# per CPU second measured here, its BFS should take about 6 minutes on 16 workers.
set -euo pipefail
DATA="${1:?usage: fever_train_dt.sh DATA OUT}"
OUT="${2:?usage: fever_train_dt.sh DATA OUT}"
PRESET="${PRESET:-small}"
ENCODER="${ENCODER:-minilm}"
WORKERS="${WORKERS:-$(nproc)}"
THREADS="${THREADS:-1}"
VARIANTS="${VARIANTS:-dense:negatives dense:no-negatives sparse:negatives sparse:no-negatives}"
MAXSEQ="${MAXSEQ:-5}"
EPOCHS="${EPOCHS:-5}"
DEVICE_OPT=()
if [[ -n "${DEVICE:-}" ]]; then DEVICE_OPT=(--device "$DEVICE"); fi
mkdir -p "$OUT"

TRAIN=(--claims "$DATA/fever_train" --corpus "$DATA/fever_dev" --corpus "$DATA/fool_me_twice"
       --format fever-dev)
DEV=(--claims "$DATA/fever_dev" --corpus "$DATA/fever_train" --corpus "$DATA/fool_me_twice"
     --format fever-dev)

echo "== BFS over FEVER train (BM25, AP@50, depth 4, 5 negatives per claim)" >&2
factseek rewrite bfs "${TRAIN[@]}" --retriever bm25 --reward ap@50 --depth 4 --negatives 5 \
    --workers "$WORKERS" --out "$OUT/bfs-train"

if [[ "${KNN_CLAIMS:-0}" -gt 0 ]]; then
  echo "== kNN BFS over the first $KNN_CLAIMS FEVER train claims (MiniLM, recall@50)" >&2
  factseek rewrite bfs "${TRAIN[@]}" --retriever knn --reward recall@50 --depth 4 \
      --limit "$KNN_CLAIMS" --workers 1 --threads "$THREADS" "${DEVICE_OPT[@]}" \
      --out "$OUT/bfs-train-knn-recall"
fi

models=()
for v in $VARIANTS; do
  returns="${v%%:*}" neg="${v##*:}"
  model="$OUT/dt-$PRESET-$ENCODER-$returns-$neg"
  models+=("$model")
  if [[ -f "$model/model.safetensors" ]]; then
    echo "== $model: trained before, kept" >&2
  else
    echo "== training $model" >&2
    factseek rewrite train --trajectories "$OUT/bfs-train" --out "$model.part" \
        --preset "$PRESET" --encoder "$ENCODER" --returns "$returns" "--$neg" --epochs "$EPOCHS" \
        --max-sequences-per-claim "$MAXSEQ" --stop-claims "$DATA/fever_train" \
        --stop-format fever-dev --threads "$THREADS" "${DEVICE_OPT[@]}"
    rm -rf "$model" && mv "$model.part" "$model"
  fi
  echo "== calibrating $model on the FEVER dev validation side" >&2
  factseek rewrite calibrate --model "$model" "${DEV[@]}" --split validation --all \
      --threads "$THREADS"
done

echo "== evaluating on the FEVER dev test side" >&2
model_opts=()
for m in "${models[@]}"; do model_opts+=(--model "$m"); done
factseek rewrite eval "${model_opts[@]}" "${DEV[@]}" --split test --threads "$THREADS" \
    --out "$OUT/eval-test"

#!/usr/bin/env bash
# A stance reader pre-trained on FEVER train, then trained on the shipped model's sources
# (docs/stance.md, "Pre-training on FEVER train"):
#
#   bash experiments/fever_train_stance.sh DATA OUT
#
# DATA holds fever_train/ and the default sources' folders (fever_dev/, fool_me_twice/, ...).
# Writes OUT/pairs-pre.jsonl and OUT/pairs.jsonl (the pair sets, built once on the CPU), then
# OUT/pre (FEVER train only: gold sentences, BM25-nearest other sentences and NOT ENOUGH INFO
# claims as "nei") and OUT/model (from OUT/pre, on the default sources with contrast pairs).
# A killed run goes on: finished pair sets and models are kept, training resumes from its
# checkpoint. Settings from the environment:
#
#   BASE=minilm|mpnet       the network (mpnet: 12 layers, lr 5e-4, int8-mixed)  [minilm]
#   DEVICE=cpu|cuda                                                              [cpu]
#   PRE_PAIRS=N             FEVER train pairs of the pre-training               [40000]
#   THREADS=N               torch CPU threads                                   [2]
#
# On these 2 cores with BASE=minilm: about 25 minutes for the pre-training and 25 for the rest.
# With BASE=mpnet DEVICE=cuda on one GPU: build the pair sets here first (the GPU machine then
# needs neither the data sets nor spaCy), about 4 minutes for each stage there.
set -euo pipefail
DATA="${1:?usage: fever_train_stance.sh DATA OUT}"
OUT="${2:?usage: fever_train_stance.sh DATA OUT}"
BASE="${BASE:-minilm}"
DEVICE="${DEVICE:-cpu}"
PRE_PAIRS="${PRE_PAIRS:-40000}"
THREADS="${THREADS:-2}"
NET=()
if [[ "$BASE" == mpnet ]]; then
  NET=(--base mpnet --layers 12 --train-layers 12 --lr 0.0005 --quantize int8-mixed)
fi
mkdir -p "$OUT"

if [[ ! -s "$OUT/pairs-pre.jsonl" ]]; then
  factseek stance train --data "$DATA" --sources fever-train --max-train "$PRE_PAIRS" \
      --no-contrast --out "$OUT/unused" --pairs-out "$OUT/pairs-pre.jsonl"
fi
if [[ ! -s "$OUT/pairs.jsonl" ]]; then
  factseek stance train --data "$DATA" --out "$OUT/unused" --pairs-out "$OUT/pairs.jsonl"
fi
if [[ ! -f "$OUT/pre/config.json" ]]; then
  factseek stance train --pairs "$OUT/pairs-pre.jsonl" --epochs 1 --out "$OUT/pre" \
      "${NET[@]}" --device "$DEVICE" --threads "$THREADS" --quiet
fi
if [[ ! -f "$OUT/model/config.json" ]]; then
  factseek stance train --pairs "$OUT/pairs.jsonl" --init "$OUT/pre" --out "$OUT/model" \
      "${NET[@]}" --device "$DEVICE" --threads "$THREADS" --quiet
fi
echo "done: $OUT/model" >&2
